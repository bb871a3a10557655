"""The Memory Inspector end to end: a real ``zaxy ui`` on 127.0.0.1 driven by a real headless Chromium.

One server and one browser for the module (starting them is most of the cost); the tests run in file order and
the writes come last. ``ZAXY_UI_SCREENSHOTS=1`` writes the screenshots docs/ui.md shows into docs/images/.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import REPO_ROOT
from tests.ui.harness import browser_problem, headless_chromium, ui_server
from tests.ui.memory import (
    BELIEF_CLAIM,
    SCRIPT_TITLE,
    TAMPERED,
    UNKNOWN_QUESTION,
    Seeded,
    add_tampered_session,
    seed_memory,
)
from zaxy_agents.fabric import MemoryFabric

PROBLEM = browser_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=f"browser tests need a browser: {PROBLEM}")
SCREENSHOTS = REPO_ROOT / "docs" / "images"
WAIT = 20


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    seeded = seed_memory(tmp_path_factory.mktemp("ui") / "eventloom")
    add_tampered_session(seeded.path)
    return seeded


@pytest.fixture(scope="module")
def server(seeded: Seeded):
    with ui_server(seeded.path) as running:
        yield running


@pytest.fixture(scope="module")
def browser(server):
    with headless_chromium() as driver:
        driver.get(server.address)  # signs in with the token in the address, then drops it from the URL
        yield driver


def wait(driver, condition, message: str = ""):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # The page re-renders views as data arrives: an element read mid-render is simply read again.
    waiter = WebDriverWait(driver, WAIT, ignored_exceptions=[StaleElementReferenceException])
    return waiter.until(lambda d: condition(d), message)


def css(driver, selector: str):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def go(driver, server, fragment: str) -> None:
    """Open a view and wait until the page drew it (the previous view's elements are gone by then)."""
    driver.get(f"{server.base}/#/{fragment}")
    wait(driver, lambda d: d.execute_script("return document.body.dataset.rendered") == f"#/{fragment}", fragment)


def snap(driver, name: str, tmp_path: Path, focus: str | None = None) -> None:
    """Screenshots for docs/ui.md: written there only when asked (ZAXY_UI_SCREENSHOTS=1), as 64-colour PNGs
    (a flat page needs no more, and the repository stays small)."""
    target = SCREENSHOTS if os.environ.get("ZAXY_UI_SCREENSHOTS") else tmp_path
    target.mkdir(parents=True, exist_ok=True)
    if focus is None:
        driver.execute_script("window.scrollTo(0, 0)")
    else:
        driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", css(driver, focus)[0])
    path = target / f"ui-{name}.png"
    assert driver.save_screenshot(str(path))
    if target == SCREENSHOTS:
        from PIL import Image

        with Image.open(path) as shot:
            shot.convert("RGB").quantize(colors=64).save(path, optimize=True)


def type_into(driver, selector: str, text: str, then_click: str | None = None) -> None:
    """Type ``text`` into the field (again if the page re-rendered it meanwhile), then click ``then_click`` while
    the field still holds the text: a re-render between the steps must not make the test type into a stale box."""

    def attempt(d) -> bool:
        boxes = css(d, selector)
        if not boxes:
            return False
        if boxes[0].get_attribute("value") != text:
            boxes[0].clear()
            boxes[0].send_keys(text)
        if boxes[0].get_attribute("value") != text:
            return False
        if then_click is not None:
            css(d, then_click)[0].click()
        return True

    wait(driver, attempt, f"typed into {selector}")


def preview_erase(driver, server, session: str, first: int, last: int) -> None:
    go(driver, server, session_fragment(session, "forget"))
    type_into(driver, "[data-testid=erase-from]", str(first))
    type_into(driver, "[data-testid=erase-to]", str(last), then_click="[data-testid=erase-preview-button]")


def session_fragment(session: str, *rest: str) -> str:
    return "/".join(["s", quote(session, safe=""), *(quote(part, safe="") for part in rest)])


def test_open_a_session_from_the_workspace_list(browser, server, seeded, tmp_path) -> None:
    # The page drops the token from the address bar as soon as its script starts, which can be just after
    # the load event the driver waited for: wait for it (bounded) rather than read the address once.
    wait(browser, lambda d: "#token" not in d.current_url, "the token left the address bar")
    rows = wait(browser, lambda d: css(d, "[data-testid=session-row]"), "session list")
    assert len(rows) == 3
    headings = [h.text for h in css(browser, "main h2")]
    assert headings == ["Workspace billing-9f8e7d6c", "Workspace shop-1a2b3c4d", "Other sessions"]
    wait(browser, lambda d: len([b for b in css(d, ".chain .badge") if b.text == "verified"]) == 2, "chain verified")
    damaged = wait(browser, lambda d: [b for b in css(d, ".chain .badge") if b.text.startswith("damaged")], "damaged")
    assert damaged[0].text == "damaged at seq 2"  # the event edited by hand
    with MemoryFabric.from_path(seeded.path) as fabric:  # docs/ui.md: 'with the reason as a tooltip'
        reason = fabric.chain_status(TAMPERED)["reason"]
    [holder] = [b for b in css(browser, ".chain") if b.get_attribute("data-session") == TAMPERED]
    assert (
        reason
        and holder.get_attribute("title").startswith(reason)
        and "click to check again" in holder.get_attribute("title")
    )
    snap(browser, "sessions", tmp_path)
    link = next(a for a in css(browser, "main a") if a.text == seeded.shop)
    link.click()
    events = wait(browser, lambda d: css(d, "[data-testid=event-row]"), "timeline")
    with MemoryFabric.from_path(seeded.path) as fabric:
        assert len(events) == fabric.head(seeded.shop).seq
    # A payload carrying markup is shown as text: no script ran, no element was created from it.
    task = next(row for row in events if "task.created" in row.text)
    assert json.dumps(SCRIPT_TITLE)[1:-1] in task.find_element("css selector", ".payload").text
    assert browser.title == "Zaxy Memory Inspector"
    assert css(browser, "main img") == [] and css(browser, "main script") == []
    snap(browser, "timeline", tmp_path)


def test_timeline_filters(browser, server, seeded) -> None:
    go(browser, server, session_fragment(seeded.shop))
    wait(browser, lambda d: css(d, "[data-testid=event-row]"))
    form = css(browser, "[data-testid=timeline-filters]")[0]
    form.find_element("name", "type").send_keys("task.*")
    form.find_element("name", "text").send_keys("fixing")
    form.submit()
    wait(browser, lambda d: len(css(d, "[data-testid=event-row]")) == 1, "filtered to one task event")
    assert "task.updated" in css(browser, "[data-testid=event-row]")[0].text
    for name in ("type", "text"):  # the page keeps a session's filters: leave none for the next tests
        form.find_element("name", name).clear()
    form.submit()
    wait(browser, lambda d: len(css(d, "[data-testid=event-row]")) > 1, "filters cleared")


def test_follow_a_citation_and_see_its_proof(browser, server, seeded, tmp_path) -> None:
    go(browser, server, session_fragment(seeded.shop))
    row = wait(browser, lambda d: [r for r in css(d, "[data-testid=event-row]") if r.get_attribute("data-seq") == "2"])
    row[0].find_element("css selector", "a.cite").click()
    proof = wait(browser, lambda d: css(d, "[data-testid=proof]"), "proof")[0]
    assert "#/cite/" in browser.current_url
    assert "verified" in proof.find_element("css selector", "h2").text
    hashes = {row.find_element("css selector", "th").text: row for row in proof.find_elements("css selector", "tr")}
    stored = hashes["stored hash"].find_element("css selector", "td").text
    assert hashes["recomputed hash"].find_element("css selector", "td").text == stored
    assert seeded.current_fact.rsplit("#", 1)[1] == stored[:12]
    assert "match" in hashes["prev_hash"].text
    assert "#1 fact.asserted" in hashes["previous event"].text  # the link back to the event it chains from
    assert "the deploy target is prod" in css(browser, "[data-testid=payload]")[0].text
    snap(browser, "event-proof", tmp_path)
    # A citation whose hash does not match the event is refused, never shown as that event.
    forged = seeded.current_fact[:-12] + "0" * 12
    go(browser, server, "cite/" + quote(forged, safe=""))
    error = wait(browser, lambda d: css(d, "[data-testid=error]"), "refused citation")[0]
    assert "not_found" in error.text or "integrity" in error.text
    assert css(browser, "[data-testid=payload]") == []


def test_entity_history_shows_supersession_and_invalidation(browser, server, seeded, tmp_path) -> None:
    go(browser, server, session_fragment(seeded.shop, "entities"))
    link = wait(browser, lambda d: [a for a in css(d, "[data-testid=entity-row] a") if a.text == "deploy target"])
    link[0].click()
    versions = wait(browser, lambda d: css(d, "[data-testid=version-row]"), "versions")
    assert len(versions) == 2
    assert "superseded" in versions[0].text and "staging" in versions[0].text
    closing = versions[0].find_elements("css selector", "a.cite")[0]
    assert closing.get_attribute("href").endswith(quote(seeded.current_fact, safe=""))
    assert "current" in versions[1].text and "prod" in versions[1].text
    snap(browser, "entity", tmp_path)
    go(browser, server, session_fragment(seeded.shop, "entity", "fact", "db engine"))
    versions = wait(browser, lambda d: css(d, "[data-testid=version-row]"), "invalidated entity")
    assert "invalidated" in versions[0].text
    assert "reason: we moved to postgres 16" in versions[0].text
    assert "memory.invalidated" in versions[0].text


def test_checkout_preview_shows_the_exact_packet(browser, server, seeded, tmp_path) -> None:
    go(browser, server, session_fragment(seeded.shop, "checkout"))
    query = wait(browser, lambda d: css(d, "[data-testid=checkout-query]"))[0]
    query.send_keys("What is the deploy target?")
    budget = css(browser, "[data-testid=checkout-budget]")[0]
    budget.clear()
    budget.send_keys("600")
    css(browser, "[data-testid=checkout-form] button[type=submit]")[0].click()
    prompt = wait(browser, lambda d: css(d, "[data-testid=packet-prompt]"), "packet")[0]
    with MemoryFabric.from_path(seeded.path) as fabric:
        packet = fabric.checkout("What is the deploy target?", session=seeded.shop, max_tokens=600, purpose="general")
    assert prompt.text.split() == packet.prompt.split()  # what the agent would get, word for word
    answer = css(browser, "[data-testid=answerability] .badge")[0].text
    assert answer == packet.quality.answerability
    for tier in (1, 2, 3):
        assert css(browser, f"[data-testid=tier-{tier}]")
    tier_one = css(browser, "[data-testid=tier-1]")[0].text + css(browser, "[data-testid=tier-3]")[0].text
    assert "the deploy target is prod" in tier_one or "prod" in prompt.text
    assert "elided to fit the budget" in css(browser, "[data-testid=elided]")[0].text
    snap(browser, "checkout", tmp_path)


def test_causal_graph_and_accepting_a_candidate(browser, server, seeded, tmp_path) -> None:
    go(browser, server, session_fragment(seeded.shop, "cognitive", "outcome", seeded.explained_entity))
    edges = wait(browser, lambda d: css(d, "[data-testid=causal-edge]"), "causal edges")
    assert {e.text.split(" caused ")[0] for e in edges} == {"flaky fixture", "red build"}
    assert len(css(browser, "[data-testid=causal-graph] svg rect")) == 3  # cause, entity, effect
    row = wait(browser, lambda d: css(d, f"[data-candidate={seeded.candidate_id}]"), "candidate")[0]
    assert "pending" in row.text
    row.find_element("css selector", "[data-testid=review-rationale]").send_keys("matches the two facts")
    row.find_element("css selector", "[data-testid=accept]").click()
    done = wait(browser, lambda d: css(d, "[data-testid=review-done]"), "review recorded")[0]
    assert "accepted" in done.text
    assert "accepted" in css(browser, f"[data-candidate={seeded.candidate_id}]")[0].text
    snap(browser, "cognitive", tmp_path)
    review_citation = done.find_element("css selector", "a.cite").text
    go(browser, server, session_fragment(seeded.shop))
    top = wait(browser, lambda d: css(d, "[data-testid=event-row]"))[0]
    assert "consolidation.candidate.reviewed" in top.text and "zaxy-ui" in top.text
    assert review_citation in top.text


def test_known_unknowns_and_belief_proposals_are_shown_cited(browser, server, seeded) -> None:
    go(browser, server, session_fragment(seeded.shop, "cognitive", "outcome", seeded.explained_entity))
    section = wait(
        browser,
        lambda d: [s for s in css(d, "[data-testid=uncertainty]") if UNKNOWN_QUESTION in s.text],
        "known unknown shown",
    )[0]
    assert BELIEF_CLAIM in section.text and "non_authoritative" in section.text
    items = section.find_elements("css selector", "li")
    assert len(items) == 2 and all(item.find_elements("css selector", "a.cite") for item in items)


def test_live_timeline_shows_new_events(browser, server, seeded) -> None:
    go(browser, server, session_fragment(seeded.shop))
    wait(browser, lambda d: css(d, "[data-testid=event-row]"))
    with MemoryFabric.from_path(seeded.path) as fabric:  # another process, like an agent's hook, appends
        event = fabric.append(seeded.shop, "decision.recorded", {"decision": "pin the fixture seed", "why": "flaky"})
    fresh = wait(browser, lambda d: css(d, "li.event.fresh"), "live event")
    assert f"#{event.seq}" in fresh[0].text and "pin the fixture seed" in fresh[0].text


def test_live_events_pass_the_timelines_filters(browser, server, seeded) -> None:
    """docs/ui.md: 'the page re-reads the timeline with its filters, so what appears is what a reload would show'."""
    go(browser, server, session_fragment(seeded.shop))
    wait(browser, lambda d: css(d, "[data-testid=event-row]"))
    form = css(browser, "[data-testid=timeline-filters]")[0]
    form.find_element("name", "type").send_keys("decision.recorded")
    form.submit()
    wait(
        browser,
        lambda d: (rows := css(d, "[data-testid=event-row]")) and all("decision.recorded" in r.text for r in rows),
        "filtered to decisions",
    )
    with MemoryFabric.from_path(seeded.path) as fabric:  # another process appends one of each
        fabric.append(seeded.shop, "note.recorded", {"text": "a note the filter hides"})
        decision = fabric.append(seeded.shop, "decision.recorded", {"decision": "freeze deploys", "why": "audit"})
    fresh = wait(browser, lambda d: [r for r in css(d, "li.event.fresh") if f"#{decision.seq}" in r.text], "live")
    assert "freeze deploys" in fresh[0].text
    assert all("decision.recorded" in row.text for row in css(browser, "[data-testid=event-row]"))
    assert not [row for row in css(browser, "[data-testid=event-row]") if "a note the filter hides" in row.text]
    form = css(browser, "[data-testid=timeline-filters]")[0]
    form.find_element("name", "type").clear()  # the page keeps a session's filters: leave none for the next tests
    form.submit()
    wait(browser, lambda d: any("note.recorded" in r.text for r in css(d, "[data-testid=event-row]")), "cleared")


def test_whole_session_previews_one_to_the_head_it_was_shown(browser, server, seeded) -> None:
    """docs/ui.md: '*Whole session* fills in 1..the current head, so events an agent appends after the preview
    are never erased unseen'."""
    with MemoryFabric.from_path(seeded.path) as fabric:
        head = fabric.head(seeded.shop).seq
    preview_erase(browser, server, seeded.shop, 3, 3)
    wait(browser, lambda d: css(d, "[data-testid=erase-preview] .confirm"), "first preview")
    whole = [b for b in css(browser, "[data-testid=erase] form button") if b.text == "Whole session"]
    whole[0].click()
    assert css(browser, "[data-testid=erase-from]")[0].get_attribute("value") == "1"
    assert css(browser, "[data-testid=erase-to]")[0].get_attribute("value") == str(head)
    css(browser, "[data-testid=erase-preview-button]")[0].click()
    phrase = f"{seeded.shop}:1-{head}"
    placeholders = lambda d: [box.get_attribute("placeholder") for box in css(d, "[data-testid=erase-confirm]")]  # noqa: E731
    wait(browser, lambda d: placeholders(d) == [phrase], phrase)
    assert f"seq 1 to {head}" in css(browser, "[data-testid=erase-preview] .confirm")[0].text
    with MemoryFabric.from_path(seeded.path) as fabric:  # an agent appends after the preview
        fabric.append(seeded.shop, "note.recorded", {"text": "written after the preview"})
    assert placeholders(browser) == [phrase]  # the preview, and so the erase, still end at the head it showed


def test_forget_invalidates_a_fact_and_previews_an_erase(browser, server, seeded, tmp_path) -> None:
    go(browser, server, session_fragment(seeded.shop, "entity", "fact", "deploy target"))
    reason = wait(browser, lambda d: css(d, "[data-testid=invalidate-reason]"))[0]
    reason.send_keys("deploys are paused")
    css(browser, "[data-testid=invalidate-form] button")[0].click()
    wait(browser, lambda d: any("invalidated" in r.text for r in css(d, "[data-testid=version-row]")), "closed")
    preview_erase(browser, server, seeded.shop, 1, 2)
    preview = wait(browser, lambda d: css(d, "[data-testid=erase-preview] .confirm"), "preview")[0]
    assert "the content (payload) of 2 events, seq 1 to 2" in preview.text
    assert "the deploy target is staging" in preview.text and "the deploy target is prod" in preview.text
    go_button = css(browser, "[data-testid=erase-go]")[0]
    assert not go_button.is_enabled()
    css(browser, "[data-testid=erase-confirm]")[0].send_keys(f"{seeded.shop}:1-2")
    with MemoryFabric.from_path(seeded.path) as fabric:
        erasable = callable(getattr(type(fabric), "erase_range", None))
    assert go_button.is_enabled() is erasable  # enabled only by the exact phrase, and only when erase exists
    snap(browser, "forget", tmp_path, focus="[data-testid=erase] form")


def test_erase_a_range_and_see_it_gone(browser, server, seeded) -> None:
    with MemoryFabric.from_path(seeded.path) as fabric:
        if not callable(getattr(type(fabric), "erase_range", None)):
            pytest.skip("erase (#25.4, branch trustlog) is not on this branch yet: the preview test covers the UI")
    preview_erase(browser, server, seeded.shop, 5, 5)
    type_into(browser, "[data-testid=erase-confirm]", f"{seeded.shop}:5-5", then_click="[data-testid=erase-go]")
    done = wait(browser, lambda d: css(d, "[data-testid=erase-done]"), "erased")[0]
    assert "Erased 1 event." in done.text and "erasure record" in done.text  # the trust erase's report
    go(browser, server, session_fragment(seeded.shop))
    rows = wait(browser, lambda d: css(d, "[data-testid=event-row]"))
    erased = next(r for r in rows if r.get_attribute("data-seq") == "5")
    assert "erased" in erased.text and not re.search(r"script", erased.text)
    assert not [log for log in seeded.path.rglob("*.jsonl") if "onerror=alert(1)" in log.read_text()]  # really gone

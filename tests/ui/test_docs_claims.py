"""docs/ui.md, claim by claim, where the browser and security tests do not already hold it: a real ``zaxy ui``
process answered over plain HTTP (the API the page itself uses).

Each test names the sentence of docs/ui.md it keeps true.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.conftest import run_zaxy
from tests.ui.harness import ui_server
from tests.ui.memory import Seeded, seed_memory
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.ui.app import STATIC

USER = "user-token-" + "u" * 24
ADMIN = "admin-token-" + "a" * 24
SHOP_TOKEN = "shop-session-token-" + "s" * 16
BULK = "bulk"  # a session longer than one scan budget
BULK_EVENTS = 5_050


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    seeded = seed_memory(tmp_path_factory.mktemp("ui-claims") / "eventloom")
    with MemoryFabric.from_path(seeded.path) as fabric:
        fabric.append_many(BULK, [{"type": "note.recorded", "payload": {"n": n}} for n in range(BULK_EVENTS)])
    return seeded


@pytest.fixture(scope="module")
def server(seeded: Seeded, tmp_path_factory: pytest.TempPathFactory):
    tokens = tmp_path_factory.mktemp("ui-claims-tokens") / "session-tokens"
    tokens.write_text(f"{seeded.shop} {SHOP_TOKEN}\n")
    env = {"ZAXY_AUTH_TOKEN": USER, "ZAXY_ADMIN_TOKEN": ADMIN, "ZAXY_SESSION_TOKENS_FILE": str(tokens)}
    with ui_server(seeded.path, env=env) as running:
        yield running


def heads(path: Path) -> dict[str, tuple[int, int]]:
    """Every session log's (size, mtime_ns): what a write of any kind would change."""
    return {log.name: (log.stat().st_size, log.stat().st_mtime_ns) for log in path.rglob("*.jsonl")}


def new_candidate(seeded: Seeded, title: str) -> str:
    """A pending claim candidate in the shop session, citing its current deploy fact."""
    with MemoryFabric.from_path(seeded.path) as fabric:
        candidate = fabric.consolidation_candidate(
            seeded.shop,
            candidate_type="claim",
            title=title,
            summary=f"{title}.",
            source_events=[seeded.current_fact],
            confidence=0.5,
        )
    return candidate["candidate_id"]


def test_nothing_is_loaded_from_the_network_and_the_policy_says_self_only(server) -> None:
    """'ships as plain HTML, CSS and JavaScript inside the package (nothing is loaded from the network: it works
    offline)'; 'a Content-Security-Policy that allows scripts, styles and connections from the inspector itself
    only (no inline script)'."""
    assets = [path for path in STATIC.rglob("*") if path.is_file()]
    assert {path.suffix for path in assets} <= {".html", ".css", ".js", ".svg", ".ico", ".png"}
    remote = re.compile(r"""(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[/"'\s)]|@import\s+url\(\s*['"]?https?:""", re.I)
    for path in assets:
        if path.suffix in (".html", ".css", ".js"):
            text = path.read_text().replace("http://www.w3.org/2000/svg", "")  # a namespace name, never fetched
            assert not remote.search(text), f"{path} loads something from the network"
    policy = dict(
        part.strip().split(" ", 1)
        for part in httpx.get(f"{server.base}/", timeout=30).headers["content-security-policy"].split(";")
    )
    assert policy["default-src"] == "'none'"
    for directive in ("script-src", "style-src", "connect-src"):
        assert policy[directive] == "'self'", directive


def test_only_the_loopback_names_with_the_inspectors_port_are_served(server) -> None:
    """'On a loopback address only the Host names 127.0.0.1, localhost and [::1] with the inspector's port are
    served (no DNS rebinding).'"""
    port = int(server.base.rsplit(":", 1)[1])
    with server.client(USER) as client:
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            assert client.get("/api/sessions", headers={"host": host}).status_code == 200, host
        for host in (f"127.0.0.1:{port + 1}", "localhost", f"zaxy.example:{port}"):
            assert client.get("/api/sessions", headers={"host": host}).status_code == 421, host


def test_the_timeline_reads_a_page_of_50_and_looks_at_most_at_5000_events(server, seeded) -> None:
    """'Each read is bounded: a page of 50 matches, at most 5,000 events looked at per request ("Older events"
    goes on from there).'"""
    with server.client(USER) as client:
        page = client.get(f"/api/sessions/{BULK}/events").json()
        assert len(page["events"]) == 50 and page["events"][0]["seq"] == BULK_EVENTS
        nothing = client.get(f"/api/sessions/{BULK}/events", params={"text": "no event says this"}).json()
        assert nothing["events"] == [] and nothing["scanned"] == 5_000
        assert nothing["next_before_seq"] == BULK_EVENTS - 5_000 + 1  # where "Older events" goes on
        older = client.get(
            f"/api/sessions/{BULK}/events",
            params={"text": "no event says this", "before_seq": nothing["next_before_seq"]},
        ).json()
        assert older["scanned"] == BULK_EVENTS - 5_000


def test_timeline_filters_take_relative_times_and_match_type_actor_and_payload_in_any_case(server, seeded) -> None:
    """'since/until take what --as-of takes: 2026-03-12, 3 days ago, yesterday' and 'text (case-insensitive,
    in the type, actor and payload)'."""
    url = f"/api/sessions/{seeded.shop}/events"
    with server.client(USER) as client:
        everything = client.get(url).json()["events"]
        assert client.get(url, params={"since": "3 days ago"}).json()["events"] == everything  # seeded just now
        assert client.get(url, params={"until": "yesterday"}).json()["events"] == []
        assert client.get(url, params={"until": "2026-03-12"}).json()["events"] == []
        bad = client.get(url, params={"since": "the day after never"})
        assert bad.status_code == 400 and bad.json()["error"]["field"] == "since"
        by_type = client.get(url, params={"text": "TASK.UPDATED"}).json()["events"]
        assert [event["type"] for event in by_type] == ["task.updated"]  # only the type says that
        actors = {event["actor"] for event in everything}
        for actor in actors:
            matched = client.get(url, params={"text": actor.upper()}).json()["events"]
            assert {event["seq"] for event in matched} >= {e["seq"] for e in everything if e["actor"] == actor}


def test_a_checkout_preview_records_nothing(server, seeded) -> None:
    """'Nothing is recorded by a preview.'"""
    before = heads(seeded.path)
    with server.client(USER) as client:
        for purpose in (None, "coding", "review"):
            body = {"query": "What is the deploy target?", "max_tokens": 800}
            response = client.post(f"/api/sessions/{seeded.shop}/checkout", json={**body, "purpose": purpose})
            assert response.status_code == 200 and response.json()["prompt"]
    assert heads(seeded.path) == before


def test_the_user_token_reviews_and_every_write_is_recorded_as_zaxy_ui(server, seeded) -> None:
    """Table row 'ZAXY_AUTH_TOKEN | every session | review decisions'; 'Writes made here are recorded with actor
    zaxy-ui'; 'Errors are the fabric's structured errors with HTTP 400 / 403 / 404 / 409'."""
    candidate = new_candidate(seeded, "The database is postgres")
    with MemoryFabric.from_path(seeded.path) as fabric:
        fabric.append(seeded.shop, "fact.asserted", {"key": "ci runner", "fact": "ci runs on the old runner"})
    with server.client(USER) as user, server.client(ADMIN) as admin:
        body = {"candidate_id": candidate, "decision": "deferred", "rationale": "needs the version"}
        reviewed = user.post(f"/api/sessions/{seeded.shop}/consolidation/review", json=body)
        assert reviewed.status_code == 200, reviewed.text
        body = {"entity": "ci runner", "entity_type": "fact", "reason": "the runner was replaced"}
        invalidated = admin.post(f"/api/sessions/{seeded.shop}/invalidate", json=body)
        assert invalidated.status_code == 200 and invalidated.json()["type"] == "memory.invalidated"
        top = user.get(f"/api/sessions/{seeded.shop}/events", params={"limit": 2}).json()["events"]
        assert [(e["type"], e["actor"]) for e in top] == [
            ("memory.invalidated", "zaxy-ui"),
            ("consolidation.candidate.reviewed", "zaxy-ui"),
        ]
        assert user.get("/api/sessions/no-such-session/chain").status_code == 404
        again = admin.post(f"/api/sessions/{seeded.shop}/invalidate", json=body)  # no current version left
        assert again.status_code in (404, 409) and again.json()["error"]["remediation"]
        forged = seeded.current_fact[:-12] + "0" * 12
        refused = user.get("/api/citation", params={"c": forged})
        assert refused.status_code in (404, 409) and "the deploy target is prod" not in refused.text


def test_a_chain_status_is_reused_until_the_session_changes_and_refresh_recomputes(server, seeded) -> None:
    """'Each chain is recomputed ... when the list is shown, reused for up to a minute while the session's
    head, size and modification time stay the same; click a status to check again.'"""
    url = f"/api/sessions/{quote(seeded.other, safe='')}/chain"
    with server.client(USER) as client:
        first = client.get(url).json()
        assert first["status"] == "verified"
        assert client.get(url).json()["verified_at"] == first["verified_at"]  # reused
        listed = {row["session"]: row for row in client.get("/api/sessions").json()["sessions"]}
        assert listed[seeded.other]["chain"] == first  # the list shows the kept status
        assert client.get(url, params={"refresh": "1"}).json()["verified_at"] > first["verified_at"]
        kept = client.get(url).json()
        with MemoryFabric.from_path(seeded.path) as fabric:
            fabric.append(seeded.other, "note.recorded", {"text": "the session grew"})
        grown = client.get(url).json()
        assert grown["verified_at"] > kept["verified_at"] and grown["event_count"] == kept["event_count"] + 1


def test_zaxy_ui_never_creates_memory_and_refuses_short_tokens(tmp_path: Path) -> None:
    """'never creates one (exit 3 when there is nothing to inspect)' and 'tokens must be at least 16
    characters'."""
    (tmp_path / ".git").mkdir()
    nothing = run_zaxy("ui", "--port", "0", cwd=tmp_path, env={"ZAXY_EVENTLOOM_PATH": ""}, timeout=60)
    assert nothing.returncode == 3, nothing.stderr
    assert "Traceback" not in nothing.stderr and not (tmp_path / ".eventloom").exists()
    with MemoryFabric.from_path(tmp_path / ".eventloom") as fabric:
        fabric.append("s", "note.recorded", {"text": "something to inspect"})
    short = run_zaxy("ui", "--port", "0", cwd=tmp_path, env={"ZAXY_EVENTLOOM_PATH": "", "ZAXY_AUTH_TOKEN": "short"})
    assert short.returncode == 2 and "ZAXY_AUTH_TOKEN" in short.stderr and "16" in short.stderr


def test_a_restart_signs_everyone_out(seeded: Seeded) -> None:
    """'a random, HttpOnly, SameSite=Strict cookie held in the server's memory (a restart signs everyone out)'."""
    env = {"ZAXY_AUTH_TOKEN": USER}
    with ui_server(seeded.path, env=env) as first:
        signed_in = httpx.post(f"{first.base}/login", json={"token": USER}, timeout=30)
        name, value = signed_in.headers["set-cookie"].split(";", 1)[0].split("=", 1)
        assert httpx.get(f"{first.base}/api/sessions", cookies={name: value}, timeout=30).status_code == 200
    with ui_server(seeded.path, env=env) as second:
        restarted = f"zaxy_ui_{second.base.rsplit(':', 1)[1]}"  # the cookie is named after the port
        for cookie in ({name: value}, {restarted: value}):
            assert httpx.get(f"{second.base}/api/sessions", cookies=cookie, timeout=30).status_code == 401


def test_an_entity_shows_stated_and_inferred_relations_with_their_evidence(server, seeded) -> None:
    """'its relations (stated or inferred, with method, confidence and evidence) and the provenance of each
    version back to the event that asserted it'."""
    url = f"/api/sessions/{seeded.shop}/entity"
    with server.client(USER) as client:
        red = client.get(url, params={"type": "outcome", "name": "red build"}).json()
        inferred = red["in_edges"] + red["out_edges"]
        assert inferred and all(edge["inferred"] and edge["method"] for edge in inferred)
        assert {edge["other"]["name"] for edge in inferred} == {"flaky fixture", "release delay"}
        assert {edge["confidence"] for edge in inferred} == {0.8, 0.6}
        assert all(edge["evidence"].startswith("eventloom://") and edge["citation"] for edge in inferred)
        topic = client.get(url, params={"type": "topic", "name": "deploy"}).json()
        stated = topic["in_edges"] + topic["out_edges"]
        assert stated and not any(edge["inferred"] for edge in stated)
        assert {edge["evidence"] for edge in stated} <= {seeded.first_fact, seeded.current_fact} | {
            edge["citation"] for edge in stated
        }
        deploy = client.get(url, params={"type": "fact", "name": "deploy target"}).json()
        assert [version["citation"] for version in deploy["versions"]] == [seeded.first_fact, seeded.current_fact]
        assert {version["source_event_type"] for version in deploy["versions"]} == {"fact.asserted"}


def test_a_session_token_reviews_in_its_session_and_nothing_else(server, seeded) -> None:
    """Table row 'a line <session-id> <token> of ZAXY_SESSION_TOKENS_FILE | that one session | reviews in that
    session'."""
    candidate = new_candidate(seeded, "Deploys are paused on Fridays")
    body = {"candidate_id": candidate, "decision": "rejected", "rationale": "not what was said"}
    with server.client(SHOP_TOKEN) as shop:
        reviewed = shop.post(f"/api/sessions/{seeded.shop}/consolidation/review", json=body)
        assert reviewed.status_code == 200, reviewed.text
        refused = shop.post(
            f"/api/sessions/{seeded.shop}/invalidate",
            json={"entity": "deploy target", "entity_type": "fact", "reason": "no"},
        )
        assert refused.status_code == 403 and refused.json()["error"]["field"] == "token"
        assert shop.get(f"/api/sessions/{BULK}/events").status_code == 403

"""Who may see and change what through ``zaxy ui`` (a real server process, plain HTTP requests).

Tokens are the HTTP MCP server's: the user token, the admin token and session-bound tokens; a session-bound
token for one workspace's session can read nothing of another. Writes go through the fabric operations the CLI
uses, so they are refused with the same structured error. The page never turns memory into markup.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import httpx
import pytest

from tests.conftest import run_zaxy
from tests.ui.harness import ui_server
from tests.ui.memory import OTHER_SECRET, Seeded, seed_memory
from zaxy_agents.ui.app import ROUTES, STATIC

USER = "user-token-" + "u" * 24
ADMIN = "admin-token-" + "a" * 24
SHOP_TOKEN = "shop-session-token-" + "s" * 16
OTHER_TOKEN = "billing-session-token-" + "b" * 16


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    return seed_memory(tmp_path_factory.mktemp("ui-security") / "eventloom")


@pytest.fixture(scope="module")
def server(seeded: Seeded, tmp_path_factory: pytest.TempPathFactory):
    tokens = tmp_path_factory.mktemp("tokens") / "session-tokens"
    tokens.write_text(f"{seeded.shop} {SHOP_TOKEN}\n{seeded.other} {OTHER_TOKEN}\n")
    env = {"ZAXY_AUTH_TOKEN": USER, "ZAXY_ADMIN_TOKEN": ADMIN, "ZAXY_SESSION_TOKENS_FILE": str(tokens)}
    with ui_server(seeded.path, env=env) as running:
        assert running.token is None  # configured tokens: zaxy ui makes none of its own
        yield running


def paths(session: str, citation: str) -> list[tuple[str, str]]:
    """Every API route, filled in for ``session``."""
    filled = []
    for path, _handler, method in ROUTES:
        url = path.replace("{session}", session).replace("{seq:int}", "1")
        if path == "/api/citation":
            url += f"?c={quote(citation, safe='')}"
        filled.append((method, url))
    return filled


def test_no_token_is_refused_everywhere(server, seeded) -> None:
    with httpx.Client(base_url=server.base, timeout=30) as anonymous:
        for method, url in paths(seeded.shop, seeded.first_fact):
            response = anonymous.request(method, url, json={})
            assert response.status_code == 401, (method, url, response.text)
            assert response.json()["error"]["code"] == "unauthorized"
            assert "deploy" not in response.text
        page = anonymous.get("/")  # the page itself is public and holds no memory
        assert page.status_code == 200 and seeded.shop not in page.text


def test_a_wrong_token_is_refused_then_throttled_and_a_good_one_still_works(server, seeded) -> None:
    with server.client("wrong-token-" + "x" * 20) as wrong, server.client(USER) as right:
        codes = [wrong.get("/api/sessions").status_code for _ in range(12)]
        assert codes[0] == 401 and codes[-1] == 429  # a burst of failures, then throttled
        assert right.get("/api/sessions").status_code == 200  # never throttled by someone else's failures


def test_a_session_token_cannot_read_another_workspace(server, seeded) -> None:
    with server.client(SHOP_TOKEN) as shop:
        listed = shop.get("/api/sessions").json()["sessions"]
        assert [row["session"] for row in listed] == [seeded.shop]
        assert shop.get(f"/api/sessions/{seeded.shop}/events").status_code == 200
        with seed_fabric(seeded) as fabric:
            other_citation = next(fabric.replay(seeded.other)).citation
        for method, url in paths(seeded.other, other_citation):
            if seeded.other not in url:
                continue  # /api/me, /api/sessions: the caller's own view (the list above)
            response = shop.request(method, url, json={"query": "invoices", "from_seq": 1, "to_seq": 1})
            assert response.status_code == 403, (method, url, response.text)
            assert response.json()["error"]["code"] == "unauthorized"
            assert OTHER_SECRET not in response.text
        for scope in ([seeded.other], ["*"], ["codex.*"]):  # nor by naming it in a checkout's scope
            response = shop.post(f"/api/sessions/{seeded.shop}/checkout", json={"query": "invoices", "scope": scope})
            assert response.status_code == 403 and OTHER_SECRET not in response.text
    with server.client(OTHER_TOKEN) as other:
        assert other.get(f"/api/sessions/{seeded.shop}/entities").status_code == 403


def test_forgetting_needs_the_admin_token(server, seeded) -> None:
    body = {"entity": "deploy target", "entity_type": "fact", "reason": "no"}
    for token in (USER, SHOP_TOKEN):
        with server.client(token) as client:
            refused = client.post(f"/api/sessions/{seeded.shop}/invalidate", json=body)
            assert refused.status_code == 403 and refused.json()["error"]["field"] == "token"
            preview = client.post(f"/api/sessions/{seeded.shop}/erase/preview", json={"from_seq": 1, "to_seq": 1})
            assert preview.status_code == 403
    with server.client(ADMIN) as admin:
        preview = admin.post(f"/api/sessions/{seeded.shop}/erase/preview", json={"from_seq": 1, "to_seq": 2})
        assert preview.status_code == 200 and preview.json()["event_count"] == 2
        unconfirmed = admin.post(f"/api/sessions/{seeded.shop}/erase", json={"from_seq": 1, "to_seq": 2})
        assert unconfirmed.status_code == 400 and unconfirmed.json()["error"]["field"] == "confirm"


def test_writes_are_validated_exactly_like_the_cli(server, seeded) -> None:
    review = ["memory", "consolidation", "review", seeded.candidate_id, "-s", seeded.shop]
    invalidate = ["memory", "invalidate", "deploy target", "-s", seeded.shop, "--type", "fact"]
    cases = [
        (
            "/consolidation/review",
            {"candidate_id": seeded.candidate_id, "decision": "maybe", "rationale": "r"},
            [*review, "--decision", "maybe", "--rationale", "r"],
        ),
        (
            "/invalidate",
            {"entity": "no such fact", "entity_type": "fact", "reason": "gone"},
            ["memory", "invalidate", "no such fact", "-s", seeded.shop, "--type", "fact", "--reason", "gone"],
        ),
        (
            "/invalidate",
            {"entity": "deploy target", "entity_type": "fact", "reason": "  "},
            [*invalidate, "--reason", "  "],
        ),
    ]
    with server.client(ADMIN) as admin:
        for path, body, command in cases:
            response = admin.post(f"/api/sessions/{seeded.shop}{path}", json=body)
            cli = run_zaxy(*command, "--eventloom-path", str(seeded.path), "--json")
            assert cli.returncode != 0, cli.stdout
            assert response.json() == json.loads(cli.stdout), (path, body)
            assert response.status_code in (400, 404)
        wrong_type = admin.post(f"/api/sessions/{seeded.shop}/invalidate", json={**cases[-1][1], "reason": 5})
        assert wrong_type.status_code == 400 and wrong_type.json()["error"]["field"] == "reason"
        not_json = admin.post(f"/api/sessions/{seeded.shop}/checkout", content=b"{not json")
        assert not_json.status_code == 400 and not_json.json()["error"]["field"] == "body"


def test_page_writes_need_the_page_and_the_right_host(server, seeded) -> None:
    with httpx.Client(base_url=server.base, timeout=30) as browser:
        signed_in = browser.post("/login", json={"token": USER})
        assert signed_in.status_code == 200 and signed_in.json() == {"signed_in": True, "admin": False, "session": None}
        cookie = signed_in.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and USER not in cookie
        assert browser.get("/api/sessions").status_code == 200  # the cookie reads
        body = {"candidate_id": seeded.candidate_id, "decision": "deferred", "rationale": "later"}
        url = f"/api/sessions/{seeded.shop}/consolidation/review"
        forged = browser.post(url, json=body)  # what another site's form could send: no page header
        assert forged.status_code == 403
        cross = browser.post(url, json=body, headers={"x-zaxy-ui": "1", "origin": "http://evil.example"})
        assert cross.status_code == 403
        port = server.base.rsplit(":", 1)[1]
        rebound = browser.get("/api/sessions", headers={"host": f"evil.example:{port}"})  # DNS rebinding
        assert rebound.status_code == 421
        assert browser.post("/login", json={"token": "nope"}).status_code == 401
        browser.post("/logout")
        assert browser.get("/api/sessions").status_code == 401


def test_memory_is_never_turned_into_markup(server) -> None:
    """The page builds every element from text (the browser test shows a <script> payload as text); this
    keeps it that way: no HTML-parsing sink in the page's code, and a CSP that forbids inline script."""
    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|srcdoc")
    for script in (STATIC / "js").glob("*.js"):
        assert not sinks.search(script.read_text()), script
    page = httpx.get(f"{server.base}/", timeout=30)
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert '<script type="module" src="/static/js/main.js">' in page.text


def test_only_loopback_without_a_configured_token(seeded: Seeded) -> None:
    result = run_zaxy("ui", "--eventloom-path", str(seeded.path), "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 2
    assert "ZAXY_AUTH_TOKEN" in result.stderr and "Traceback" not in result.stderr


def seed_fabric(seeded: Seeded):
    from zaxy_agents.fabric import MemoryFabric

    return MemoryFabric.from_path(seeded.path)

"""memory_verbatim is the exact-source lane (issue 17): through the real MCP client, an event whose own text holds
the query term or phrase outranks every event that does not, whatever salience, recency or context say."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.conftest import connected, make_app, ok

EVENTS = [
    ("transcript.turn", {"role": "user", "text": "What should we configure for the API server?"}),
    ("transcript.turn", {"role": "assistant", "text": "Let me check the settings file first."}),
    ("document.chunk", {"path": "docs/config.md", "text": "The API listens on port 8080 by default.", "line_start": 1}),
    ("transcript.turn", {"role": "user", "text": "ok thanks, and the report?"}),
    ("decision.recorded", {"decision": "use gRPC for the API"}),
    ("transcript.turn", {"role": "assistant", "text": "Which port numbers are open?"}),
    ("note.recorded", {"text": "the API port moved to 9090 behind the gateway"}),
]


async def test_exact_term_and_phrase_matches_outrank_every_non_match(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        async with connected(app) as client:
            for kind, payload in EVENTS:
                await ok(client, "memory_append", {"type": kind, "payload": payload})
            port = (await ok(client, "memory_verbatim", {"query": "port"}))["hits"]
            phrase = (await ok(client, "memory_verbatim", {"query": "API port"}))["hits"]
    finally:
        app.close()
    holds = ["port" in hit["content"].lower().replace("report", "") for hit in port]
    assert holds[:3] == [True, True, True] and holds == sorted(holds, reverse=True), [h["content"] for h in port]
    assert port[0]["source_kind"] in {"document", "note", "transcript"}
    assert {h["content"] for h in port[:3]} >= {"The API listens on port 8080 by default."}
    assert [h["score_explanation"]["exact_match"] for h in port[:3]] == ["phrase"] * 3
    assert all(h["score_explanation"]["exact_match"] == "context" for h in port[3:])
    assert phrase[0]["content"].endswith("the API port moved to 9090 behind the gateway")  # the phrase itself
    assert phrase[0]["score_explanation"]["exact_match"] == "phrase"
    assert [h["score_explanation"]["exact_match"] for h in phrase[1:2]] == ["all_terms"]  # "API ... port 8080"

"""Representative tool responses, snapshotted in docs/examples/mcp-responses.json (volatile values normalised).

The test compares the *shape* of each live response (keys, nesting, value types) with the snapshot, so response
contract changes are deliberate. Regenerate after a deliberate change with:

    ZAXY_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/mcp/test_response_snapshots.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT
from tests.mcp.conftest import connected, make_app

SNAPSHOT = REPO_ROOT / "docs" / "examples" / "mcp-responses.json"
REGENERATE = "ZAXY_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/mcp/test_response_snapshots.py"
VOLATILE_NUMBERS = {"took_ms", "took_us", "duration_ms", "pid", "owner_pid"}


async def _responses(root: Path) -> dict[str, Any]:
    app = make_app(root, profile="full", capture=False)
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("memory_append", "memory_append",
         {"event_type": "fact.asserted", "payload": {"key": "db", "fact": "db is MySQL"}}),
        ("memory_checkout", "memory_checkout", {"query": "which db?", "max_tokens": 600}),
        ("memory_append (superseding)", "memory_append",
         {"event_type": "fact.asserted", "payload": {"key": "db", "fact": "db is Postgres 16"}}),
        ("memory_checkout (after supersession)", "memory_checkout", {"query": "which db?", "max_tokens": 600}),
        ("memory_query", "memory_query", {"query": "db", "limit": 3, "include_superseded": True}),
        ("memory_feeling_of_knowing", "memory_feeling_of_knowing", {"query": "which db do we run?"}),
        ("context_after_turn", "context_after_turn",
         {"role": "user", "content": "move to Postgres"}),
        ("error: invalid_request", "memory_checkout", {"query": "x", "max_tokens": 10}),
        ("error: unknown_tool", "memory_forget_everything", {}),
    ]  # fmt: skip
    # seed 003's snapshot also covers the synthesis writes: their arguments come from the numeric checkout's
    # response (the snapshot stores how they were built, not the whole checkout again)
    numeric = "memory_checkout (numeric)"
    calls += [
        ("memory_append (an amount)", "memory_append",
         {"event_type": "note.recorded", "payload": {"text": "The CI runners cost $420 this month."}}),
        (numeric, "memory_checkout", {"query": "How much did the CI runners cost in total?"}),
    ]  # fmt: skip
    derived: list[tuple[str, str, dict[str, str], Any]] = [
        ("memory_synthesis_artifact", "memory_synthesis_artifact",
         {"checkout": f"<{numeric}>", "candidate": "<its rank 1 candidate>", "outcome": "used"},
         lambda c: {"checkout": c, "candidate": c["diagnostics"]["synthesis"]["answer_candidates"][0],
                    "outcome": "used"}),
        ("memory_synthesis_evidence", "memory_synthesis_evidence",
         {"checkout": f"<{numeric}>", "row": "<the row the candidate rests on>", "outcome": "helpful"},
         lambda c: {"checkout": c, "outcome": "helpful",
                    "row": c["diagnostics"]["synthesis"]["answer_candidates"][0]["supporting_source_ids"][0]}),
    ]  # fmt: skip
    responses: dict[str, Any] = {}
    try:
        async with connected(app) as client:
            for label, name, arguments in calls:
                result = await client.call_tool(name, arguments)
                responses[label] = {"tool": name, "arguments": arguments, "isError": result.isError,
                                    "structuredContent": result.structuredContent}  # fmt: skip
            checkout = responses[numeric]["structuredContent"]
            for label, name, shown, build in derived:
                result = await client.call_tool(name, build(checkout))
                responses[label] = {"tool": name, "arguments": shown, "isError": result.isError,
                                    "structuredContent": result.structuredContent}  # fmt: skip
    finally:
        app.close()
    return _normalise(responses, str(root))


async def test_responses_match_the_snapshot(tmp_path: Path) -> None:
    live = await _responses(tmp_path / "eventloom")
    if os.environ.get("ZAXY_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps({"regenerate": REGENERATE, "responses": live}, indent=2) + "\n")
    assert SNAPSHOT.exists(), f"missing {SNAPSHOT.name}: run `{REGENERATE}`"
    stored = json.loads(SNAPSHOT.read_text())["responses"]
    changed = [label for label in live.keys() | stored.keys() if _shape(live.get(label)) != _shape(stored.get(label))]
    assert not changed, (
        f"MCP response shapes changed for: {', '.join(sorted(changed))}. If deliberate, regenerate with `{REGENERATE}` "
        "and review the diff."
    )
    assert live["memory_checkout (after supersession)"]["structuredContent"]["retention"]["superseded_excluded"] >= 1
    assert not live["memory_synthesis_artifact"]["isError"] and not live["memory_synthesis_evidence"]["isError"]
    assert live["memory_synthesis_artifact"]["structuredContent"]["outcome"]["event_type"] == "memory.synthesis.used"


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    if isinstance(value, int | float):
        return "number"
    return "str"


def _normalise(value: Any, root: str, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _normalise(v, root, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(item, root) for item in value]
    if key in VOLATILE_NUMBERS and isinstance(value, int | float):
        return 0
    if isinstance(value, str):
        value = value.replace(root, "<eventloom>")
        value = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z", "<timestamp>", value)
        value = re.sub(r"\b[0-9a-f]{64}\b", "<sha256>", value)
        value = re.sub(r"#[0-9a-f]{12}\b", "#<hash12>", value)
        return re.sub(r"\bevt_[0-9a-f]{32}\b", "evt_<id>", value)
    return value

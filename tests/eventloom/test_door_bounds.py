"""#25.9: values that would make a log unreadable (deep nesting, huge integers, NaN/infinities, self-reference)
are refused at the door with ``invalid_request`` naming the field, on every backend, the real CLI and a real
MCP stdio server; nothing is written and the log stays readable by every command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_zaxy, run_zaxy_json
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.eventloom.validation import MAX_PAYLOAD_DEPTH


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth):
        value = {"a": value}
    return value


def _self_referential() -> dict[str, Any]:
    payload: dict[str, Any] = {"items": []}
    payload["items"].append(payload)
    return payload


def _exploding_dag() -> dict[str, Any]:
    shared: list[Any] = [0]
    for _ in range(70):  # 2**70 paths through 70 objects: a naive walk never ends
        shared = [shared, shared]
    return {"dag": shared}


BAD_PAYLOADS = {
    "deep": (_nested(MAX_PAYLOAD_DEPTH + 1), "nesting is too deep"),
    "very-deep": (_nested(990), "nesting is too deep"),
    "huge-int": ({"n": 10**5000}, "integer is too large"),
    "negative-huge-int": ({"n": [-(2**130)]}, "integer is too large"),
    "nan": ({"x": float("nan")}, "NaN or infinite"),
    "infinity": ({"x": {"y": float("inf")}}, "NaN or infinite"),
    "self": (_self_referential(), "refers to an object that contains it"),
    "dag": (_exploding_dag(), "payload"),
}


@pytest.mark.parametrize("name", sorted(BAD_PAYLOADS))
def test_bad_values_are_refused_before_anything_is_written(elog: EventLog, name: str) -> None:
    payload, message = BAD_PAYLOADS[name]
    elog.append("s", "note.added", {"before": True})
    outcome: list[BaseException | None] = []

    def attempt() -> None:  # a self-referential payload used to hang forever: bound the wait
        try:
            elog.append("s", "note.added", payload)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert outcome, f"append of the {name} payload did not return"
    error = outcome[0]
    assert isinstance(error, InvalidRequestError), error
    assert error.field == "payload" and message in error.message
    with pytest.raises(InvalidRequestError) as batch:
        elog.append_many(
            "s", [{"type": "note.added", "payload": {"ok": 1}}, {"type": "note.added", "payload": payload}]
        )
    assert batch.value.field == "events[1].payload"
    assert elog.head("s").seq == 1 and elog.verify("s").ok


def test_the_largest_accepted_values_replay_and_verify(elog: EventLog) -> None:
    payload = {"deep": _nested(MAX_PAYLOAD_DEPTH - 1), "big": 2**128 - 1, "small": -(2**128) + 1, "f": 1e308}
    event = elog.append("s", "note.added", payload)
    assert [e.payload for e in elog.replay("s")] == [payload]
    assert elog.resolve(event.citation).payload == payload
    assert elog.verify("s").ok


@pytest.mark.parametrize("depth", [300, 960, 5000])
def test_cli_append_refuses_deep_json_and_writes_nothing(tmp_path: Path, depth: int) -> None:
    root = str(tmp_path / "loom")
    deep = '{"a":' * depth + "1" + "}" * depth
    code, body = run_zaxy_json(
        "append", "-s", "s", "-t", "note.added", "-a", "me", "-p", deep, "--eventloom-path", root
    )
    assert code == 2, body
    assert body["error"]["code"] == "invalid_request" and "deep" in body["error"]["message"]
    assert not (tmp_path / "loom" / "s.jsonl").exists()


@pytest.mark.parametrize("text", ['{"x": NaN}', '{"x": Infinity}', '{"x": -Infinity}', '{"x": 1e400}', '{"x": 1%s}'])
def test_cli_append_refuses_non_finite_and_huge_numbers(tmp_path: Path, text: str) -> None:
    root = str(tmp_path / "loom")
    text = text.replace("%s", "0" * 5000)
    code, body = run_zaxy_json(
        "append", "-s", "s", "-t", "note.added", "-a", "me", "-p", text, "--eventloom-path", root
    )
    assert code == 2 and body["error"]["code"] == "invalid_request", body
    assert "Traceback" not in run_zaxy("sessions", "--eventloom-path", root).stderr
    assert not (tmp_path / "loom" / "s.jsonl").exists()


def _rpc(process: subprocess.Popen[str], message: str) -> dict[str, Any] | None:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(message + "\n")
    process.stdin.flush()
    if '"id"' not in message:
        return None
    return json.loads(process.stdout.readline())


def test_mcp_refuses_nan_infinity_and_1e400_over_raw_json_rpc(tmp_path: Path) -> None:
    """A real ``zaxy serve`` over stdio, spoken to in raw JSON-RPC: MCP client libraries cannot even send NaN."""
    root = tmp_path / "loom"
    process = subprocess.Popen(
        [sys.executable, "-m", "zaxy_agents.cli.entry", "serve", "--eventloom-path", str(root), "--session-id", "s"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        init = _rpc(
            process,
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            '"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
        )
        assert init is not None and "result" in init
        _rpc(process, '{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for number_id, literal in enumerate(("NaN", "Infinity", "-Infinity", "1e400"), start=2):
            reply = _rpc(
                process,
                f'{{"jsonrpc":"2.0","id":{number_id},"method":"tools/call","params":{{"name":"memory_append",'
                f'"arguments":{{"type":"note.added","payload":{{"score":{literal}}}}}}}}}',
            )
            assert reply is not None
            result = reply["result"]
            assert result["isError"] is True, reply
            error = json.loads(result["content"][0]["text"])["error"]
            assert error["code"] == "invalid_request" and "NaN or infinite" in error["message"], error
        ok = _rpc(
            process,
            '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"memory_append",'
            '"arguments":{"type":"note.added","payload":{"score":1.5}}}}',
        )
        assert ok is not None and ok["result"].get("isError") is not True, ok
    finally:
        process.kill()
        process.wait(timeout=30)
    lines = (root / "s.jsonl").read_bytes().splitlines()
    notes = [json.loads(line) for line in lines if json.loads(line)["type"] == "note.added"]
    assert [note["payload"] for note in notes] == [{"score": 1.5}]  # the refused calls wrote nothing

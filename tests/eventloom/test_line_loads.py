"""``integrity.loads`` (the checkout's and query's decode of each log line they read) gives ``json.loads``'s answer
on every line: pydantic-core's parser where it accepts the line, ``json.loads`` (same value or same error) where
it does not. Edge cases of JSON both parsers meet, then every line of a real log."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from zaxy_agents.eventloom.integrity import loads
from zaxy_agents.fabric import MemoryFabric

LINES = [
    b'{"a":1,"a":2}',  # duplicate keys: the last wins
    b'{"x":1e400,"y":-1e400,"z":NaN,"w":Infinity,"v":-Infinity}',
    b'{"x":123456789012345678901234567890,"y":-0.0,"z":5e-324,"w":1.7976931348623157e308}',
    b'{"x":0.1,"y":1E2,"z":9999999999999999999999.5,"w":2.2250738585072011e-308,"v":1.0}',
    b'{"x":"\\ud800"}',  # a lone surrogate escape: json.loads keeps it
    b'{"\\ud83d\\ude00":"\\u0000\\n\\t\\"\\\\"}',
    b'\xef\xbb\xbf{"a":1}',  # a byte-order mark
    b' {"a":[1,{"b":null}],"c":true,"d":false}\n',
    '{"é":"日本語"}'.encode(),
    b'"a string"',
    b"[" * 5000 + b"]" * 5000,  # deeper than pydantic-core goes
]
BAD = [b'{"a":1} x', b'{"a":"\xff"}', b'{"a":tru}', b'{"a":1,}', b'{"a":01}', b'{"a":"\\x"}', b'{"a":.5}', b""]


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and (a == b) and repr(a) == repr(b)


@pytest.mark.parametrize("line", LINES)
def test_the_value_of_json_loads(line: bytes) -> None:
    try:
        expected = json.loads(line)
    except RecursionError:
        with pytest.raises(RecursionError):
            loads(line)
        return
    assert _same(loads(line), expected)


@pytest.mark.parametrize("line", BAD)
def test_the_error_of_json_loads(line: bytes) -> None:
    with pytest.raises(ValueError) as expected:
        json.loads(line)
    with pytest.raises(type(expected.value)):
        loads(line)


def test_every_line_of_a_real_log(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", use_graph=False) as memory:
        memory.append("s", "fact.asserted", {"subject": "db", "predicate": "host", "object": "alpha \u00e9 \U0001f600"})
        memory.append("s", "transcript.turn", {"role": "user", "text": "ratio 1e-7, 3.14159, -0.0", "n": 2**100})
        memory.append("s", "decision.recorded", {"decision": "x" * 5000, "topic": "t", "scores": [0.1, 1e300, -5]})
    lines = (tmp_path / "loom" / "s.jsonl").read_bytes().splitlines()
    assert len(lines) == 3
    for line in lines:
        assert _same(loads(line), json.loads(line))


def test_the_fast_parser_is_used_once_pydantic_is_loaded() -> None:
    from zaxy_agents.eventloom import integrity

    assert loads(b'{"a":1}') == {"a": 1}
    assert integrity._from_json is not None  # the cases above went through pydantic-core, not json.loads alone

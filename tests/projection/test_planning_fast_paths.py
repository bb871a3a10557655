"""The planner's and extractors' fast paths give exactly what the plain code gives.

Each fast path (docs/benchmarks.md, "Round K") is compared with the formulation it replaced, over random and
edge-case inputs: a difference would change stored properties, summaries, identity keys or labels, so the
catalog, the graph and every index built from them.
"""

from __future__ import annotations

import json
import random

import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.projection import model
from zaxy_agents.projection.extractors.common import bounded, pick
from zaxy_agents.projection.properties_json import properties_json

_CHARS = ["a", "B", " ", "  ", "\n", "\t", "\x1f", "\x00", "\xa0", "\u2028", "é", "\u3000", '"', "\\", "\ud800", "😀"]


def _text(rng: random.Random, low: int, high: int) -> str:
    return "".join(rng.choice(_CHARS) for _ in range(rng.randint(low, high)))


def _reference_json(properties: object) -> str:
    return json.dumps(properties, sort_keys=True, separators=(",", ":"), default=str)


def test_properties_json_matches_the_encoder() -> None:
    rng = random.Random(11)
    samples: list[object] = [
        {},
        {"role": "user", "speaker": "Ann", "occurred_at": "2026-01-01T00:00:00.000000Z"},
        {"a": "1", "a b": "2", "a\x00": "3", "": ""},  # key order by key, not by the encoded item
        {"n": 1, "s": "x"},
        {"nested": {"z": "1", "a": ["b", None, 2.5]}},
        {"t": True, "none": None},
        {"obj": object.__new__(type("Opaque", (), {"__str__": lambda self: "opaque"}))},  # default=str
        [1, "a"],
        "plain",
    ]
    for _ in range(3000):
        samples.append({_text(rng, 0, 6): _text(rng, 0, 12) for _ in range(rng.randint(0, 5))})
    for properties in samples:
        assert properties_json(properties) == _reference_json(properties)


def test_properties_json_refuses_what_the_encoder_refuses() -> None:
    for properties in ({1: "a", "b": "c"}, {"a": "b", ("t",): "c"}):
        with pytest.raises(TypeError):
            _reference_json(properties)
        with pytest.raises(TypeError):
            properties_json(properties)


def _reference_bounded(text: str, limit: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@pytest.mark.parametrize("limit", [1, 2, 10, 100, 600])
def test_bounded_matches_collapsing_the_whole_text(limit: int) -> None:
    rng = random.Random(limit)
    for _ in range(4000):
        size = rng.choice([0, 1, limit - 1, limit, limit + 1, limit + limit // 4, 2 * limit, 3 * limit + 7])
        text = _text(rng, max(0, size - 20), size + 20)
        assert bounded(text, limit) == _reference_bounded(text, limit)


def _reference_pick(payload: dict[str, object], *keys: str) -> object:
    for key in keys:
        value = payload.get(key)
        if value not in (None, "", [], {}):
            return value
    return None


def test_pick_matches_the_plain_test() -> None:
    class Text(str):
        pass

    values: list[object] = [None, "", "x", [], {}, [0], {"a": 1}, 0, 0.0, False, True, Text(""), Text("y"), ()]
    rng = random.Random(3)
    for _ in range(3000):
        payload = {key: rng.choice(values) for key in "abc" if rng.random() < 0.8}
        got, want = pick(payload, "a", "b", "c"), _reference_pick(payload, "a", "b", "c")
        assert got is want or (got == want and type(got) is type(want))


def test_entity_key_memo_gives_the_computed_key() -> None:
    def reference(session: str, entity_type: str, name: str) -> str:
        return f"{session}\x1f{entity_type}\x1f{' '.join(name.casefold().split())}"

    rng = random.Random(5)
    triples = [(_text(rng, 0, 4), rng.choice(["turn", "participant", "t\x1fx"]), _text(rng, 0, 8)) for _ in range(500)]
    for _ in range(3):  # misses, then hits (and the memo's bound clears it meanwhile)
        for triple in triples * 20:
            assert model.entity_key(*triple) == reference(*triple)
    assert len(model._KEYS) <= model.KEY_MEMO_LIMIT
    # equal but not str: never answered from a str entry, never stored
    assert model.entity_key(1, "t", "Name") == "1\x1ft\x1fname"  # type: ignore[arg-type]
    assert model.entity_key(True, "t", "Name") == "True\x1ft\x1fname"  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        model.entity_key("s", "t", 5)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        model.entity_key("s", "t", ["x"])  # type: ignore[arg-type]


def test_typed_label_memo_keeps_refusing_invalid_types() -> None:
    for _ in range(2):
        assert model.typed_label("calls_symbol") == "CALLS_SYMBOL"
        for bad in ("has_event", "Bad", "a__b", "x" * 61, 5, ["spoke"]):
            with pytest.raises(InvalidRequestError):
                model.typed_label(bad)  # type: ignore[arg-type]
    assert "has_event" not in model._LABELS

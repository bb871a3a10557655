"""The Aho-Corasick gate in front of the redaction rules: a text it lets through unscanned fires no rule, so the
gated and ungated paths redact alike (every corpus shape, alone, inside ordinary text, in other cases)."""

from __future__ import annotations

import random

import pytest

from tests.surfaces.secret_corpus import ORDINARY, SECRETS
from zaxy_agents.eventloom import redaction
from zaxy_agents.eventloom.secret_rules import _leading_literals, gate_needles


def _texts() -> list[str]:
    rng = random.Random(21)
    texts = list(ORDINARY)
    for secret in SECRETS:
        filler = rng.choice(ORDINARY)
        texts += [secret.text, f"{filler} {secret.text} {filler}", secret.text.lower(), secret.text.upper()]
        texts.append(filler[: len(filler) // 2] + secret.text[: max(1, len(secret.text) // 2)])  # a cut secret
    return texts


def test_pattern_rules_start_with_their_gate_literals() -> None:
    rules = redaction._rules()
    assert gate_needles(rules) is not None  # every pattern rule has literals: the gate is built
    texts = _texts()
    checked = 0
    for kind, markers, pattern, *_ in rules:
        if markers:
            continue
        literals = _leading_literals(pattern)
        assert literals and min(map(len, literals)) >= 2, kind
        for text in texts:
            for match in pattern.finditer(text):
                assert text.startswith(literals, match.start()), (kind, text)
                checked += 1
    assert checked > 50


def test_gated_rules_equal_the_rule_by_rule_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [*_texts(), "lone \ud800 surrogate", "sk-\udfffabcdefghijklmnopqrstuvwx", "ghp_\ud800" + "a" * 36]
    monkeypatch.setattr(redaction, "_scanned", [redaction.GATE_AFTER])  # the gate is on from the first text
    assert redaction._gate() is not None
    gated = [(redaction.rules_for(t), redaction.text_has_markers(t), redaction.redact_text(t)) for t in texts]
    skipped = sum(redaction._firing(t, t.lower()) == () for t in texts)
    monkeypatch.setattr(redaction, "_gate", lambda: None)
    plain = [(redaction.rules_for(t), redaction.text_has_markers(t), redaction.redact_text(t)) for t in texts]
    assert gated == plain
    assert 0 < skipped < len(texts) and sum(bool(rules) for rules, _, _ in plain) > len(SECRETS)  # both answers

"""``tokens.text_tokens`` counts a prompt chunk by chunk (cut at newlines a non-space character follows) and must
equal the whole text's encoding, token for token count, on any text: random lines built from the characters the
pre-tokenizer treats apart (letters, digits, apostrophes, punctuation, spaces, tabs, carriage returns, empty and
indented lines, non-ASCII letters and spaces), and real checkout prompts."""

from __future__ import annotations

import random
from pathlib import Path

from zaxy_agents.checkout import tokens
from zaxy_agents.checkout.tokens import get_encoding, text_tokens
from zaxy_agents.fabric import MemoryFabric

PIECES = [
    "word", "Word", "WORDS", "x", "é", "日本", "ß", "'s", "'ll", "'T", "don't", "12345", "7", "3.14", "-", "--",
    ".", "...", "!?", "#", "## Title", "[eventloom://s/events/4#ab12]", "/path/to", "(a)", '"q"', "—", "…",
    " ", "  ", "\t", "\r", "\u00a0", "\u2003", "\u3000", "\x1c", "\x85", "\u2028", "😀", "<|endoftext|>",
]  # fmt: skip


def _text(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(0, 30)):
        kind = rng.random()
        if kind < 0.15:
            lines.append("")
        else:
            line = "".join(rng.choice(PIECES) + rng.choice(["", " ", "", ""]) for _ in range(rng.randint(1, 12)))
            lines.append(("  " + line) if kind > 0.9 else line)
    text = "\n".join(lines)
    return text + rng.choice(["", "\n", "\n\n", " \n", ".\n"])


def test_equals_the_whole_encoding_on_random_texts() -> None:
    encoder = get_encoding("cl100k_base")
    rng = random.Random(19)
    for _ in range(1500):
        text = _text(rng)
        assert text_tokens(encoder, text) == len(encoder.encode(text, disallowed_special=())), repr(text)


def test_other_encodings_are_encoded_whole(monkeypatch) -> None:
    encoder = get_encoding("cl100k_base")
    monkeypatch.setattr(tokens, "CHUNKED_ENCODINGS", frozenset())
    seen = dict(tokens._line_counts)
    assert text_tokens(encoder, "a new line\nanother new line\n") == 8
    assert tokens._line_counts == seen  # nothing counted per chunk


def test_equals_the_whole_encoding_on_checkout_prompts(tmp_path: Path) -> None:
    encoder = get_encoding("cl100k_base")
    with MemoryFabric.from_path(tmp_path / "loom", use_graph=False) as memory:
        for n in range(40):
            memory.append("p", "decision.recorded", {"decision": f"Use option {n} for area {n % 7}", "topic": f"a{n}"})
            memory.append("p", "transcript.turn", {"role": "user", "text": f"  build {n}: needs --fast-{n}!  "})
        for question in ("Which option for area 3?", "who's building 12", "flag --fast-7"):
            for budget in (150, 400, 2000):
                packet = memory.checkout(question, session="p", max_tokens=budget)
                whole = len(encoder.encode(packet.prompt, disallowed_special=()))
                assert text_tokens(encoder, packet.prompt) == whole
                assert packet.diagnostics.budget_used == whole

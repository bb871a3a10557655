"""A large conversational corpus made of real LoCoMo turns, for index benchmarks at 10k-1M events.

LoCoMo holds ~3,600 real dialogue turns (six conversations here). To reach a million events without inventing
text, each *session* of the corpus replays one conversation (its speakers, sittings as segments, dates shifted
by a multiple of a week) with every turn's sentences resampled (some dropped, order kept), so texts repeat
words and rhythm of real dialogue without being copies of each other. The questions are LoCoMo's, asked of a
session (scoped, as checkout does) or of the whole memory. Deterministic per seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from zaxy_agents.evaluation.locomo_data import Conversation, load_conversations
from zaxy_agents.projection.model import SearchDoc

DATASET = Path("/work/shared/datasets/locomo/locomo_dev6.json")
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")


@dataclass(frozen=True)
class Corpus:
    conversations: list[Conversation]
    seed: int = 7

    @classmethod
    def load(cls, dataset: str | Path = DATASET, seed: int = 7) -> Corpus:
        return cls(load_conversations(dataset), seed)

    def sessions(self, events: int) -> list[tuple[str, Conversation, int]]:
        """``(session name, conversation, year shift)`` for as many sessions as ``events`` turns need."""
        out, total, number = [], 0, 0
        while total < events:
            conversation = self.conversations[number % len(self.conversations)]
            out.append((f"conv-{number:06d}", conversation, number // len(self.conversations)))
            total += len(conversation.turns)
            number += 1
        return out

    def documents(self, events: int) -> Iterator[SearchDoc]:
        """``events`` searchable events, session after session (each in seq order)."""
        rng = random.Random(self.seed)
        produced = 0
        for session, conversation, shift in self.sessions(events):
            for seq, turn in enumerate(conversation.turns, start=1):
                if produced >= events:
                    return
                text = turn.text if shift == 0 else _resample(turn.text, rng)
                when = _shift(turn.occurred_at, shift)
                yield SearchDoc(session, seq, f"{produced:064x}", "transcript.turn", text, turn.speaker,
                                turn.caption, turn.segment, when)  # fmt: skip
                produced += 1

    def questions(self, events: int, count: int, seed: int = 11) -> list[tuple[str, str]]:
        """``count`` (question, session) pairs, each question asked of a session replaying its conversation."""
        rng = random.Random(seed)
        sessions = self.sessions(events)
        out = []
        while len(out) < count:
            session, conversation, _ = rng.choice(sessions)
            if conversation.questions:
                out.append((rng.choice(conversation.questions).text, session))
        return out


def _resample(text: str, rng: random.Random) -> str:
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()] or [text]
    kept = [s for s in sentences if rng.random() < 0.75] or [rng.choice(sentences)]
    if len(kept) > 1 and rng.random() < 0.3:
        kept.pop(rng.randrange(len(kept)))
    return " ".join(kept)


def _shift(stamp: str | None, weeks: int) -> str:
    if not stamp:
        return "2023-01-01T00:00:00.000000Z"
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(weeks=weeks)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

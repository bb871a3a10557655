"""A realistic mixed event stream for scale benchmarks: events of ~200-2,000 bytes (mean ~1 KB).

Conversation turns with Zipf-distributed prose (the bulk of a real memory), prompts, commands with output,
file edits, tasks, decisions, facts re-asserted over time (supersession), tool calls. Deterministic per seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

_SYLLABLES = [consonant + vowel for consonant in "bdfgjklmnprstvz" for vowel in "aeiou"]


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))] = None
    return list(words)


class RealisticStream:
    """Draft events; ``session_size`` events per session (sessions named ``s00000``, ``s00001``...)."""

    def __init__(self, seed: int = 7, vocabulary: int = 30_000, session_size: int = 1000) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(vocabulary, self.rng)
        weights = [1.0 / (rank + 1) for rank in range(len(self.words))]
        total = sum(weights)
        self.cumulative = []
        acc = 0.0
        for weight in weights:
            acc += weight / total
            self.cumulative.append(acc)
        self.session_size = session_size
        self.people = [w.capitalize() for w in self.words[200:260]]

    def _prose(self, low: int, high: int) -> str:
        rng = self.rng
        target = rng.randint(low, high)
        words = rng.choices(self.words, cum_weights=self.cumulative, k=max(4, target // 6))
        sentences, current = [], []
        for word in words:
            current.append(word)
            if len(current) > rng.randint(6, 18):
                sentence = " ".join(current)
                sentences.append(sentence[0].upper() + sentence[1:] + rng.choice(".....?!"))
                current = []
        if current:
            sentences.append(" ".join(current).capitalize() + ".")
        return " ".join(sentences)[:high]

    def draft(self, index: int) -> dict:
        rng = self.rng
        task = f"T-{rng.randrange(2000)}"
        roll = rng.random()
        if roll < 0.50:
            return {
                "type": "transcript.turn",
                "payload": {
                    "role": rng.choice(("user", "assistant")),
                    "speaker": rng.choice(self.people),
                    "text": self._prose(200, 2000),
                },
            }
        if roll < 0.58:
            return {"type": "hook.user_prompt_submitted", "payload": {"prompt": self._prose(200, 1200)}}
        if roll < 0.68:
            return {
                "type": "command.completed",
                "payload": {
                    "command": f"pytest tests/{rng.choice(self.words)}_test.py -k {rng.choice(self.words)}",
                    "exit_code": rng.choice((0, 0, 0, 1, 2)),
                    "output": self._prose(150, 1500),
                    "task_id": task,
                },
            }
        if roll < 0.74:
            return {
                "type": "file.edit.applied",
                "payload": {
                    "path": f"src/{rng.choice(self.words)}/{rng.choice(self.words)}.py",
                    "operation": "edit",
                    "lines_added": rng.randrange(40),
                    "lines_removed": rng.randrange(20),
                    "task_id": task,
                },
            }
        if roll < 0.79:
            return {"type": "task.created", "payload": {"task_id": task, "title": self._prose(60, 300)}}
        if roll < 0.82:
            return {"type": "task.completed", "payload": {"task_id": task}}
        if roll < 0.87:
            return {
                "type": "decision.recorded",
                "payload": {
                    "decision": self._prose(100, 600),
                    "rationale": self._prose(100, 500),
                    "topic": f"topic {rng.randrange(3000)}",
                    "task_id": task,
                },
            }
        if roll < 0.94:
            subject = f"service {rng.choice(self.words)}"
            return {
                "type": "fact.asserted",
                "payload": {
                    "subject": subject,
                    "predicate": rng.choice(("port", "owner", "version", "region")),
                    "object": str(rng.randrange(100000)),
                    "fact": f"{subject}: {self._prose(80, 400)}",
                },
            }
        return {
            "type": "tool.call.completed",
            "payload": {
                "tool": rng.choice(("grep", "read", "edit", "bash", "web")),
                "argument_keys": ["path"],
                "result_summary": self._prose(100, 800),
                "task_id": task,
            },
        }

    def sessions(self, count: int) -> Iterator[tuple[str, list[dict]]]:
        """``(session, drafts)`` chunks of at most ``session_size`` events, ``count`` events in all."""
        done, number = 0, 0
        while done < count:
            size = min(self.session_size, count - done)
            yield f"s{number:05d}", [self.draft(done + i) for i in range(size)]
            done += size
            number += 1

"""Every retrieval lane, not only the exact-name one, answers the same under every ``PYTHONHASHSEED``.

``test_hash_seed_packets.py`` pins the one case found (a name's identities read as a set). This test is the sweep:
a realistic multi-session memory (the benchmarks' generator, facts re-asserted across sessions so names tie), and
three processes with different string hashing run the same whole-memory and session checkouts and plain queries.
Any lane that walks a set or dict in hash order into a cut-off (a depth, a budget, a tie) makes a packet or a
ranking differ between the processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.realistic_stream import RealisticStream
from zaxy_agents.fabric import MemoryFabric

EVENTS = 3000
SESSION_SIZE = 150
ANSWERS = """
import hashlib, json, sys
from zaxy_agents.fabric import MemoryFabric
questions = json.loads(sys.argv[2])
out = []
with MemoryFabric.from_path(sys.argv[1]) as fabric:
    for question, session in questions:
        packet = fabric.checkout(question, max_tokens=1500) if session is None else fabric.checkout(
            question, session=session, max_tokens=1500)
        ranking = [[hit.citation, round(hit.score, 9)] for hit in fabric.query(question, k=10).hits]
        out.append([hashlib.sha256(packet.prompt.encode()).hexdigest(), ranking])
json.dump(out, sys.stdout)
"""


SHARED = ("service vazeto", "service kolumo", "service ritaga")


def _memory(root: Path) -> list[tuple[str, str | None]]:
    """Build the memory; return (question, session or None) pairs.

    The generator draws each fact's subject at random from 30k words, so names rarely repeat; every session also
    asserts facts about the same three services (with different values), the way many threads mention one system,
    and people's names recur across sessions by design. Those names tie in every lane that matches names."""
    stream = RealisticStream(seed=11, session_size=SESSION_SIZE)
    rare: list[tuple[str, str, str]] = []
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        for number, (session, drafts) in enumerate(stream.sessions(EVENTS)):
            shared = [
                {
                    "type": "fact.asserted",
                    "payload": {
                        "subject": subject,
                        "predicate": "region",
                        "object": f"zone-{number}-{index}",
                        "fact": f"{subject} runs in zone-{number}-{index} for {session}",
                    },
                }
                for index, subject in enumerate(SHARED)
            ]
            fabric.append_many(session, drafts + shared)
            rare += [
                (draft["payload"]["subject"], draft["payload"]["predicate"], session)
                for draft in drafts
                if draft["type"] == "fact.asserted"
            ][:1]
        fabric.project()
    questions: list[tuple[str, str | None]] = []
    for subject, predicate, session in [(name, "region", "s00003") for name in SHARED] + rare[:6]:
        questions.append((f"what is the {predicate} of {subject}?", None))
        questions.append((f"what is the {predicate} of {subject}?", session))
    for person in stream.people[:4]:
        questions.append((f"what did {person} decide?", None))
    return questions


def _answers(root: Path, work: Path, questions: list[tuple[str, str | None]], seed: int) -> list:
    copy = work / f"seed-{seed}"
    shutil.copytree(root, copy)  # a checkout may write caches: each process starts from the same bytes
    done = subprocess.run(
        [sys.executable, "-c", ANSWERS, str(copy), json.dumps(questions)],
        env={**os.environ, "PYTHONHASHSEED": str(seed)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_checkouts_and_queries_do_not_depend_on_string_hashing(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    questions = _memory(root)
    assert len(questions) == 22
    first = _answers(root, tmp_path, questions, 1)
    assert any(citations for _, citations in first)  # the queries found something to rank
    for seed in (2, 3):
        again = _answers(root, tmp_path, questions, seed)
        differing = [questions[i] for i, (a, b) in enumerate(zip(first, again, strict=True)) if a != b]
        assert not differing, f"PYTHONHASHSEED={seed} changed these answers: {differing}"

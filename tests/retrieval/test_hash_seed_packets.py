"""A checkout's packet does not depend on the process's string hashing (``PYTHONHASHSEED``).

Found at 1M events (docs/benchmarks.md, the garbage collector's share): two runs of the same tree gave a different
evidence list and answerability verdict for one whole-memory question. The exact-name lane read the identities of a
name as a set, whose order follows string hashing, and a lane cut to its depth keeps the first of equal scores: a
name asserted in more sessions than the depth tied, and which of them reached the packet changed per process.
Here 80 sessions assert the same subject, and three processes with different seeds must print the same packet.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from zaxy_agents.fabric import MemoryFabric

SESSIONS = 80
QUESTION = "what is the region of service vazeto?"
CHECKOUT = """
import sys
from zaxy_agents.fabric import MemoryFabric
with MemoryFabric.from_path(sys.argv[1]) as fabric:
    sys.stdout.write(fabric.checkout(sys.argv[2], max_tokens=2000).prompt)
"""


def _memory(root: Path) -> None:
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda", "theta", "zeta"]
    with MemoryFabric.from_path(root) as fabric:
        for number in range(SESSIONS):
            text = " ".join(words[(number * 7 + i * 3) % len(words)] for i in range(12))
            fabric.append_many(
                f"s{number:03d}",
                [
                    {
                        "type": "fact.asserted",
                        "payload": {
                            "subject": "service vazeto",
                            "predicate": "region",
                            "object": f"r{number}",
                            "fact": f"service vazeto: {text}",
                        },
                    },
                    {
                        "type": "fact.asserted",
                        "payload": {
                            "subject": f"service other{number}",
                            "predicate": "region",
                            "object": f"x{number}",
                            "fact": f"service other{number}: {text}",
                        },
                    },
                ],
            )
        fabric.project()


def _packet(root: Path, seed: int) -> str:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run(
        [sys.executable, "-c", CHECKOUT, str(root), QUESTION],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_whole_memory_packet_is_the_same_under_every_hash_seed(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _memory(root)
    packets = [_packet(root, seed) for seed in (1, 2, 3)]
    # the name ties in more sessions than the packet shows, so which of them it shows is a choice the code makes
    assert 0 < packets[0].count("service vazeto:") < SESSIONS
    assert packets[1] == packets[0]
    assert packets[2] == packets[0]

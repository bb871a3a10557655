"""Reads of the embedded graph from other threads while it is written (a catch-up's transactions and checkpoints).

Why: with Kuzu 0.11.3, two reader threads during graph catch-ups crashed the process (segfault, 1 of 3 runs of this
child before the fix) or made the CHECKPOINT after a write fail ("Timeout waiting for active transactions", every
run: the graph was then closed, distrusted and rebuilt). The store now runs writes alone (``_exclusive``): reads of
other threads wait for them and they wait for reads in flight. The child runs in its own process so that a crash
fails this test instead of killing pytest.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT


def test_reads_from_other_threads_during_catch_ups_neither_crash_nor_fail(tmp_path: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-m", "tests.projection._reads_during_writes_child", str(tmp_path / "loom"), "4"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0, f"the child died (rc {child.returncode}): {child.stderr[-2000:]}"
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report["errors"] == [], report
    assert report["complete"], report  # every event reached the graph: no write failed, no rebuild
    assert min(report["reads"]) > 0 and sum(report["overlapped"]) > 0, report  # reads really ran during the writes

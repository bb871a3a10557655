"""A graph written by a release on Kuzu 0.11.3 (``graph.kuzu``) after the switch to LadybugDB (``graph.lbug``).

LadybugDB cannot open a Kuzu 0.11.3 file, so the old file is never opened: the graph is re-projected from the log
into the new file, and the old one (with its WAL) is deleted only once the new file has caught up. A process killed
in between leaves the old file, and what it half wrote is deleted (never opened) by the next process, which then
finishes the job. An erasure deletes the old file at once: it holds the erased rows. The old file's bytes do not
matter (it is never read), so the tests plant one.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from zaxy_agents.fabric import MemoryFabric

SESSION = "proj"
OLD = ("graph.kuzu", "graph.kuzu.wal")


def _memory(root: Path) -> None:
    with MemoryFabric.from_path(root, use_graph=False) as memory:
        memory.append(SESSION, "task.created", {"task_id": "t-1", "title": "fix the flaky retry test"})
        memory.append(SESSION, "file.edited", {"path": "src/retry.py", "task_id": "t-1"})
        memory.append(SESSION, "fact.asserted", {"subject": "api", "predicate": "port", "object": "8080"})
        memory.append(SESSION, "fact.asserted", {"subject": "api", "predicate": "port", "object": "9090"})
        memory.project([SESSION])


def _plant_kuzu_era_graph(root: Path) -> None:
    for name in OLD:
        (root / ".zaxy" / name).write_bytes(os.urandom(8192))


def _graph_files(root: Path) -> set[str]:
    return {path.name for path in (root / ".zaxy").glob("graph.*") if path.name != "graph.lock"}


def _digest_of_a_fresh_memory(root: Path, tmp_path: Path) -> str:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for log in root.glob("*.jsonl"):
        (fresh / log.name).write_bytes(log.read_bytes())
    with MemoryFabric.from_path(fresh) as memory:
        return memory.projection_digest()


@pytest.fixture
def kuzu_era(tmp_path: Path) -> Path:
    root = tmp_path / "loom"
    _memory(root)
    _plant_kuzu_era_graph(root)
    return root


def test_a_kuzu_era_graph_is_re_projected_into_graph_lbug_then_deleted(kuzu_era: Path, tmp_path: Path) -> None:
    with MemoryFabric.from_path(kuzu_era) as memory:
        assert memory.projector.graph_exists()  # the memory has a graph: a server would follow (and convert) it
        assert _graph_files(kuzu_era) == set(OLD)  # opening the memory converts nothing (the graph opens lazily)
        store = memory.projector.store  # first graph use: re-projected from the log
        assert store.backend == "ladybug" and store.cursors()[SESSION][0] == 4
        digest = memory.projection_digest()
        assert memory.traverse(SESSION, "api port", "fact", depth=1) is not None
    assert "graph.lbug" in _graph_files(kuzu_era) and not set(OLD) & _graph_files(kuzu_era)
    assert digest == _digest_of_a_fresh_memory(kuzu_era, tmp_path)


CRASH = """
import os, sys
from pathlib import Path
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection import graph_sync
from zaxy_agents.storage.files import ladybug_store

if sys.argv[2] == "writing":  # killed inside the new file's first transaction
    insert = ladybug_store.LadybugProjectionStore._insert
    def killed(self, *args, **kwargs):
        insert(self, *args, **kwargs)
        os._exit(9)
    ladybug_store.LadybugProjectionStore._insert = killed
else:  # killed after the new file is complete, just before the old one is deleted
    def killed(paths):
        os._exit(9)
    graph_sync._delete = killed
with MemoryFabric.from_path(Path(sys.argv[1])) as memory:
    memory.projector.store
print("not killed")
"""


@pytest.mark.parametrize("moment", ["writing", "retiring"])
def test_a_kill_during_the_conversion_leaves_the_old_file_and_no_debris(
    kuzu_era: Path, tmp_path: Path, moment: str
) -> None:
    child = subprocess.run(
        [sys.executable, "-c", CRASH, str(kuzu_era), moment], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert child.returncode == 9, child.stdout + child.stderr[-2000:]
    left = _graph_files(kuzu_era)
    assert set(OLD) <= left and "graph.lbug" in left  # the old file is still there, next to the new one
    with MemoryFabric.from_path(kuzu_era) as memory:
        with pytest.warns(UserWarning, match="interrupted") if moment == "writing" else contextlib.nullcontext():
            store = memory.projector.store  # a half-written new file is deleted, never opened, and rebuilt
        assert store.cursors()[SESSION][0] == 4
        digest = memory.projection_digest()
    assert _graph_files(kuzu_era) <= {"graph.lbug", "graph.lbug.wal"}  # the old file is gone, and no debris
    wal = kuzu_era / ".zaxy" / "graph.lbug.wal"
    assert not wal.exists() or wal.stat().st_size == 0
    assert digest == _digest_of_a_fresh_memory(kuzu_era, tmp_path)


def test_an_erasure_deletes_the_kuzu_era_graph_at_once(kuzu_era: Path) -> None:
    with MemoryFabric.from_path(kuzu_era) as memory:
        memory.erase_session(SESSION, actor="test", reason="delete_thread")
        assert not set(OLD) & _graph_files(kuzu_era)

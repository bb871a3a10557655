"""Nothing loaded from derived state can run code or crash the process; damage is rebuilt from the log.

A malicious pickle and garbage are planted under every derived-state path of a memory (and in the token cache);
the real CLI then answers a checkout correctly, nothing planted executes, and a warning names each file.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from tests.conftest import run_zaxy_json
from zaxy_agents.fabric import MemoryFabric


class _Planted:
    """Unpickling this creates ``marker``: proof that loading a file ran code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _rank_cache(cache: Path) -> Path:
    from zaxy_agents.checkout.tokens import rank_cache_path

    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        return rank_cache_path("cl100k_base")
    finally:
        if previous is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = previous


def _memory(root: Path) -> None:
    with MemoryFabric.from_path(root) as fabric:
        fabric.append("s", "fact.asserted", {"subject": "api", "predicate": "port", "object": "8080"})
        fabric.append("s", "fact.asserted", {"subject": "api", "predicate": "port", "object": "9090"})
        fabric.append("s", "transcript.turn", {"role": "user", "text": "the api listens on 9090 since the move"})
        fabric.checkout("what port does the api use?", session="s")
        assert fabric.projector.store is not None  # the graph file exists too


def test_planted_pickles_and_garbage_never_run_and_are_rebuilt(tmp_path: Path) -> None:
    root, cache = tmp_path / "loom", tmp_path / "cache"
    _memory(root)
    derived = root / ".zaxy"
    marker = tmp_path / "code-ran"
    payload = pickle.dumps(_Planted(marker))
    planted = {
        derived / "projection-state.pkl": payload,  # the old snapshot name: never loaded any more
        derived / "listeners.state": payload,
        derived / "derived.sqlite": b"garbage" * 999,
        derived / "derived.sqlite-wal": os.urandom(5000),
        derived / "derived.sqlite-shm": os.urandom(32768),
        derived / "graph.kuzu": os.urandom(70000),
        derived / "graph.kuzu.wal": os.urandom(4000),
    }
    ranks = _rank_cache(cache)
    ranks.parent.mkdir(parents=True)
    planted[ranks] = payload  # the token-rank cache (data-only since): garbage to it, rebuilt
    planted[ranks.with_suffix(".pkl")] = payload  # an old pickled cache: never read
    for path, data in planted.items():
        path.write_bytes(data)

    env = {"XDG_CACHE_HOME": str(cache), "PYTHONWARNINGS": "always"}
    code, packet = run_zaxy_json(
        "memory",
        "checkout",
        "what port does the api use?",
        "--session-id",
        "s",
        "--eventloom-path",
        str(root),
        env=env,
    )
    assert code == 0, packet
    assert not marker.exists()
    assert "api port 9090" in packet["prompt"] and "eventloom://s/events/2#" in packet["prompt"]
    warned = "\n".join(packet["warnings"])
    for name in ("projection-state.pkl", "derived.sqlite", "listeners.state"):
        assert name in warned, warned
    # the graph is only opened by graph operations: status opens it, finds it untrusted and rebuilds it
    code, status = run_zaxy_json("memory", "status", "--eventloom-path", str(root), env=env)
    assert code == 0 and status["graph_cursors"] == {"s": 3} and status["current_entities"] >= 1
    assert not marker.exists()
    assert not (derived / "projection-state.pkl").exists()
    assert not (derived / "graph.kuzu.wal").exists() or (derived / "graph.kuzu.wal").stat().st_size == 0
    assert ranks.read_bytes().startswith(b"ZAXYRANKS1")  # the garbage cache was replaced by a real one


def test_a_crafted_state_file_cannot_name_code() -> None:
    """The listeners' state format names no class, module or function: a crafted file is refused, not run."""
    import json

    import pytest

    from zaxy_agents.projection.state_codec import MAGIC, StateFileError, dumps, loads

    for document in ({"$ob": ["os.system", {"$di": {}}]}, {"$ob": ["builtins.eval", "1"]}, {"$zz": 1}):
        text = json.dumps(document).encode()
        with pytest.raises(StateFileError):
            loads(MAGIC + len(text).to_bytes(8, "little") + text, {})
    assert loads(dumps({"a": (1, "b"), "c": {2, 3}}, {}), {}) == {"a": (1, "b"), "c": {2, 3}}


def test_a_graph_left_dirty_is_rebuilt_not_opened(tmp_path: Path) -> None:
    """A write to the embedded graph interrupted mid-way (kill, full disk) leaves it marked dirty: the next
    process deletes it and rebuilds it from the log instead of opening a possibly damaged file."""
    root = tmp_path / "loom"
    _memory(root)
    with MemoryFabric.from_path(root) as fabric:
        graph = fabric.projector.graph
        graph.trust.mark(False)  # exactly what a writer records before its transaction
    with MemoryFabric.from_path(root) as fabric:
        digest = fabric.projection_digest()
        assert any("was interrupted" in notice for notice in fabric.projector.derived.notices)
        assert digest == fabric.reproject()


def test_debris_of_a_killed_save_is_removed_on_open(tmp_path: Path) -> None:
    """A process killed while writing derived state leaves at most a temporary file: the next open removes it
    (the previous state is what was committed, so nothing is lost)."""
    root = tmp_path / "loom"
    _memory(root)
    derived = root / ".zaxy"
    dead = 2**22 + 12345  # no such process
    debris = [derived / f"listeners.state.{dead}.tmp", derived / f"projection-state.pkl.{dead}.1795637.tmp"]
    for path in debris:
        path.write_bytes(os.urandom(1 << 16))
    with MemoryFabric.from_path(root) as fabric:
        assert "api port 9090" in fabric.checkout("what port does the api use?", session="s").prompt
    assert not any(path.exists() for path in debris)

"""BLAS threads are pinned while a query runs (issue 23: threads fighting for 2 busy cores tripled p95)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval import threads
from zaxy_agents.retrieval.threads import blas_threads, query_threads


def test_query_threads_pins_blas_and_gives_the_process_its_setting_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(threads.ENV, raising=False)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):  # the user's own process-wide setting
        assert set(blas_threads()) == {2}
        with query_threads():
            assert set(blas_threads()) == {1}
            with query_threads():  # nested (a query inside a query's callback) shares the limit
                assert set(blas_threads()) == {1}
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {2}
        monkeypatch.setenv(threads.ENV, "0")  # 0 leaves them alone
        with query_threads():
            assert set(blas_threads()) == {2}
    monkeypatch.setenv(threads.ENV, "many")
    with pytest.raises(InvalidRequestError) as info:
        threads.configured_threads()
    assert info.value.field == threads.ENV


def test_a_fabric_query_runs_its_embedder_with_one_blas_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(threads.ENV, raising=False)
    seen: list[list[int]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        seen.append(blas_threads())
        rng = np.random.default_rng(len(texts))
        return rng.standard_normal((len(texts), 8)).tolist()

    with MemoryFabric.from_path(tmp_path / "loom", embedder=embed) as memory:
        memory.append("s", "transcript.turn", {"role": "user", "text": "I repaired the sailboat."})
        memory.project(["s"])
        memory.embed_pending()
        seen.clear()
        assert memory.query("sailboat", sessions=["s"], k=3).hits
    assert seen and all(set(counts) == {1} for counts in seen)  # the query embedding ran pinned

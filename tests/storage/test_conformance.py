"""The conformance kit on the three built-in backends (files, PostgreSQL, memory://): every check of
zaxy_agents.storage.conformance is one test per backend. The kit folds in the official LangGraph checkpointer
conformance suite (all 81 tests, every capability) and the store's differential test against InMemoryStore."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from zaxy_agents.config import ZaxySettings
from zaxy_agents.storage.conformance import CHECKS, validate
from zaxy_agents.storage.conformance.pytest_plugin import test_zaxy_conformance  # noqa: F401 - collected here
from zaxy_agents.storage.memory.backend import MemoryBackend
from zaxy_agents.storage.memory.graph import MemoryGraphStore
from zaxy_agents.storage.memory.log import MemoryEventLog


class _DroppingGraph(MemoryGraphStore):
    """A graph store that loses every relation: the kit must notice."""

    def apply(self, batch):  # type: ignore[no-untyped-def]
        batch.relations = []
        return super().apply(batch)


class _UnchainedLog(MemoryEventLog):
    """A log whose stored lines come back altered: byte-exact imports must notice."""

    def replay_lines(self, session, from_seq=1, to_seq=None):  # type: ignore[no-untyped-def]
        for line in super().replay_lines(session, from_seq, to_seq):
            yield line.replace(b'"prev_hash":"', b'"prev_hash":"f', 1)[:-1] + b"\n"


class _BrokenBackend(MemoryBackend):
    name = "broken"

    def __init__(self, settings: ZaxySettings) -> None:
        super().__init__(settings)
        self._graph = _DroppingGraph()
        self._log = _UnchainedLog(max_payload_bytes=settings.max_payload_bytes)

    def open_graph(self) -> MemoryGraphStore:
        return self._graph


def test_a_broken_backend_fails_the_kit(tmp_path: Path) -> None:
    @contextmanager
    def factory():
        yield _BrokenBackend(ZaxySettings.resolve(tmp_path, backend="memory://"))

    names = {"log.import_export", "graph.matches_reference", "log.citations"}
    report = validate(factory, checks=tuple(check for check in CHECKS if check.name in names))
    assert set(report.failures()) == {"log.import_export", "graph.matches_reference"}
    assert report.results["log.citations"].status == "passed"
    assert "FAILED graph.matches_reference" in report.summary()

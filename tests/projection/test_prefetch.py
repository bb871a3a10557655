"""A rebuild's texts analysed in a worker process (``projection/prefetch.py``): the derived rows are exactly those
of the serial rebuild, the worker really runs (a separate process, plain-data frames), and whatever it cannot do
(a dead worker, an extractor without an importable name, an envelope marshal cannot send) is done here instead."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.realistic_stream import RealisticStream
from tests.projection.test_rebuild_groups import QUERIES, _tables
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.fabric.features import builtin_features
from zaxy_agents.projection import prefetch
from zaxy_agents.projection.model import Extraction
from zaxy_agents.projection.registry import ExtractorTable
from zaxy_agents.retrieval.text import ANALYSER, Analyzer


def _log(root: Path) -> None:
    stream = RealisticStream(seed=11, session_size=300)
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        for session, drafts in stream.sessions(900):
            fabric.append_many(session, drafts)
        fabric.append_many(
            "notes",
            [{"type": "transcript.turn", "payload": {"role": "user", "speaker": "Ann", "text": f"T-{i} port {i}"}}
             for i in range(40)],
        )  # fmt: skip


def _rebuild(root: Path, monkeypatch: pytest.MonkeyPatch, *, worker: bool) -> tuple[list[list[tuple]], int]:
    received = []
    receive = prefetch.ExtractionWorker.receive

    def counted(self: prefetch.ExtractionWorker) -> list[list[tuple[bytes, bytes]]]:
        answer = receive(self)
        received.append(self.process.pid)
        return answer

    monkeypatch.setattr(prefetch.ExtractionWorker, "receive", counted)
    monkeypatch.setattr(prefetch, "WORKER_MIN_EVENTS", 0 if worker else 10**9)
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        fabric.projector.batch_events = 100
        fabric.reproject()
        answers = [[(h.session, h.seq, round(h.score, 9)) for h in fabric.query(q, k=10).hits] for q in QUERIES]
        answers += [[(h.session, h.seq, round(h.score, 9)) for h in fabric.query("deploy retry", k=10).hits]]
    return answers, len(received)


def test_a_rebuild_with_the_worker_writes_what_the_serial_rebuild_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _log(tmp_path / "serial")
    shutil.copytree(tmp_path / "serial", tmp_path / "worker")
    serial, none = _rebuild(tmp_path / "serial", monkeypatch, worker=False)
    parallel, chunks = _rebuild(tmp_path / "worker", monkeypatch, worker=True)
    assert none == 0 and chunks == 10  # 3 sessions of 300 events + 40 notes, in chunks of 100: all from the worker
    assert parallel == serial and any(serial)
    assert _tables(tmp_path / "worker") == _tables(tmp_path / "serial")


def _chunks(root: Path) -> list[tuple[int, list[dict]]]:
    _log(root)
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        envelopes = [e for s in ("s00000", "notes") for e in fabric.projector.log.replay_envelopes(s)]
    return [(n, envelopes[start : start + 30]) for n, start in enumerate(range(0, len(envelopes), 30))]


def test_the_worker_analyses_every_indexed_text_as_the_analyser_does(tmp_path: Path) -> None:
    chunks = _chunks(tmp_path)
    table = builtin_features().extractors
    analyser, texts = Analyzer(), 0
    with prefetch.extraction_pipeline(table, ANALYSER, prefetch.WORKER_MIN_EVENTS) as pipeline:
        for (tag, envelopes), (got_tag, extracted, analysed) in zip(chunks, pipeline(iter(chunks)), strict=True):
            assert got_tag == tag and [envelope for envelope, _ in extracted] == envelopes
            assert [x for _, x in extracted] == [table.extract(e) for e in envelopes]
            for _, extraction in extracted:
                for text in prefetch.texts_of(extraction):
                    assert analysed[text] == analyser.analyse(text)
                    texts += 1
    assert texts > 300


def test_a_dead_worker_or_what_cannot_be_sent_is_extracted_here(tmp_path: Path) -> None:
    chunks = _chunks(tmp_path)
    table = builtin_features().extractors
    chunks[2] = (2, [{**chunks[2][1][0], "odd": object()}, *chunks[2][1][1:]])  # marshal cannot send this chunk
    with prefetch.extraction_pipeline(table, ANALYSER, prefetch.WORKER_MIN_EVENTS) as pipeline:
        results = []
        for n, item in enumerate(pipeline(iter(chunks))):
            results.append(item)
            if n == 3:  # the worker dies with chunks sent and unanswered
                assert pipeline.worker is not None
                pipeline.worker.process.kill()
    assert [tag for tag, _, _ in results] == [tag for tag, _ in chunks]
    for (_, envelopes), (_, extracted, _) in zip(chunks, results, strict=True):
        assert [x for _, x in extracted] == [table.extract(e) for e in envelopes]
    assert not results[2][2] and results[0][2] and not results[-1][2]  # sent by nobody / by the worker / after it died


def test_no_worker_without_importable_names() -> None:
    table = builtin_features().extractors
    names = table.names()
    assert names is not None and ExtractorTable.from_names(*names).registered_types() == table.registered_types()
    assert prefetch.WorkerSpec.of(ExtractorTable([], lambda envelope: Extraction()), ANALYSER) is None
    assert prefetch.WorkerSpec.of(table, None) is None

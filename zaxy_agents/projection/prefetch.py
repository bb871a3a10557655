"""Text analysis on the second core, for ``zaxy reproject``.

A rebuild runs on one core: reading the log, extracting, planning, analysing texts and writing SQLite, one after
the other. Analysing the texts the retrieval indexes index (tokenising, stop words, stemming) needs nothing but
the event, so a worker process runs the extractors and the analyser on the next chunks while this process plans
and writes the current one (up to :data:`LOOKAHEAD` chunks ahead). Only plain data crosses the pipe, as
:mod:`marshal` frames (envelopes one way; new vocabulary strings and per-text term / word ids the other: never
pickle); the worker is started from names (``module:qualname`` of each extractor and of the analyser class, see
:meth:`ExtractorTable.names`), never from objects. Extractions are not sent back: unmarshalling one cost ~3x
running the extractor here.

Determinism: the worker runs the same functions on the same envelopes, so every derived row is what the serial
path writes (``tests/projection/test_prefetch.py`` compares every table). If the worker cannot start, cannot be
sent a chunk or dies, those chunks are analysed here: the worker only ever saves time.
"""

from __future__ import annotations

import contextlib
import marshal
import queue
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from .model import Extraction
from .registry import ExtractorTable, resolve

WORKER_MIN_EVENTS = 4_000  # below this, starting a process (~0.5 s of imports) costs more than it saves
LOOKAHEAD = 2  # chunks the worker may be ahead of the writer
_FRAME = struct.Struct("<Q")
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from zaxy_agents.projection.prefetch import serve; serve()"
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the same code as this process, whatever sys.path says

Analysis = tuple[list[str], list[str]]  # (terms, surface words), as Analyzer().analyse gives them
Envelope = dict[str, Any]
_IDS = np.dtype("<u4")
_NO_WORDS = np.zeros(0, dtype=object)


class Analyses(Mapping[str, Analysis]):
    """text -> its analysis, for one chunk. The worker sends each text's terms and words as ids into a vocabulary
    both sides grow in the same order (only new strings cross the pipe once): unmarshalling the words themselves
    made this process allocate every token again, which cost about what analysing them here did."""

    def __init__(self, vocabulary: np.ndarray, ids: dict[str, tuple[bytes, bytes]]) -> None:
        self.vocabulary, self.ids = vocabulary, ids

    def __getitem__(self, text: str) -> Analysis:
        terms, words = self.ids[text]
        take = self.vocabulary.take
        return take(np.frombuffer(terms, _IDS)).tolist(), take(np.frombuffer(words, _IDS)).tolist()

    def get(self, text: str, default: Any = None) -> Any:
        return self[text] if text in self.ids else default

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


def texts_of(extraction: Extraction) -> list[str]:
    """The texts the retrieval indexes analyse for this event: the verbatim lane's text, caption and speaker (when
    the event is searchable), the entity keyword index's names and summaries."""
    found = [extraction.searchable_text, extraction.caption, extraction.speaker] if extraction.searchable_text else []
    for entity in extraction.entities:
        found += (entity.name, entity.summary)
    return [text for text in found if text]


@dataclass(frozen=True)
class WorkerSpec:
    """What the worker needs, as names: the extractor table's functions and the analyser's class."""

    extractors: list[str]
    generic: str
    analyser: str

    @classmethod
    def of(cls, table: ExtractorTable, analyser: str | None) -> WorkerSpec | None:
        names = table.names()
        if names is None or analyser is None:
            return None
        return cls(names[0], names[1], analyser)


class ExtractionWorker:
    """One worker process and the thread that feeds it (a pipe written and read by one thread would deadlock
    once both directions are full)."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, _PACKAGE_ROOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.failed: str | None = None
        self.vocabulary = np.zeros(0, dtype=object)  # the worker's strings, by id
        self._out: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._sender = threading.Thread(target=self._send_all, name="zaxy-prefetch-sender", daemon=True)
        self._sender.start()
        self._out.put(marshal.dumps((spec.extractors, spec.generic, spec.analyser)))

    def submit(self, envelopes: list[Envelope]) -> bool:
        """Queue a chunk; False when it cannot be sent (not plain data, or the worker is gone)."""
        if self.failed is not None:
            return False
        try:
            self._out.put(marshal.dumps(envelopes))
        except ValueError:
            return False
        return True

    def receive(self) -> list[list[tuple[bytes, bytes]]]:
        """The answer to the oldest submitted chunk: per event, the ids of the analyses of its :func:`texts_of`
        texts; the vocabulary grows by the chunk's new strings. (Extractions are not sent back: unmarshalling one
        costs ~3x running the extractor here.)"""
        assert self.process.stdout is not None
        try:
            header = _read(self.process.stdout, _FRAME.size)
            fresh, analysed = marshal.loads(_read(self.process.stdout, _FRAME.unpack(header)[0]))
        except (EOFError, ValueError, OSError) as exc:
            self.failed = f"the extraction worker stopped: {exc}"
            raise WorkerGone(self.failed) from exc
        if fresh:
            self.vocabulary = np.concatenate([self.vocabulary, np.array(fresh, dtype=object)])
        return analysed  # type: ignore[no-any-return]

    def _send_all(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        while (frame := self._out.get()) is not None:
            try:
                stdin.write(_FRAME.pack(len(frame)) + frame)
                stdin.flush()
            except OSError as exc:
                self.failed = f"the extraction worker stopped: {exc}"
                return
        with contextlib.suppress(OSError):
            stdin.write(_FRAME.pack(0))
            stdin.close()

    def close(self) -> None:
        """Stop the worker (at once if it is still busy: what it was computing is not needed any more)."""
        self._out.put(None)
        self._sender.join(timeout=5)
        with contextlib.suppress(OSError):
            if self.process.stdout is not None:
                self.process.stdout.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class WorkerGone(RuntimeError):
    """The worker process ended or answered garbage: the caller extracts the rest itself."""


def _read(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise EOFError(f"{len(data or b'')} of {size} bytes")
    return data


class Pipeline:
    """``pipeline(chunks)``: for each ``(tag, envelopes)`` of ``chunks``, ``(tag, [(envelope, extraction)...],
    analyses)`` in the same order. ``chunks`` is consumed in the caller's thread (cancel checks and log reads stay
    there), at most :data:`LOOKAHEAD` chunks ahead of what was handed back."""

    def __init__(self, extractors: ExtractorTable, worker: ExtractionWorker | None) -> None:
        self.extractors, self.worker = extractors, worker

    def __call__(self, chunks: Iterator[tuple[Any, list[Envelope]]]) -> Iterator[tuple[Any, list[Any], Analyses]]:
        return _pipeline(self.extractors, self.worker, chunks)


@contextlib.contextmanager
def extraction_pipeline(extractors: ExtractorTable, analyser: str | None, events: int) -> Iterator[Pipeline]:
    """A :class:`Pipeline` with a worker process when ``events`` (the expected total) is worth one and the table
    and the analyser can be named; else everything is done here (``analyses`` empty). The worker is stopped on
    exit."""
    spec = WorkerSpec.of(extractors, analyser) if events >= WORKER_MIN_EVENTS else None
    worker = ExtractionWorker(spec) if spec is not None else None
    try:
        yield Pipeline(extractors, worker)
    finally:
        if worker is not None:
            worker.close()


def _pipeline(
    extractors: ExtractorTable, worker: ExtractionWorker | None, chunks: Iterator[tuple[Any, list[Envelope]]]
) -> Iterator[tuple[Any, list[Any], Analyses]]:
    extract = extractors.extract
    if worker is None:
        for tag, envelopes in chunks:
            yield tag, [(envelope, extract(envelope)) for envelope in envelopes], Analyses(_NO_WORDS, {})
        return
    pending: deque[tuple[Any, list[Envelope], bool]] = deque()

    def answer(tag: Any, envelopes: list[Envelope], sent: bool) -> tuple[Any, list[Any], Analyses]:
        chunk = [(envelope, extract(envelope)) for envelope in envelopes]
        if sent and worker.failed is None:
            try:
                analysed = worker.receive()
            except WorkerGone:
                pass
            else:
                ids: dict[str, tuple[bytes, bytes]] = {}
                for (_envelope, extraction), pairs in zip(chunk, analysed, strict=True):
                    ids.update(zip(texts_of(extraction), pairs, strict=True))
                return tag, chunk, Analyses(worker.vocabulary, ids)
        return tag, chunk, Analyses(_NO_WORDS, {})

    for tag, envelopes in chunks:
        pending.append((tag, envelopes, bool(envelopes) and worker.submit(envelopes)))
        if len(pending) > LOOKAHEAD:
            yield answer(*pending.popleft())
    while pending:
        yield answer(*pending.popleft())


def serve() -> None:
    """The worker process: read chunks of envelopes, answer ``(new strings, analyses)`` for each."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    names, generic, analyser_name = marshal.loads(_read(stdin, _FRAME.unpack(_read(stdin, _FRAME.size))[0]))
    table = ExtractorTable.from_names(names, generic)
    analyse = resolve(analyser_name)().analyse
    vocabulary: dict[str, int] = {}
    while True:
        size = _FRAME.unpack(_read(stdin, _FRAME.size))[0]
        if not size:
            return
        envelopes = marshal.loads(_read(stdin, size))
        known = len(vocabulary)
        analysed = [
            [_ids(vocabulary, analyse(text)) for text in texts_of(table.extract(envelope))] for envelope in envelopes
        ]
        fresh = list(vocabulary)[known:] if len(vocabulary) > known else []
        frame = marshal.dumps((fresh, analysed))
        stdout.write(_FRAME.pack(len(frame)) + frame)
        stdout.flush()


def _ids(vocabulary: dict[str, int], analysis: Analysis) -> tuple[bytes, bytes]:
    setdefault = vocabulary.setdefault
    terms, words = (
        np.fromiter((setdefault(s, len(vocabulary)) for s in strings), _IDS, len(strings)).tobytes()
        for strings in analysis
    )
    return terms, words

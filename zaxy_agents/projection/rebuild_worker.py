"""A derived index rebuilt in a second process during `zaxy reproject`, then copied into ``derived.sqlite``.

Why: a rebuild is CPU-bound Python on one core (the text analysis, postings and SQLite inserts of the verbatim
index are about half of it), and this machine class has two. The rebuilding process already reads, extracts and
plans every chunk; it hands each chunk's searchable documents (plain tuples, ``marshal`` frames on a pipe: no
pickle, nothing that runs code) to a worker process, which indexes them with the very same per-chunk writer into a
database of its own (``.zaxy/rebuild-<pid>/``), in the same order and chunks as the serial rebuild, so its tables
hold the same rows. At the end the rebuilding process copies those tables (and the index's cursors) into
``derived.sqlite`` in one transaction.

Until that copy the offloaded index has no cursor in ``derived.sqlite``: a rebuild stopped before it (Ctrl-C, a
failure, a kill) leaves that index behind the catalog, a state every open already repairs (``catch_up_listeners``
replays a lagging index from the log), and the worker's folder is deleted (by the worker when its input closes,
else by the next open: :func:`remove_worker_debris`).

A listener takes part by naming its worker module (``rebuild_worker = "package.module"``); the module's ``main``
reads frames with :func:`serve`.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any, BinaryIO

from zaxy_agents.sharing.election import pid_alive
from zaxy_agents.storage.derived.store import DerivedStore

from .model import SearchDoc

WORKER_PREFIX = "rebuild-"  # the worker's folder in .zaxy/: rebuild-<pid of the rebuilding process>
_LENGTH = struct.Struct("<Q")
_DOC_FIELDS = tuple(f.name for f in fields(SearchDoc))
DONE = b"done"
END = "end"  # the last frame: everything was sent (an input that just stops means the rebuild is gone)


def doc_tuple(doc: SearchDoc) -> tuple[Any, ...]:
    return tuple(getattr(doc, name) for name in _DOC_FIELDS)


def write_frame(stream: BinaryIO, value: Any) -> None:
    data = marshal.dumps(value)
    stream.write(_LENGTH.pack(len(data)))
    stream.write(data)


def read_frame(stream: BinaryIO) -> Any:
    """The next frame's value, or ``None`` at the end of the stream (also a stream cut mid-frame)."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return marshal.loads(data)


class WorkerClient:
    """The rebuilding process's end: starts the worker, sends it chunks, waits for its database."""

    def __init__(self, module: str, derived_folder: Path) -> None:
        self.folder = derived_folder / f"{WORKER_PREFIX}{os.getpid()}"
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", module, str(self.folder)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def send(self, docs: list[SearchDoc], cursors: dict[str, tuple[int, str]]) -> None:
        """One chunk: its searchable documents and the cursors it ends at (what the listener's cursor becomes)."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            write_frame(stdin, ([doc_tuple(doc) for doc in docs], {s: list(c) for s, c in cursors.items()}))
        except BrokenPipeError:
            raise RuntimeError(f"the rebuild worker stopped: {self._error()}") from None

    def finish(self, check: Callable[[], None]) -> Path:
        """Wait for the worker to commit everything (``check`` raises when the rebuild is asked to stop); returns
        its database file."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            write_frame(stdin, END)
            stdin.close()  # the worker commits and answers
        except BrokenPipeError:
            raise RuntimeError(f"the rebuild worker stopped: {self._error()}") from None
        while True:
            try:
                code = self.process.wait(0.1)
                break
            except subprocess.TimeoutExpired:
                check()
        answer = stdout.read()
        if code != 0 or answer != DONE:
            raise RuntimeError(f"the rebuild worker failed (exit {code}): {self._error()}")
        return self.folder / "derived.sqlite"

    def _error(self) -> str:
        stderr = self.process.stderr
        with contextlib.suppress(Exception):
            self.process.wait(5)
        text = stderr.read().decode(errors="replace") if stderr is not None else ""
        return text.strip().splitlines()[-1] if text.strip() else "no message"

    def close(self) -> None:
        """Stop the worker if it still runs and delete its folder (after a merge, a failure or a cancel)."""
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.wait(10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def merge_tables(derived: DerivedStore, worker_file: Path, listener: str) -> None:
    """Copy every table of the worker's database (but its ``meta``) into ``derived.sqlite``, replacing what they
    hold, and the listener's cursors, in one transaction. Rows come out in key order, so each insert appends."""
    with derived.attached(worker_file, "worker"), derived.write() as db:
        tables = [
            row[0]
            for row in db.execute(
                "SELECT name FROM worker.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT IN ('meta', 'lst_cursors') ORDER BY name"
            )
        ]
        for table in tables:
            db.execute(f'DELETE FROM main."{table}"')
            db.execute(f'INSERT INTO main."{table}" SELECT * FROM worker."{table}"')
        db.execute("DELETE FROM main.lst_cursors WHERE listener = ?", (listener,))
        db.execute("INSERT INTO main.lst_cursors SELECT * FROM worker.lst_cursors WHERE listener = ?", (listener,))


def remove_worker_debris(derived_folder: Path) -> list[Path]:
    """Delete worker folders whose rebuilding process is gone (a rebuild killed together with its worker)."""
    removed = []
    if not derived_folder.is_dir():
        return removed
    for candidate in derived_folder.glob(f"{WORKER_PREFIX}*"):
        suffix = candidate.name[len(WORKER_PREFIX) :]
        if not candidate.is_dir() or not suffix.isdigit():
            continue
        if int(suffix) != os.getpid() and pid_alive(int(suffix)):
            continue
        shutil.rmtree(candidate, ignore_errors=True)
        removed.append(candidate)
    return removed


def serve(
    stream: BinaryIO, chunk: Callable[[list[SearchDoc], dict[str, tuple[int, str]]], None], ended: list[bool]
) -> Iterator[None]:
    """The worker's end: calls ``chunk`` for each frame and yields after it (the caller commits in groups); at the
    end, ``ended`` holds True when the input ended with :data:`END` (else the rebuilding process is gone)."""
    while True:
        value = read_frame(stream)
        if value is None or value == END:
            ended.append(value == END)
            return
        docs, cursors = value
        chunk([SearchDoc(*doc) for doc in docs], {s: (int(c[0]), str(c[1])) for s, c in cursors.items()})
        yield

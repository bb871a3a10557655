"""``lines_at`` by binary search (a fresh handle, no line index) answers exactly as the index path does.

Real session files are written through the log (batches of several sizes, payloads that hold a ``seq`` key of their
own), then put in the states a crash or a reader meets: an unfinished batch at the end, a torn final line, a torn
line recovered by the next append. For each, a fresh :class:`SessionFile` (index not built: the search path) and one
whose index is built (the index path) are asked the same seqs: 1, the last visible, past it, duplicates, samples.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from zaxy_agents.storage.files import jsonl_file
from zaxy_agents.storage.files.jsonl_file import SessionFile
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def _write(root: Path, session: str, events: int, seed: int) -> None:
    """``events`` events of 30-2,500 bytes in batches of 1-40 (seeded), some payloads with a ``seq`` key."""
    rng = random.Random(seed)
    with JsonlEventLog(root, durability="batch") as log:
        written = 0
        while written < events:
            size = min(events - written, rng.choice([1, 1, 2, 3, 7, 16, 40]))
            drafts = []
            for index in range(size):
                payload: dict[str, object] = {"text": "x" * rng.randint(30, 2500)}
                if rng.random() < 0.3:
                    payload["seq"] = rng.randint(1, 10 * events)  # a payload's own "seq": never the envelope's
                drafts.append({"type": "note.added", "payload": payload, "actor": f"a{written + index}"})
            log.append_many(session, drafts)
            written += size


def _cut_batch(path: Path, keep: int) -> None:
    """Drop the last lines of the final batch so only ``keep`` of its events remain: what a killed writer leaves."""
    lines = path.read_bytes().splitlines(keepends=True)
    position, size = json.loads(lines[-1])["batch"]
    assert position == size and keep < size
    path.write_bytes(b"".join(lines[: len(lines) - size + keep]))


def _both(root: Path, session: str, seqs: list[int]) -> tuple[dict[int, bytes], dict[int, bytes]]:
    searched_file = SessionFile(root, session)
    searched = searched_file.lines_at(seqs)
    assert searched_file._indexed_inode is None, "the search path answered (it builds no index)"
    indexed_file = SessionFile(root, session)
    indexed_file._index()
    return searched, indexed_file.lines_at(seqs)


def _visible(root: Path, session: str) -> int:
    return SessionFile(root, session)._index()[1]


def _check(root: Path, session: str, seed: int) -> None:
    visible = _visible(root, session)
    total = (root / f"{session}.jsonl").read_bytes().count(b"\n")
    rng = random.Random(seed)
    asks = [[1], [visible], [visible + 1], [total], [total + 3], [1, 1, visible, visible, 2], [0, -4, 1]]
    asks += [rng.sample(range(1, total + 3), min(total + 2, rng.randint(1, 16))) for _ in range(12)]
    asks += [list(range(start, min(start + 16, total + 2))) for start in range(1, total + 2, 16)]  # every line
    for seqs in asks:
        searched, indexed = _both(root, session, seqs)
        assert searched == indexed, seqs
        assert set(indexed) == {seq for seq in seqs if 1 <= seq <= visible}, seqs


@pytest.mark.parametrize("events", [1, 2, 9, 57, 180])
def test_search_matches_the_index_in_every_state_a_log_file_meets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events: int
) -> None:
    monkeypatch.setattr(jsonl_file, "_SEARCH_MIN_BYTES", 0)  # small files searched too
    session = "s"
    path = tmp_path / f"{session}.jsonl"
    _write(tmp_path, session, events, seed=events)
    _check(tmp_path, session, seed=1)
    # An unfinished batch at the end: its events are whole lines but not visible.
    with JsonlEventLog(tmp_path) as log:
        log.append_many(session, [{"type": "note.added", "payload": {"text": "b" * 900, "seq": 1}}] * 5)
    _cut_batch(path, keep=3)
    assert _visible(tmp_path, session) == events
    _check(tmp_path, session, seed=2)
    # ... and a torn line after it.
    with open(path, "ab") as handle:
        handle.write(b'{"actor":"agent","batch":[1,2],"hash":"ab')
    assert _visible(tmp_path, session) == events
    _check(tmp_path, session, seed=3)
    # The next append recovers both (set aside, recorded): the recovery event and this one become visible.
    with JsonlEventLog(tmp_path) as log:
        log.append(session, "note.added", {"text": "after the crash"})
    assert _visible(tmp_path, session) == events + 2
    _check(tmp_path, session, seed=4)
    # A torn final line alone.
    with open(path, "ab") as handle:
        handle.write(b'{"actor":"agent","hash":"0123')
    _check(tmp_path, session, seed=5)


def _read_bytes() -> int:
    with open("/proc/self/io", "rb") as handle:
        return int(next(line for line in handle if line.startswith(b"rchar:")).split()[1])


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io to count bytes read")
def test_a_first_read_of_a_few_seqs_reads_a_small_part_of_a_long_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, "long", 400, seed=11)  # ~500 KB, over the search threshold
    size = (tmp_path / "long.jsonl").stat().st_size
    assert size > jsonl_file._SEARCH_MIN_BYTES
    fresh = SessionFile(tmp_path, "long")
    before = _read_bytes()
    found = fresh.lines_at([1, 200, 201, 400])
    read = _read_bytes() - before
    assert sorted(found) == [1, 200, 201, 400]
    assert read < size // 4, (read, size)
    assert fresh._indexed_inode is None
    # Many seqs go through the index (built once, then every read is one seek).
    many = SessionFile(tmp_path, "long")
    assert len(many.lines_at(range(1, jsonl_file._SEARCH_MAX_SEQS + 2))) == jsonl_file._SEARCH_MAX_SEQS + 1
    assert many._indexed_inode is not None
    # A session read again and again gets its index after a few searches.
    for call in range(1, jsonl_file._SEARCHES_BEFORE_INDEX):
        assert fresh.lines_at([call * 10]) and fresh._indexed_inode is None
    assert fresh.lines_at([399]) and fresh._indexed_inode is not None
    expected = SessionFile(tmp_path, "long").lines_at([399])
    # A current index is used even for one seq (a warm process): no search.
    monkeypatch.setattr(jsonl_file, "search_lines", lambda *args: pytest.fail("searched with a current index"))
    assert fresh.lines_at([399]) == expected


def test_a_built_index_follows_the_recovery_of_a_tail_it_had_scanned(tmp_path: Path) -> None:
    """A reader whose index covered an unfinished batch and a torn line (another process's crash) must not keep
    those line starts when the next append cuts them away and writes the recovery record in their place."""
    session = "s"
    path = tmp_path / f"{session}.jsonl"
    _write(tmp_path, session, 30, seed=7)
    with JsonlEventLog(tmp_path) as log:
        log.append_many(session, [{"type": "note.added", "payload": {"text": "b" * 900}}] * 5)
    _cut_batch(path, keep=3)
    with open(path, "ab") as handle:
        handle.write(b'{"actor":"agent","batch":[4,5],"hash":"ab')
    reader = SessionFile(tmp_path, session)
    assert reader._index()[1] == 30  # indexed with the unfinished tail: 33 line starts, 30 visible
    with JsonlEventLog(tmp_path) as log:
        for number in range(3):
            log.append(session, "note.added", {"text": f"after the crash {number} " + "c" * 3000})
    assert path.stat().st_size > reader._indexed_to  # grown past what the reader scanned: no full rescan is forced
    fresh = SessionFile(tmp_path, session)
    visible = fresh._index()[1]
    assert visible == 34  # the recovery record and the three appends
    assert reader.lines_at(range(1, visible + 2)) == fresh.lines_at(range(1, visible + 2))

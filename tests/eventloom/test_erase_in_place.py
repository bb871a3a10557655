"""An erase overwrites its target lines in place (storage/files/jsonl_scrub_journal.py): O(targets), no rewrite of
the session file. The erased bytes are gone from the whole file, every other line keeps its bytes and offset, the
chain verifies (ours, `zaxy verify`, the documented stand-alone verifier), a crash between the journal and the
overwrite or midway through the lines is finished by the next open / `zaxy repair` / the next erase with no content
left and no corrupt line, and a reader that indexed the file before the erase reads the erased form."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, run_zaxy, run_zaxy_json
from tests.erasure_helpers import files_containing
from tests.eventloom.test_docs_verifier import _doc_verifier
from zaxy_agents.eventloom import erasure
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog
from zaxy_agents.storage.files.jsonl_scrub_journal import JOURNAL_DIR_NAME

SECRET = "078-05-1120"


def _fill(root: Path, session: str = "s", count: int = 12) -> None:
    """Events of every size around the secret: short ones (tombstoned), long ones (erased with their digest)."""
    with JsonlEventLog(root) as log:
        for i in range(count):
            text = f"note {i}" if i % 3 else f"note {i} with a long text " * (i + 1)
            payload = {"text": text, "ssn": SECRET} if 2 <= i + 1 <= count - 2 else {"text": text}
            log.append(session, "note.added", payload)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _erase(root: Path, first: int, last: int) -> dict:
    code, report = run_zaxy_json(
        "memory", "erase", "-s", "s", "--from-seq", str(first), "--to-seq", str(last), "--reason", "r",
        env={"ZAXY_EVENTLOOM_PATH": str(root)},
    )  # fmt: skip
    assert code == 0, report
    return report


def test_the_cli_erase_overwrites_only_the_target_lines(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    _fill(root)
    path = root / "s.jsonl"
    before, inode = _lines(path), path.stat().st_ino

    report = _erase(root, 2, 10)

    after = _lines(path)
    assert path.stat().st_ino == inode  # the same file, not a rewritten copy
    assert len(after) == len(before) + 1 and after[-1].startswith(b'{"actor":"zaxy"')  # + the erasure record
    assert [len(line) for line in after[:-1]] == [len(line) for line in before]  # every line kept its length
    assert after[0] == before[0] and after[10:12] == before[10:12]  # lines outside the range: byte-identical
    assert files_containing(root, SECRET) == []
    assert report["erased"] == 9 and report["ranges"] == [{"from_seq": 2, "to_seq": 10}]
    ranges = json.loads(after[-1])["payload"]["ranges"]
    forms = {seq: r["form"] for r in ranges for seq in range(r["from_seq"], r["to_seq"] + 1)}
    assert set(forms.values()) == {"erased", "tombstone"}  # both forms occur (short and long events)
    result = run_zaxy("verify", "--session-id", "s", env={"ZAXY_EVENTLOOM_PATH": str(root)})
    assert result.returncode == 0, result.stdout + result.stderr
    _doc_verifier()(path, "s")
    with JsonlEventLog(root) as log:
        assert log.verify("s").ok
        events = list(log.replay("s"))
        assert all(e.payload == {} and e.erased["record_seq"] == 13 and "pad" not in e.erased for e in events[1:10])
        assert log.append("s", "note.added", {"text": "after"}).seq == 14
    assert not (root / JOURNAL_DIR_NAME).exists()


def test_a_reader_that_indexed_the_file_before_reads_the_erased_form(tmp_path: Path) -> None:
    """Another log object (its own line index, tail and listing caches, as in another process) built its index and
    read the lines before the erase: it reads the erased form after it, through every read path."""
    root = tmp_path / "loom"
    _fill(root)
    reader = JsonlEventLog(root)
    try:
        assert SECRET in json.dumps([e.payload for e in reader.replay("s")])  # index built, lines read
        assert reader.get("s", 5).payload["ssn"] == SECRET
        assert reader.lines_at([("s", seq) for seq in range(1, 13)])[("s", 5)].count(SECRET.encode()) == 1
        reader.sessions()

        with MemoryFabric.from_path(root, use_graph=False) as fabric:
            fabric.erase_range("s", 2, 10, actor="ops")

        assert SECRET not in json.dumps([e.payload for e in reader.replay("s")])
        assert reader.get("s", 5).payload == {} and reader.get("s", 5).erased["record_seq"] == 13
        lines = reader.lines_at([("s", seq) for seq in range(1, 14)])
        assert len(lines) == 13 and not any(SECRET.encode() in line for line in lines.values())
        assert [s.event_count for s in reader.sessions()] == [13]
        assert reader.verify("s").ok
    finally:
        reader.close()


def _crash(root: Path, mode: str) -> None:
    child = subprocess.run(
        [sys.executable, "-m", "tests.eventloom._killed_scrubber", str(root), "s", "2", "10", mode],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=120,
    )
    assert child.returncode == -9, child.stderr
    assert list((root / JOURNAL_DIR_NAME).iterdir()) != []  # the journal survived the crash
    assert SECRET.encode() in (root / "s.jsonl").read_bytes()  # some lines still hold content


@pytest.mark.parametrize("mode", ["journal", "midway"])
def test_a_crash_inside_the_overwrite_is_finished_by_the_next_open(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "loom"
    _fill(root)
    size = (root / "s.jsonl").stat().st_size
    _crash(root, mode)
    if mode == "midway":
        with pytest.raises(AssertionError):  # a torn line: the file does not verify until the journal is replayed
            _doc_verifier()(root / "s.jsonl", "s")
    with JsonlEventLog(root) as log:  # opening the log replays the journal first
        assert log.verify("s").ok
        assert [e.payload for e in log.replay("s", 2, 10)] == [{}] * 9
    assert files_containing(root, SECRET) == []
    assert (root / "s.jsonl").stat().st_size > size  # the record was appended before the crash
    assert not (root / JOURNAL_DIR_NAME).exists()
    _doc_verifier()(root / "s.jsonl", "s")


def test_a_crash_inside_the_overwrite_is_finished_by_zaxy_repair(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    _fill(root)
    _crash(root, "midway")
    code, result = run_zaxy_json("repair", env={"ZAXY_EVENTLOOM_PATH": str(root)})
    assert code == 0, result
    assert files_containing(root, SECRET) == []
    assert not (root / JOURNAL_DIR_NAME).exists()
    with JsonlEventLog(root) as log:
        assert log.verify("s").ok and len(list(log.replay("s"))) == 13
        assert log.repair("s")["repaired"] is False  # nothing was left to set aside: no corrupt line


def test_a_crash_inside_the_overwrite_is_finished_by_the_next_append(tmp_path: Path) -> None:
    """A writer that re-reads the tail (another process appended: the erasure record) replays the journal first."""
    root = tmp_path / "loom"
    _fill(root)
    with JsonlEventLog(root) as log:
        log.append("s", "note.added", {"text": "warm"})  # this handle caches its tail
        _crash_at(root)
        assert log.append("s", "note.added", {"text": "next"}).seq == 15
        assert log.verify("s").ok
    assert files_containing(root, SECRET) == []


def _crash_at(root: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-m", "tests.eventloom._killed_scrubber", str(root), "s", "2", "10", "midway"],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=120,
    )
    assert child.returncode == -9, child.stderr


def test_a_form_that_does_not_fit_falls_back_to_rewriting_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record listing a form longer than its line (as records from before in-place erasure list every spec-2
    event: "erased") is honoured by rewriting the file, as every erase did before."""
    root = tmp_path / "loom"
    _fill(root)
    inode = (root / "s.jsonl").stat().st_ino
    monkeypatch.setattr(erasure, "erasure_form", lambda envelope, size, record_seq: "erased")
    with MemoryFabric.from_path(root, use_graph=False) as fabric:
        fabric.erase_range("s", 2, 10, actor="ops")
        assert fabric.verify("s").ok
        events = list(fabric.replay("s", 2, 10))
        assert all(e.erased == {"record_seq": 13} for e in events)  # the listed form, short events included
    assert (root / "s.jsonl").stat().st_ino != inode
    assert files_containing(root, SECRET) == []
    _doc_verifier()(root / "s.jsonl", "s")


def test_a_pad_holds_only_spaces(tmp_path: Path) -> None:
    """A padded line is canonical JSON (the pad is a string inside the marker, not hashed), so a pad must be spaces
    only, or a verified log could carry hidden bytes: a pad edited to hold anything else fails every check."""
    root = tmp_path / "loom"
    _fill(root)
    with MemoryFabric.from_path(root, use_graph=False) as fabric:
        fabric.erase_range("s", 2, 10, actor="ops")
    path = root / "s.jsonl"
    data = path.read_bytes()
    assert data.count(b'"pad":"   ') >= 2
    path.write_bytes(data.replace(b'"pad":"   ', b'"pad":"  x', 1))
    with JsonlEventLog(root) as log:
        report = log.verify("s")
        assert not report.ok and "pad" in (report.reason or ""), report
    with pytest.raises(AssertionError):
        _doc_verifier()(path, "s")


def test_a_reader_racing_the_overwrite_reads_the_whole_new_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Readers take no lock, so one can read a line while an erase's ``pwrite`` has written half of it. Such a read
    is unreadable (or fails its hash); the reader waits for the writers' lock to be free and reads the line again,
    getting the whole erased form, where it would otherwise stop with an integrity error (replay, verify)."""
    import threading

    from zaxy_agents.storage.files import jsonl_scrub_journal, jsonl_settle

    root = tmp_path / "loom"
    _fill(root)
    torn, go = threading.Event(), threading.Event()
    real, calls = jsonl_scrub_journal._write_at, []

    def pausing(fd: int, data: bytes, offset: int) -> None:
        calls.append(offset)
        if len(calls) == 2:  # the second target line: half written, then held (the writers' lock is held too)
            real(fd, data[: len(data) // 2], offset)
            torn.set()
            assert go.wait(30)
        real(fd, data, offset)

    monkeypatch.setattr(jsonl_scrub_journal, "_write_at", pausing)
    with MemoryFabric.from_path(root, use_graph=False) as fabric:
        eraser = threading.Thread(target=fabric.erase_range, args=("s", 2, 10), kwargs={"actor": "ops"})
        eraser.start()
        assert torn.wait(30)
        reader = JsonlEventLog(root)
        try:
            results: dict[str, object] = {}

            def read() -> None:
                try:
                    results["payloads"] = [e["payload"] for e in reader.replay_envelopes("s")]
                    results["verified"] = reader.verify("s").ok
                except Exception as exc:
                    results["error"] = exc

            waiting = threading.Event()
            settle = jsonl_settle.line_after_writers

            def spying(handle: Any, seq: int, seen: bytes, timeout: float = 5.0) -> bytes | None:
                waiting.set()  # it met the torn line: it waits for the writers' lock now
                return settle(handle, seq, seen, timeout)

            monkeypatch.setattr(jsonl_settle, "line_after_writers", spying)
            thread = threading.Thread(target=read)
            thread.start()
            assert waiting.wait(30)
            go.set()
            thread.join(30)
            eraser.join(30)
        finally:
            reader.close()
    assert "error" not in results, results
    assert results["verified"] is True
    payloads = results["payloads"]
    assert isinstance(payloads, list) and len(payloads) == 13
    assert payloads[2] == {}  # the torn line, read again whole (lines read before the erase ended may be older)
    with JsonlEventLog(root) as log:
        assert [e.payload for e in log.replay("s", 2, 10)] == [{}] * 9
    assert files_containing(root, SECRET) == []

"""#25.9 (JSONL): a torn tail that parses as a complete event is tampering; a writer killed around a torn-tail
recovery never leaves a sidecar without its record; a full disk (a real tmpfs when the test may mount one, and
a fault-injecting write everywhere) is a structured error that leaves the log exactly as it was, and the retry
writes the batch once."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_zaxy, run_zaxy_json
from zaxy_agents.errors import IntegrityError, StorageFullError
from zaxy_agents.eventloom.canonical import encode_line, event_hash
from zaxy_agents.storage.files import jsonl_file
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog
from zaxy_agents.storage.files.torn_tail import PENDING_SUFFIX, TORN_DIR_NAME, TORN_RECOVERY_TYPE

BATCH = [{"type": "note.added", "payload": {"i": i, "text": "x" * 600}} for i in range(10)]  # > one 4 KiB page


def _three_events(root: Path) -> Path:
    with JsonlEventLog(root) as log:
        log.append_many("s", [{"type": "fact.asserted", "payload": {"fact": f"fact {i}"}} for i in range(3)])
    return root / "s.jsonl"


def test_an_edited_last_event_without_its_newline_is_tampering_not_a_torn_write(tmp_path: Path) -> None:
    path = _three_events(tmp_path / "loom")
    tampered = path.read_bytes()[:-1].replace(b"fact 2", b"fact 9")
    path.write_bytes(tampered)
    code, report = run_zaxy_json("verify", "-s", "s", "--eventloom-path", str(path.parent))
    assert code == 1 and report["ok"] is False and report["first_broken_seq"] == 3
    assert "modified" in report["reason"]
    code, body = run_zaxy_json(
        "append", "-s", "s", "-t", "note.added", "-a", "me", "--eventloom-path", str(path.parent)
    )
    assert code == 5 and body["error"]["code"] == "integrity_error"
    assert "zaxy repair --session-id s" in body["error"]["remediation"]
    assert path.read_bytes() == tampered and not (path.parent / TORN_DIR_NAME).exists()


def test_a_re_hashed_last_event_that_breaks_its_link_is_refused_on_append(tmp_path: Path) -> None:
    path = _three_events(tmp_path / "loom")
    lines = path.read_bytes().splitlines(keepends=True)
    envelope = json.loads(lines[-1])
    envelope["payload"]["fact"] = "rewritten"
    envelope["prev_hash"] = "f" * 64  # a forged link, re-hashed so the event alone looks sound
    envelope["hash"] = event_hash(envelope)
    lines[-1] = encode_line(envelope)
    path.write_bytes(b"".join(lines))
    with JsonlEventLog(path.parent) as log, pytest.raises(IntegrityError) as info:
        log.append("s", "note.added", {})
    assert "does not chain" in info.value.message and "zaxy repair" in info.value.remediation
    assert path.read_bytes() == b"".join(lines)


def _run_killed_writer(root: Path, point: str) -> int:
    child = subprocess.run(
        [sys.executable, "-m", "tests.eventloom._killed_writer", str(root), "s", point],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=120,
    )
    return child.returncode


@pytest.mark.parametrize("point", ["after-truncate", "after-record"])
def test_a_writer_killed_around_a_torn_tail_recovery_leaves_no_sidecar_without_its_record(
    tmp_path: Path, point: str
) -> None:
    root = tmp_path / "loom"
    path = _three_events(root)
    torn = b'{"actor":"agent","hash":"ab'
    with open(path, "ab") as handle:
        handle.write(torn)
    assert _run_killed_writer(root, point) == -9
    sidecars = sorted((root / TORN_DIR_NAME).iterdir())
    assert len(sidecars) == 1 and sidecars[0].name.endswith(PENDING_SUFFIX)
    assert sidecars[0].read_bytes() == torn
    code, report = run_zaxy_json("verify", "-s", "s", "--eventloom-path", str(root))
    assert code == 0 and report["ok"] is True

    run_zaxy("append", "-s", "s", "-t", "note.added", "-a", "me", "--eventloom-path", str(root)).check_returncode()
    with JsonlEventLog(root) as log:
        events = list(log.replay("s"))
        assert log.verify("s").ok
    records = [e for e in events if e.type == TORN_RECOVERY_TYPE]
    assert len(records) == 1 and records[0].seq == 4, [e.type for e in events]
    assert records[0].payload["torn_bytes"] == len(torn)
    final = root / records[0].payload["sidecar"]
    assert final.read_bytes() == torn and sorted((root / TORN_DIR_NAME).iterdir()) == [final]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


def test_a_failed_write_leaves_the_log_unchanged_and_the_retry_writes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fault-injecting shim (runs everywhere): the write stops half-way with ENOSPC."""
    root = tmp_path / "loom"
    path = _three_events(root)
    before = path.read_bytes()
    real_write_all = jsonl_file._write_all

    def half_then_full(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonl_file, "_write_all", half_then_full)
    with JsonlEventLog(root) as log:
        with pytest.raises(StorageFullError) as info:
            log.append_many("s", BATCH)
        assert info.value.code == "storage_full" and "nothing was written" in info.value.message
        assert path.read_bytes() == before
        monkeypatch.setattr(jsonl_file, "_write_all", real_write_all)
        events = log.append_many("s", BATCH)
        assert [e.seq for e in events] == list(range(4, 14))
        assert log.verify("s").ok


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB tmpfs mounted for the test (needs root; skips with the reason otherwise)."""
    if os.geteuid() != 0:
        pytest.skip("a real full disk needs root to mount a small tmpfs (the fault-injecting test still runs)")
    mount = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({result.stderr.decode().strip()}): the fault-injecting test runs")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(mount: Path) -> Path:
    """Take every free page of the tmpfs: only the slack in the log file's last page stays writable."""
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def test_a_real_full_disk_is_a_structured_error_and_nothing_is_written(full_disk: Path) -> None:
    root = full_disk / "loom"
    path = _three_events(root)
    filler = _fill(full_disk)
    before = path.read_bytes()
    with JsonlEventLog(root) as log:
        with pytest.raises(StorageFullError):
            log.append_many("s", BATCH)
        assert path.read_bytes() == before and log.verify("s").ok
    payload = json.dumps({"text": "y" * 5000})
    code, body = run_zaxy_json(
        "append", "-s", "s", "-t", "note.added", "-a", "me", "-p", payload, "--eventloom-path", str(root)
    )
    assert code == 70 and body["error"]["code"] == "storage_full", body
    human = run_zaxy("append", "-s", "s", "-t", "note.added", "-a", "me", "-p", payload, "--eventloom-path", str(root))
    assert human.returncode == 70 and "Traceback" not in human.stderr and "storage_full" in human.stderr
    assert path.read_bytes() == before
    filler.unlink()
    with JsonlEventLog(root) as log:
        events = log.append_many("s", BATCH)
        assert [e.seq for e in events] == list(range(4, 14)) and log.verify("s").ok

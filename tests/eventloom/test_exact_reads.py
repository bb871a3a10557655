"""Short replay ranges are read with one exact ``pread`` per range; a log rewritten in place is still read whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.errors import IntegrityError
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def test_short_ranges_read_exactly_and_survive_an_in_place_rewrite(tmp_path: Path) -> None:
    with JsonlEventLog(tmp_path) as log:
        for index in range(1, 21):
            log.append("s", "note.added", {"text": f"note {index}"}, actor="agent")
        assert [e["seq"] for e in log.replay_envelopes("s", 5, 7)] == [5, 6, 7]
        assert [e["payload"]["text"] for e in log.replay_envelopes("s", 20, 20)] == ["note 20"]
        # The file is rewritten in place (same inode, one line one byte longer): the cached line offsets are
        # stale, and the tampered event must still be read as a whole line, so its hash check can fail loudly.
        path = tmp_path / "s.jsonl"
        with open(path, "r+b") as handle:
            data = handle.read().replace(b'"note 9"', b'"note 9!"')
            handle.seek(0)
            handle.write(data)
        (tampered,) = log.replay_lines("s", 9, 9)
        assert b'"note 9!"' in tampered and tampered.endswith(b"\n")
        assert [line.count(b"\n") for line in log.replay_lines("s", 8, 9)] == [1, 1]
        with pytest.raises(IntegrityError):
            list(log.replay("s", 9, 9))


def test_lines_at_answers_missing_files_and_unknown_ids_without_opening_handles(tmp_path: Path) -> None:
    """An open session skips the per-call existence check; a file gone since, an unknown id and a malformed id
    are still left out of the answer (no error, and no handle opened for the unknown ones)."""
    with JsonlEventLog(tmp_path) as log:
        for index in range(1, 4):
            log.append("s", "note.added", {"text": f"note {index}"}, actor="agent")
        log.append("t", "note.added", {"text": "other"}, actor="agent")
        found = log.lines_at([("s", 1), ("s", 3), ("s", 9), ("t", 1), ("nobody", 1), ("../bad id", 1)])
        assert sorted(found) == [("s", 1), ("s", 3), ("t", 1)]
        assert b'"note 3"' in found[("s", 3)] and found[("s", 3)].endswith(b"\n")
        assert "nobody" not in log._files and "../bad id" not in log._files
        (tmp_path / "t.jsonl").unlink()  # the handle for "t" is open: it must answer {} for the missing file
        assert sorted(log.lines_at([("s", 2), ("t", 1)])) == [("s", 2)]

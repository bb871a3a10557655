"""The files backend's light log for the hook fast path: appends and tail reads on the session file, stdlib only."""

from __future__ import annotations

import os

from .jsonl_file import SessionFile

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

    from zaxy_agents.config import ZaxySettings
    from zaxy_agents.eventloom.drafts import PreparedDraft


class FilesLightLog:
    """Short-lived handles per call: the hook process appends, or reads a tail, and exits."""

    def __init__(self, settings: ZaxySettings) -> None:
        self.root = settings.eventloom_dir
        self.cache_root: str | None = self.root  # every process of this memory shares the folder

    def append_prepared(
        self, session: str, prepared: list[PreparedDraft], *, lock_timeout: float | None = None, spool: bool = False
    ) -> list[dict[str, Any]]:
        """Past ``lock_timeout`` the drafts go to the session's spool (drained in order by the next writer)."""
        from .file_io import LogLockTimeout

        handle = SessionFile(self.root, session, durability="fsync")
        try:
            return handle.append(prepared, lock_timeout=lock_timeout)
        except LogLockTimeout:
            if not spool:
                raise
            from .spool import write_spool

            write_spool(self.root, session, prepared)
            return []
        finally:
            handle.close()

    def head(self, session: str) -> tuple[int, str] | None:
        return SessionFile(self.root, session).read_tail()

    def lines(self, session: str, from_seq: int, to_seq: int) -> Any:
        """Seeks by binary search over the file: the cost depends on the range, not on the log's length."""
        return (line for _offset, line in SessionFile(self.root, session).iter_lines(from_seq, to_seq))

    def newest_lines(self, session: str, count: int) -> tuple[int, list[bytes]]:
        """Reads backwards from the end of the file, so the cost depends on ``count``, not on the log's length."""
        try:
            handle = open(os.path.join(self.root, f"{session}.jsonl"), "rb")  # noqa: SIM115
        except OSError:
            return 0, []
        with handle:
            position = handle.seek(0, 2)
            data = b""
            while position > 0 and data.count(b"\n") <= count + 1:
                step = min(1 << 16, position)
                position -= step
                handle.seek(position)
                data = handle.read(step) + data
        data = data[: data.rfind(b"\n") + 1]  # a torn tail (no newline yet) is not an event
        parts = data.split(b"\n")[:-1]
        if position > 0 and parts:
            parts = parts[1:]  # the first piece may start mid-line
        newest = [part + b"\n" for part in reversed(parts) if part][:count]
        if not newest:
            return 0, []
        from json import loads

        try:
            return int(loads(newest[0])["seq"]), newest
        except (ValueError, KeyError, TypeError):
            return 0, newest

    def lines_at(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        """One index seek per event, session by session."""
        by_session: dict[str, list[int]] = {}
        for session, seq in keys:
            by_session.setdefault(session, []).append(seq)
        found: dict[tuple[str, int], bytes] = {}
        for session, seqs in by_session.items():
            for seq, line in SessionFile(self.root, session).lines_at(seqs).items():
                found[(session, seq)] = line
        return found

    def session_names(self) -> list[str]:
        try:
            names = os.listdir(self.root)
        except OSError:
            return []
        return sorted(name[: -len(".jsonl")] for name in names if name.endswith(".jsonl") and not name.startswith("."))

    def close(self) -> None:
        """Nothing stays open between calls."""

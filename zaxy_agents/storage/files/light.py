"""The files backend's light log for the hook fast path: appends and tail reads on the session file, stdlib only."""

from __future__ import annotations

from .jsonl_file import SessionFile

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

    from zaxy_agents.config import ZaxySettings

    from .jsonl_file import PreparedDraft


class FilesLightLog:
    """One short-lived handle per call: the hook process appends, or reads a tail, and exits."""

    def __init__(self, settings: ZaxySettings) -> None:
        self.root = settings.eventloom_dir

    def append_prepared(self, session: str, prepared: list[PreparedDraft]) -> list[dict[str, Any]]:
        handle = SessionFile(self.root, session, durability="fsync")
        try:
            return handle.append(prepared)
        finally:
            handle.close()

    def recent_lines(self, session: str, count: int) -> tuple[tuple[int, str] | None, int, Any]:
        """Seeks by binary search over the file: the cost depends on ``count``, not on the log's length."""
        handle = SessionFile(self.root, session)
        tail = handle.read_tail()
        if tail is None:
            return None, 0, []
        start = max(1, tail[0] - max(1, count) + 1)
        return tail, start, (line for _offset, line in handle.iter_lines(start, tail[0]))

    def close(self) -> None:
        """Nothing stays open between calls."""

"""What every `zaxy doctor` check shares: the result type, where it looks, and the failed-check wrapper.

The checks behind `zaxy doctor`: one command a user runs when something feels wrong (seed 004).

Each check returns a :class:`Check` — ``ok``, ``warn`` (works, but look), ``fail`` (broken: exit 1) or
``skip`` (nothing to check) — with a one-line ``fix`` for anything not ``ok``, and, where a safe repair exists,
a ``repair`` that ``zaxy doctor --fix`` runs (never one that deletes or rewrites an acknowledged event: derived
state is rebuilt from the log, stale records of dead processes are removed, spooled hook events are drained).

Checks: log integrity per session, damaged logs, projection freshness, derived-state files, embedder
(availability, dims, model@version mix), vector cache headroom, MCP profile, hooks (installation, missing
executables, last error, per client), the graph owner record, the hook spool, disk headroom. A check that
itself fails reports ``fail`` with the error: the doctor never crashes on the damage it looks for.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
UNPARSEABLE = ("line is not valid JSON", "line is not a JSON object")  # verify's reasons for damaged bytes
DEFAULT_MIN_FREE_MB = 500
VECTOR_CACHE_SHARE = 0.25  # vectors held in memory should stay under this share of available RAM


class Check:
    """One diagnosis: what was checked, what was found, the one-line fix, and the safe repair (if any)."""

    def __init__(
        self,
        name: str,
        status: str,
        summary: str,
        *,
        fix: str | None = None,
        details: dict[str, Any] | None = None,
        repair: Callable[[], str] | None = None,
    ) -> None:
        self.name, self.status, self.summary, self.fix = name, status, summary, fix
        self.details = details or {}
        self.repair = repair
        self.repaired: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"check": self.name, "status": self.status, "summary": self.summary}
        if self.fix:
            data["fix"] = self.fix
        if self.details:
            data["details"] = self.details
        if self.repaired:
            data["repaired"] = self.repaired
        return data


class DoctorContext:
    """Where the doctor looks: the workspace, its Eventloom, and a lazily opened fabric (read-only use)."""

    def __init__(self, workspace: Any, eventloom: Path, *, min_free_mb: int) -> None:
        self.workspace = workspace
        self.eventloom = eventloom
        self.min_free_mb = min_free_mb
        self._fabric: Any = None
        self.damaged: dict[str, str] = {}  # session -> why it cannot be read

    @property
    def exists(self) -> bool:
        return self.eventloom.is_dir()

    def fabric(self) -> Any:
        """The workspace's fabric, with the configured embedder when it loads (its own check reports when not)."""
        if self._fabric is None:
            from zaxy_agents.config import ZaxySettings
            from zaxy_agents.fabric import MemoryFabric

            try:
                self._fabric = MemoryFabric.from_path(self.eventloom)
            except Exception:
                settings = ZaxySettings.resolve(self.eventloom)
                settings.embedder = None
                self._fabric = MemoryFabric(settings)
        return self._fabric

    def session_files(self) -> list[Path]:
        return sorted(path for path in self.eventloom.glob("*.jsonl") if not path.name.startswith("."))

    def close(self) -> None:
        if self._fabric is not None:
            self._fabric.close()


def _failed_check(name: str, exc: BaseException, fix: str) -> Check:
    from zaxy_agents.errors import LockedError, ZaxyError

    if isinstance(exc, LockedError):
        return Check(name, SKIP, f"held by another process ({exc.message})", fix=exc.remediation)
    message = exc.message if isinstance(exc, ZaxyError) else str(exc)
    return Check(name, FAIL, f"{type(exc).__name__}: {message[:200]}", fix=fix)

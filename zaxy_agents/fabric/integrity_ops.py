"""Fabric operations that keep the log honest: repair damaged sessions (and, with erase_ops, forget for real).

``repair`` is what ``zaxy repair`` and ``zaxy doctor --fix`` call: for each session it sets unreadable bytes
aside in a sidecar file and records that it did (tombstones keep the place of events that stood in them), and
acknowledges a last event that does not verify so appends can continue. It never deletes or rewrites an
acknowledged event. Sessions that were edited (events missing, duplicated or reordered) are reported, not
repaired: they need a backup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.validation import validate_session_id

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .erase_ops import EraseService
    from .projection_ops import ProjectionService


class IntegrityService(FabricService):
    """Service: repair (and integrity reports) for :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(self, core: FabricCore, projection: ProjectionService, erasure: EraseService) -> None:
        """``erasure``: repair also finishes erasures a crash interrupted."""
        super().__init__(core)
        self.projection = projection
        self.erasure = erasure

    def repair(self, session: str | None = None, *, actor: str = "zaxy", dry_run: bool = False) -> dict[str, Any]:
        """Repair ``session`` (default: every session); ``dry_run`` reports without changing anything.

        Returns ``{"sessions": [per-session report], "repaired": [...], "refused": [...]}``: a refused session
        was edited (its report says how) and needs restoring from a backup.
        """
        names = [validate_session_id(session)] if session is not None else self.log.session_names()
        reports = []
        for name in names:
            try:
                report = self.log.repair(name, actor=actor, dry_run=dry_run)
                if not dry_run and not report.get("refused"):
                    finished = self.erasure.finish_erasures(name)
                    if finished:
                        report = {**report, "repaired": True, "finished_erasure": finished}
                reports.append(report)
            except IntegrityError as exc:
                reports.append({"session": name, "repaired": False, "refused": exc.message, "fix": exc.remediation})
        projector = self.projection.opened_projector()
        if projector is not None:
            for report in reports:
                if report.get("repaired"):
                    projector.damaged.pop(report["session"], None)
        return {
            "sessions": reports,
            "repaired": [r["session"] for r in reports if r.get("repaired")],
            "refused": [r["session"] for r in reports if r.get("refused")],
            "dry_run": dry_run,
        }

    def damaged_sessions(self) -> dict[str, str]:
        """Sessions that cannot be read (their tail) or read past some event: session -> why."""
        damaged = {s.session: s.damaged for s in self.log.sessions() if s.damaged}
        projector = self.projection.opened_projector()
        if projector is not None:
            for name, why in projector.damaged.items():
                damaged.setdefault(name, why)
        return dict(sorted(damaged.items()))

"""What every Coordinate operation shares: the mission folded by replay, authority checks, verified refs, and
the one way events are written (through the fabric's ``append_many``, so contracts are checked before the append).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError, UnauthorizedError, ZaxyError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.models import Event, EventDraft
from zaxy_agents.eventloom.protocol import EventLog

from .contracts import ID_PATTERN, MISSION_STARTED, REVIEW_STATUSES, WORKER_CREATED, parent_session, worker_session
from .mission import Mission, fold, ref_of
from .proofs import SynthesisPort

AppendMany = Callable[[str, Iterable[EventDraft | dict[str, Any]]], list[Event]]
ReinforcePromotion = Callable[[Event, list[dict[str, Any]]], list[Event]]
"""``(promotion event, the finding's evidence refs) -> reinforcement events written``: seed 004's strong
reinforcement for the memories a promoted finding cites (the salience feature writes ``memory.promoted``)."""
_ID = re.compile(ID_PATTERN)


class MissionAccess:
    """The log, the writer and the checks the Coordinate operations build on."""

    def __init__(
        self,
        log: EventLog,
        append_many: AppendMany,
        synthesis: SynthesisPort | None = None,
        reinforce: ReinforcePromotion | None = None,
    ) -> None:
        """``synthesis``: the synthesis feature's recorder and reader (proof packets bind its artifacts);
        ``reinforce``: called after each accepted promotion with its evidence refs (salience's strong
        reinforcement); without it a promotion changes mission state only."""
        self.log = log
        self._append_many = append_many
        self._synthesis = synthesis
        self._reinforce = reinforce

    def _reinforced(self, promotion: Event, finding: Any) -> dict[str, Any]:
        """The promotion's strong reinforcement of the memories its finding cites (``reinforced``: the events)."""
        if self._reinforce is None or not finding.evidence:
            return {"reinforced": []}
        try:
            return {"reinforced": [written(event) for event in self._reinforce(promotion, list(finding.evidence))]}
        except ZaxyError as exc:  # the promotion stands (it is written); say the reinforcement is missing
            return {"reinforced": [], "warnings": [f"strong reinforcement not recorded: {exc.code}: {exc.message}"]}

    def _mission(self, mission_id: str) -> Mission:
        check_id(mission_id, "mission_id")
        session = parent_session(mission_id)
        if not self.log.has_session(session):
            raise NotFoundError(
                f"no mission {mission_id!r}",
                field="mission_id",
                remediation="Start it with coordination_start, or check the mission_id.",
            )
        parent = list(self.log.replay(session))
        started = parent[0] if parent and parent[0].type == MISSION_STARTED else None
        worker_ids = [e.payload.get("worker_id") for e in parent if e.type == WORKER_CREATED]
        workers = {
            w: list(self.log.replay(worker_session(mission_id, w)))
            for w in worker_ids
            if isinstance(w, str) and self.log.has_session(worker_session(mission_id, w))
        }
        mission = fold(parent, workers) if started is not None else None
        if mission is None:
            raise NotFoundError(
                f"session {session!r} holds no mission",
                field="mission_id",
                remediation="Start the mission with coordination_start.",
            )
        return mission

    def _worker(self, mission: Mission, worker_id: str) -> Any:
        worker = mission.workers.get(worker_id) if isinstance(worker_id, str) else None
        if worker is None:
            raise NotFoundError(
                f"mission {mission.mission_id!r} has no worker {worker_id!r}",
                field="worker_id",
                remediation="Create it with coordination_worker_create, or use a worker of this mission.",
            )
        return worker

    def _finding(self, mission: Mission, finding_id: str, *, field: str = "finding_id") -> Any:
        finding = mission.findings.get(finding_id) if isinstance(finding_id, str) else None
        if finding is None:
            raise NotFoundError(
                f"mission {mission.mission_id!r} has no finding {finding_id!r}",
                field=field,
                remediation="Use a finding_id from coordination_merge_brief of this mission.",
            )
        return finding

    def _handoff(self, mission: Mission, handoff_id: str) -> Any:
        handoff = mission.handoffs.get(handoff_id) if isinstance(handoff_id, str) else None
        if handoff is None:
            raise NotFoundError(
                f"mission {mission.mission_id!r} has no handoff {handoff_id!r}",
                field="handoff_id",
                remediation="Use a handoff_id coordination_handoff returned for this mission.",
            )
        return handoff

    def _require(self, mission: Mission, actor: str, permission: str, *, field: str = "actor") -> None:
        if not mission.may(actor, permission):
            role = mission.role_of(actor) or "not a member"
            raise UnauthorizedError(
                f"{actor!r} ({role}) has no {permission} right in mission {mission.mission_id!r}",
                field=field,
                remediation=f"Act as the coordinator ({mission.coordinator!r}) or a reviewer the mission granted.",
            )

    def _check_review(
        self, mission: Mission, finding_id: str, status: Any, rationale: Any, reviewer: str, *, field: str = ""
    ) -> None:
        prefix = f"{field}." if field else ""
        if status not in REVIEW_STATUSES:
            raise InvalidRequestError(
                f"unknown review status {status!r}",
                field=f"{prefix}status",
                remediation=f"Use one of {', '.join(REVIEW_STATUSES)}.",
            )
        if not isinstance(rationale, str) or not rationale.strip():
            raise InvalidRequestError(
                "a review needs a rationale", field=f"{prefix}rationale", remediation="Say why you decided this."
            )
        self._require(mission, reviewer, "review", field="actor" if field else "reviewer")
        finding = mission.findings[finding_id]
        if reviewer == finding.worker_id:
            raise UnauthorizedError(
                "a worker may not review its own finding",
                field="reviewer",
                remediation="Ask the coordinator or a reviewer of the mission.",
            )
        if finding.promotion is not None:
            raise ConflictError(
                f"finding {finding_id} is already promoted",
                field=f"{prefix}finding_id",
                remediation="Promoted state is final for this mission; report a new finding to correct it.",
            )

    def _ref(self, item: Any, field: str, default_session: str) -> dict[str, Any]:
        """A citation string or ``{session?, seq, hash}`` -> a verified full ref (the event exists, same hash)."""
        try:
            if isinstance(item, str):
                event = self.log.resolve(parse_citation(item, field=field))
            elif isinstance(item, dict) and isinstance(item.get("seq"), int) and isinstance(item.get("hash"), str):
                session = item.get("session", default_session)
                event = self.log.get(session, item["seq"])
                if event.hash != item["hash"]:
                    raise NotFoundError(f"{field}: the event has a different hash", field=field)
            else:
                raise InvalidRequestError(f"{field} must be a citation", field=field)
        except ZaxyError as exc:
            raise type(exc)(
                exc.message,
                field=field,
                remediation="Cite an existing event by its eventloom:// citation or {session, seq, hash (64 hex)}.",
            ) from exc
        return ref_of(event)

    def _resolves(self, ref: dict[str, Any]) -> bool:
        try:
            return self.log.get(ref["session"], ref["seq"]).hash == ref["hash"]
        except (ZaxyError, KeyError, TypeError):
            return False

    def _write(self, session: str, events: list[tuple[str, dict[str, Any], str]]) -> list[Event]:
        drafts = [{"type": kind, "payload": payload, "actor": actor} for kind, payload, actor in events]
        return self._append_many(session, drafts)


def written(event: Event) -> dict[str, Any]:
    return {"event_type": event.type, "seq": event.seq, "hash": event.hash, "citation": event.citation}


def digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def slug(title: Any) -> str:
    text = title if isinstance(title, str) else ""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:32].strip("-")
    return slug or "mission"


def check_id(value: Any, field: str) -> None:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise InvalidRequestError(
            f"invalid {field} {value!r}",
            field=field,
            remediation="Use 1-48 characters: lowercase letters, digits, '-' and '_', starting with a letter or digit.",
        )

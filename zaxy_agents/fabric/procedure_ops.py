"""Fabric operations for planning from procedural memory (seed 003 beta.2 ``memory_plan_from_procedures``) and
for turning an accepted procedure candidate into a skill *proposal* (seed 004: mined procedures become skills
only through review).

A plan is a non-authoritative packet: the best applicable procedure's steps, each cited, plus the diagnostic
and excluded procedures with their reasons (never returned as instructions). ``skill_from_procedure`` appends
``skill.proposed`` for an accepted, cited procedure candidate: the skill is diagnostic until someone validates it
with ``memory_skill(action="validated")``; nothing here applies or validates a skill. See docs/cognitive.md.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.instants import parse_instant
from zaxy_agents.projection.model import entity_key
from zaxy_agents.skillmemory.memory import procedures, relevant

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .cognitive_ops import CognitiveService
    from .lifecycle_ops import LifecycleService
    from .projection_ops import ProjectionService

MAX_LIMIT = 50
PLAN_GUIDANCE = (
    "plan: the steps come from an applicable (validated or accepted, cited) procedure; they are non-authoritative "
    "planning guidance. Diagnostic and excluded procedures are listed with their reasons, not as instructions."
)


class ProcedureService(FabricService):
    """Service: plan from procedures; propose a skill from an accepted procedure candidate."""

    def __init__(
        self,
        core: FabricCore,
        projection: ProjectionService,
        cognitive: CognitiveService,
        lifecycle: LifecycleService,
    ) -> None:
        """``lifecycle``: a skill proposal is recorded like every skill event (``record_skill``)."""
        super().__init__(core)
        self.projection = projection
        self.cognitive = cognitive
        self.lifecycle = lifecycle

    def plan_from_procedures(
        self,
        session: str,
        goal: str,
        *,
        scope: list[str] | None = None,
        as_of: str | None = None,
        limit: int = 5,
    ) -> dict[str, Any]:
        """A planning packet for ``goal`` from the skills and procedure candidates of the session (and scope)."""
        validate_session_id(session)
        if not isinstance(goal, str) or not goal.strip() or len(goal) > 2000:
            raise InvalidRequestError(
                "goal must be a non-empty string of at most 2000 characters",
                field="goal",
                remediation="Say what you want to do.",
            )
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise InvalidRequestError(
                f"limit must be an integer between 1 and {MAX_LIMIT}", field="limit", remediation="Use e.g. 5."
            )
        for index, name in enumerate(scope or []):
            validate_session_id(name, field=f"scope[{index}]")
        sessions = sorted(set(scope or []) | {session})
        as_of = parse_instant(as_of)
        self.projection.project(sessions)
        catalog = self.projection.projector.catalog
        matched = relevant(procedures(catalog, sessions, as_of, self.log, self.cognitive.evidence_resolves, goal), goal)
        by_class: dict[str, list[dict[str, Any]]] = {"applicable": [], "diagnostic": [], "excluded": []}
        for match, procedure in matched:
            if len(by_class[procedure.klass]) < limit:
                by_class[procedure.klass].append({**procedure.item(), "match": match})
        best = by_class["applicable"][0] if by_class["applicable"] else None
        skills = {p.procedure_id for _, p in matched if p.kind == "skill"}
        proposals = [
            {
                "candidate_id": item["candidate_id"],
                "title": item["title"],
                "citation": item["citation"],
                "action": "memory_skill_from_procedure",
            }
            for item in by_class["applicable"]
            if item["kind"] == "procedure_candidate" and _skill_id(item["candidate_id"]) not in skills
        ]
        return {
            "goal": goal,
            "session": session,
            "sessions": sessions,
            "as_of": as_of,
            "plan": _plan(best) if best else None,
            **by_class,
            "skill_proposals": proposals,
            "guidance": [PLAN_GUIDANCE]
            + ([] if best else ["No applicable procedure matches this goal: plan from current memory instead."]),
            "authority_status": "non_authoritative",
        }

    def skill_from_procedure(
        self, session: str, candidate_id: str, *, skill_id: str | None = None, actor: str = "agent"
    ) -> dict[str, Any]:
        """Propose a skill (``skill.proposed``) from an accepted, cited procedure candidate of ``session``: its
        steps, and citations to the candidate and its source traces. Review-gated: the skill stays diagnostic
        until validated with memory_skill; proposing the same candidate twice is a conflict."""
        validate_session_id(session)
        if not isinstance(candidate_id, str) or not candidate_id.strip():
            raise InvalidRequestError("candidate_id is required", field="candidate_id", remediation="Name it.")
        self.projection.project([session])
        catalog = self.projection.projector.catalog
        found = [
            p
            for p in procedures(catalog, [session], None, self.log, self.cognitive.evidence_resolves)
            if p.kind == "procedure_candidate" and p.procedure_id == candidate_id
        ]
        if not found:
            raise NotFoundError(
                f"no procedure candidate {candidate_id!r} in session {session!r}",
                field="candidate_id",
                remediation="List them with memory_consolidation_status or memory_plan_from_procedures.",
            )
        candidate = found[0]
        if candidate.klass != "applicable":
            raise ConflictError(
                f"procedure candidate {candidate_id} is {candidate.reason}; only an accepted, cited one becomes a "
                "skill proposal",
                field="candidate_id",
                remediation="Review it first (memory_consolidation_review status accepted).",
            )
        name = skill_id or _skill_id(candidate_id)
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}", name):
            raise InvalidRequestError(
                "skill_id must be 1-200 letters, digits, '_', '.', ':' or '-'", field="skill_id", remediation="Fix it."
            )
        if catalog.current(entity_key(session, "skill", name)) is not None:
            raise ConflictError(
                f"skill {name!r} already exists", field="skill_id", remediation="Revise it with memory_skill instead."
            )
        event = self.lifecycle.record_skill(
            session,
            "proposed",
            name,
            actor=actor,
            name=candidate.title[:200],
            summary=f"From accepted procedure candidate {candidate_id}: {candidate.title}"[:4000],
            procedure=candidate.steps[:50],
            citations=[candidate.citation, *candidate.evidence][:50],
            reason=f"accepted procedure candidate {candidate_id}",
        )
        return {
            "skill_id": name,
            "status": "proposed",
            "version": event.payload.get("version"),
            "citation": event.citation,
            "candidate_id": candidate_id,
            "procedure": candidate.steps[:50],
            "authority_status": "non_authoritative",
            "next": "a reviewer validates it with memory_skill(action='validated'); until then it is diagnostic",
        }


def _skill_id(candidate_id: str) -> str:
    return "procedure-" + candidate_id.removeprefix("cand_").replace(":", "-")[:24]


def _plan(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": item["kind"],
        "id": item.get("skill_id") or item.get("candidate_id"),
        "title": item["title"],
        "version": item["version"],
        "citation": item["citation"],
        "steps": [
            {"index": index, "step": step, "citation": item["citation"]}
            for index, step in enumerate(item["procedure"], start=1)
        ],
        "evidence": item["citations"],
        "authority_status": "non_authoritative",
    }

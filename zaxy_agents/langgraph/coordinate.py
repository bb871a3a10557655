"""Coordinate for LangGraph multi-agent graphs: tools bound to one mission and one agent's identity.

In a supervisor graph (or a ``Send`` fan-out of workers) every agent gets :func:`coordination_tools` for its
own role. The mission and the acting identity are fixed when the tools are built, by the graph's code — a model
cannot claim to be the reviewer by writing a name into a tool call. A worker's tools report findings and check
out the mission; a reviewer's review, promote and export approval packets; the coordinator's also create
workers, assign and hand off. The mission's rules still apply on top (a worker never reviews its own finding).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, create_model

from zaxy_agents.coordinate.arguments import RecordSynthesisArtifactFields
from zaxy_agents.errors import ZaxyError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.tool_arguments import CheckoutQueryArgument

Role = Literal["worker", "reviewer", "coordinator"]
Status = Literal["accepted", "rejected", "duplicate", "needs_evidence", "deferred"]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReportArgs(_Args):
    subject: str = Field(min_length=1, max_length=300, description="What the finding is about.")
    claim: str = Field(min_length=1, max_length=4000, description="What you found.")
    evidence: list[str] = Field(default_factory=list, max_length=50, description="eventloom:// citations.")
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    test_backed: bool = Field(default=False, description="A test run backs it (cite it in evidence).")


class CheckoutArgs(_Args):
    include_diagnostics: bool = Field(default=False, description="Also list pending findings (non-authoritative).")


class ReviewArgs(_Args):
    finding_id: str = Field(pattern=r"^fnd_[0-9a-f]{16}$")
    status: Status
    rationale: str = Field(min_length=1, max_length=4000)


class PromoteArgs(_Args):
    finding_id: str = Field(pattern=r"^fnd_[0-9a-f]{16}$")


class AssignArgs(_Args):
    worker_id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,47}$")
    task: str = Field(min_length=1, max_length=4000)


class HandoffArgs(_Args):
    summary: str = Field(min_length=1, max_length=8000)
    next_steps: list[str] = Field(default_factory=list, max_length=50)
    risks: list[str] = Field(default_factory=list, max_length=50)


class NoArgs(_Args):
    pass


class RecordSynthesisArgs(CheckoutQueryArgument, RecordSynthesisArtifactFields):
    """The LangGraph form: the model saw the checkout as text, so the tool checks the same query out again."""


def _bound(schema: type[BaseModel], *fixed: str) -> type[BaseModel]:
    """``schema`` without the fields the graph fixes (mission, actor): the model never sees or sets them."""
    fields = {name: (info.annotation, info) for name, info in schema.model_fields.items() if name not in fixed}
    return create_model(schema.__name__, __base__=_Args, **fields)  # type: ignore[call-overload]


def coordination_tools(
    fabric: MemoryFabric, mission_id: str, actor: str, role: Role, *, session: str | None = None
) -> list[BaseTool]:
    """The coordination tools of ``role``, acting as ``actor`` in ``mission_id`` (a worker's ``actor`` is its
    worker id). ``session``: where the agent's ``memory_checkout`` reads (default the whole memory); a reviewer's
    ``coordination_record_synthesis_artifact`` checks the same query out there again."""
    c = fabric.coordination

    def record_synthesis(query: str, purpose: Any = None, **arguments: Any) -> dict[str, Any]:
        checkout = fabric.checkout(query, session=session, purpose=purpose).model_dump(mode="json")
        return c.record_synthesis_artifact(mission_id, checkout, actor=actor, **arguments)

    worker_tools: list[tuple[str, str, type[BaseModel], Callable[..., dict[str, Any]]]] = [
        (
            "coordination_checkout",
            "The mission brief, accepted (promoted) state, your assignment and the latest handoff, cited. Pending "
            "findings are never accepted state.",
            CheckoutArgs,
            lambda include_diagnostics=False: c.checkout(
                mission_id,
                worker_id=actor if role == "worker" else None,
                include_diagnostics=include_diagnostics,
                actor=actor,
            ),
        ),
    ]
    if role == "worker":
        worker_tools.append(
            (
                "coordination_report_finding",
                "Report a finding with the citations that support it; it stays pending until a reviewer accepts it.",
                ReportArgs,
                lambda **a: c.report_finding(mission_id, actor, a.pop("subject"), a.pop("claim"), **a),
            )
        )
    reviewer_tools: list[tuple[str, str, type[BaseModel], Callable[..., dict[str, Any]]]] = [
        (
            "coordination_merge_brief",
            "Every worker's findings grouped by review status, with conflicts and citations.",
            NoArgs,
            lambda: c.merge_brief(mission_id),
        ),
        (
            "coordination_review_finding",
            "Review a finding: accepted, rejected, duplicate, needs_evidence or deferred, with a rationale.",
            ReviewArgs,
            lambda finding_id, status, rationale: c.review_finding(
                mission_id, finding_id, status, rationale, reviewer=actor
            ),
        ),
        (
            "coordination_promote",
            "Promote an accepted finding into the mission's accepted state.",
            PromoteArgs,
            lambda finding_id: c.promote(mission_id, finding_id, promoted_by=actor),
        ),
        (
            "coordination_record_synthesis_artifact",
            "Bind a numeric answer candidate of memory_checkout (same query; candidate id or rank, outcome) to a "
            "mission decision (decision_scope; a handoff needs handoff_id): records the synthesis artifact and a "
            "proof packet with the accepted findings it rests on and the worker-local rows it does not.",
            _bound(RecordSynthesisArgs, "mission_id", "actor"),
            record_synthesis,
        ),
        (
            "coordination_handoff",
            "Hand the mission over: summary, next steps, risks; cites every promoted finding.",
            HandoffArgs,
            lambda summary, next_steps=(), risks=(): c.handoff(
                mission_id, summary, next_steps=list(next_steps), risks=list(risks), actor=actor
            ),
        ),
    ]
    coordinator_tools: list[tuple[str, str, type[BaseModel], Callable[..., dict[str, Any]]]] = [
        (
            "coordination_assign",
            "Assign a task to a worker of the mission.",
            AssignArgs,
            lambda worker_id, task: c.assign(mission_id, worker_id, task, actor=actor),
        ),
    ]
    chosen = worker_tools + (reviewer_tools if role != "worker" else [])
    chosen += coordinator_tools if role == "coordinator" else []
    return [_tool(name, description, schema, function) for name, description, schema, function in chosen]


def _tool(name: str, description: str, schema: type[BaseModel], function: Callable[..., Any]) -> BaseTool:
    def run(**arguments: Any) -> str:
        try:
            return json.dumps(function(**arguments), ensure_ascii=False)
        except ZaxyError as exc:  # the model sees the structured error and can correct itself
            raise ToolException(json.dumps(exc.to_dict(), ensure_ascii=False)) from None

    return StructuredTool.from_function(
        run, name=name, description=description, args_schema=schema, handle_tool_error=lambda e: str(e)
    )

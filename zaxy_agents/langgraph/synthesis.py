"""Synthesis tools for LangGraph agents (opt-in: ``memory_tools(include=...)`` or :func:`synthesis_tools`):
``memory_synthesis_artifact`` and ``memory_synthesis_evidence``, the same operations as the MCP full profile.

The model sees a checkout as text (memory_checkout's "Answer candidates" section, with candidate and row ids), so
these tools take the checkout's ``query`` (and purpose) instead of the checkout object: the tool checks the same
query out again in the run's session and scope and records that bundle. Unchanged memory gives the same ids;
if memory changed in between, a candidate that is no longer there is refused with a structured error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict

from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.tool_arguments import CheckoutQueryArgument, SynthesisArtifactFields, SynthesisEvidenceFields

from .tools import ToolContext, ZaxyTool, memory_tools

SYNTHESIS_TOOLS = ("memory_synthesis_artifact", "memory_synthesis_evidence")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ArtifactArgs(CheckoutQueryArgument, SynthesisArtifactFields, _Args):
    pass


class EvidenceArgs(CheckoutQueryArgument, SynthesisEvidenceFields, _Args):
    pass


def _checkout(context: ToolContext, args: CheckoutQueryArgument) -> dict[str, Any]:
    packet = context.fabric.checkout(
        args.query, session=context.session, scope=context.scope.recall, purpose=args.purpose
    )
    return packet.model_dump(mode="json")


class MemorySynthesisArtifactTool(ZaxyTool):
    name: str = "memory_synthesis_artifact"
    description: str = (
        "Record the answer candidates memory_checkout composed for a numeric question (same query), and, with "
        "candidate (its ans_... id or rank) and outcome, what you did with the one that shaped your answer: used, "
        "rejected, corrected (with corrected_value) or excluded. Non-authoritative: no fact changes."
    )
    args_schema: type[BaseModel] = ArtifactArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: ArtifactArgs) -> dict[str, Any]:
        return context.fabric.record_synthesis_artifact(
            _checkout(context, args),
            args.candidate,
            args.outcome,
            reason=args.reason,
            corrected_value=args.corrected_value,
            session=context.session,
            actor=args.actor,
        )


class MemorySynthesisEvidenceTool(ZaxyTool):
    name: str = "memory_synthesis_evidence"
    description: str = (
        "Record that one ledger row (row_... id from memory_checkout's answer candidates section, same query) "
        "supported your answer (used, helpful) or was excluded from it (excluded), with a reason."
    )
    args_schema: type[BaseModel] = EvidenceArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: EvidenceArgs) -> dict[str, Any]:
        return context.fabric.record_synthesis_evidence(
            _checkout(context, args),
            args.row,
            args.outcome,
            candidate=args.candidate,
            reason=args.reason,
            session=context.session,
            actor=args.actor,
        )


def synthesis_tools(
    fabric: MemoryFabric,
    *,
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
    include: Sequence[str] = SYNTHESIS_TOOLS,
) -> list[BaseTool]:
    """The synthesis tools (both by default), scoped like :func:`memory_tools`."""
    return memory_tools(fabric, scope=scope, session=session, session_prefix=session_prefix, include=include)

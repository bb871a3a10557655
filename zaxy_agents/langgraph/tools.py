"""Memory tools for LangChain / LangGraph agents: proper ``BaseTool`` classes with typed arguments.

``memory_tools(fabric)`` returns every registered tool, ready for ``create_agent(model, tools)``,
``model.bind_tools`` or a ``ToolNode``. Scoping comes from the run's config (see :mod:`.scoping`): the model
never names a session. Errors come back to the model as ``{"error": {"code", "message", "remediation",
"field"?}}`` JSON in a ToolMessage with ``status="error"``, never as a traceback.

Adding a tool is one self-contained block — an arguments model and a :class:`ZaxyTool` subclass; defining
the class registers it::

    class MemoryTimelineArgs(BaseModel):
        entity: str = Field(description="...")

    class MemoryTimelineTool(ZaxyTool):
        name: str = "memory_timeline"
        description: str = "..."
        args_schema: type[BaseModel] = MemoryTimelineArgs

        def execute(self, context: ToolContext, args: MemoryTimelineArgs) -> str | dict[str, Any]:
            return {"versions": ...}  # dicts are sent as JSON, strings as they are

Results carry an artifact marked ``lc_source: "zaxy_memory"``, so transcript capture does not record memory
read back to the model as new memory; set ``recalls_memory = True`` on a tool whose results show stored
memory, so citations the model takes from them count as feedback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from langchain_core.callbacks import CallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from zaxy_agents.checkout.purpose import PRESETS
from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX
from zaxy_agents.checkpoints.transcript import MEMORY_SOURCE
from zaxy_agents.errors import InvalidRequestError, UnauthorizedError, ZaxyError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.tool_arguments import RetrievalProfileName, validation_problems

from .context import render_for_model
from .scoping import MemoryScope, ResolvedScope

logger = logging.getLogger(__name__)

PurposeName = Literal[tuple(sorted(PRESETS))]  # type: ignore[valid-type]
# Event types only Zaxy itself writes (or that have their own tool): the model may not forge them.
RESERVED_TYPE_PREFIXES = (
    "checkpoint.",
    "store.",
    "transcript.",
    "eventloom.",
    "memory.",
    "metacognition.",
    "hook.",
    "inference.",
    "extraction.",
    "consolidation.candidate.reviewed",  # reviews go through memory_consolidation_review and its checks
    "belief.update.",  # proposals and reviews go through their tools and checks
    "coordination.",  # missions go through the coordination tools and their authority rules
)


@dataclass(frozen=True)
class ToolContext:
    """What a tool call may touch: the fabric, the thread's session and the recall scope."""

    fabric: MemoryFabric
    scope: ResolvedScope
    config: RunnableConfig

    @property
    def session(self) -> str:
        return self.scope.session

    def session_of(self, citation: str | None) -> str:
        """The session a citation names (it must be in the recall scope), else the thread's session."""
        if citation is None:
            return self.scope.session
        parsed = parse_citation(citation)
        if not self.scope.allows(parsed.session):
            raise UnauthorizedError(
                f"session {parsed.session!r} is outside this agent's memory scope",
                field="citation",
                remediation="Use a citation returned by memory_checkout or memory_query in this conversation.",
            )
        return parsed.session


class ZaxyTool(BaseTool):
    """Base class: resolves scoping from the config, runs :meth:`execute`, turns errors into structured JSON."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    fabric: Any = Field(exclude=True)
    memory_scope: MemoryScope = Field(default_factory=MemoryScope, exclude=True)
    memory_cues: dict[str, str] | None = Field(default=None, exclude=True)  # default cues of recall tools
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: Any = True
    handle_validation_error: Any = None

    recalls_memory: ClassVar[bool] = False  # results show stored memory (their citations may earn feedback)
    default: ClassVar[bool] = True  # returned by memory_tools() without include= (opt-in tools set False)
    registry: ClassVar[dict[str, type[ZaxyTool]]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        name = cls.model_fields["name"].default if "name" in cls.model_fields else None
        if isinstance(name, str) and name:
            ZaxyTool.registry[name] = cls

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        if self.handle_validation_error is None:
            self.handle_validation_error = _validation_error

    def execute(self, context: ToolContext, args: Any) -> str | dict[str, Any]:
        raise NotImplementedError

    def _run(
        self, config: RunnableConfig, run_manager: CallbackManagerForToolRun | None = None, **arguments: Any
    ) -> tuple[str, dict[str, Any]]:
        try:
            args = self.args_schema.model_validate(arguments)  # type: ignore[union-attr]
            context = ToolContext(self.fabric, self.memory_scope.resolve(self.fabric, config), config)
            result = self.execute(context, args)
        except ZaxyError as exc:  # a refused call writes nothing, not even its observation
            raise ToolException(json.dumps(exc.to_dict(), ensure_ascii=False)) from None
        except ValidationError as exc:
            raise ToolException(_validation_error(exc)) from None
        except Exception as exc:  # a bug must not reach the model as a traceback; the developer gets the log
            logger.exception("%s failed", self.name)
            error = ZaxyError(f"{type(exc).__name__}: {exc}", remediation="Retry later or continue without memory.")
            raise ToolException(json.dumps(error.to_dict(), ensure_ascii=False)) from None
        self._observe(context, arguments, result)
        content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        return content, {"lc_source": MEMORY_SOURCE, "tool": self.name, "recall": self.recalls_memory}

    def _observe(self, context: ToolContext, arguments: dict[str, Any], result: Any) -> None:
        """A primitive's completed call becomes a ``reasoning.primitive.called`` observation (seed 002/003)."""
        actor = arguments.get("actor")
        self.fabric.observe_primitive(
            context.session, self.name, arguments, result=result, actor=actor if isinstance(actor, str) else "agent"
        )

    async def _arun(
        self, config: RunnableConfig, run_manager: Any = None, **arguments: Any
    ) -> tuple[str, dict[str, Any]]:
        import asyncio

        return await asyncio.to_thread(self._run, config, None, **arguments)


def _validation_error(exc: ValidationError) -> str:
    problems = validation_problems(exc.errors())
    error = InvalidRequestError(
        "; ".join(f"{p['field'] or 'arguments'}: {p['message']}" for p in problems) or str(exc),
        field=(problems[0]["field"] or None) if problems else None,
        remediation="Fix the arguments to match the tool's schema and call it again.",
    )
    return json.dumps(error.to_dict(), ensure_ascii=False)


# ---------------------------------------------------------------------- memory_checkout
PROFILE_HELP = "Ranking features: plain (none), balanced (the measured default), full (every 2.2 feature)."
CUES_HELP = (
    "Your context as {name: value} with names mission (or task), workspace (or repo), tool, phase: memories "
    "recorded in the same context rank higher under the full profile. Default: the agent's configured cues."
)


class MemoryCheckoutArgs(BaseModel):
    query: str = Field(min_length=1, max_length=4000, description="The question or task to check memory out for.")
    max_tokens: int = Field(default=1200, ge=64, le=8000, description="Token budget of the returned packet.")
    purpose: PurposeName | None = Field(default=None, description="Purpose preset that shapes what is emphasised.")
    retrieval_profile: RetrievalProfileName | None = Field(default=None, description=PROFILE_HELP)
    cues: dict[str, str] | None = Field(default=None, description=CUES_HELP)


class MemoryCheckoutTool(ZaxyTool):
    name: str = "memory_checkout"
    description: str = (
        "Check memory out for a question or task: current facts and decisions, cited evidence, open tasks and an "
        "answerability verdict, as a budgeted text packet. Cite the eventloom:// citations you use."
    )
    args_schema: type[BaseModel] = MemoryCheckoutArgs
    recalls_memory: ClassVar[bool] = True

    def execute(self, context: ToolContext, args: MemoryCheckoutArgs) -> str:
        packet = context.fabric.checkout(
            args.query,
            session=context.session,
            scope=context.scope.recall,
            max_tokens=args.max_tokens,
            purpose=args.purpose,
            retrieval_profile=args.retrieval_profile,
            cues=args.cues if args.cues is not None else self.memory_cues,
        )
        return render_for_model(packet)


# ---------------------------------------------------------------------- memory_append
class MemoryAppendArgs(BaseModel):
    type: str = Field(
        pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$",
        max_length=128,
        description=(
            "Dotted event type, e.g. decision.recorded {decision, rationale}, task.created {task_id, title}, "
            "task.completed {task_id}, fact.asserted {subject, predicate, object} or {fact}, finding.accepted "
            "{finding}, question.raised {question}, note.recorded {text}."
        ),
    )
    payload: dict[str, Any] = Field(description="The event's fields as a JSON object.")


class MemoryAppendTool(ZaxyTool):
    name: str = "memory_append"
    description: str = (
        "Record something worth remembering (a decision, task, fact, finding, open question) as a cited event in "
        "this conversation's memory. Returns its eventloom:// citation."
    )
    args_schema: type[BaseModel] = MemoryAppendArgs

    def execute(self, context: ToolContext, args: MemoryAppendArgs) -> dict[str, Any]:
        if args.type.startswith(RESERVED_TYPE_PREFIXES):
            raise InvalidRequestError(
                f"event type {args.type!r} is reserved for Zaxy itself",
                field="type",
                remediation="Use a domain type such as decision.recorded, task.created or fact.asserted; use "
                "memory_feedback / memory_invalidate to judge existing memory.",
            )
        event = context.fabric.append(context.session, args.type, args.payload, actor="agent")
        return {"citation": event.citation, "type": event.type, "seq": event.seq}


# ---------------------------------------------------------------------- memory_query
class MemoryQueryArgs(BaseModel):
    query: str = Field(min_length=1, max_length=4000, description="What to search memory for.")
    k: int = Field(default=8, ge=1, le=20, description="How many hits to return.")
    include_superseded: bool = Field(default=False, description="Also return superseded or invalidated memory.")
    retrieval_profile: RetrievalProfileName | None = Field(default=None, description=PROFILE_HELP)
    cues: dict[str, str] | None = Field(default=None, description=CUES_HELP)


class MemoryQueryTool(ZaxyTool):
    name: str = "memory_query"
    description: str = (
        "Search memory (fused lexical, entity, vector and graph retrieval). Each hit has its text, status "
        "(current, superseded, invalidated) and eventloom:// citation."
    )
    args_schema: type[BaseModel] = MemoryQueryArgs
    recalls_memory: ClassVar[bool] = True

    def execute(self, context: ToolContext, args: MemoryQueryArgs) -> dict[str, Any]:
        response = context.fabric.query(
            args.query,
            sessions=context.scope.recall,
            k=args.k,
            include_superseded=args.include_superseded,
            retrieval_profile=args.retrieval_profile,
            cues=args.cues if args.cues is not None else self.memory_cues,
        )
        hits = [
            {
                "citation": hit.citation,
                "type": hit.event_type,
                "status": hit.status,
                **({"attenuated": True} if hit.attenuated else {}),
                "text": hit.text if len(hit.text) <= 400 else hit.text[:399] + "…",
                **({"entity": hit.entity["name"], "entity_type": hit.entity["entity_type"]} if hit.entity else {}),
            }
            for hit in response.hits
        ]
        return {"hits": hits, **({"warnings": response.warnings} if response.warnings else {})}


# ---------------------------------------------------------------------- memory_feedback
class MemoryFeedbackArgs(BaseModel):
    entity: str = Field(min_length=1, max_length=500, description="Entity name exactly as memory returned it.")
    entity_type: str = Field(min_length=1, max_length=64, description="Its type (fact, decision, task, ...).")
    signal: Literal["used", "helpful", "confirmed", "irrelevant", "wrong", "outdated"] = Field(
        description="used/helpful/confirmed reinforce it; irrelevant/wrong/outdated are recorded for audit."
    )
    citation: str | None = Field(default=None, description="The eventloom:// citation it came with.")
    note: str | None = Field(default=None, max_length=1000, description="Why, in a sentence.")


class MemoryFeedbackTool(ZaxyTool):
    name: str = "memory_feedback"
    description: str = "Say how a remembered fact served you, so memory learns what is useful and what is wrong."
    args_schema: type[BaseModel] = MemoryFeedbackArgs

    def execute(self, context: ToolContext, args: MemoryFeedbackArgs) -> dict[str, Any]:
        event = context.fabric.feedback(
            context.session_of(args.citation),
            args.entity,
            args.entity_type,
            args.signal,
            citation=args.citation,
            note=args.note,
        )
        return {"recorded": event.type, "citation": event.citation}


# ---------------------------------------------------------------------- memory_invalidate
class MemoryInvalidateArgs(BaseModel):
    entity: str = Field(min_length=1, max_length=500, description="Entity name exactly as memory returned it.")
    entity_type: str = Field(min_length=1, max_length=64, description="Its type (fact, decision, task, ...).")
    reason: str = Field(min_length=1, max_length=1000, description="Why it is no longer true.")
    citation: str | None = Field(default=None, description="The eventloom:// citation it came with.")


class MemoryInvalidateTool(ZaxyTool):
    name: str = "memory_invalidate"
    description: str = (
        "Mark a remembered fact as no longer true (its validity window closes; history keeps it). Use when the "
        "user corrects memory or it turns out wrong."
    )
    args_schema: type[BaseModel] = MemoryInvalidateArgs

    def execute(self, context: ToolContext, args: MemoryInvalidateArgs) -> dict[str, Any]:
        event = context.fabric.invalidate(
            context.session_of(args.citation), args.entity, args.entity_type, reason=args.reason
        )
        return {"recorded": event.type, "citation": event.citation}


# ---------------------------------------------------------------------- factory
def memory_tools(
    fabric: MemoryFabric,
    *,
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
    include: Iterable[str] | None = None,
    cues: Mapping[str, str] | None = None,
) -> list[BaseTool]:
    """The default memory tools (or those named in ``include``, which may also name opt-in tools such as the
    causal and consolidation tools of :mod:`.cognitive` and the metacognition tools of :mod:`.metacognition`),
    scoped as described in :mod:`.scoping`. ``cues``: the default context cues of memory_checkout and
    memory_query (a call's own ``cues`` replace them)."""
    from . import beliefs, cognitive, metacognition, procedures, synthesis  # noqa: F401 - register the opt-in tools

    memory_scope = MemoryScope(session=session, scope=tuple(scope), session_prefix=session_prefix)
    names = [n for n, t in ZaxyTool.registry.items() if t.default] if include is None else list(include)
    unknown = [name for name in names if name not in ZaxyTool.registry]
    if unknown:
        raise InvalidRequestError(
            f"unknown memory tools {unknown}",
            field="include",
            remediation=f"Choose from {', '.join(ZaxyTool.registry)}.",
        )
    checked = fabric.checked_cues(dict(cues) if isinstance(cues, Mapping) else cues)
    return [ZaxyTool.registry[name](fabric=fabric, memory_scope=memory_scope, memory_cues=checked) for name in names]

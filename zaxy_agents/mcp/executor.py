"""Running one tool call: validate arguments, scope the session, call the handler, shape errors.

Two halves, because a call may be validated in one process and executed in another (the graph owner):

* :func:`prepare` (the process that received the MCP request) resolves the tool, validates the arguments against
  the strict model, resolves the session and checks authorization. Bad input never reaches the fabric.
* :func:`execute` (the process holding the fabric) validates again (cheap; the owner trusts no wire data), runs
  the handler and returns a JSON-able dict.

Every failure becomes a :class:`~zaxy_agents.errors.ZaxyError` whose ``to_dict()`` is what clients see:
``{"error": {"code", "message", "remediation", "field"?}}`` with codes ``unknown_tool``, ``invalid_request``,
``not_found``, ``unauthorized`` or ``internal_error`` (plus the fabric's own, e.g. ``conflict``). Unexpected
exceptions are logged with their traceback on stderr and reported as ``internal_error`` without one.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from zaxy_agents.errors import InvalidRequestError, UnauthorizedError, ZaxyError
from zaxy_agents.tool_arguments import validation_problems

from . import registry
from .caller import Caller
from .registry import ToolCall, ToolSpec
from .schema import ToolArgs

logger = logging.getLogger("zaxy.mcp")
MAX_SUMMARY_CHARS = 300


def unknown_tool(name: str) -> ZaxyError:
    return ZaxyError(
        f"no tool named {name!r}",
        code="unknown_tool",
        field="name",
        remediation="List the tools (tools/list, or memory_capabilities for the unlisted ones) and use a listed name.",
    )


def resolve(name: str) -> ToolSpec:
    spec = registry.get(name)
    if spec is None:
        raise unknown_tool(name)
    return spec


def parse(spec: ToolSpec, arguments: dict[str, Any] | None) -> ToolArgs:
    """Validate ``arguments`` against the tool's strict model; the first problem names its field."""
    given = arguments or {}
    # Errors name the argument as the caller spelled it (an alias keeps its own name in the message).
    spelled = {name: alias for alias, name in spec.args.ARGUMENT_ALIASES.items() if alias in given}
    try:
        return spec.args.model_validate(spec.args.canonical_arguments(given))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        for error in errors:
            loc = tuple(error.get("loc", ()))
            if loc and loc[0] in spelled:
                error["loc"] = (spelled[loc[0]], *loc[1:])
        problems = validation_problems(errors)
        field = problems[0]["field"]
        error = InvalidRequestError(
            f"{field or 'arguments'}: {problems[0]['message'] or 'invalid value'}",
            field=field or None,
            remediation=f"Fix the arguments to match the {spec.name} input schema (see tools/list).",
            details={"errors": problems[:10]},
        )
        raise error from None


def prepare(name: str, arguments: dict[str, Any] | None, caller: Caller) -> tuple[ToolSpec, ToolArgs, Caller]:
    """Resolve, validate and authorize a call; returns the caller bound to the session the call will use."""
    spec = resolve(name)
    args = parse(spec, arguments)
    session = caller.allow_session(args.session_id)
    bound = Caller(
        session=session,
        transport=caller.transport,
        restricted=caller.restricted,
        admin=caller.admin,
        server=caller.server,
        # the workspace's other sessions join the server's own session by default, not one named explicitly
        default_scope=caller.default_scope if session == caller.session else None,
    )
    if spec.admin and bound.restricted and not bound.admin:
        raise UnauthorizedError(
            f"{spec.name} needs the admin token over HTTP",
            field="authorization",
            remediation="Send the admin bearer token (ZAXY_ADMIN_TOKEN on the server) for replay and invalidate.",
        )
    return spec, args, bound


def execute(fabric: Any, name: str, arguments: dict[str, Any] | None, caller: Caller) -> dict[str, Any]:
    """Run a prepared call against ``fabric`` (in the process that holds it)."""
    spec, args, bound = prepare(name, arguments, caller)
    try:
        result = spec.handler(ToolCall(fabric=fabric, args=args, caller=bound))
    except ZaxyError:
        raise  # a refused call writes nothing, not even its observation
    except Exception as exc:
        logger.exception("tool %s failed", name)
        raise ZaxyError(
            f"{name} failed with {type(exc).__name__}",
            code="internal_error",
            remediation="This is a bug or an environment problem; the server's stderr has the details. Retry once.",
        ) from exc
    _observe(fabric, name, args, bound, result=result)
    return result


def _observe(fabric: Any, name: str, args: Any, caller: Caller, *, result: Any) -> None:
    """A reasoning primitive's completed call becomes a ``reasoning.primitive.called`` observation (seed 002/003)."""
    observe = getattr(fabric, "observe_primitive", None)
    if observe is not None:
        arguments = args.model_dump()
        observe(caller.session, name, arguments, result=result, actor=str(arguments.get("actor") or "agent"))


def summarize(spec: ToolSpec | None, result: dict[str, Any]) -> str:
    """A bounded one-line summary of a result for lifecycle capture (never the raw values of arguments)."""
    text = ""
    if spec is not None and spec.summarize is not None:
        try:
            text = spec.summarize(result)
        except Exception:  # a summary must never fail a call
            text = ""
    if not text:
        text = "keys=" + ",".join(sorted(result)[:20])
    return text[:MAX_SUMMARY_CHARS]


def render(spec: ToolSpec | None, result: dict[str, Any]) -> str | None:
    """The text block a client shows the model (``None``: the JSON of the result)."""
    if spec is None or spec.render is None:
        return None
    try:
        return spec.render(result)
    except Exception:
        return None

"""The inspector's JSON API: one handler per view, each a thin call into the fabric.

Every handler checks the caller's grant for the session it names (a session-bound token reaches only its own
session), passes arguments to the same fabric operations the CLI and the MCP tools use (so a write is validated
exactly as there) and answers ``{"error": {...}}`` with the fabric's own code, field and remediation when the
fabric refuses. Nothing here reads storage.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from zaxy_agents.checkout.purpose import PRESETS
from zaxy_agents.errors import InvalidRequestError, UnauthorizedError, ZaxyError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.mcp.tokens import Grant

from .guard import GRANT_KEY, grant_view
from .runner import InspectorRunner

logger = logging.getLogger("zaxy.ui")
UI_ACTOR = "zaxy-ui"
MAX_BODY = 64 * 1024
MAX_SCOPE = 32
STATUS_BY_CODE = {
    "invalid_request": 400,
    "unauthorized": 403,
    "permission_denied": 403,
    "not_found": 404,
    "conflict": 409,
    "integrity_error": 409,
    "locked": 503,
    "unavailable": 503,
    "schema_mismatch": 503,
    "storage_full": 507,
}
# ``<client>.<folder>-<8 hex>``: the session a workspace's client writes (see zaxy_agents.capture.workspace).
_WORKSPACE_SESSION = re.compile(r"^(?P<client>[a-z0-9][a-z0-9-]*)\.(?P<workspace>.+-[0-9a-f]{8})$")
# Operations another engineer's feature adds to the fabric; the views render them once the fabric has them.
OPTIONAL_OPERATIONS = ("erase_range", "known_unknowns", "belief_proposals")

Handler = Callable[[Request, InspectorRunner], Awaitable[Any]]


def endpoint(handler: Handler, runner: InspectorRunner) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette endpoint around ``handler``: its result as JSON, a ZaxyError as the structured error."""

    async def run(request: Request) -> Response:
        try:
            result = await handler(request, runner)
        except ZaxyError as exc:
            return JSONResponse(exc.to_dict(), status_code=STATUS_BY_CODE.get(exc.code, 500))
        except Exception:
            logger.exception("zaxy ui: %s %s failed", request.method, request.url.path)
            return JSONResponse(
                {
                    "error": {
                        "code": "internal_error",
                        "message": "the inspector hit an unexpected error",
                        "remediation": "See the zaxy ui output for details; `zaxy doctor` checks the memory.",
                    }
                },
                status_code=500,
            )
        return result if isinstance(result, Response) else JSONResponse(result)

    return run


# ---------------------------------------------------------------------- helpers
def grant_of(request: Request) -> Grant:
    return request.scope[GRANT_KEY]


def session_of(request: Request) -> str:
    """The session named in the path, if the caller's grant reaches it."""
    session = validate_session_id(request.path_params["session"], field="session")
    allow(grant_of(request), session)
    return session


def allow(grant: Grant, session: str, *, field: str = "session") -> None:
    if not grant.allows(session):
        raise UnauthorizedError(
            f"this token may only read session {grant.session!r}, not {session!r}",
            field=field,
            remediation="Sign in with a token for that session (or the user token).",
        )


def require_admin(request: Request, what: str) -> None:
    if not grant_of(request).admin:
        raise UnauthorizedError(
            f"{what} needs the admin token",
            field="token",
            remediation="Sign in with ZAXY_ADMIN_TOKEN (or the token zaxy ui printed when none is configured).",
        )


def int_param(request: Request, name: str, default: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not re.fullmatch(r"-?[0-9]{1,18}", raw):
        raise InvalidRequestError(f"{name} must be an integer", field=name, remediation=f"Pass {name}=<integer>.")
    return int(raw)


def text_param(request: Request, name: str) -> str | None:
    raw = request.query_params.get(name)
    return raw if raw not in (None, "") else None


async def body_of(request: Request) -> dict[str, Any]:
    data = await request.body()
    if len(data) > MAX_BODY:
        raise InvalidRequestError(f"the request body is over {MAX_BODY} bytes", field="body", remediation="Send less.")
    try:
        body = json.loads(data or b"{}")
    except (ValueError, RecursionError):
        raise InvalidRequestError(
            "the request body is not JSON", field="body", remediation="Send a JSON object."
        ) from None
    if not isinstance(body, dict):
        raise InvalidRequestError("the request body must be a JSON object", field="body", remediation="Send {...}.")
    return body


def field_of(body: dict[str, Any], name: str, kind: type | tuple[type, ...], *, required: bool = True) -> Any:
    """``body[name]`` of type ``kind`` (bools are not integers), or a structured error naming the field."""
    value = body.get(name)
    if value is None and not required:
        return None
    if value is None or isinstance(value, bool) is not (kind is bool) or not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InvalidRequestError(
            f"{name} is {'missing' if value is None else 'not a ' + expected}",
            field=name,
            remediation=f"Send {name} as a {expected}.",
        )
    return value


def offers(fabric: Any, name: str) -> bool:
    """Whether this fabric has an (optional) operation another feature adds."""
    return callable(getattr(type(fabric), name, None))


def workspace_of(session: str) -> tuple[str | None, str | None]:
    match = _WORKSPACE_SESSION.match(session)
    return (match["workspace"], match["client"]) if match else (None, None)


# ---------------------------------------------------------------------- who and what
async def me(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    def describe(fabric: Any) -> dict[str, Any]:
        return {
            "memory": fabric.location,
            "offers": {name: offers(fabric, name) for name in OPTIONAL_OPERATIONS},
        }

    return {**grant_view(grant_of(request)), **await runner.run(describe), "purposes": sorted(PRESETS)}


async def sessions(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    grant = grant_of(request)
    wanted = None if grant.session is None else [grant.session]
    rows = await runner.run(lambda fabric: fabric.session_overview(wanted))
    for row in rows:
        row["workspace"], row["client"] = workspace_of(row["session"])
    return {"sessions": rows}


async def chain(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    session = session_of(request)
    refresh = request.query_params.get("refresh") == "1"
    return await runner.run(lambda fabric: fabric.chain_status(session, refresh=refresh))


# ---------------------------------------------------------------------- timeline and events
async def events(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    session = session_of(request)
    types = [t for t in request.query_params.getlist("type") if t] or None
    arguments = {
        "before_seq": int_param(request, "before_seq"),
        "after_seq": int_param(request, "after_seq"),
        "limit": int_param(request, "limit", 50),
        "types": types,
        "actor": text_param(request, "actor"),
        "since": text_param(request, "since"),
        "until": text_param(request, "until"),
        "text": text_param(request, "text"),
    }
    return await runner.run(lambda fabric: fabric.timeline_page(session, **arguments))


async def event(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    session = session_of(request)
    seq: int = request.path_params["seq"]
    return await runner.run(lambda fabric: fabric.prove_event(session, seq))


async def citation(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    """Open a citation: it must resolve to the same content (hash prefix) before the event is shown."""
    cited = parse_citation(request.query_params.get("c", ""), field="c")
    allow(grant_of(request), cited.session, field="c")

    def open_cited(fabric: Any) -> dict[str, Any]:
        fabric.resolve(cited)  # refuses a citation whose hash prefix does not match the event
        return fabric.prove_event(cited.session, cited.seq)

    return await runner.run(open_cited)


# ---------------------------------------------------------------------- entities
async def entities(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    session = session_of(request)
    arguments = {
        "entity_type": text_param(request, "type"),
        "text": text_param(request, "text"),
        "offset": int_param(request, "offset", 0),
        "limit": int_param(request, "limit", 100),
    }
    return await runner.run(lambda fabric: fabric.session_entities(session, **arguments))


async def entity(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    session = session_of(request)
    kind, name = text_param(request, "type"), text_param(request, "name")
    return await runner.run(lambda fabric: fabric.entity_detail(session, kind or "", name or ""))


# ---------------------------------------------------------------------- checkout preview
async def checkout(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    """The packet ``memory_checkout`` would hand an agent of this session (nothing is recorded)."""
    session = session_of(request)
    body = await body_of(request)
    query = field_of(body, "query", str)
    max_tokens = field_of(body, "max_tokens", int, required=False)
    purpose = field_of(body, "purpose", str, required=False)
    scope = field_of(body, "scope", list, required=False)
    if scope is not None:
        if len(scope) > MAX_SCOPE or not all(isinstance(name, str) for name in scope):
            raise InvalidRequestError(
                f"scope must be at most {MAX_SCOPE} session ids or patterns",
                field="scope",
                remediation="List the sessions to recall from.",
            )
        grant = grant_of(request)
        for index, name in enumerate(scope):
            if grant.session is not None and name != grant.session:
                allow(grant, name, field=f"scope[{index}]")

    def run(fabric: Any) -> dict[str, Any]:
        packet = fabric.checkout(query, session=session, scope=scope or None, max_tokens=max_tokens, purpose=purpose)
        return packet.model_dump(mode="json", exclude_none=True)

    return await runner.run(run)


# ---------------------------------------------------------------------- cognitive views
async def causal(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    session = session_of(request)
    name, kind = text_param(request, "entity"), text_param(request, "type")
    depth = int_param(request, "depth", 2)
    if name is None:
        raise InvalidRequestError("name an entity", field="entity", remediation="Pass entity=<name>.")

    def walk(fabric: Any) -> dict[str, Any]:
        return {
            "successors": fabric.causal_successors(session, name, entity_type=kind, depth=depth),
            "predecessors": fabric.causal_predecessors(session, name, entity_type=kind, depth=depth),
        }

    return await runner.run(walk)


async def consolidation(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    session = session_of(request)
    return await runner.run(lambda fabric: fabric.consolidation_status(session, limit=200))


async def review(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    """A review decision, through the same gate as ``zaxy memory consolidation review``."""
    session = session_of(request)
    body = await body_of(request)
    candidate_id = field_of(body, "candidate_id", str)
    decision = field_of(body, "decision", str)
    rationale = field_of(body, "rationale", str)
    reviewer = field_of(body, "reviewer", str, required=False)

    def decide(fabric: Any) -> dict[str, Any]:
        return fabric.consolidation_review(
            session, candidate_id, decision=decision, rationale=rationale, reviewer=reviewer, actor=UI_ACTOR
        )

    return await runner.run(decide)


async def uncertainty(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    """Known unknowns and belief proposals: the fabric's own reads when it has them; belief proposals are
    otherwise the session's ``belief.update.proposed`` events (pending, non-authoritative)."""
    session = session_of(request)

    def read(fabric: Any) -> dict[str, Any]:
        result: dict[str, Any] = {"session": session}
        result["known_unknowns"] = fabric.known_unknowns(session) if offers(fabric, "known_unknowns") else None
        if offers(fabric, "belief_proposals"):
            result["belief_proposals"] = fabric.belief_proposals(session)
        else:
            page = fabric.timeline_page(session, types=["belief.update.proposed"], limit=100)
            result["belief_proposals"] = {"source": "log", "events": page["events"]}
        return result

    return await runner.run(read)


# ---------------------------------------------------------------------- forgetting
async def invalidate(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    """Close a current fact's validity window (``memory.invalidated``); nothing is deleted."""
    session = session_of(request)
    require_admin(request, "invalidating a fact")
    body = await body_of(request)
    name = field_of(body, "entity", str)
    kind = field_of(body, "entity_type", str)
    reason = field_of(body, "reason", str)

    def run(fabric: Any) -> dict[str, Any]:
        event = fabric.invalidate(session, name, kind, reason=reason, actor=UI_ACTOR)
        return {"citation": event.citation, "seq": event.seq, "type": event.type}

    return await runner.run(run)


async def erase_request(request: Request) -> tuple[str, dict[str, Any], int, int]:
    """``(session, body, from_seq, to_seq)`` of an erase or its preview (admin only)."""
    session = session_of(request)
    require_admin(request, "erasing")
    body = await body_of(request)
    return session, body, field_of(body, "from_seq", int), field_of(body, "to_seq", int)


async def erase_preview(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    session, _body, first, last = await erase_request(request)

    def run(fabric: Any) -> dict[str, Any]:
        preview = fabric.erase_preview(session, first, last)
        preview["available"] = offers(fabric, "erase_range")
        preview["confirm"] = f"{session}:{first}-{last}"
        return preview

    return await runner.run(run)


async def erase(request: Request, runner: InspectorRunner) -> dict[str, Any]:
    """Erase a range for real (the trust layer's erase); the caller must echo the confirmation phrase."""
    session, body, first, last = await erase_request(request)
    reason = field_of(body, "reason", str, required=False)
    expected = f"{session}:{first}-{last}"
    if body.get("confirm") != expected:
        raise InvalidRequestError(
            "the erase was not confirmed",
            field="confirm",
            remediation=f"Type {expected!r} to confirm: the events cannot be recovered afterwards.",
        )

    def run(fabric: Any) -> dict[str, Any]:
        if not offers(fabric, "erase_range"):
            raise InvalidRequestError(
                "erasing is not available in this version of zaxy",
                field="from_seq",
                remediation="Invalidate the fact instead (it stays in the log, out of every checkout).",
            )
        return fabric.erase_range(session, first, last, actor=UI_ACTOR, reason=reason)

    return await runner.run(run)

"""Input validation for appends: session ids, event types, actors and payload bounds.

Every check raises :class:`~zaxy_agents.errors.InvalidRequestError` naming the field and the fix, before
anything is written. Stdlib only (hook fast path).
"""

from __future__ import annotations

import re

from zaxy_agents.errors import InvalidRequestError

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
EVENT_TYPE_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
ACTOR_MAX_LENGTH = 256
EVENT_TYPE_MAX_LENGTH = 128
DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024
# How appends reach disk. Every backend accepts the same names, so a setting means the same everywhere:
# "fsync" makes each append durable before it returns; "batch" group-commits (docs/eventloom.md).
DURABILITY_MODES = ("fsync", "batch")
MAX_PAYLOAD_DEPTH = 100  # nesting of objects/arrays below the payload object itself
MAX_INTEGER = 2**128  # integers must lie strictly between -MAX_INTEGER and MAX_INTEGER (39 digits)
_SCALARS = (str, bool, type(None))


def validate_durability(durability: object) -> str:
    """Accept one of :data:`DURABILITY_MODES`; the one check every log backend runs in its constructor."""
    if durability not in DURABILITY_MODES:
        raise InvalidRequestError(
            f"unknown durability mode {durability!r}",
            field="durability",
            remediation=f"Use one of {', '.join(DURABILITY_MODES)}.",
        )
    return durability  # type: ignore[return-value]  # one of the str constants above


def validate_session_id(session: object, *, field: str = "session") -> str:
    """Accept ``^[A-Za-z0-9_.-]{1,128}$`` that cannot name a parent or current directory."""
    if not isinstance(session, str) or not SESSION_ID_PATTERN.fullmatch(session):
        raise InvalidRequestError(
            f"invalid session id {session!r}",
            field=field,
            remediation="Use 1-128 characters from A-Z, a-z, 0-9, '_', '.' and '-' (no slashes).",
        )
    if set(session) == {"."}:
        raise InvalidRequestError(
            f"session id {session!r} would name a directory, not a log",
            field=field,
            remediation="Use a session id containing at least one letter, digit, '_' or '-'.",
        )
    return session


def validate_event_type(event_type: object, *, field: str = "type") -> str:
    """Dotted lowercase, at least two segments: ``task.completed``, ``hook.session_started``."""
    if (
        not isinstance(event_type, str)
        or len(event_type) > EVENT_TYPE_MAX_LENGTH
        or not EVENT_TYPE_PATTERN.fullmatch(event_type)
    ):
        raise InvalidRequestError(
            f"invalid event type {event_type!r}",
            field=field,
            remediation=(
                "Use dotted lowercase segments of [a-z0-9_] starting with a letter, at least two segments, "
                f"at most {EVENT_TYPE_MAX_LENGTH} characters (for example 'task.completed')."
            ),
        )
    return event_type


def validate_actor(actor: object, *, field: str = "actor") -> str:
    """A non-empty, bounded, printable actor name (who or what produced the event)."""
    if not isinstance(actor, str) or not actor.strip() or len(actor) > ACTOR_MAX_LENGTH:
        raise InvalidRequestError(
            f"invalid actor {actor!r}",
            field=field,
            remediation=f"Give a non-empty actor name of at most {ACTOR_MAX_LENGTH} characters (e.g. 'agent').",
        )
    if any(ord(ch) < 32 for ch in actor):
        raise InvalidRequestError(
            "actor contains control characters", field=field, remediation="Remove control characters."
        )
    return actor


def validate_payload_shape(payload: object, *, field: str = "payload") -> dict[str, Any]:
    """Payloads must be JSON objects with string keys."""
    if not isinstance(payload, dict):
        raise InvalidRequestError(
            f"payload must be a JSON object, got {type(payload).__name__}",
            field=field,
            remediation='Wrap the value in an object, for example {"text": ...}.',
        )
    return payload


def check_payload_size(encoded_size: int, limit: int, *, field: str = "payload") -> None:
    """Reject payloads whose canonical encoding exceeds ``limit`` bytes."""
    if encoded_size > limit:
        raise InvalidRequestError(
            f"payload is {encoded_size} bytes, above the limit of {limit} bytes",
            field=field,
            remediation=(
                "Store large content elsewhere and reference it (path + checksum), or raise the limit with "
                "ZAXY_MAX_PAYLOAD_BYTES."
            ),
        )


def check_payload_values(payload: dict[str, Any], max_nodes: int, *, field: str = "payload") -> None:
    """Refuse what JSON cannot hold faithfully or what would make the log unreadable, before anything is written.

    Bounds nesting depth (:data:`MAX_PAYLOAD_DEPTH`: a deeper payload would exhaust the recursion of every later
    reader), integer size (:data:`MAX_INTEGER`), NaN and infinities, non-string keys, non-JSON types, payloads
    that contain themselves (they would never finish encoding) and the number of values (``max_nodes``: shared
    sub-objects are counted each time they are reached, so ``a = [a0, a0]`` repeated cannot explode the walk).
    One iterative pass; the path of an offending value is only computed when there is one.
    """
    stack: list[tuple[Any, int]] = [(payload, 0)]
    pop, push = stack.pop, stack.append
    nodes = 0
    while stack:
        container, depth = pop()
        values = container.values() if type(container) is dict else container
        if type(container) is dict and not all(type(key) is str for key in container):
            _raise_at(payload, field, "an object key is not a string", "Use only string keys.")
        nodes += len(container)
        if nodes > max_nodes:
            raise InvalidRequestError(
                f"{field} holds more than {max_nodes} values",
                field=field,
                remediation="Store large content elsewhere and reference it, or raise ZAXY_MAX_PAYLOAD_BYTES.",
            )
        for value in values:
            kind = type(value)
            if kind in _SCALARS:
                continue
            if kind is int:
                if not -MAX_INTEGER < value < MAX_INTEGER:
                    _raise_at(payload, field, "an integer is too large", _NUMBER_FIX)
            elif kind is float:
                if value != value or value in (_INF, -_INF):
                    _raise_at(payload, field, "a number is NaN or infinite", _NUMBER_FIX)
            elif kind is dict or kind is list or kind is tuple:
                if depth >= MAX_PAYLOAD_DEPTH:
                    _raise_at(payload, field, "nesting is too deep", _DEPTH_FIX)
                push((value, depth + 1))
            elif isinstance(value, (str, int, float, dict, list, tuple)):  # subclasses (enums, OrderedDict...)
                if isinstance(value, float) and (value != value or value in (_INF, -_INF)):
                    _raise_at(payload, field, "a number is NaN or infinite", _NUMBER_FIX)
                if isinstance(value, int) and not isinstance(value, bool) and not -MAX_INTEGER < value < MAX_INTEGER:
                    _raise_at(payload, field, "an integer is too large", _NUMBER_FIX)
                if isinstance(value, (dict, list, tuple)):
                    if depth >= MAX_PAYLOAD_DEPTH:
                        _raise_at(payload, field, "nesting is too deep", _DEPTH_FIX)
                    push((value, depth + 1))
            else:
                _raise_at(payload, field, f"a value of type {kind.__name__} is not JSON", _TYPE_FIX)


_INF = float("inf")
_PATH_SEARCH_BUDGET = 2_000_000
_NUMBER_FIX = (
    f"Use finite numbers; integers must have an absolute value below 2**128 ({MAX_INTEGER}); store bigger "
    "numbers as strings."
)
_DEPTH_FIX = f"Flatten the value: at most {MAX_PAYLOAD_DEPTH} levels of objects and arrays are accepted."
_TYPE_FIX = "Use only objects with string keys, arrays, strings, finite numbers, booleans and null."


def _raise_at(payload: Any, field: str, problem: str, remediation: str) -> None:
    """Raise the structured error for the first offending value, naming its JSON path (slow path: errors only)."""
    path, cyclic = _first_problem_path(payload, field)
    if len(path) > 120:
        path = f"{path[:60]}...{path[-50:]}"
    if cyclic:
        raise InvalidRequestError(
            f"{path} refers to an object that contains it (a self-referential value never finishes encoding)",
            field=field,
            remediation="Pass a tree of plain values: copy the value instead of nesting it inside itself.",
        )
    raise InvalidRequestError(f"{problem} at {path}", field=field, remediation=remediation)


def _first_problem_path(payload: Any, field: str) -> tuple[str, bool]:
    """``(path, is_cycle)`` of the first value :func:`check_payload_values` refuses (depth-first, in order)."""
    stack: list[tuple[Any, str, int, frozenset[int]]] = [(payload, field, 0, frozenset())]
    budget = _PATH_SEARCH_BUDGET
    while stack and budget:
        budget -= 1
        value, path, depth, ancestors = stack.pop()
        if isinstance(value, (dict, list, tuple)):
            if id(value) in ancestors:
                return path, True
            if depth > MAX_PAYLOAD_DEPTH:
                return path, False
            inner = ancestors | {id(value)}
            if isinstance(value, dict):
                if not all(isinstance(key, str) for key in value):
                    return path, False
                children = [(item, f"{path}.{key}") for key, item in value.items()]
            else:
                children = [(item, f"{path}[{index}]") for index, item in enumerate(value)]
            stack.extend((item, child, depth + 1, inner) for item, child in reversed(children))
        elif isinstance(value, bool) or value is None or isinstance(value, str):
            continue
        elif isinstance(value, int):
            if not -MAX_INTEGER < value < MAX_INTEGER:
                return path, False
        elif isinstance(value, float):
            if value != value or value in (_INF, -_INF):
                return path, False
        else:
            return path, False
    return field, False

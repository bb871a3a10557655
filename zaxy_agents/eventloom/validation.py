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

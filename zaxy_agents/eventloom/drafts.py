"""Turn a caller's (type, payload, actor) into a validated, redacted draft ready for the log.

Stdlib only: the hook fast path and every backend share this so validation and redaction are identical
everywhere. Nothing is written when any check fails.
"""

from __future__ import annotations

from zaxy_agents.errors import InvalidRequestError

from .canonical import canonical_json
from .redaction import OFF, REDACTION_VERSION, STANDARD, has_secret_keys, policy_for, redact_value, rules_for
from .validation import (
    check_payload_size,
    check_payload_values,
    validate_actor,
    validate_event_type,
    validate_payload_shape,
)


def prepare_draft(
    event_type: object,
    payload: object,
    actor: object,
    max_payload_bytes: int,
    *,
    field_prefix: str = "",
) -> PreparedDraft:
    """Validate, redact secrets (recording their paths) and bound the payload size."""
    validate_event_type(event_type, field=f"{field_prefix}type")
    validate_actor(actor, field=f"{field_prefix}actor")
    validate_payload_shape(payload, field=f"{field_prefix}payload")
    assert isinstance(payload, dict)
    check_payload_values(payload, max_payload_bytes, field=f"{field_prefix}payload")
    policy = policy_for(str(event_type))
    try:
        redacted, paths = payload, []
        payload_json = canonical_json(payload)
        # Only the rules whose markers occur in the payload's JSON can match a string inside it (one pass over the
        # text instead of every rule on every string); key names only matter under the standard policy.
        rules = rules_for(payload_json) if policy != OFF else ()
        if rules or (policy == STANDARD and has_secret_keys(payload)):
            redacted, paths = redact_value(payload, policy=policy, rules=rules)
            if paths:
                payload_json = canonical_json(redacted)
        payload_size = len(payload_json.encode("utf-8"))  # lone surrogates fail here (UnicodeEncodeError)
    except (TypeError, ValueError) as exc:
        raise InvalidRequestError(
            f"payload is not plain JSON: {exc}",
            field=f"{field_prefix}payload",
            remediation="Use only objects with string keys, arrays, strings, finite numbers, booleans and null.",
        ) from exc
    check_payload_size(payload_size, max_payload_bytes, field=f"{field_prefix}payload")
    security = {"redacted_paths": paths, "redaction_version": REDACTION_VERSION} if paths else None
    return PreparedDraft(
        type=str(event_type), actor=str(actor), payload=redacted, security=security, payload_json=payload_json
    )


TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any


class PreparedDraft:
    """A validated, redacted event waiting for its seq and hashes (assigned under the lock).

    Plain classes rather than dataclasses throughout this module: ``dataclasses`` imports ``inspect``, which
    costs the hook fast path ~20 ms of start-up.
    """

    __slots__ = ("actor", "event_id", "payload", "payload_json", "salt", "security", "timestamp", "type")

    def __init__(
        self,
        type: str,
        actor: str,
        payload: dict[str, Any],
        security: dict[str, Any] | None = None,
        event_id: str | None = None,
        timestamp: str | None = None,
        payload_json: str | None = None,
        salt: str | None = None,
    ) -> None:
        self.type = type
        self.actor = actor
        self.payload = payload
        self.security = security
        self.event_id = event_id
        self.timestamp = timestamp
        self.payload_json = payload_json  # canonical JSON of ``payload`` when the caller already computed it
        self.salt = salt  # 32 hex digits; random when None (only tests fix it)

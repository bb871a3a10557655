"""Turn a caller's (type, payload, actor) into a validated, redacted draft ready for the log.

Stdlib only: the hook fast path and every backend share this so validation and redaction are identical
everywhere. Nothing is written when any check fails.
"""

from __future__ import annotations

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.storage.files.jsonl_file import PreparedDraft

from .canonical import canonical_json
from .redaction import OFF, REDACTION_VERSION, STANDARD, has_secret_keys, policy_for, redact_value, text_has_markers
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
        redacted, paths, payload_json = payload, [], None
        if policy == OFF or not (policy == STANDARD and has_secret_keys(payload)):
            payload_json = canonical_json(payload)
        if policy != OFF and (payload_json is None or text_has_markers(payload_json)):  # only then can it change
            redacted, paths = redact_value(payload, policy=policy)
            if paths or payload_json is None:
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

"""Strict argument models for tools: unknown keys rejected, every string, list and number bounded.

Every tool's arguments are a :class:`ToolArgs` subclass. The JSON schema published to clients is generated from
the model (``additionalProperties: false`` everywhere, bounds included) and cleaned of pydantic noise (titles);
optional arguments are shown as their plain type (not ``anyOf [..., null]``), which models handle better.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.validation import SESSION_ID_PATTERN, check_payload_values
from zaxy_agents.tool_arguments import optional

__all__ = ["ToolArgs", "optional"]  # optional() is declared with the fields shared across surfaces

SESSION_PATTERN = SESSION_ID_PATTERN.pattern
MAX_SCOPE = 32
MAX_PAYLOAD_DEPTH = 8
MAX_PAYLOAD_BYTES = 256 * 1024
MAX_PAYLOAD_KEYS = 200

SessionName = Annotated[str, Field(min_length=1, max_length=128, pattern=SESSION_PATTERN)]


class ToolArgs(BaseModel):
    """Base of every tool's arguments. ``session_id`` is optional everywhere: stdio servers default it from
    ``--session-id`` / ``ZAXY_SESSION_ID``; over HTTP it must be absent or equal the ``x-zaxy-session-id``
    header.

    ``defer_build``: a model's validator and schema are built when first used, not at import: a server builds
    the few it lists and calls, not all ~60 (a server's start-up, ``tests/cli/test_startup_imports.py``)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    # Earlier names of this project's arguments -> the seed's (canonical) names. Aliases are accepted by the
    # server but not published in tools/list; the contract snapshot lists them (docs/seed-differences.md).
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {}

    session_id: SessionName | SkipJsonSchema[None] = Field(
        default=None,
        description="Session (thread) whose memory to use. Defaults to the server's session.",
    )

    @classmethod
    def canonical_arguments(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` with aliases renamed to their canonical names; both at once is an error naming the alias."""
        if not cls.ARGUMENT_ALIASES or not isinstance(arguments, dict):
            return arguments
        renamed = dict(arguments)
        for alias, name in cls.ARGUMENT_ALIASES.items():
            if alias not in renamed:
                continue
            if name in renamed:
                raise InvalidRequestError(
                    f"{alias} and {name} are the same argument",
                    field=alias,
                    remediation=f"Pass only {name} ({alias} is its earlier name).",
                )
            renamed[name] = renamed.pop(alias)
        return renamed

    @classmethod
    def input_schema(cls) -> dict[str, Any]:
        """The published JSON schema: strict, bounded, without titles, nested models inlined (no ``$ref``)."""
        schema = cls.model_json_schema()
        definitions = schema.pop("$defs", {})
        return _clean(_inline(schema, definitions))


class PayloadBounds:
    """Validators for free-form JSON objects: bounded depth and size (the log also enforces its byte limit)."""

    @staticmethod
    def check(value: dict[str, Any], field: str) -> dict[str, Any]:
        try:  # NaN, infinities (and 1e400, which JSON parsers read as infinity), huge integers, cycles
            check_payload_values(value, MAX_PAYLOAD_BYTES, field=field)
        except InvalidRequestError as exc:
            raise ValueError(exc.message) from None
        if len(value) > MAX_PAYLOAD_KEYS:
            raise ValueError(f"{field} has {len(value)} keys; at most {MAX_PAYLOAD_KEYS} are allowed")
        depth = _depth(value)
        if depth > MAX_PAYLOAD_DEPTH:
            raise ValueError(f"{field} nests {depth} levels deep; at most {MAX_PAYLOAD_DEPTH} are allowed")
        size = len(json.dumps(value, ensure_ascii=False, default=str))
        if size > MAX_PAYLOAD_BYTES:
            raise ValueError(f"{field} is {size} bytes as JSON; at most {MAX_PAYLOAD_BYTES} are allowed")
        return value


def session_field(field: str) -> Any:
    """A validator making ``field`` (the seed's name for the call's session on some tools: ``thread``,
    ``parent_session_id``) the session of the call; naming a different ``session_id`` too is an error."""

    def check(self: Any) -> Any:
        value = getattr(self, field)
        if value is not None:
            if self.session_id is not None and self.session_id != value:
                raise ValueError(f"{field} and session_id name different sessions; pass one of them")
            self.session_id = value
        return self

    return model_validator(mode="after")(check)


def payload_validator(*fields: str) -> Any:
    """A pydantic field validator applying :class:`PayloadBounds` to ``fields``."""

    def check(cls: type, value: dict[str, Any] | None, info: Any) -> dict[str, Any] | None:
        return None if value is None else PayloadBounds.check(value, info.field_name)

    return field_validator(*fields)(classmethod(check))  # type: ignore[arg-type]


def _depth(value: Any, level: int = 1) -> int:
    if isinstance(value, dict):
        return max((_depth(item, level + 1) for item in value.values()), default=level)
    if isinstance(value, list):
        return max((_depth(item, level + 1) for item in value), default=level)
    return level - 1


def _inline(schema: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(schema, dict):
        reference = schema.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            extra = {key: value for key, value in schema.items() if key != "$ref"}
            return {**_inline(definitions[reference.removeprefix("#/$defs/")], definitions), **extra}
        return {key: _inline(value, definitions) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_inline(item, definitions) for item in schema]
    return schema


def _clean(schema: Any) -> Any:
    if isinstance(schema, dict):
        # "title" annotations go (pydantic noise); a *property* named "title" (a schema, not a string) stays.
        cleaned = {
            key: _clean(value) for key, value in schema.items() if not (key == "title" and isinstance(value, str))
        }
        if cleaned.get("type") == "object" and "properties" in cleaned:
            cleaned.setdefault("additionalProperties", False)
        if "default" in cleaned and cleaned["default"] is None:
            del cleaned["default"]
        return cleaned
    if isinstance(schema, list):
        return [_clean(item) for item in schema]
    return schema

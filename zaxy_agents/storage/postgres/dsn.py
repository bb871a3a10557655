"""Connection URIs and the PostgreSQL knobs read from the environment. Stdlib only.

The URI is the one setting a deployment changes (``ZAXY_BACKEND=postgresql://...``). Everything else has a
default that suits a worker process and can be tuned with environment variables:

* ``ZAXY_POSTGRES_SCHEMA`` (default ``zaxy``): the schema holding Zaxy's tables, so several deployments can
  share one database;
* ``ZAXY_POSTGRES_POOL_MIN`` / ``ZAXY_POSTGRES_POOL_MAX`` (default 1 / 4): connections per process;
* ``ZAXY_POSTGRES_CONNECT_TIMEOUT`` (default 5 seconds): how long to wait for an unreachable server.
"""

from __future__ import annotations

import os
import re

from zaxy_agents.config import redact_uri
from zaxy_agents.errors import InvalidRequestError

ENV_SCHEMA = "ZAXY_POSTGRES_SCHEMA"
ENV_POOL_MIN = "ZAXY_POSTGRES_POOL_MIN"
ENV_POOL_MAX = "ZAXY_POSTGRES_POOL_MAX"
ENV_CONNECT_TIMEOUT = "ZAXY_POSTGRES_CONNECT_TIMEOUT"
DEFAULT_SCHEMA = "zaxy"
SCHEMA_PATTERN = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def redact_dsn(dsn: str) -> str:
    """The URI with any password replaced by ``***`` (safe for logs, status output and error messages)."""
    return redact_uri(dsn)


def validate_schema_name(schema: object) -> str:
    """Lowercase identifier (``[a-z_][a-z0-9_]*``, at most 63 characters): never needs quoting tricks."""
    if not isinstance(schema, str) or not SCHEMA_PATTERN.fullmatch(schema):
        raise InvalidRequestError(
            f"invalid PostgreSQL schema name {schema!r}",
            field=ENV_SCHEMA,
            remediation="Use lowercase letters, digits and '_' (starting with a letter or '_'), at most 63 chars.",
        )
    return schema


class PostgresOptions:
    """Per-process connection settings (pool bounds, timeout, schema) with their environment overrides."""

    __slots__ = ("connect_timeout", "pool_max", "pool_min", "schema")

    def __init__(
        self, schema: str = DEFAULT_SCHEMA, pool_min: int = 1, pool_max: int = 4, connect_timeout: float = 5.0
    ) -> None:
        self.schema = validate_schema_name(schema)
        if pool_min < 0 or pool_max < max(pool_min, 1):
            raise InvalidRequestError(
                f"invalid pool bounds min={pool_min} max={pool_max}",
                field=ENV_POOL_MAX,
                remediation="Use 0 <= ZAXY_POSTGRES_POOL_MIN <= ZAXY_POSTGRES_POOL_MAX and a max of at least 1.",
            )
        self.pool_min, self.pool_max = pool_min, pool_max
        self.connect_timeout = connect_timeout

    @classmethod
    def from_env(cls, **overrides: object) -> PostgresOptions:
        """Read the ``ZAXY_POSTGRES_*`` variables; explicit keyword arguments win."""
        values: dict[str, object] = {
            "schema": os.environ.get(ENV_SCHEMA) or DEFAULT_SCHEMA,
            "pool_min": _env_number(ENV_POOL_MIN, 1, int),
            "pool_max": _env_number(ENV_POOL_MAX, 4, int),
            "connect_timeout": _env_number(ENV_CONNECT_TIMEOUT, 5.0, float),
        }
        values.update({key: value for key, value in overrides.items() if value is not None})
        return cls(**values)  # type: ignore[arg-type]


def _env_number(name: str, default: float, kind: type) -> object:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError as exc:
        raise InvalidRequestError(
            f"{name}={raw!r} is not a number", field=name, remediation=f"Set {name} to a number or unset it."
        ) from exc

"""Opening a psycopg 3 connection pool with errors a person can act on.

One pool per process and component is the unit every PostgreSQL-backed class shares: connections are
autocommit (reads are single statements; writes open explicit transactions), and the pool refills itself
after a server restart. Opening probes the server once with a direct connection so that an unreachable
server, a wrong password or a missing database is reported with libpq's own reason (password redacted)
instead of a pool timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from zaxy_agents.errors import UnavailableError

from .dsn import PostgresOptions, redact_dsn

APPLICATION_NAME = "zaxy-agents"


def probe_connection(dsn: str, options: PostgresOptions) -> psycopg.Connection[Any]:
    """One direct connection, raising :class:`UnavailableError` with the server's reason when it fails."""
    try:
        return psycopg.connect(
            dsn,
            autocommit=True,
            connect_timeout=max(1, int(options.connect_timeout)),
            application_name=APPLICATION_NAME,
        )
    except psycopg.OperationalError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UnavailableError(
            f"cannot connect to PostgreSQL at {redact_dsn(dsn)}: {reason.replace(dsn, redact_dsn(dsn))}",
            field="backend",
            remediation=(
                "Check that the server is running and reachable, and that the user, password and database in "
                "ZAXY_BACKEND / --backend are right; or unset ZAXY_BACKEND to use the embedded default."
            ),
        ) from exc


def open_pool(
    dsn: str,
    options: PostgresOptions,
    *,
    configure: Callable[[psycopg.Connection[Any]], None] | None = None,
    name: str = "zaxy",
) -> ConnectionPool:
    """A started pool of autocommit connections (the caller has already probed the server)."""
    pool = ConnectionPool(
        dsn,
        min_size=options.pool_min,
        max_size=options.pool_max,
        kwargs={"autocommit": True, "application_name": APPLICATION_NAME},
        configure=configure,
        timeout=max(options.connect_timeout, 1.0) * 6,
        name=name,
        open=False,
    )
    pool.open(wait=False)
    return pool


def server_version(conn: psycopg.Connection[Any]) -> str:
    """``15.18`` style version of the connected server."""
    number = conn.info.server_version  # e.g. 150018
    major, minor = divmod(number, 10000)
    return f"{major}.{minor}" if major >= 10 else f"{number // 10000}.{(number // 100) % 100}.{number % 100}"


def unavailable(dsn: str, exc: BaseException) -> UnavailableError:
    """Wrap a server-side failure after opening (server restarted, network dropped, read-only replica)."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return UnavailableError(
            f"PostgreSQL at {redact_dsn(dsn)} is read-only (a replica?): {reason}",
            field="backend",
            remediation="Point writers at the primary; replicas serve replay, verify, resolve and export only.",
        )
    return UnavailableError(
        f"PostgreSQL at {redact_dsn(dsn)} is unavailable: {reason}",
        field="backend",
        remediation="Retry once the server is reachable; nothing was written by the failed operation.",
    )

"""Opening a psycopg 3 connection pool with errors a person can act on.

One pool per process and component is the unit every PostgreSQL-backed class shares: connections are
autocommit (reads are single statements; writes open explicit transactions), and the pool refills itself
after a server restart. Opening probes the server once with a direct connection so that an unreachable
server, a wrong password or a missing database is reported with libpq's own reason (password redacted)
instead of a pool timeout.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from zaxy_agents.errors import UnavailableError

from .dsn import PostgresOptions, redact_dsn

APPLICATION_NAME = "zaxy-agents"
_SHARED_LOCK = threading.Lock()
_SHARED: dict[tuple[Any, ...], list[Any]] = {}  # key -> [pool, reference count]


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


def acquire_pool(
    dsn: str,
    options: PostgresOptions,
    *,
    configure: Callable[[psycopg.Connection[Any]], None] | None = None,
    name: str = "zaxy",
) -> ConnectionPool:
    """The process's pool for these settings, shared by every component that asks for the same one.

    The Eventloom, the graph projection and the vector store of one process talk to the same server; sharing
    one pool keeps a worker at ``ZAXY_POSTGRES_POOL_MAX`` connections instead of one pool per component.
    Reference counted: :func:`release_pool` closes it when its last user lets go.
    """
    key = (dsn, options.schema, options.pool_min, options.pool_max, options.connect_timeout, configure)
    with _SHARED_LOCK:
        entry = _SHARED.get(key)
        if entry is not None and not entry[0].closed:
            entry[1] += 1
            return entry[0]
        pool = open_pool(dsn, options, configure=configure, name=name)
        _SHARED[key] = [pool, 1]
        return pool


def release_pool(pool: ConnectionPool) -> None:
    """Let go of a pool from :func:`acquire_pool` (closed with its last user); call once per acquire."""
    with _SHARED_LOCK:
        for key, entry in list(_SHARED.items()):
            if entry[0] is pool:
                entry[1] -= 1
                if entry[1] > 0:
                    return
                del _SHARED[key]
                break
    pool.close()


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

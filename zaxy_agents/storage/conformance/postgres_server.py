"""Where PostgreSQL tests get a server: ``ZAXY_TEST_POSTGRES_DSN``, else a throwaway server of their own.

When no DSN is exported but the server binaries are installed (``initdb``/``pg_ctl`` on ``PATH`` or under
``/usr/lib/postgresql/<version>/bin``), the first caller starts a private server in a temporary folder (trust
authentication on 127.0.0.1, a free port; run as the ``postgres`` user when this process is root, since initdb
refuses root), exports its DSN for child processes, and stops and removes it when the process exits. Without
either, PostgreSQL tests skip with :data:`POSTGRES_SKIP_REASON`.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading

POSTGRES_DSN_ENV = "ZAXY_TEST_POSTGRES_DSN"
POSTGRES_SKIP_REASON = (
    "PostgreSQL not available: export ZAXY_TEST_POSTGRES_DSN=postgresql://user:pass@127.0.0.1/db (.ci/run starts a "
    "local server and sets it), or install the server binaries (Debian: apt-get install postgresql, which puts "
    "initdb and pg_ctl in /usr/lib/postgresql/<version>/bin) and the tests start a throwaway server themselves"
)
_LOCK = threading.Lock()
_STARTED: dict[str, str | None] = {}  # "dsn" -> the throwaway server's DSN (None: could not start), once


def postgres_dsn() -> str | None:
    """The DSN PostgreSQL tests use, starting a throwaway server on first use when needed; ``None``: skip."""
    exported = os.environ.get(POSTGRES_DSN_ENV)
    if exported:
        return exported
    with _LOCK:
        if "dsn" not in _STARTED:
            _STARTED["dsn"] = _start_throwaway_server()
            if _STARTED["dsn"]:
                os.environ[POSTGRES_DSN_ENV] = _STARTED["dsn"]  # child processes (CLI, workers) use it too
        return _STARTED["dsn"]


def _binaries() -> str | None:
    if shutil.which("initdb") and shutil.which("pg_ctl"):
        return os.path.dirname(shutil.which("initdb") or "")
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


def _start_throwaway_server() -> str | None:
    bin_dir = _binaries()
    if bin_dir is None:
        return None
    root = tempfile.mkdtemp(prefix="zaxy-pg-")
    data = os.path.join(root, "data")
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        if shutil.which("runuser") is None:
            return None
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(root, "postgres")
    port = _free_port()
    try:
        subprocess.run(
            [*as_user, f"{bin_dir}/initdb", "-D", data, "-U", "zaxy", "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=200"
        subprocess.run(
            [*as_user, f"{bin_dir}/pg_ctl", "-D", data, "-o", options, "-l", os.path.join(root, "log"), "-w", "start"],
            check=True,
            capture_output=True,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        shutil.rmtree(root, ignore_errors=True)
        return None
    atexit.register(_stop, [*as_user, f"{bin_dir}/pg_ctl", "-D", data, "-m", "immediate", "stop"], root)
    return f"postgresql://zaxy@127.0.0.1:{port}/postgres"


def _stop(command: list[str], root: str) -> None:
    subprocess.run(command, capture_output=True, timeout=60, check=False)
    shutil.rmtree(root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])

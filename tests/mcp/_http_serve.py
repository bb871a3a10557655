"""``zaxy serve --transport http`` as a real subprocess on a free port, for the HTTP tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def http_serve(eventloom: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start the server, wait for ``/healthz``, yield its base URL; on exit stop it and check it left cleanly."""
    port = free_port()
    log_path = eventloom.parent / f"http-{port}.log"
    command = [sys.executable, "-m", "zaxy_agents.cli.entry", "serve", "--transport", "http", "--port", str(port)]
    command += ["--eventloom-path", str(eventloom), *args]
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            command, env={**os.environ, "NO_COLOR": "1", **(env or {})}, stdout=log, stderr=subprocess.STDOUT
        )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        try:
            while True:
                try:
                    if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert process.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
            yield base
        finally:
            process.terminate()
            code = process.wait(timeout=30)
    assert code == 0, log_path.read_text()  # orderly shutdown: the owner hands over
    assert "Traceback" not in log_path.read_text(), log_path.read_text()
    assert not (eventloom / ".zaxy" / "owner.json").exists()

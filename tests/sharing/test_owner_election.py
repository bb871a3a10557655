"""Owner election and the peer protocol: one owner, clean hand-over, stale owners cleared, structured errors."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from zaxy_agents.errors import NotFoundError, ZaxyError
from zaxy_agents.sharing.election import INFO_FILE, pid_alive, read_owner, socket_path_for, try_claim
from zaxy_agents.sharing.rpc import OwnerLost, OwnerUnreachable, PeerClient, PeerServer

OWNER_SCRIPT = """
import sys, time
from zaxy_agents.sharing.election import try_claim
from zaxy_agents.sharing.rpc import PeerServer
lease = try_claim(sys.argv[1])
server = PeerServer(lease.socket_path, lambda method, params: {"pong": True})
server.start()
lease.publish()
print("ready", flush=True)
time.sleep(600)
"""


def test_one_owner_at_a_time_and_release_hands_over(tmp_path: Path) -> None:
    derived = tmp_path / ".zaxy"
    first = try_claim(derived)
    assert first is not None and try_claim(derived) is None
    record = first.publish({"version": "test"})
    assert read_owner(derived) == record and record["pid"] == os.getpid()
    first.release()
    assert read_owner(derived) is None
    second = try_claim(derived)
    assert second is not None
    second.release()


def test_a_killed_owner_leaves_nothing_that_blocks_a_successor(tmp_path: Path) -> None:
    derived = tmp_path / ".zaxy"
    owner = subprocess.Popen([sys.executable, "-c", OWNER_SCRIPT, str(derived)], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == "ready"
        record = read_owner(derived)
        assert record is not None and record["pid"] == owner.pid
        assert PeerClient(record["socket"]).call("ping") == {"pong": True}
        assert try_claim(derived) is None
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=10)
    finally:
        if owner.poll() is None:
            owner.kill()
    assert not pid_alive(owner.pid) and Path(record["socket"]).exists()  # stale socket and record left behind
    with pytest.raises(OwnerUnreachable):
        PeerClient(record["socket"]).call("ping")
    successor = try_claim(derived)
    assert successor is not None
    assert not Path(record["socket"]).exists() and not (derived / INFO_FILE).exists()
    successor.release()


def test_rpc_round_trip_errors_and_lost_connections(tmp_path: Path) -> None:
    path = str(tmp_path / "peer.sock")

    def handler(method: str, params: dict) -> object:
        if method == "echo":
            return params
        if method == "missing":
            raise NotFoundError("no such thing", field="name", remediation="Ask for something else.")
        if method == "crash":
            raise RuntimeError("boom")
        raise LookupError(method)

    server = PeerServer(path, handler)
    server.start()
    try:
        client = PeerClient(path)
        assert client.call("echo", {"a": [1, "ü"]}) == {"a": [1, "ü"]}
        with pytest.raises(ZaxyError) as missing:
            client.call("missing")
        assert missing.value.code == "not_found" and missing.value.field == "name"
        with pytest.raises(ZaxyError) as crash:
            client.call("crash")
        assert crash.value.code == "internal_error" and "boom" not in crash.value.message
        with pytest.raises(LookupError):
            client.call("nope")
    finally:
        server.close()
    assert not Path(path).exists()
    with pytest.raises(OwnerUnreachable):
        PeerClient(path).call("echo")

    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(path)
    silent.listen(1)

    def hang_up() -> None:
        connection, _ = silent.accept()
        connection.recv(1024)
        connection.close()

    thread = threading.Thread(target=hang_up)
    thread.start()
    with pytest.raises(OwnerLost):
        PeerClient(path).call("echo")
    thread.join()
    silent.close()


def test_long_paths_put_the_socket_in_a_private_runtime_dir(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60) / ".zaxy"
    path = socket_path_for(deep)
    assert len(path.encode()) <= 100 and not path.startswith(str(deep))
    assert Path(path).parent.stat().st_mode & 0o077 == 0
    assert socket_path_for(deep) == path  # deterministic: successors find (and clean) the same socket

"""A held log lock never stalls the IDE: the hook waits a bounded time, spools, exits 0; the next writer drains.

The lock is held by a real second process (``flock`` on the session's log, as a long writer would) for far longer
than the hook subprocess is allowed to run, so a hook that waited for it would time out here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.capture.conftest import Env
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog
from zaxy_agents.storage.files.spool import DRAINED_TYPE, pending_files, spool_dir

HOLDER = """
import fcntl, sys, time
handle = open(sys.argv[1], "a")
fcntl.flock(handle, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(600)
"""


class LockHolder:
    """A process holding the exclusive lock of one log file until stopped."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "locked"

    def release(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


@pytest.fixture
def held(env: Env):
    env.hook("claude-code", "SessionStart-startup")  # the log exists
    holder = LockHolder(env.eventloom / f"{env.session('claude-code')}.jsonl")
    try:
        yield holder
    finally:
        holder.release()


def hook_with_deadline(env: Env, name: str, **fields: str) -> subprocess.CompletedProcess[str]:
    """A hook run that fails the test (TimeoutExpired) if it waited for the held lock."""
    from tests.capture.conftest import hook_payload
    from tests.conftest import run_zaxy

    payload = json.loads(hook_payload("claude-code", name, env.workspace, env.home))
    payload.update(fields)
    return run_zaxy(
        "hook-event",
        payload["hook_event_name"],
        "--client",
        "claude-code",
        env=env.vars(),
        stdin=json.dumps(payload),
        cwd=env.workspace,
        timeout=30,
    )


def test_a_held_lock_spools_and_exits_zero_then_the_next_writer_drains_in_order(env: Env, held: LockHolder) -> None:
    session = env.session("claude-code")
    before = len(env.events(session))
    first = hook_with_deadline(env, "UserPromptSubmit", prompt="first prompt while locked")
    second = hook_with_deadline(env, "PostToolUse-Bash")
    assert first.returncode == 0 and second.returncode == 0 and first.stderr == "" and second.stderr == ""
    assert len(env.events(session)) == before  # nothing written past the lock
    assert len(pending_files(str(env.eventloom), session)) == 2
    held.release()

    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "after the lock"})
    events = env.events(session)[before:]
    kinds = [event["type"] for event in events]
    assert kinds == ["hook.user_prompt_submitted", "command.completed", DRAINED_TYPE, "hook.user_prompt_submitted"]
    assert [events[0]["payload"]["prompt"], events[3]["payload"]["prompt"]] == [
        "first prompt while locked",
        "after the lock",
    ]
    assert events[0]["timestamp"] < events[2]["timestamp"]  # spooled events keep the time they were captured
    drained = events[2]["payload"]
    assert drained["events"] == 2 and len(drained["files"]) == 2 and drained["already_in_log"] == 0
    assert pending_files(str(env.eventloom), session) == []
    with JsonlEventLog(env.eventloom) as log:
        assert log.verify(session).ok


def test_any_writer_drains_the_spool_and_a_cut_short_drain_never_duplicates(env: Env, held: LockHolder) -> None:
    session = env.session("claude-code")
    hook_with_deadline(env, "UserPromptSubmit", prompt="spooled once")
    held.release()
    spooled = pending_files(str(env.eventloom), session)
    copy = Path(spooled[0]).read_text()
    with MemoryFabric.from_path(env.eventloom, use_graph=False) as fabric:
        fabric.append(session, "note.added", {"text": "written through the fabric"})
    # A drain cut short after its write leaves the file behind: the next drain finds its events in the log.
    Path(spooled[0]).parent.mkdir(parents=True, exist_ok=True)
    Path(spooled[0]).write_text(copy)
    env.hook("claude-code", "PostToolUse-Read")
    events = env.events(session)
    assert [e["payload"].get("prompt") for e in events].count("spooled once") == 1
    drains = [e["payload"] for e in events if e["type"] == DRAINED_TYPE]
    assert [(d["events"], d["already_in_log"]) for d in drains] == [(1, 0), (0, 1)]
    assert not Path(spool_dir(str(env.eventloom), session)).exists() or not pending_files(str(env.eventloom), session)


def test_without_contention_nothing_is_spooled(env: Env) -> None:
    for _ in range(3):
        assert env.hook("claude-code", "PostToolUse-Bash").returncode == 0
    session = env.session("claude-code")
    assert pending_files(str(env.eventloom), session) == [] and len(env.events(session)) == 3

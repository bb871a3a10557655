"""Continuity through the real hook sink: long logs, "remember X", compaction recovery, the fold cache.

Every test drives `zaxy hook-event` as a subprocess with payloads shaped like the clients' (recorded fixtures,
fields replaced where the scenario needs them) and checks what the client would inject.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.capture.conftest import Env
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.fabric.light import light_append_many
from zaxy_agents.workingset.cache import cache_path


def noise(env: Env, session: str, count: int, *, chunk: int = 2_000) -> None:
    """``count`` Read tool calls, appended fast (one write per chunk, no projection)."""
    env.eventloom.mkdir(parents=True, exist_ok=True)
    for start in range(0, count, chunk):
        drafts = [
            {
                "type": "tool.call.completed",
                "payload": {"client": "claude-code", "tool": "Read", "argument_keys": ["file_path"], "n": i},
                "actor": "claude-code",
            }
            for i in range(start, min(count, start + chunk))
        ]
        light_append_many(session, drafts, eventloom_path=env.eventloom)


def injected(result) -> str:
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def resolve_all(env: Env, text: str) -> list:
    citations = [line.rsplit("[", 1)[1].rstrip("]") for line in text.splitlines() if line.startswith("- ")]
    with MemoryFabric.from_path(env.eventloom, use_graph=False) as fabric:
        return [fabric.resolve(citation) for citation in citations]


@pytest.mark.parametrize("noise_events", [2_000, 20_000])
def test_packets_carry_standing_state_whatever_the_log_length(env: Env, noise_events: int) -> None:
    """One decision, one open task, one accepted finding, then thousands of Read calls: both packets keep them."""
    session = env.session("claude-code")
    env.eventloom.mkdir(parents=True)
    light_append_many(
        session,
        [
            {"type": "task.created", "payload": {"task_id": "T-9", "title": "Migrate billing to Postgres"}},
            {"type": "task.created", "payload": {"task_id": "T-10", "title": "Old chore"}},
            {"type": "task.completed", "payload": {"task_id": "T-10"}},
            {"type": "decision.recorded", "payload": {"decision": "Use pgbouncer for pooling"}},
            {"type": "finding.accepted", "payload": {"finding": "The ledger drifts by one cent on refunds"}},
        ],
        eventloom_path=env.eventloom,
    )
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "Remember that invoices are immutable."})
    noise(env, session, noise_events)
    for name, title in (("SessionStart-compact", "recovered after context compaction"), ("SessionStart-startup", "")):
        text = injected(env.hook("claude-code", name))
        assert title in text
        for expected in (
            "Migrate billing to Postgres",
            "Use pgbouncer",
            "drifts by one cent",
            "invoices are immutable",
        ):
            assert expected in text, (name, text)
        assert "Old chore" not in text
        kinds = {event.type for event in resolve_all(env, text)}
        assert {"task.created", "decision.recorded", "finding.accepted", "fact.asserted"} <= kinds
    cache = json.loads(Path(cache_path(str(env.eventloom), session)).read_text())
    assert cache["covered"]["seq"] > noise_events  # the next start reads only what is new


def test_the_fold_cache_never_outlives_the_log_it_came_from(env: Env) -> None:
    """A cache whose covered event the log does not hold (edited, replaced, garbage) is ignored and rebuilt."""
    session = env.session("claude-code")
    env.eventloom.mkdir(parents=True)
    light_append_many(
        session,
        [{"type": "task.created", "payload": {"task_id": "T-1", "title": "Real task"}}],
        eventloom_path=env.eventloom,
    )
    injected(env.hook("claude-code", "SessionStart-startup"))
    path = Path(cache_path(str(env.eventloom), session))
    cache = json.loads(path.read_text())
    forged = next(iter(cache["entries"]["open_tasks"].values()))
    cache["entries"]["open_tasks"]["id:T-666"] = [
        "",
        forged[1],
        forged[2],
        forged[3],
        forged[4],
        {"task_id": "T-666", "title": "Planted task", "status": "open"},
    ]
    cache["covered"]["hash"] = "0" * 64  # derived from some other log
    path.write_text(json.dumps(cache))
    text = injected(env.hook("claude-code", "SessionStart-resume"))
    assert "Real task" in text and "Planted task" not in text
    path.write_text("{not json")
    assert "Real task" in injected(env.hook("claude-code", "SessionStart-resume"))
    (env.eventloom / f"{session}.jsonl").unlink()  # the log replaced by another one
    light_append_many(
        session,
        [{"type": "task.created", "payload": {"task_id": "T-2", "title": "New log task"}}],
        eventloom_path=env.eventloom,
    )
    text = injected(env.hook("claude-code", "SessionStart-resume"))
    assert "New log task" in text and "Real task" not in text


def test_remember_reaches_the_next_session_as_a_cited_fact_and_is_superseded(env: Env) -> None:
    env.hook("claude-code", "SessionStart-startup")
    env.hook(
        "claude-code", "UserPromptSubmit", fields={"prompt": "Fix the build. Remember that staging is on port 5433."}
    )
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "From now on, always run ruff before committing."})
    env.hook("claude-code", "SessionEnd")
    text = injected(env.hook("claude-code", "SessionStart-startup"))
    section = text.split("## What the user asked you to remember", 1)[1].split("##", 1)[0]
    assert "staging is on port 5433" in section and "always run ruff before committing" in section
    assert "## Last user prompts" in text and "Fix the build" in text  # prompts reach the startup packet too
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "Please remember: staging is on port 6543 now"})
    text = injected(env.hook("claude-code", "SessionStart-resume"))
    section = text.split("## What the user asked you to remember", 1)[1].split("##", 1)[0]
    assert "port 6543" in section and "port 5433" not in section  # same subject: superseded like any fact
    with MemoryFabric.from_path(env.eventloom) as fabric:
        packet = fabric.checkout("which port is staging on?", session=env.session("claude-code"))
        facts = [fact for fact in packet.current_facts if "staging" in fact.summary]
        assert [fact.summary for fact in facts] == ["staging is on port 6543 now"]
        assert fabric.resolve(facts[0].citation).actor == "user"
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "Forget that staging is on port 6543."})
    text = injected(env.hook("claude-code", "SessionStart-resume"))
    assert "6543" not in text.split("## Last user prompts", 1)[0]


def test_recovery_packet_uses_the_last_reply_and_a_captured_summary(env: Env) -> None:
    session = env.session("claude-code")
    env.eventloom.mkdir(parents=True)
    light_append_many(
        session,
        [
            {"type": "task.created", "payload": {"task_id": "A", "title": "Rotate the signing keys"}},
            {"type": "task.created", "payload": {"task_id": "B", "title": "Backfill the audit table"}},
        ],
        eventloom_path=env.eventloom,
    )
    env.hook(
        "claude-code", "Stop", fields={"last_assistant_message": "I rotated half the keys; the rest need a window."}
    )
    env.hook("claude-code", "PostCompact", fields={"compact_summary": "We backfilled the audit table partially."})
    text = injected(env.hook("claude-code", "SessionStart-compact"))
    assert "## Your last reply before the compaction" in text and "rotated half the keys" in text
    summary_event = next(e for e in env.events(session) if e["type"] == "hook.postcompact")
    assert f"Compaction summary: eventloom://{session}/events/{summary_event['seq']}#" in text
    tasks = text.split("## Open tasks", 1)[1].split("##", 1)[0]
    assert tasks.index("Rotate the signing keys") < tasks.index("Backfill the audit table")  # not in the summary
    startup = injected(env.hook("claude-code", "SessionStart-startup"))
    assert "## Summary of the last compacted context" in startup and "backfilled the audit table" in startup


def test_compact_then_resume_recovers_open_tasks_and_accepted_findings(env: Env) -> None:
    """Seed 004's exit criterion, scripted through the hooks a client fires around a compaction."""
    session = env.session("claude-code")
    env.hook("claude-code", "SessionStart-startup")
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "audit the payment retries"})
    light_append_many(
        session,
        [
            {"type": "task.created", "payload": {"task_id": "P-1", "title": "Cap retries at five"}},
            {"type": "task.created", "payload": {"task_id": "P-2", "title": "Add jitter"}},
            {"type": "task.updated", "payload": {"task_id": "P-2", "status": "done"}},
            {
                "type": "finding.accepted",
                "payload": {"finding_id": "F-1", "finding": "Provider dedupes by idempotency key"},
            },
            {"type": "finding.accepted", "payload": {"finding_id": "F-2", "finding": "Timeouts are 30 s upstream"}},
            {"type": "finding.rejected", "payload": {"finding_id": "F-2"}},
            {"type": "question.raised", "payload": {"question": "Is the sandbox rate limited?"}},
        ],
        eventloom_path=env.eventloom,
    )
    for name in ("PostToolUse-Bash", "PostToolUse-Edit", "PostToolUse-Read"):
        env.hook("claude-code", name)
    noise(env, session, 2_500)
    env.hook("claude-code", "Stop", fields={"last_assistant_message": "Retries capped; jitter done."})
    env.hook("claude-code", "PreCompact")
    recovery = injected(env.hook("claude-code", "SessionStart-compact"))
    env.hook("claude-code", "PostCompact", fields={"compact_summary": "Audited retries."})
    env.hook("claude-code", "SessionEnd")
    resumed = injected(env.hook("claude-code", "SessionStart-resume"))
    for text in (recovery, resumed):
        assert "Cap retries at five" in text and "Provider dedupes by idempotency key" in text
        assert "Is the sandbox rate limited?" in text
        assert "Add jitter" not in text and "Timeouts are 30 s" not in text  # closed and rejected stay out
        events = resolve_all(env, text)  # every line is Eventloom-backed
        assert all(event.session == session for event in events) and events
    assert "Retries capped; jitter done." in recovery

"""Secrets never reach the log, on every capture path, and a drop-in store still round-trips (issue 25, item 6).

The corpus (tests/surfaces/secret_corpus.py) holds 90 secret shapes after the public scanner rule sets and ordinary
text a coding agent sees all day. Redaction must catch every shape and change nothing ordinary. Then each capture
path is driven through its real surface — the hook CLI, transcript capture, a stdio MCP client, a LangGraph graph
with the checkpointer and the store, the CLI — and the raw log bytes are searched for the secrets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import START, MessagesState, StateGraph

from tests.capture.conftest import Env, fixture_text
from tests.conftest import run_zaxy_json
from tests.mcp._client import StdioClient, serve_params
from tests.surfaces.secret_corpus import ORDINARY, SECRETS
from zaxy_agents.capture.claude_transcript import project_dir_name
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.drafts import prepare_draft
from zaxy_agents.eventloom.redaction import redact_text, redact_value, redaction_policy
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore

# A mix for the surface tests: the shapes the issue names first, then a spread of vendors and contexts.
NAMED = ("postgres url", "google api key", "stripe live", "stripe restricted", "env file", "private span")
MIX = [s for s in SECRETS if s.shape.startswith(NAMED)] + SECRETS[::9]
MIX_TEXT = "\n".join(secret.text for secret in MIX)


def _stored(root: Path) -> str:
    """Every byte the project wrote under the Eventloom folder (logs, derived state, caches)."""
    return "\n".join(path.read_bytes().decode("utf-8", "replace") for path in sorted(root.rglob("*")) if path.is_file())


def _assert_no_secret(text: str) -> None:
    leaked = [secret.shape for secret in MIX if secret.secret in text]
    assert not leaked, leaked


def test_the_corpus_is_large_and_varied() -> None:
    assert len({secret.shape for secret in SECRETS}) == len(SECRETS) >= 60
    assert len(ORDINARY) >= 40


@pytest.mark.parametrize("secret", SECRETS, ids=[secret.shape for secret in SECRETS])
def test_every_secret_shape_is_redacted(secret) -> None:
    redacted, kinds = redact_text(secret.text)
    assert kinds and secret.secret not in redacted, redacted
    assert "[REDACTED:" in redacted


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_text_is_never_redacted(text: str) -> None:
    assert redact_text(text) == (text, [])
    payload = {"output": text, "note": {"lines": text.splitlines()}, "count": 3}
    draft = prepare_draft("command.completed", payload, "agent", 1 << 20)
    assert draft.payload == payload and draft.security is None


def test_key_names_never_change_non_secret_values() -> None:
    payload = {"token": 42, "secret": "none", "api_key": "abc", "password": True, "auth_token": None}
    assert redact_value(payload) == (payload, [])  # standard policy: an int, a short word, a flag stay
    redacted, paths = redact_value({"password": "hunter2", "token": "tok-9f8e7d6c5b", "credentials": ["c0rrect-h0rse"]})
    assert redacted == {"password": "[REDACTED]", "token": "[REDACTED]", "credentials": ["[REDACTED]"]}
    assert paths == ["payload.password", "payload.token", "payload.credentials[0]"]
    assert redact_value({"password": "hunter2"}, policy="values") == ({"password": "hunter2"}, [])
    shaped = {"note": MIX[0].text}
    assert redact_value(shaped, policy="values")[1] == ["payload.note"]  # shapes: every policy but off
    assert redact_value(shaped, policy="off") == (shaped, [])
    with pytest.raises(InvalidRequestError) as raised:
        redaction_policy("loose")
    assert raised.value.field == "redaction"


def test_python_api_and_cli(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        event = memory.append("s", "note.recorded", {"text": MIX_TEXT, "db_password": "hunter2-prod"})
        assert event.payload["db_password"] == "[REDACTED]" and event.security is not None
        assert memory.verify("s").ok  # hashed after redaction: the stored bytes verify
    code, appended = run_zaxy_json(
        "memory", "append", MIX_TEXT, "-s", "cli", "--kind", "note", "--eventloom-path", str(root)
    )
    assert code == 0 and appended["event"]["security"]["redacted_paths"]
    _assert_no_secret(_stored(root))


def test_hooks(env: Env) -> None:
    command = {"command": "cat .env && ./deploy.sh"}
    for event, body in (
        ("UserPromptSubmit", {"prompt": "deploy with these:\n" + MIX_TEXT}),
        ("PostToolUse", {"tool_name": "Bash", "tool_input": command, "tool_response": {"stdout": MIX_TEXT}}),
    ):
        stdin = json.dumps({"session_id": "s1", "cwd": str(env.workspace), "hook_event_name": event, **body})
        assert env.zaxy("hook-event", event, "--client", "claude-code", stdin=stdin).returncode == 0
    events = env.events(env.session("claude-code"))
    assert [e["type"] for e in events] == ["hook.user_prompt_submitted", "command.completed"]
    assert all(e["security"]["redacted_paths"] for e in events)
    _assert_no_secret(_stored(env.eventloom))


def test_transcript_capture(env: Env) -> None:
    folder = env.claude_dir / "projects" / project_dir_name(str(env.workspace))
    folder.mkdir(parents=True)
    text = fixture_text("claude-code-session.jsonl", env.workspace, env.home)
    text = text.replace('"first task please"', json.dumps("first task please\n" + MIX_TEXT))
    (folder / "d1d64961-c226-4c3c-a4cb-bb2c6344c645.jsonl").write_text(text)
    code, report = env.zaxy_json("capture", "claude")
    assert code == 0 and report["files"] == 1
    first = env.events(env.session("claude-code"))[0]
    assert first["payload"]["text"].startswith("first task please") and first["security"]["redacted_paths"]
    _assert_no_secret(_stored(env.eventloom))


def test_mcp_over_stdio(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with StdioClient(serve_params(root, "--session-id", "s", "--profile", "full")) as client:
        client.ok("memory_append", {"type": "note.recorded", "payload": {"text": MIX_TEXT, "api_key": "k3y-4b5c6d7e"}})
        client.ok("context_after_turn", {"user_text": MIX_TEXT, "assistant_text": "noted: " + MIX[1].text})
    _assert_no_secret(_stored(root))
    assert "k3y-4b5c6d7e" not in _stored(root)


def test_langgraph_checkpointer_and_store(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        saver = ZaxyCheckpointer(fabric)
        builder = StateGraph(MessagesState)
        builder.add_node("agent", lambda state: {"messages": [AIMessage("on it: " + MIX[2].text)]})
        builder.add_edge(START, "agent")
        graph = builder.compile(checkpointer=saver)
        graph.invoke({"messages": [HumanMessage(MIX_TEXT)]}, {"configurable": {"thread_id": "t1"}})
        store = ZaxyStore(fabric)
        store.put(("notes",), "deploy", {"text": MIX_TEXT, "token": 42, "owner": "dana"})
        assert store.get(("notes",), "deploy").value["token"] == 42
    _assert_no_secret(_stored(root))


def test_a_drop_in_store_and_checkpointer_round_trip(tmp_path: Path) -> None:
    """Key names never rewrite what a LangGraph app put: ``{"token": 42}`` reads back, metadata filters match."""
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        store = ZaxyStore(fabric)
        value = {"token": 42, "password": "hunter2", "api_key": "abc123", "secret": {"nested": "short"}}
        store.put(("cfg",), "k", value)
        assert store.get(("cfg",), "k").value == value
        assert [item.key for item in store.search(("cfg",), filter={"password": "hunter2"})] == ["k"]

        saver = ZaxyCheckpointer(fabric)
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        metadata = {"source": "input", "step": 1, "token": "abc", "password": "hunter2", "parents": {}}
        saver.put(config, empty_checkpoint(), metadata, {})
        [found] = saver.list(None, filter={"token": "abc", "password": "hunter2"})
        assert {key: found.metadata[key] for key in ("token", "password")} == {"token": "abc", "password": "hunter2"}

        strict = ZaxyStore(fabric, session="strict-store", redaction="standard")  # opt back in to key names
        strict.put(("cfg",), "k", value)
        assert strict.get(("cfg",), "k").value == {**value, "password": "[REDACTED]", "api_key": "[REDACTED]"}
        verbatim = ZaxyStore(fabric, session="verbatim-store", redaction="off")
        verbatim.put(("cfg",), "k", {"text": MIX[0].text})
        assert verbatim.get(("cfg",), "k").value == {"text": MIX[0].text}
        with pytest.raises(InvalidRequestError):
            ZaxyCheckpointer(fabric, redaction="strictest")


def test_process_default_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZAXY_REDACTION", "values")
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        event = memory.append("s", "note.recorded", {"password": "hunter2", "text": MIX[0].text})
        assert event.payload["password"] == "hunter2" and MIX[0].secret not in event.payload["text"]
        monkeypatch.setenv("ZAXY_REDACTION", "everything")
        with pytest.raises(InvalidRequestError) as raised:
            memory.append("s", "note.recorded", {"text": "x"})
        assert raised.value.field == "ZAXY_REDACTION"

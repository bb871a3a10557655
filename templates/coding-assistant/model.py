"""The chat model: a real one when ``ZAXY_EXAMPLE_MODEL`` is set (e.g. ``openai:gpt-4o-mini``,
``anthropic:claude-sonnet-4-5``; needs that provider's package and key), otherwise a scripted stand-in that
runs offline and deterministically.

The stand-in plays the assistant's part of the story in agent.py: it calls the same tools a real model would
and answers from the memory it is shown (the system message the middleware builds, and the recovery packet
after a compaction), quoting the cited lines.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from zaxy_agents.langgraph.scripted import ScriptedChatModel


def chat_model():
    name = os.environ.get("ZAXY_EXAMPLE_MODEL")
    if name:
        from langchain.chat_models import init_chat_model

        return init_chat_model(name)
    return ScriptedChatModel(policy=assistant)


RETRY_PY = '''import random
import time


def retry(call, attempts=5, base=0.1, cap=5.0, sleep=time.sleep):
    """Call ``call()`` until it succeeds: exponential backoff with full jitter, at most ``attempts`` tries."""
    for attempt in range(attempts):
        try:
            return call()
        except Exception:
            if attempt == attempts - 1:
                raise
            sleep(random.uniform(0, min(cap, base * 2**attempt)))
'''
TEST_RETRY_PY = """import unittest

from retry import retry


class RetryTest(unittest.TestCase):
    def test_retries_until_it_succeeds(self):
        outcomes = iter([OSError(), OSError(), "ok"])

        def call():
            outcome = next(outcomes)
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

        self.assertEqual(retry(call, sleep=lambda seconds: None), "ok")

    def test_gives_up_after_the_last_attempt(self):
        def call():
            raise OSError("down")

        with self.assertRaises(OSError):
            retry(call, attempts=3, sleep=lambda seconds: None)
"""
CITATION = re.compile(r"eventloom://[A-Za-z0-9_.-]+/events/[0-9]+#[0-9a-f]{12}")
# What the stand-in looks for in memory when asked where things stand: (label, a word the line must contain).
RECALL = [
    ("decision", "backoff"),
    ("open task", "Add retries"),
    ("file", "retry.py"),
    ("command", "unittest"),
    ("preference", "pull requests"),
]


def assistant(messages: Sequence[BaseMessage]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return _after_tools(messages)
    request = last.text
    if "Track it as task" in request:
        return _calls(
            (
                "memory_append",
                {"type": "task.created", "payload": {"task_id": "T-1", "title": "Add retries to the HTTP client"}},
            ),
            (
                "memory_append",
                {
                    "type": "decision.recorded",
                    "payload": {
                        "decision": "Retry HTTP calls with exponential backoff and full jitter, at most 5 attempts",
                        "topic": "http retries",
                        "rationale": "spreads retries out so a recovering server is not stampeded",
                    },
                },
            ),
        )
    if "Write the retry helper" in request:
        return _calls(
            ("write_file", {"path": "retry.py", "content": RETRY_PY}),
            ("write_file", {"path": "test_retry.py", "content": TEST_RETRY_PY}),
        )
    if request.startswith("Remember that I prefer"):
        return _calls(("remember_preference", {"preference": request.removeprefix("Remember that ").rstrip(".")}))
    if request.startswith("CI log"):
        return AIMessage(f"Noted: {request.split(':')[0].removeprefix('CI log of ')} passed.")
    if "Where are we" in request or "What did we decide" in request:
        return AIMessage(_from_memory(messages))
    return AIMessage("Understood.")


def _calls(*calls: tuple[str, dict]) -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": name, "args": args, "id": f"call-{name}-{i}"} for i, (name, args) in enumerate(calls)]
    )


def _after_tools(messages: Sequence[BaseMessage]) -> AIMessage:
    results = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        results.insert(0, message)
    names = {result.name for result in results}
    if names == {"write_file"}:
        return _calls(("run_tests", {}))
    if names == {"run_tests"}:
        return AIMessage(f"Wrote retry.py and test_retry.py; the tests ran with {results[0].text.splitlines()[0]}.")
    if names == {"memory_append"}:
        cited = [CITATION.search(result.text) for result in results]
        return AIMessage("Recorded: " + ", ".join(match.group(0) for match in cited if match))
    return AIMessage("Done: " + "; ".join(result.text for result in results))


def _from_memory(messages: Sequence[BaseMessage]) -> str:
    """Answer from what memory put in front of the model, quoting each cited line used."""
    shown = [
        message.text
        for message in messages
        if isinstance(message, SystemMessage)
        or (isinstance(message, HumanMessage) and message.additional_kwargs.get("lc_source") == "zaxy_memory")
    ]
    lines = [line for text in shown for line in text.splitlines() if CITATION.search(line)]
    answer = []
    for label, word in RECALL:
        line = next((line for line in lines if word in line), None)
        if line is not None:
            answer.append(f"{label}: {line.lstrip('- ')}")
    return "From memory:\n" + "\n".join(answer) if answer else "Memory has nothing on this yet."

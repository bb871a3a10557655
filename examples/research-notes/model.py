"""The chat model: a real one when ``ZAXY_EXAMPLE_MODEL`` is set (e.g. ``openai:gpt-4o-mini``; needs that
provider's package and key), otherwise a scripted stand-in that runs offline and deterministically.

The stand-in answers like a careful researcher: it follows the memory packet's answerability verdict and,
when memory covers the question, quotes the best-ranked document section and cites it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from zaxy_agents.langgraph.scripted import ScriptedChatModel

EVIDENCE = re.compile(r"^- \[current, document\.chunk\] (?P<text>.*) \((?P<citation>eventloom://[^)]+)\)$")


def chat_model():
    name = os.environ.get("ZAXY_EXAMPLE_MODEL")
    if name:
        from langchain.chat_models import init_chat_model

        return init_chat_model(name)
    return ScriptedChatModel(policy=researcher)


def researcher(messages: Sequence[BaseMessage]) -> AIMessage:
    memory = messages[0].text if isinstance(messages[0], SystemMessage) else ""
    question = _words(messages[-1].text)
    sections = [match for match in map(EVIDENCE.match, memory.splitlines()) if match]
    if "answerability: answer_from_memory" not in memory or not sections:
        return AIMessage("The notes do not answer this; I would rather ask than guess.")
    best = max(sections, key=lambda match: len(question & _words(match["text"])))  # first wins a tie
    return AIMessage(f"According to the notes: {best['text']} [{best['citation']}]")


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) > 3}

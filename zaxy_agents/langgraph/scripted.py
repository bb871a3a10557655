"""A deterministic chat model for templates and tests: a policy function decides every reply.

Agents built from the templates run offline with it (no key, no network) and switch to a real model through
``ZAXY_EXAMPLE_MODEL`` (``langchain.chat_models.init_chat_model``). Unlike langchain-core's
``GenericFakeChatModel`` it supports ``bind_tools`` and emits tool calls, and it sees the messages the agent
really sends — including the system message the memory middleware builds — so a template can show what
memory gave the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

Policy = Callable[[Sequence[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """Replies with ``policy(messages)``; ``bind_tools`` returns the same model (the policy emits tool calls).

    ``calls`` keeps the message lists it was called with, so a test or a template can show what the model saw.
    """

    policy: Any
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "zaxy-scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.policy(messages))])

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

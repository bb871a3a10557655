"""A Pydantic AI assistant whose message history persists in Zaxy and who remembers other conversations."""

import os

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from zaxy_agents.adapters.pydantic_ai import ZaxyMessageHistory, memory_instructions
from zaxy_agents.fabric import MemoryFabric


def offline(messages, info):  # stand-in model (no key, no network): answers with the first cited memory line
    memory = messages[-1].instructions or ""
    line = next((line for line in memory.splitlines() if "eventloom://" in line and "staging" in line), "Noted.")
    return ModelResponse(parts=[TextPart(line)])


memory = MemoryFabric.from_path()  # ZAXY_EVENTLOOM_PATH, else ./.eventloom
model = os.environ.get("ZAXY_EXAMPLE_MODEL") or FunctionModel(offline)  # e.g. openai:gpt-4o-mini
agent = Agent(model, instructions=memory_instructions(memory, scope=["pydantic-ai.*"]))

for conversation, text in [("monday", "Our staging database is db-staging-2."), ("tuesday", "Which host is staging?")]:
    history = ZaxyMessageHistory(conversation, memory)  # load, run, save: message_history that persists
    result = agent.run_sync(text, message_history=history.messages())
    history.extend(result.new_messages())
print(
    result.output
)  # - [current, transcript.turn] Our staging database is db-staging-2. (eventloom://pydantic-ai.monday/...)
print(len(ZaxyMessageHistory("tuesday", memory).messages()), "messages in pydantic-ai.tuesday")
memory.close()

"""An OpenAI Agents SDK assistant whose conversation is Zaxy memory and whose tools include Zaxy's MCP tools."""

import asyncio
import os

from agents import Agent, Runner

from zaxy_agents.adapters.openai_agents import ScriptedModel, ZaxySession, zaxy_mcp_server


def offline(items, tools):  # stand-in model (no key, no network): records decisions, answers from memory
    last = items[-1]
    if last.get("type") == "function_call_output":
        output = last["output"]  # a string, or MCP content parts
        packet = output if isinstance(output, str) else "\n".join(part.get("text", "") for part in output)
        return next((line for line in packet.splitlines() if line.startswith("- [")), "Noted.")
    if last["content"].startswith("Decision:"):
        decision = {"decision": last["content"].removeprefix("Decision: "), "topic": "http retries"}
        return ("memory_append", {"event_type": "decision.recorded", "payload": decision})
    return ("memory_checkout", {"query": last["content"], "max_tokens": 600})


async def main() -> None:
    name = os.environ.get("ZAXY_EXAMPLE_MODEL")  # e.g. gpt-4o-mini (needs OPENAI_API_KEY)
    async with zaxy_mcp_server(session_id="team-decisions") as memory_tools:  # `zaxy serve` over stdio
        agent = Agent(
            name="Assistant",
            instructions="Call memory_checkout before answering; record decisions with memory_append. Cite.",
            model=name or ScriptedModel(offline),
            mcp_servers=[memory_tools],
        )
        session = ZaxySession("ana")  # instead of SQLiteSession("ana", "conversations.db")
        await Runner.run(agent, "Decision: retry HTTP calls 3 times with exponential backoff", session=session)
        answer = await Runner.run(agent, "How do we retry HTTP calls?", session=session)
        print(answer.final_output)  # - [decision] http retries: retry HTTP calls 3 times ... (eventloom://...)
        print(len(await session.get_items()), "items in session", session.eventloom_session)
        session.close()


asyncio.run(main())

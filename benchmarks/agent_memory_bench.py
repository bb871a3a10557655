"""Agent memory: what ZaxyMemoryMiddleware costs per turn, and what a compaction costs, as same-run ratios.

Turns: two ``create_agent`` agents with the same scripted model and a ZaxyCheckpointer each, one with
``ZaxyMemoryMiddleware`` (checkout over a seeded scope, capture, feedback), alternating turn by turn so both
see the same disk regime. Reported: p50/p95 per turn, the process's CPU time per turn (all its threads), and
the middleware's added milliseconds.

Compaction: the same long history (tool exchanges and long messages) compacted by Zaxy's compaction step
(tiktoken count, plan, cited recovery packet, ``transcript.compacted``; the history is already in the log,
as it is when turns were captured as they happened) and by LangChain's
``SummarizationMiddleware.before_model`` with a summarizer that returns at once — so the baseline measures only
its mechanics; in real use it also makes a model call that reads ``trim_tokens_to_summarize`` tokens (4,000 by
default) and writes a summary, which Zaxy never does.

``--citations FILE`` writes each measured turn's checkout citations (session/seq, without the hash, which
depends on the run's timestamps) so two builds can be checked for identical packets on the same turns.

``--breakdown`` also times the middleware's parts (checkout, its projection, retrieval and each lane, the citation
check, packing, stable facts, working set, capture, feedback) as thread CPU per turn; the wrappers add a little
overhead, so read the parts against each other, and the added-milliseconds line from a run without it.

Usage: python benchmarks/agent_memory_bench.py [--turns 60] [--seed-events 2000] [--history 300]
       [--only turns|compaction] [--citations FILE] [--breakdown] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyMemoryMiddleware
from zaxy_agents.langgraph.compaction import MessageTokenCounter
from zaxy_agents.langgraph.scoping import MemoryScope
from zaxy_agents.langgraph.scripted import ScriptedChatModel
from zaxy_agents.langgraph.steps import CaptureStep, CompactionStep


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": ordered[len(ordered) // 2] * 1e3,
        "p95_ms": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1e3,
        "mean_ms": statistics.fmean(samples) * 1e3,
    }


def _seed(memory: MemoryFabric, events: int) -> None:
    drafts = []
    for n in range(events):
        kind = n % 4
        if kind == 0:
            drafts.append(
                {
                    "type": "decision.recorded",
                    "payload": {"decision": f"Use option {n} for area {n % 97}", "topic": f"area {n % 97}"},
                }
            )
        elif kind == 1:
            drafts.append(
                {"type": "task.created", "payload": {"task_id": f"T-{n}", "title": f"Implement component {n}"}}
            )
        elif kind == 2:
            drafts.append(
                {
                    "type": "fact.asserted",
                    "payload": {"subject": f"service {n % 53}", "predicate": "owner", "object": f"team {n}"},
                }
            )
        else:
            drafts.append(
                {
                    "type": "transcript.turn",
                    "payload": {"role": "user", "text": f"Remember that build {n} needs flag --fast-{n}"},
                }
            )
    for start in range(0, len(drafts), 500):
        memory.append_many("project", drafts[start : start + 500])


# ``--breakdown``: where the middleware's turn goes, as thread CPU per part (measured around each call; the parts
# nest: the checkout holds the projection and assemble, assemble holds retrieval, retrieval holds its lanes).
BREAKDOWN = (
    ("checkout (CheckoutStep.run)", "zaxy_agents.langgraph.steps", "CheckoutStep", "run"),
    ("  projection of new events", "zaxy_agents.fabric.projection_ops", "ProjectionService", "project"),
    ("  assemble", "zaxy_agents.fabric.checkout_ops", None, "assemble"),
    ("    retrieval (all lanes)", "zaxy_agents.retrieval.engine", "Retriever", "search"),
    ("      verbatim lane", "zaxy_agents.retrieval.verbatim", "VerbatimIndex", "search"),
    ("      keyword lane index", "zaxy_agents.retrieval.entity_index", "EntityKeywordIndex", "search"),
    ("      graph traversal", "zaxy_agents.retrieval.engine", None, "traverse"),
    ("      personalized PageRank", "zaxy_agents.retrieval.engine", None, "personalized_pagerank"),
    ("    citation check (log re-read)", "zaxy_agents.checkout.assemble", None, "check_cited"),
    ("    citation check (CallReads.check)", "zaxy_agents.eventloom.integrity", "CallReads", "check"),
    ("    packing (fit)", "zaxy_agents.checkout.assemble", None, "fit"),
    ("    stable facts", "zaxy_agents.checkout.assemble", None, "stable_facts"),
    ("    working set", "zaxy_agents.checkout.assemble", None, "build_working_set"),
    ("capture", "zaxy_agents.langgraph.steps", "CaptureStep", "run"),
    ("feedback", "zaxy_agents.langgraph.steps", "FeedbackStep", "run"),
)


def _instrument(spent: dict[str, float]) -> None:
    """Wrap the BREAKDOWN functions so each call adds its thread CPU to ``spent`` (for this process only)."""
    import functools
    import importlib

    for label, module_name, class_name, attribute in BREAKDOWN:
        module = importlib.import_module(module_name)
        owner = getattr(module, class_name, None) if class_name else module
        function = getattr(owner, attribute, None)
        if function is None:  # a part this tree does not have (an A/B against an older or newer tree)
            continue

        def timed(*args: Any, __function: Any = function, __label: str = label, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return __function(*args, **kwargs)
            finally:
                spent[__label] = spent.get(__label, 0.0) + time.thread_time() - started

        setattr(owner, attribute, functools.wraps(function)(timed))


def _checkout_citations(memory: MemoryFabric, session: str) -> list[str]:
    """The citations (session/seq, without the hash) of the session's latest checkout, from its durable record
    (the middleware keeps ``memory_context`` for the run only)."""
    latest: list[str] = []
    for event in memory.replay(session):
        if event.type == "metacognition.checkout":
            latest = event.payload.get("citations", [])
    return [citation.split("#")[0] for citation in latest]


def bench_turns(
    turns: int, seed_events: int, citations: list[list[str]] | None = None, breakdown: bool = False
) -> dict[str, Any]:
    spent: dict[str, float] = {}
    parts: dict[str, list[float]] = {label: [] for label, *_ in BREAKDOWN} if breakdown else {}
    if breakdown:
        _instrument(spent)
    model = ScriptedChatModel(policy=lambda messages: AIMessage("Noted; continuing with the plan."))
    with (
        MemoryFabric.from_path(tempfile.mkdtemp()) as plain_memory,
        MemoryFabric.from_path(tempfile.mkdtemp()) as memory,
    ):
        _seed(memory, seed_events)
        plain = create_agent(model, [], checkpointer=ZaxyCheckpointer(plain_memory))
        remembering = create_agent(
            model,
            [],
            middleware=[ZaxyMemoryMiddleware(memory, scope=["project"])],
            checkpointer=ZaxyCheckpointer(memory),
        )
        samples: dict[str, list[float]] = {"checkpointer only": [], "with ZaxyMemoryMiddleware": []}
        cpu: dict[str, list[float]] = {name: [] for name in samples}
        config = {"configurable": {"thread_id": "bench"}}
        for turn in range(turns + 3):  # the first turns warm up (tiktoken, the projection)
            text = f"Which option did we pick for area {turn % 97}, and who owns service {turn % 53}?"
            for name, agent in (("checkpointer only", plain), ("with ZaxyMemoryMiddleware", remembering)):
                spent.clear()
                t0, c0 = time.perf_counter(), time.process_time()
                agent.invoke({"messages": [HumanMessage(text)]}, config)
                if turn >= 3:
                    samples[name].append(time.perf_counter() - t0)
                    cpu[name].append(time.process_time() - c0)
                    if agent is remembering:
                        for label, values in parts.items():
                            values.append(spent.get(label, 0.0))
                if citations is not None and agent is remembering and turn >= 3:  # outside the timed part
                    citations.append(_checkout_citations(memory, "langgraph.bench"))
    result: dict[str, Any] = {name: _stats(values) for name, values in samples.items()}
    for name, values in cpu.items():  # CPU of the whole process during the turn (all threads)
        result[name]["cpu_p50_ms"] = _stats(values)["p50_ms"]
    base, with_memory = result["checkpointer only"], result["with ZaxyMemoryMiddleware"]
    result["added_p50_ms"] = with_memory["p50_ms"] - base["p50_ms"]
    result["ratio_p50"] = with_memory["p50_ms"] / base["p50_ms"]
    result["added_cpu_p50_ms"] = with_memory["cpu_p50_ms"] - base["cpu_p50_ms"]
    if parts:
        result["breakdown_thread_cpu_p50_ms"] = {label: _stats(values)["p50_ms"] for label, values in parts.items()}
    return result


def _history(messages: int) -> list[BaseMessage]:
    history: list[BaseMessage] = []
    for n in range(messages // 4):
        history.append(HumanMessage(f"Step {n}: check the failing job and fix it. " + "log line " * 60, id=f"h{n}"))
        call = {"name": "run_tests", "args": {"target": f"suite-{n}"}, "id": f"c{n}"}
        history.append(AIMessage("", tool_calls=[call], id=f"a{n}"))
        history.append(ToolMessage("FAILED test_x " * 80, tool_call_id=f"c{n}", name="run_tests", id=f"t{n}"))
        history.append(AIMessage(f"Fixed step {n}. " + "explanation " * 40, id=f"b{n}"))
    return history


def bench_compaction(messages: int, repeats: int = 5) -> dict[str, Any]:
    history = _history(messages)
    count = MessageTokenCounter()
    tokens = count(history)
    max_tokens, keep = tokens // 2, tokens // 8
    zaxy_times, summary_times = [], []
    recovery: dict[str, Any] = {}
    for repeat in range(repeats):
        with MemoryFabric.from_path(tempfile.mkdtemp()) as memory:
            memory.append("langgraph.c", "task.created", {"task_id": "T-1", "title": "Fix the failing job"})
            memory.append("langgraph.c", "decision.recorded", {"decision": "Quarantine flaky tests", "topic": "ci"})
            scope = MemoryScope()
            step = CompactionStep(memory, scope, CaptureStep(memory, scope), max_tokens=max_tokens, keep_tokens=keep)
            config = {"configurable": {"thread_id": "c"}}
            # As in a real run, every message is already in the log (captured turn by turn) and projected.
            step.capture.run(history, config)
            memory.checkout("warm up", session="langgraph.c", max_tokens=200)
            t0 = time.perf_counter()
            update = step.run(history, config)
            zaxy_times.append(time.perf_counter() - t0)
            assert update is not None
            packet = update[1]
            recovery = {
                "tokens_before": tokens,
                "tokens_after": count(update[1:]),
                "recovery_tokens": count([packet]) - 4,
                "recovery_items": packet.text.count("[eventloom://"),
                "messages_after": len(update) - 1,
            }
        middleware = SummarizationMiddleware(
            model=ScriptedChatModel(policy=lambda m: AIMessage("unused")),
            trigger=("tokens", max_tokens),
            keep=("tokens", keep),
            summarizer=lambda selected: "summary",
        )
        t0 = time.perf_counter()
        middleware.before_model({"messages": list(history)}, None)  # type: ignore[arg-type]
        if repeat:
            summary_times.append(time.perf_counter() - t0)
    return {
        "messages": len(history),
        **recovery,
        "zaxy_compaction": _stats(zaxy_times),
        "summarization_mechanics_only": _stats(summary_times),
        "ratio_p50": _stats(zaxy_times)["p50_ms"] / _stats(summary_times)["p50_ms"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--seed-events", type=int, default=2000)
    parser.add_argument("--history", type=int, default=300, help="messages in the compacted history")
    parser.add_argument("--only", choices=["turns", "compaction"])
    parser.add_argument("--citations", type=Path, help="write each measured turn's checkout citations here")
    parser.add_argument(
        "--breakdown", action="store_true", help="also time the middleware's parts (thread CPU p50 per turn)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    if args.only != "compaction":
        cited: list[list[str]] | None = [] if args.citations else None
        report["turns"] = bench_turns(args.turns, args.seed_events, cited, args.breakdown)
        if args.citations:
            args.citations.write_text(json.dumps(cited, indent=0) + "\n")
    if args.only != "turns":
        report["compaction"] = bench_compaction(args.history)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    if "turns" in report:
        turns = report["turns"]
        print(f"per agent turn ({args.turns} turns, {args.seed_events} seeded events in scope):")
        for name in ("checkpointer only", "with ZaxyMemoryMiddleware"):
            s = turns[name]
            print(
                f"  {name:28} p50 {s['p50_ms']:7.1f} ms  p95 {s['p95_ms']:7.1f} ms  CPU p50 {s['cpu_p50_ms']:6.1f} ms"
            )
        print(
            f"  middleware adds p50 {turns['added_p50_ms']:.1f} ms (x{turns['ratio_p50']:.2f}); "
            f"CPU p50 {turns['added_cpu_p50_ms']:.1f} ms"
        )
        for label, value in turns.get("breakdown_thread_cpu_p50_ms", {}).items():
            print(f"    {label:36} thread CPU p50 {value:6.2f} ms")
    if "compaction" not in report:
        return
    c = report["compaction"]
    print(f"compaction of {c['messages']} messages ({c['tokens_before']} tokens -> {c['tokens_after']}):")
    print(f"  zaxy (count, plan, recovery packet, record)   p50 {c['zaxy_compaction']['p50_ms']:7.1f} ms")
    print(f"  SummarizationMiddleware mechanics, no model   p50 {c['summarization_mechanics_only']['p50_ms']:7.1f} ms")
    packet = f"recovery packet {c['recovery_tokens']} tokens, {c['recovery_items']} cited items"
    print(f"  ratio x{c['ratio_p50']:.2f}; {packet}")
    print("  the summarizer would also spend a model call on up to 4,000 input tokens; zaxy spends none")


if __name__ == "__main__":
    main()

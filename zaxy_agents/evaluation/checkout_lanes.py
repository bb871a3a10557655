"""The checkout measurement lanes of seed 004: ``budget`` and ``cache``, each profile beside ``plain``.

- **budget**: recall (the current fact's citation is in the packed prompt) and citation coverage (the share of
  the prompt's citations that resolve against the log) as a function of ``max_tokens`` from 64 to 8,192, plus
  the claims the packet cannot back (``answer_from_memory`` with no citation shown). Passes when no profile ever
  makes an unbacked claim, coverage is 1.0 at every budget, and recall never falls as the budget grows (no cliff).
- **cache**: a long session with appends between checkouts of recurring questions; reports the stable prefix
  (characters, and how often it is byte-identical to the previous checkout's) and a simulated provider prompt
  cache: each prompt is served from cache up to its longest common prefix with any earlier prompt, so the hit
  rate is cached bytes / prompt bytes. Passes when the stable prefix only changes with the facts it holds.

Both are internal lanes on deterministic fixtures (:mod:`.ranking_fixtures`), not external benchmarks.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zaxy_agents.fabric import MemoryFabric

from .ranking_fixtures import PROFILES_COMPARED, service_memory

BUDGETS = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
CACHE_ROUNDS = 24
CACHE_QUESTIONS = 3


@contextmanager
def scratch_fabric(prefix: str) -> Iterator[MemoryFabric]:
    with (
        tempfile.TemporaryDirectory(prefix=f"zaxy-{prefix}-lane-") as scratch,
        MemoryFabric.from_path(Path(scratch) / "loom") as fabric,
    ):
        yield fabric


def lane_report(lane: str, profiles: dict[str, Any], passed: bool, started: float, **extra: Any) -> dict[str, Any]:
    """The shape every ranking lane prints: per-profile figures, ``plain`` first, and the verdict."""
    from zaxy_agents.retrieval.ranking import DEFAULT_RETRIEVAL_PROFILE

    return {
        "lane": lane,
        "internal": True,
        "default_profile": DEFAULT_RETRIEVAL_PROFILE,
        "profiles": profiles,
        "passed": passed,
        "took_s": round(time.perf_counter() - started, 3),
        **extra,
    }


def run_budget_lane(services: int = 16, budgets: tuple[int, ...] = BUDGETS) -> dict[str, Any]:
    started = time.perf_counter()
    profiles: dict[str, Any] = {}
    with scratch_fabric("budget") as fabric:
        memory = service_memory(fabric, services)
        asked_questions = [*memory.questions, *memory.overview]
        for profile in PROFILES_COMPARED:
            curve = []
            for budget in budgets:
                found = coverage_sum = 0.0
                unbacked = 0
                for question in asked_questions:
                    packet = fabric.checkout(
                        question.text, session=memory.session, max_tokens=budget, retrieval_profile=profile
                    )
                    shown = [item.citation for item in packet.provenance]
                    found += sum(1 for citation in question.gold if citation in shown) / len(question.gold)
                    coverage_sum += (
                        sum(1 for item in packet.provenance if item.resolvable) / len(shown) if shown else 1.0
                    )
                    if packet.quality.answerability == "answer_from_memory" and not shown:
                        unbacked += 1
                asked = len(asked_questions)
                curve.append(
                    {
                        "max_tokens": budget,
                        "recall": round(found / asked, 4),
                        "citation_coverage": round(coverage_sum / asked, 4),
                        "unbacked_claims": unbacked,
                    }
                )
            recalls = [point["recall"] for point in curve]
            profiles[profile] = {
                "curve": curve,
                "graceful": all(later >= earlier for earlier, later in itertools.pairwise(recalls)),
                "unbacked_claims": sum(point["unbacked_claims"] for point in curve),
                "min_citation_coverage": min(point["citation_coverage"] for point in curve),
            }
    passed = all(
        result["graceful"] and result["unbacked_claims"] == 0 and result["min_citation_coverage"] == 1.0
        for result in profiles.values()
    )
    return lane_report("budget", profiles, passed, started, questions=len(asked_questions), budgets=list(budgets))


def run_cache_lane(rounds: int = CACHE_ROUNDS, services: int = 12, max_tokens: int = 1024) -> dict[str, Any]:
    started = time.perf_counter()
    profiles: dict[str, Any] = {}
    for profile in PROFILES_COMPARED:
        with scratch_fabric("cache") as fabric:
            memory = service_memory(fabric, services)
            questions = [question.text for question in memory.questions[:CACHE_QUESTIONS]]
            prompts: list[str] = []
            prefixes: list[tuple[str, int]] = []
            identical = unexplained = 0
            fact_rounds: set[int] = set()
            for round_number in range(rounds):
                fabric.append(
                    memory.session,
                    "note.recorded",
                    {"text": f"Step {round_number}: ran the integration suite, {round_number % 3} flaky tests"},
                )
                if round_number % 8 == 7:  # now and then a stable fact changes: the prefix may change with it
                    fabric.append(
                        memory.session,
                        "fact.asserted",
                        {"key": f"release {round_number}", "fact": f"Release train {round_number} is frozen"},
                    )
                    fact_rounds.add(round_number)
                packet = fabric.checkout(
                    questions[round_number % len(questions)],
                    session=memory.session,
                    max_tokens=max_tokens,
                    retrieval_profile=profile,
                )
                digest, chars = packet.diagnostics.stable_prefix_sha256, packet.diagnostics.stable_prefix_chars
                if prefixes:
                    if digest == prefixes[-1][0]:
                        identical += 1
                    elif round_number not in fact_rounds:
                        unexplained += 1
                prefixes.append((digest, chars))
                prompts.append(packet.prompt)
            cached, total = _simulated_cache(prompts)
            comparisons = rounds - 1
            profiles[profile] = {
                "checkouts": rounds,
                "stable_prefix_chars_mean": round(statistics.fmean(chars for _, chars in prefixes), 1),
                "prefix_identical_rate": round(identical / comparisons, 4),
                "prefix_changes_without_a_fact_change": unexplained,
                "simulated_cache_hit_rate": round(cached / total, 4) if total else 0.0,
                "prompt_bytes_mean": round(total / rounds, 1),
            }
    passed = all(result["prefix_changes_without_a_fact_change"] == 0 for result in profiles.values())
    return lane_report("cache", profiles, passed, started, rounds=rounds, max_tokens=max_tokens)


def _simulated_cache(prompts: list[str]) -> tuple[int, int]:
    """Bytes a prefix cache would serve: each prompt's longest common prefix with any earlier prompt."""
    cached = total = 0
    seen: list[bytes] = []
    for prompt in prompts:
        data = prompt.encode()
        total += len(data)
        cached += max((_common_prefix(data, earlier) for earlier in seen), default=0)
        seen.append(data)
    return cached, total


def _common_prefix(left: bytes, right: bytes) -> int:
    limit = min(len(left), len(right))
    index = 0
    while index < limit and left[index] == right[index]:
        index += 1
    return index

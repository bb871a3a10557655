"""The LangGraph surfaces on the backend: the official checkpointer conformance suite (every capability) and the
store's differential behaviour against InMemoryStore."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator

from langgraph.checkpoint.conformance import checkpointer_test
from langgraph.checkpoint.conformance import validate as validate_checkpointer

from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore

from .backend_checks import fabric_on
from .core import Check, Subject, expect
from .store_differential import check_sequence, random_sequence

CHECKPOINTER_CAPABILITIES = {
    "put", "put_writes", "get_tuple", "list", "delete_thread", "delete_for_runs", "copy_thread", "prune",
}  # fmt: skip
CHECKPOINTER_TESTS = 81  # langgraph-checkpoint-conformance 0.0.2, all capabilities
STORE_SEQUENCES = 12


def checkpointer_conformance(subject: Subject) -> None:
    """The official suite; each capability suite gets its own session prefix on one location of the backend."""
    suites = itertools.count()
    with subject.fresh() as harness:

        @checkpointer_test(name=f"ZaxyCheckpointer on {harness.name}")
        async def saver() -> AsyncIterator[ZaxyCheckpointer]:
            with fabric_on(harness) as fabric, ZaxyCheckpointer(fabric, session_prefix=f"c{next(suites)}") as made:
                yield made

        report = asyncio.run(validate_checkpointer(saver))
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    expect(not failures and report.passed_all(), f"checkpointer conformance failures: {failures}")
    detected = {name for name, result in report.results.items() if result.detected}
    expect(detected == CHECKPOINTER_CAPABILITIES, f"capabilities detected: {sorted(detected)}")
    passed = sum(result.tests_passed for result in report.results.values())
    expect(passed == CHECKPOINTER_TESTS, f"{passed} of {CHECKPOINTER_TESTS} conformance tests passed")


def store_differential(subject: Subject) -> None:
    rng = random.Random(2024)
    with subject.fresh() as harness, fabric_on(harness) as fabric:
        for number in range(STORE_SEQUENCES):
            with ZaxyStore(fabric, session=f"store-{number}") as store:
                check_sequence(store, random_sequence(rng))


CHECKS = (
    Check("langgraph.checkpointer_conformance", checkpointer_conformance),
    Check("langgraph.store_differential", store_differential),
)

"""The official langgraph-checkpoint-conformance suite (0.0.2), every capability including the extended ones,
on the embedded backend and on PostgreSQL."""

from __future__ import annotations

import itertools
import os
import tempfile

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate

from tests.backends import postgres_schema
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer

CAPABILITIES = {"put", "put_writes", "get_tuple", "list", "delete_thread", "delete_for_runs", "copy_thread", "prune"}
_RUN = itertools.count()


@checkpointer_test(name="ZaxyCheckpointer")
async def zaxy_checkpointer():
    with tempfile.TemporaryDirectory() as root, ZaxyCheckpointer.from_path(root) as saver:
        yield saver


@checkpointer_test(name="ZaxyCheckpointer on PostgreSQL")
async def zaxy_checkpointer_on_postgres():
    """One schema for the whole run; each test gets its own session prefix, so tests never see each other's
    threads (the suite reuses thread ids) while every saver talks to the same server."""
    with tempfile.TemporaryDirectory() as root:
        fabric = MemoryFabric.from_path(root, backend=os.environ["ZAXY_BACKEND"])
        with ZaxyCheckpointer(fabric, session_prefix=f"conf{next(_RUN)}") as saver:
            try:
                yield saver
            finally:
                fabric.close()


def _assert_full_pass(report) -> None:
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert failures == {}
    assert report.passed_all()
    assert {name for name, result in report.results.items() if result.detected} == CAPABILITIES
    assert sum(result.tests_passed for result in report.results.values()) == 81


async def test_conformance_suite_passes_in_full() -> None:
    _assert_full_pass(await validate(zaxy_checkpointer))


async def test_conformance_suite_passes_in_full_on_postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    with postgres_schema(monkeypatch, select_backend=True):
        _assert_full_pass(await validate(zaxy_checkpointer_on_postgres))

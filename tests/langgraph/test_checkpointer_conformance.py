"""The official langgraph-checkpoint-conformance suite (0.0.2), every capability including the extended ones."""

from __future__ import annotations

import tempfile

from langgraph.checkpoint.conformance import checkpointer_test, validate

from zaxy_agents.langgraph import ZaxyCheckpointer


@checkpointer_test(name="ZaxyCheckpointer")
async def zaxy_checkpointer():
    with tempfile.TemporaryDirectory() as root, ZaxyCheckpointer.from_path(root) as saver:
        yield saver


async def test_conformance_suite_passes_in_full() -> None:
    report = await validate(zaxy_checkpointer)
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert failures == {}
    assert report.passed_all()
    assert {name for name, result in report.results.items() if result.detected} == {
        "put",
        "put_writes",
        "get_tuple",
        "list",
        "delete_thread",
        "delete_for_runs",
        "copy_thread",
        "prune",
    }
    assert sum(result.tests_passed for result in report.results.values()) == 81

"""The baselines two benchmarks build by swapping a part of the checkout must swap a part the checkout uses.

``read_verification_bench.py`` replaces the ``CallReads`` that ``checkout.assemble`` builds its reads with, and
``metacognition_bench.py`` leaves the ``metacognition`` checkout extension out of the fabric's features. When the
code moves (as it did: both once patched names that no longer existed, so one baseline silently measured the
verified path and the other crashed), these checks fail instead of the benchmarks printing a wrong ratio.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import read_verification_bench
from zaxy_agents.checkout import assemble
from zaxy_agents.eventloom.integrity import CallReads
from zaxy_agents.fabric import MemoryFabric


def test_the_unverified_baseline_replaces_the_reads_checkout_builds(tmp_path: Path) -> None:
    assert assemble.CallReads is CallReads
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        fabric.append("s", "fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-new"})
        fabric.project()
        (log_file,) = (tmp_path / "loom").rglob("*.jsonl")
        log_file.write_bytes(log_file.read_bytes().replace(b"db-new", b"db-bad"))
        verified = fabric.checkout("what is the billing db host?", session="s", max_tokens=800)
        try:
            assemble.CallReads = read_verification_bench._UnverifiedReads  # type: ignore[misc]
            unverified = fabric.checkout("what is the billing db host?", session="s", max_tokens=800)
        finally:
            assemble.CallReads = CallReads  # type: ignore[misc]
    # the verified checkout refuses the edited line; the baseline (no check) serves what it read
    assert "db-bad" not in verified.prompt
    assert verified.prompt != unverified.prompt


def test_the_metacognition_extension_is_one_the_fabric_runs(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        names = [name for name, _ in fabric.features.checkout_extensions]
    assert "metacognition" in names

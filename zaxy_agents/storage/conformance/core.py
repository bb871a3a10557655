"""Checks, results and the capability report (the pieces :func:`zaxy_agents.storage.conformance.validate` uses)."""

from __future__ import annotations

import traceback
import unittest
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zaxy_agents.eventloom.protocol import EventLog, LogCapability

from ..protocols import Capability, StorageBackend
from .harness import BackendHarness, MemoryHarness

# What validate() takes: a callable returning a context manager that yields a backend (or a harness) on a fresh,
# empty location, and cleans the location up on exit. Called once per check.
BackendFactory = Callable[[], AbstractContextManager[StorageBackend | BackendHarness]]


class Subject:
    """What a check works on: fresh locations of the backend under test, and of the reference backend."""

    def __init__(self, factory: BackendFactory, scratch: Path) -> None:
        self._factory = factory
        self.scratch = scratch

    @contextmanager
    def fresh(self) -> Iterator[BackendHarness]:
        with self._factory() as made:
            yield made if isinstance(made, BackendHarness) else BackendHarness(made)

    @contextmanager
    def reference(self) -> Iterator[BackendHarness]:
        """The in-memory reference backend: the contract in the fewest lines, compared with in every check."""
        harness = MemoryHarness(self.scratch)
        try:
            yield harness
        finally:
            harness.close()


Run = Callable[[Subject], None]


@dataclass(frozen=True)
class Check:
    """One contract check. ``capability``: the optional capability it exercises (None: every backend)."""

    name: str
    run: Run
    capability: Capability | LogCapability | None = None
    description: str = ""


@dataclass
class CheckResult:
    name: str
    capability: str | None
    status: str  # passed | failed | skipped
    detail: str = ""


@dataclass
class ConformanceReport:
    """Per-check results plus which optional capabilities the backend declares."""

    backend: str
    declared: list[str] = field(default_factory=list)
    results: dict[str, CheckResult] = field(default_factory=dict)

    def failures(self) -> dict[str, str]:
        return {name: result.detail for name, result in self.results.items() if result.status == "failed"}

    def passed_all(self) -> bool:
        return not self.failures()

    def summary(self) -> str:
        counts = {
            status: sum(r.status == status for r in self.results.values()) for status in ("passed", "failed", "skipped")
        }
        lines = [f"{self.backend}: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"]
        lines.append(f"  capabilities: {', '.join(self.declared) or '(base contract only)'}")
        for name, detail in self.failures().items():  # the last line of the traceback says what went wrong
            lines.append(f"  FAILED {name}: {detail.strip().splitlines()[-1] if detail else ''}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "declared": self.declared,
            "passed_all": self.passed_all(),
            "results": {name: vars(result) for name, result in self.results.items()},
        }


def describe(subject: Subject) -> tuple[str, set[str]]:
    """``(backend name, declared capabilities of the backend and its log)``."""
    with subject.fresh() as harness, opened(harness) as log:
        backend = harness.backend()
        return backend.name, {str(c) for c in backend.capabilities} | {str(c) for c in log.capabilities}


def run_check(check: Check, subject: Subject, declared: set[str]) -> CheckResult:
    capability = None if check.capability is None else str(check.capability)
    if capability is not None and capability not in declared:
        return CheckResult(check.name, capability, "skipped", f"the backend does not declare {capability}")
    try:
        check.run(subject)
    except unittest.SkipTest as skip:
        return CheckResult(check.name, capability, "skipped", str(skip))
    except Exception:
        return CheckResult(check.name, capability, "failed", traceback.format_exc(limit=6))
    return CheckResult(check.name, capability, "passed")


def overridden(instance: object, base: type, method: str) -> bool:
    """Whether ``instance``'s class overrides ``base.method`` (how optional capabilities are detected)."""
    return getattr(type(instance), method) is not getattr(base, method)


def fail(message: str) -> None:
    raise AssertionError(message)


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


@contextmanager
def opened(harness: BackendHarness) -> Iterator[EventLog]:
    """A backend object on the harness's location and its log, both closed afterwards."""
    backend = harness.backend()
    log = backend.open_log()
    try:
        yield log
    finally:
        log.close()
        backend.close()

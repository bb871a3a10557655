"""The storage conformance kit: the same contract checks for every backend, built-in or third-party.

Give :func:`validate` a factory that yields a backend object (or a :class:`BackendHarness`) on a fresh, empty
location and cleans it up afterwards; it runs every check and returns a :class:`ConformanceReport` saying what
passed, what failed (with the traceback) and which optional capabilities the backend declares::

    from contextlib import contextmanager
    from zaxy_agents.storage.conformance import validate

    @contextmanager
    def my_backend():
        with tempfile.TemporaryDirectory() as root:
            yield MyBackend(ZaxySettings.resolve(root, backend="mine://" + root))

    report = validate(my_backend)
    assert report.passed_all(), report.summary()

Checks compare the backend with the in-memory reference backend on the same log (graph dump, digests, query
answers), exercise each declared capability, run the whole fabric on it, and run LangGraph's official
checkpointer conformance suite and the store's differential test against InMemoryStore. The pytest plugin
(:mod:`.pytest_plugin`) turns the same checks into one test each.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from . import backend_checks, langgraph_checks, log_checks, order_checks
from .core import BackendFactory, Check, CheckResult, ConformanceReport, Subject, describe, run_check
from .harness import BackendHarness, NotSupported

CHECKS: tuple[Check, ...] = (*log_checks.CHECKS, *backend_checks.CHECKS, *order_checks.CHECKS, *langgraph_checks.CHECKS)

__all__ = [
    "CHECKS",
    "BackendFactory",
    "BackendHarness",
    "Check",
    "CheckResult",
    "ConformanceReport",
    "NotSupported",
    "validate",
]


def validate(factory: BackendFactory, *, checks: tuple[Check, ...] = CHECKS) -> ConformanceReport:
    """Run ``checks`` (default: all) on fresh locations from ``factory``; never raises for a failing check."""
    with tempfile.TemporaryDirectory(prefix="zaxy-conformance-") as scratch:
        subject = Subject(factory, Path(scratch))
        name, declared = describe(subject)
        report = ConformanceReport(backend=name, declared=sorted(declared))
        for check in checks:
            report.results[check.name] = run_check(check, subject, declared)
    return report

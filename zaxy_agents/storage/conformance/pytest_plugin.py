"""pytest plugin: every conformance check as a test, on every built-in backend and on yours.

Add ``pytest_plugins = ["zaxy_agents.storage.conformance.pytest_plugin"]`` to a ``conftest.py``. Then:

* the ``zaxy_harness`` fixture yields a fresh harness per test for each name in ``zaxy_backends`` (default
  ``jsonl``, ``postgresql``, ``memory``; PostgreSQL uses ``ZAXY_TEST_POSTGRES_DSN`` or starts a throwaway
  server, else skips saying how to get one);
* importing ``test_zaxy_conformance`` into a test module runs each check of the kit as a test on each backend;
  to test your own backend, override the ``zaxy_backend_factory`` fixture (and ``zaxy_backend_name``) with a
  factory as :func:`~zaxy_agents.storage.conformance.validate` takes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from . import CHECKS, Check
from .core import BackendFactory, Subject, describe, run_check
from .harness import BackendHarness, harness_for

BUILTIN = ("jsonl", "postgresql", "memory")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "zaxy_check" in metafunc.fixturenames:
        metafunc.parametrize("zaxy_check", CHECKS, ids=[check.name for check in CHECKS])


@pytest.fixture(params=BUILTIN)
def zaxy_backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def zaxy_harness(zaxy_backend_name: str, tmp_path: Path) -> Iterator[BackendHarness]:
    """A fresh location of each built-in backend (a skip, with the reason, when one cannot be had)."""
    with harness_for(zaxy_backend_name, tmp_path) as harness:
        yield harness


@pytest.fixture
def zaxy_backend_factory(zaxy_backend_name: str, tmp_path_factory: pytest.TempPathFactory) -> BackendFactory:
    """Override this fixture to run the kit on another backend."""

    @contextmanager
    def factory() -> Iterator[BackendHarness]:
        with harness_for(zaxy_backend_name, tmp_path_factory.mktemp(zaxy_backend_name)) as harness:
            yield harness

    return factory


def test_zaxy_conformance(zaxy_check: Check, zaxy_backend_factory: BackendFactory, tmp_path: Path) -> None:
    subject = Subject(zaxy_backend_factory, tmp_path)
    _name, declared = describe(subject)
    result = run_check(zaxy_check, subject, declared)
    if result.status == "skipped":
        pytest.skip(result.detail)
    assert result.status == "passed", result.detail

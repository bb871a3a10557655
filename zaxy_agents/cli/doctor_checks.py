"""The order `zaxy doctor` runs its checks in, and the run itself (a crashing check is a failed check;
`--fix` runs the safe repairs, then the repaired checks again)."""

from __future__ import annotations

from collections.abc import Callable

from .doctor_base import FAIL, WARN, Check, DoctorContext, _failed_check
from .doctor_memory_checks import check_derived_files, check_log_integrity, check_projection, check_spool
from .doctor_setup_checks import (
    check_disk,
    check_embedder,
    check_hooks,
    check_mcp_profile,
    check_owner,
    check_vector_cache,
)

__all__ = ["Check", "DoctorContext", "run_checks"]


CHECKS: list[Callable[[DoctorContext], Check | list[Check]]] = [
    check_log_integrity,
    check_spool,
    check_projection,
    check_derived_files,
    check_embedder,
    check_vector_cache,
    check_mcp_profile,
    check_hooks,
    check_owner,
    check_disk,
]


def run_checks(ctx: DoctorContext, *, fix: bool = False) -> list[Check]:
    """Every check in order (a crashing check is a failed check); with ``fix``, the safe repairs run and the
    repaired checks are run again."""
    results: list[Check] = []
    for check in CHECKS:
        try:
            found = check(ctx)
        except Exception as exc:
            found = _failed_check(check.__name__.removeprefix("check_").replace("_", " "), exc, "Report this.")
        results.extend(found if isinstance(found, list) else [found])
    if not fix:
        return results
    for result in results:
        if result.repair is not None and result.status in (WARN, FAIL):
            try:
                result.repaired = result.repair()
            except Exception as exc:
                result.repaired = f"repair failed: {type(exc).__name__}: {exc}"
    return results

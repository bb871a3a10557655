"""`zaxy benchmark causal | consolidation | metacognition | coordinate | synthesis | skills`: the internal guardrail
lanes.

Each builds deterministic fixtures in a scratch Eventloom through the real engine, prints a summary and exits
1 when any metric is below 1.0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from rich.table import Table

from .common import EXIT_CHECK_FAILED, JsonFlag, console, emit_json, handled


def register(benchmark_app: typer.Typer) -> None:
    benchmark_app.command("causal")(causal_command)
    benchmark_app.command("consolidation")(consolidation_command)
    benchmark_app.command("coordinate")(coordinate_command)
    benchmark_app.command("metacognition")(metacognition_command)
    benchmark_app.command("synthesis")(synthesis_command)
    benchmark_app.command("skills")(skills_command)


def causal_command(json_output: JsonFlag = False) -> None:
    """Internal lane: predecessor/successor hits, relation match, citation coverage, authority boundary,
    stale distractor rejection."""
    from zaxy_agents.evaluation.causal_lane import run_causal_lane

    run_lane(run_causal_lane, json_output)


def consolidation_command(json_output: JsonFlag = False) -> None:
    """Internal lane: type match, source-event fidelity, determinism, authority boundary, review gate."""
    from zaxy_agents.evaluation.consolidation_lane import run_consolidation_lane

    run_lane(run_consolidation_lane, json_output)


def coordinate_command(json_output: JsonFlag = False) -> None:
    """Internal lane: Coordinate's authority rules refused on write, forged events ignored on read, accepted
    state exactly the promoted findings."""
    from zaxy_agents.evaluation.coordinate_lane import run_coordinate_lane

    run_lane(run_coordinate_lane, json_output)


def metacognition_command(json_output: JsonFlag = False) -> None:
    """Internal lane: known-unknown guardrail, recall boundary, conflict clusters, append-only trajectories,
    re-verification requests, contract gate."""
    from zaxy_agents.evaluation.metacognition_lane import run_metacognition_lane

    run_lane(run_metacognition_lane, json_output)


def synthesis_command(json_output: JsonFlag = False) -> None:
    """Internal lane: answer candidates composed from cited rows, tampered checkouts refused, artifacts recorded
    once and never recalled or promoted."""
    from zaxy_agents.evaluation.synthesis_lane import run_synthesis_lane

    run_lane(run_synthesis_lane, json_output)


def skills_command(json_output: JsonFlag = False) -> None:
    """Internal lane: procedures classified applicable / diagnostic / excluded, excluded ones never served, accepted
    procedures only proposed as skills, analytics."""
    from zaxy_agents.evaluation.skills_lane import run_skills_lane

    run_lane(run_skills_lane, json_output)


def run_lane(
    lane: Callable[[], dict[str, Any]], json_output: bool, render: Callable[[dict[str, Any]], None] | None = None
) -> None:
    """Run a lane: its report as JSON or rendered (``render``, the checks table by default); exit 1 below the bar."""
    with handled(json_output):
        report = lane()
    if json_output:
        emit_json(report)
    else:
        (render or _checks_table)(report)
    if not report["passed"]:
        raise typer.Exit(EXIT_CHECK_FAILED)


def _checks_table(report: dict[str, Any]) -> None:
    table = Table(title=f"{report['lane']} lane (internal fixtures, {report['took_s']} s)")
    table.add_column("metric")
    table.add_column("score")
    table.add_column("checks")
    for name, value in report["metrics"].items():
        checks = report["checks"][name]
        style = "" if value == 1.0 else "[red]"
        table.add_row(name, f"{style}{value:.4f}", f"{checks['passed']}/{checks['total']}")
    console.print(table)
    for failure in report["failures"]:
        console.print(f"[red]failed[/] {failure['metric']}: {failure['check']}")
    console.print("[green]passed[/]" if report["passed"] else "[red]below 1.0[/]")

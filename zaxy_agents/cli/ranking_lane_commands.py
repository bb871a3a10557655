"""`zaxy benchmark budget | cache | forgetting | fok | ppr | gate | cues`: the measurement lanes behind the retrieval
profiles (seed 004). Each runs deterministic fixtures offline through the real engine, reports every retrieval
profile with ``plain`` beside it, and exits 1 when the lane's bar is not met.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from .common import JsonFlag, console
from .lane_commands import run_lane


def register(benchmark_app: typer.Typer) -> None:
    benchmark_app.command("budget")(budget_command)
    benchmark_app.command("cache")(cache_command)
    benchmark_app.command("forgetting")(forgetting_command)
    benchmark_app.command("fok")(fok_command)
    benchmark_app.command("ppr")(ppr_command)
    benchmark_app.command("gate")(gate_command)
    benchmark_app.command("cues")(cues_command)


Size = Annotated[int, typer.Option("--size", min=2, max=100, help="Fixture size (services or projects).")]


def budget_command(size: Size = 16, json_output: JsonFlag = False) -> None:
    """Recall, citation coverage and unbacked claims of checkout vs max_tokens (64 to 8,192)."""
    from zaxy_agents.evaluation.checkout_lanes import run_budget_lane

    _run(lambda: run_budget_lane(size), json_output)


def cache_command(
    rounds: Annotated[int, typer.Option("--rounds", min=2, max=500, help="Checkouts in the session.")] = 24,
    json_output: JsonFlag = False,
) -> None:
    """Stable-prefix bytes and a simulated prompt-cache hit rate over a long session with appends between."""
    from zaxy_agents.evaluation.checkout_lanes import run_cache_lane

    _run(lambda: run_cache_lane(rounds), json_output)


def forgetting_command(size: Size = 16, json_output: JsonFlag = False) -> None:
    """Explicit-query recall with the attenuation floor on, attenuated labels, exemptions and restore."""
    from zaxy_agents.evaluation.forgetting_lane import run_forgetting_lane

    _run(lambda: run_forgetting_lane(size), json_output)


def fok_command(size: Size = 16, json_output: JsonFlag = False) -> None:
    """Brier score of memory_feeling_of_knowing against checkout outcomes, vs a base-rate predictor."""
    from zaxy_agents.evaluation.ranking_lanes import run_fok_lane

    _run(lambda: run_fok_lane(size), json_output)


def ppr_command(
    size: Size = 30,
    locomo: Annotated[
        Path | None, typer.Option("--locomo", help="Also score LoCoMo categories (a locomo10-format JSON file).")
    ] = None,
    conversations: Annotated[int, typer.Option("--conversations", min=1, help="LoCoMo conversations to use.")] = 1,
    json_output: JsonFlag = False,
) -> None:
    """Multi-hop lift and single-hop regression of personalized PageRank (graph-shaped set, LoCoMo optional)."""
    from zaxy_agents.evaluation.ranking_lanes import run_ppr_lane

    _run(lambda: run_ppr_lane(size, locomo, conversations), json_output)


def gate_command(size: Size = 16, json_output: JsonFlag = False) -> None:
    """Share of appends the encoding gate tags redundant, tag accuracy, and recall with the gate on vs off."""
    from zaxy_agents.evaluation.gate_lane import run_gate_lane

    _run(lambda: run_gate_lane(size), json_output)


def cues_command(
    workspaces: Annotated[int, typer.Option("--workspaces", min=2, max=40, help="Repositories sharing topics.")] = 6,
    services: Annotated[int, typer.Option("--services", min=2, max=60, help="Topics (services) per repository.")] = 10,
    json_output: JsonFlag = False,
) -> None:
    """Recall with and without the caller's context cues: where only the cue tells memories apart, where the
    answer has no cues, and where the words name another workspace than the cue."""
    from zaxy_agents.evaluation.cue_lane import run_cue_lane

    _run(lambda: run_cue_lane(workspaces, services), json_output)


def _run(lane: Callable[[], dict[str, Any]], json_output: bool) -> None:
    run_lane(lane, json_output, _table)


def _table(report: dict[str, Any]) -> None:
    """One row per metric, one column per profile (``plain`` first); curves are shown point by point."""
    profiles = report["profiles"]
    table = Table(title=f"{report['lane']} lane (internal fixtures, default profile {report['default_profile']})")
    table.add_column("metric", overflow="fold", min_width=30)
    for name in profiles:
        table.add_column(name)
    for metric, values in _rows(profiles).items():
        table.add_row(metric, *values)
    console.print(table)
    console.print(f"[green]passed[/] in {report['took_s']} s" if report["passed"] else "[red]bar not met[/]")


def _rows(profiles: dict[str, Any]) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    names = list(profiles)
    for column, name in enumerate(names):
        for metric, value in _flatten(profiles[name]):
            rows.setdefault(metric, [""] * len(names))[column] = str(value)
    return rows


def _flatten(figures: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in figures.items():
        if key == "curve":
            for point in value:
                budget = point["max_tokens"]
                out += [(f"{metric} @{budget}", v) for metric, v in point.items() if metric != "max_tokens"]
        elif isinstance(value, dict):
            out += _flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out

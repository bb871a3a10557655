"""`zaxy benchmark locomo`: evidence retrieval on LoCoMo-format data through the real memory engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from zaxy_agents.errors import InvalidRequestError, NotFoundError

from .common import JsonFlag, console, emit_json, handled

benchmark_app = typer.Typer(
    name="benchmark", help="Benchmarks that drive the real engine end to end.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    benchmark_app.command("locomo")(locomo_command)
    app.add_typer(benchmark_app)


def _parse_ks(raw: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(part) for part in raw.split(",") if part.strip()}))
    except ValueError as exc:
        raise InvalidRequestError(
            f"--k {raw!r} is not a comma-separated list of integers", field="--k", remediation="Use e.g. --k 5,10"
        ) from exc
    if not ks or ks[0] < 1 or ks[-1] > 100:
        raise InvalidRequestError(
            f"--k {raw!r} must hold integers between 1 and 100", field="--k", remediation="Use e.g. --k 5,10"
        )
    return ks


def locomo_command(
    dataset: Annotated[Path, typer.Option("--dataset", help="LoCoMo-format JSON file.")],
    k: Annotated[str, typer.Option("--k", help="Cut-offs, comma separated.")] = "5,10",
    profile: Annotated[str, typer.Option("--profile", help="Retrieval profile.")] = "balanced",
    output: Annotated[Path | None, typer.Option("--output", help="Write report.json and recall.png here.")] = None,
    json_output: JsonFlag = False,
) -> None:
    """Ingest each conversation as memory, ask every question, score evidence recall vs. two BM25 baselines."""
    from zaxy_agents.evaluation.locomo import run_locomo, write_chart

    with handled(json_output):
        ks = _parse_ks(k)
        if not dataset.is_file():
            raise NotFoundError(  # a missing input file is "not found" (3) everywhere, like `eventloom import`
                f"dataset {dataset} does not exist",
                field="--dataset",
                remediation="Pass the path of a LoCoMo-format JSON file.",
            )
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True, disable=json_output) as bar:
            task = bar.add_task("loading", total=None)
            report = run_locomo(
                dataset,
                ks=ks,
                profile=profile,
                progress=lambda label, done, total: bar.update(task, description=label, completed=done, total=total),
            )
        if output is not None:
            output.mkdir(parents=True, exist_ok=True)
            (output / "report.json").write_text(json.dumps(report, indent=2))
            try:
                report["chart"] = str(write_chart(report, output / "recall.png", k=ks[-1]))
            except ImportError:
                report["chart"] = None
                report.setdefault("warnings", []).append(
                    "matplotlib not installed: no chart (pip install 'zaxy-agents[bench]')"
                )
            (output / "report.json").write_text(json.dumps(report, indent=2))
        if json_output:
            emit_json(report)
            return
        _render(report, ks)


def _render(report: dict, ks: tuple[int, ...]) -> None:
    combined = report["categories_1_4"]
    baselines = list(combined.get("baselines", {"bm25_plain": combined["baseline"]}))
    short = {"bm25_plain": "BM25", "bm25_stemmed": "BM25+stem"}
    table = Table(title=f"LoCoMo evidence retrieval ({report['questions']} questions, profile {report['profile']})")
    table.add_column("category")
    for k in ks:
        table.add_column(f"R@{k} ours")
        for name in baselines:
            table.add_column(f"R@{k} {short.get(name, name)}")
    rows = [(name, values) for name, values in report["per_category"].items()]
    rows.append(("1-4 combined", combined))
    for name, values in rows:
        cells = []
        for k in ks:
            cells.append(f"{values['ours'].get(f'recall@{k}', 0):.3f}")
            for baseline in baselines:
                summary = values.get("baselines", {}).get(baseline, values["baseline"])
                cells.append(f"{summary.get(f'recall@{k}', 0):.3f}")
        table.add_row(name, *cells)
    console.print(table)
    latency, ingest, cpu = report["latency_ms"], report["ingest"], report.get("query_cpu_ms", {})
    console.print(
        f"query latency p50 {latency['p50']} ms, p95 {latency['p95']} ms, p99 {latency['p99']} ms "
        f"(CPU time p50 {cpu.get('p50')} ms, p95 {cpu.get('p95')} ms); "
        f"ingest {ingest['turns_per_s']} turns/s, "
        f"{ingest.get('turns_per_s_with_graph_commit')} turns/s with the graph commit "
        f"(per CPU-second: {ingest.get('turns_per_cpu_s')} / {ingest.get('turns_per_cpu_s_with_graph_commit')})"
    )
    ours = combined["ours"]
    console.print(
        "session-level recall (the sitting of a gold turn among the top k's sittings; what peers publish): "
        + ", ".join(f"R@{k} {ours.get(f'session_recall@{k}', 0):.3f}" for k in ks)
    )
    for name, ratios in combined.get("ratio_vs_baselines", {"bm25_plain": combined["ratio_vs_baseline"]}).items():
        console.print(f"ratio vs {short.get(name, name)}: {ratios}")
    if report["evidence"]:
        console.print(f"evidence handling: {report['evidence']}")
    if report.get("chart"):
        console.print(f"chart: {report['chart']}")

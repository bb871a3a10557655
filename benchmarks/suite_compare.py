"""The existing benchmark suite, this tree against another (``--before``), in one run and one table (issue 24).

Why: issue 24 asks for "no regression elsewhere: the existing benchmark suite before/after in one table". Each
benchmark script already prints its figures as JSON (``--json``); this runs a quick size of each, from each tree's
own copy of the script with that tree's package first on the path, alternating the trees run by run, and prints
every headline figure (latencies, rates, sizes) side by side with ``after / before``. The baselines a script
measures beside ours (SqliteStore, InMemorySaver, FTS5, raw ``fdatasync``, ``python -c pass``...) are the same code
in both trees, so their median after / before timing ratio is how much the machine drifted between the two runs
(``baseline drift``); each of our figures is also given against that drift (``adjusted``). One of ours whose
adjusted ratio moved the wrong way by more than ``--flag`` (default 20 %) is marked, by the direction its name
implies (``*_ms``, ``*_s``, sizes: lower is better; ``*per_s``, rates, recall: higher is better).

Usage: python benchmarks/suite_compare.py --before /path/to/other/tree [--runs 1] [--only a,b] [--json]
       python benchmarks/suite_compare.py --table saved.json

Wall-clock figures on a shared 2-core machine move 10-30 % between runs; read a single flagged row as a prompt to
re-run that benchmark (``--only name --runs 3``), not as a verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# name -> (script, quick arguments): sizes small enough that the whole suite runs in minutes per tree on 2 cores.
SUITE: dict[str, tuple[str, list[str]]] = {
    "eventloom": ("eventloom_bench.py", ["--appends", "1000", "--replay", "20000"]),
    "checkout": ("checkout_bench.py", ["--sizes", "1000,10000", "--questions", "100"]),
    "read_verification": ("read_verification_bench.py", ["--sizes", "1000", "--questions", "100"]),
    "langgraph": (
        "langgraph_bench.py",
        ["--items", "2000", "--turns", "100", "--puts", "100", "--short-threads", "100"],
    ),
    "langgraph_open": (
        "langgraph_open_bench.py",
        ["--items", "10000", "--checkpoints", "1000", "--threads", "300", "--repeats", "3"],
    ),
    "agent_memory": ("agent_memory_bench.py", ["--seed-events", "2000", "--turns", "40"]),
    "turn_projection": ("turn_projection_bench.py", ["--turns", "100", "--seed-events", "2000"]),
    "mcp": ("mcp_bench.py", ["--events", "1000", "--calls", "30"]),
    "hooks": ("hook_bench.py", ["--runs", "20", "--log-events", "2000"]),
    "redaction": ("redaction_bench.py", ["--rounds", "100", "--appends", "1000"]),
    "erase": ("erase_bench.py", ["--sizes", "2000", "--repeats", "2"]),
    "citation_reread": ("citation_reread_bench.py", []),
    "projection": ("projection_bench.py", ["--events", "10000", "--one-by-one", "100"]),
    "cognitive": ("cognitive_bench.py", ["--events", "2000", "--queries", "100"]),
    "metacognition": ("metacognition_bench.py", ["--events", "2000", "--queries", "50", "--requests", "50"]),
    "synthesis_skills": ("synthesis_skills_bench.py", ["--events", "2000", "--queries", "30"]),
}

RATE = re.compile(r"(per_s|per_cpu_s|per_second|/s|throughput|speedup|x_faster)")
QUALITY = re.compile(r"(recall|hits?)")
TIMING = re.compile(r"(^|_)(ms|s|seconds|latency|p50|p95|p99|mean|max)($|_)")
SIZE = re.compile(r"(^|_)(mb|bytes|size|rss)($|_)")
BASELINE = re.compile(r"(baseline|sqlite|inmemory|in_memory|fts5|raw_f|postgressaver|python -c pass|--help)", re.I)
HEADLINE = re.compile(r"(ms|_s$|seconds|per_s|per_cpu|/s|rate|recall|p50|p95|p99|mb|bytes|rss|speedup)", re.I)


def tree_python_env(tree: Path) -> dict[str, str]:
    """The environment that makes ``tree``'s package the one imported (ahead of any installed copy)."""
    return {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore", "PYTHONDONTWRITEBYTECODE": "1"}


def check_tree(tree: Path) -> None:
    """Fail early, and clearly, if ``tree``'s package is not the one its runs would import."""
    probe = subprocess.run(
        [sys.executable, "-c", "import zaxy_agents, sys; sys.stdout.write(zaxy_agents.__file__)"],
        capture_output=True,
        text=True,
        cwd=str(tree),
        env=tree_python_env(tree),
        timeout=120,
    )
    where = Path(probe.stdout.strip() or "?").resolve()
    if probe.returncode != 0 or tree.resolve() not in where.parents:
        raise SystemExit(f"suite_compare: {tree} does not import its own zaxy_agents (got {where}): {probe.stderr}")


def last_json(text: str) -> Any:
    """The last JSON document a script printed (progress lines may come before it)."""
    starts = [match.start() for match in re.finditer(r"^[\[{]", text, re.M)]
    for start in reversed(starts):
        try:
            return json.loads(text[start:])
        except json.JSONDecodeError:
            continue
    raise ValueError("no JSON document in the output")


def run_one(tree: Path, script: str, arguments: list[str]) -> tuple[Any, float]:
    """One benchmark from ``tree``'s copy of it: its JSON report and the seconds it took."""
    path = tree / "benchmarks" / script
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(path), *arguments, "--json"],
        capture_output=True,
        text=True,
        cwd=str(tree),
        env=tree_python_env(tree),
        timeout=3600,
    )
    took = time.monotonic() - started
    if result.returncode != 0:
        raise RuntimeError(f"{tree.name}: {script} exited {result.returncode}:\n{result.stderr[-3000:]}")
    return last_json(result.stdout), took


def leaves(report: Any, prefix: str = "") -> dict[str, float]:
    """Every numeric leaf of a JSON report, keyed by its dotted path (list items by index)."""
    found: dict[str, float] = {}
    if isinstance(report, dict):
        items = report.items()
    elif isinstance(report, list):
        items = ((str(i), value) for i, value in enumerate(report))
    else:
        if isinstance(report, int | float) and not isinstance(report, bool):
            found[prefix] = float(report)
        return found
    for key, value in items:
        found.update(leaves(value, f"{prefix}.{key}" if prefix else str(key)))
    return found


def direction(metric: str) -> int:
    """+1 when a larger value is better, -1 when a smaller one is, 0 when the name does not say."""
    name = metric.rsplit(".", 1)[-1].lower()
    if RATE.search(name) or QUALITY.search(name):
        return 1
    if TIMING.search(name) or SIZE.search(name):
        return -1
    return 0


def moves_with_the_machine(metric: str) -> bool:
    """Whether a figure is a time or a rate (a slower machine moves it), not a size, a count or a recall."""
    name = metric.rsplit(".", 1)[-1].lower()
    return bool(RATE.search(name) or (TIMING.search(name) and not SIZE.search(name)))


def is_baseline(metric: str) -> bool:
    """Whether a figure measures a baseline the script runs beside ours (same code in both trees)."""
    return bool(BASELINE.search(metric))


def drift(rows: list[dict[str, Any]]) -> float:
    """How much slower this run made the *same code*: the median after / before of one benchmark's baseline
    timings (1.0 when it has none). A figure of ours that moved by as much moved with the machine, not the code."""
    ratios = [
        row["ratio"]
        for row in rows
        if is_baseline(row["metric"]) and direction(row["metric"]) < 0 and moves_with_the_machine(row["metric"])
    ]
    return statistics.median(ratios) if ratios else 1.0


def compare(samples: dict[str, dict[str, list[dict[str, float]]]], flag: float) -> list[dict[str, Any]]:
    """One row per headline figure present in both trees (medians and the ratio), judged by :func:`judge`."""
    rows: list[dict[str, Any]] = []
    for bench, by_tree in samples.items():
        if "before" not in by_tree or "after" not in by_tree:
            continue
        before = {k: statistics.median(run[k] for run in by_tree["before"]) for k in by_tree["before"][0]}
        after = {k: statistics.median(run[k] for run in by_tree["after"]) for k in by_tree["after"][0]}
        for metric in sorted(set(before) & set(after)):
            if not HEADLINE.search(metric.rsplit(".", 1)[-1]) or not before[metric]:
                continue
            rows.append(
                {"benchmark": bench, "metric": metric, "before": before[metric], "after": after[metric]}
                | {"ratio": after[metric] / before[metric]}
            )
    return judge(rows, flag)


def judge(rows: list[dict[str, Any]], flag: float) -> list[dict[str, Any]]:
    """Each row with its benchmark's baseline drift, its ratio against that drift (``adjusted``: a timing divided
    by it, a rate multiplied by it), and whether one of our figures' adjusted ratio got worse past ``flag``."""
    judged = []
    for bench in dict.fromkeys(row["benchmark"] for row in rows):
        found = [row for row in rows if row["benchmark"] == bench]
        machine = drift(found)
        for row in found:
            sense = direction(row["metric"])
            ratio = row["ratio"]
            timed = moves_with_the_machine(row["metric"])
            adjusted = ratio if not timed else ratio / machine if sense < 0 else ratio * machine if sense > 0 else ratio
            worse = not is_baseline(row["metric"]) and (
                (sense > 0 and adjusted < 1 - flag) or (sense < 0 and adjusted > 1 + flag)
            )
            judged.append(row | {"drift": machine, "adjusted": adjusted, "worse": worse})
    return judged


def render(rows: list[dict[str, Any]], failures: dict[str, str], flag: float) -> str:
    """The Markdown table (and what failed)."""
    lines = [
        "| benchmark | figure | before | after | after / before | baseline drift | adjusted | |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        mark = "baseline" if is_baseline(row["metric"]) else "**worse**" if row["worse"] else ""
        lines.append(
            f"| {row['benchmark']} | `{row['metric']}` | {row['before']:.4g} | {row['after']:.4g} | "
            f"{row['ratio']:.2f}x | {row['drift']:.2f}x | {row['adjusted']:.2f}x | {mark} |"
        )
    lines.extend(f"\n{name}: FAILED: {problem}" for name, problem in failures.items())
    flagged = sum(row["worse"] for row in rows)
    benchmarks = len({row["benchmark"] for row in rows})
    lines.append(
        f"\n{len(rows)} figures from {benchmarks} benchmarks; {flagged} worse by more than {flag:.0%} adjusted."
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the other checkout (the baseline tree)")
    parser.add_argument("--after", type=Path, default=REPO)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated names (default: the whole suite)")
    parser.add_argument("--flag", type=float, default=0.20, help="mark figures that got worse by more than this")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--table", type=Path, help="print the table of a report saved with --json (runs nothing)")
    args = parser.parse_args()
    if args.table:
        saved = json.loads(args.table.read_text(encoding="utf-8"))
        print(render(judge(saved["rows"], args.flag), saved["failures"], args.flag))
        return
    if args.before is None:
        raise SystemExit("suite_compare: --before is required (or --table to print a saved report)")
    names = [name for name in args.only.split(",") if name] or list(SUITE)
    unknown = sorted(set(names) - set(SUITE))
    if unknown:
        raise SystemExit(f"suite_compare: unknown benchmark(s) {unknown}; known: {', '.join(SUITE)}")
    trees = {"after": args.after.resolve(), "before": args.before.resolve()}
    for tree in trees.values():
        check_tree(tree)
    samples: dict[str, dict[str, list[dict[str, float]]]] = {}
    seconds: dict[str, dict[str, float]] = {}
    failures: dict[str, str] = {}
    for name in names:
        script, arguments = SUITE[name]
        for run in range(args.runs):
            order = list(trees.items()) if run % 2 == 0 else list(reversed(trees.items()))
            for label, tree in order:
                if not (tree / "benchmarks" / script).exists():
                    failures[name] = f"{label} tree has no benchmarks/{script}"
                    continue
                try:
                    report, took = run_one(tree, script, arguments)
                except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
                    failures[name] = str(exc)[-1500:]
                    continue
                samples.setdefault(name, {}).setdefault(label, []).append(leaves(report))
                seconds.setdefault(name, {})[label] = seconds.get(name, {}).get(label, 0.0) + took
                if not args.json:
                    print(f"{name} {label} run {run + 1}: {took:.1f} s", file=sys.stderr, flush=True)
    rows = compare(samples, args.flag)
    if args.json:
        print(json.dumps({"rows": rows, "seconds": seconds, "failures": failures, "flag": args.flag}, indent=2))
        return
    print(render(rows, failures, args.flag))


if __name__ == "__main__":
    main()

"""Every measurement the docs quote names the command that produces it, and that command exists as written: each
`python benchmarks/<script>.py --flag ...` names a script that takes those flags, each `zaxy benchmark <lane>` a
lane of the CLI, and each section of docs/benchmarks.md names at least one of them."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT

PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
BENCHMARKS = REPO_ROOT / "docs" / "benchmarks.md"
SCRIPT = re.compile(r"python (benchmarks/[\w.]+\.py)((?: (?:--[\w-]+(?:[ =][^\s`|\]]+)?|\[[^\]]*\]))*)")
LANE = re.compile(r"zaxy benchmark ((?:\w+)(?:\s*\|\s*\w+)*)")


def _lanes() -> set[str]:
    import typer

    from zaxy_agents.cli.app import app

    group = typer.main.get_command(app).commands["benchmark"]  # type: ignore[attr-defined]
    return set(group.commands)


def test_every_benchmark_command_in_the_docs_exists_with_its_flags() -> None:
    lanes = _lanes()
    problems = []
    for page in PAGES:
        text = page.read_text()
        for script, flags in SCRIPT.findall(text):
            path = REPO_ROOT / script
            if not path.is_file():
                problems.append(f"{page.name}: {script} does not exist")
                continue
            source = path.read_text()
            for flag in re.findall(r"--[\w-]+", flags):
                if f'"{flag}"' not in source and f"'{flag}'" not in source:
                    problems.append(f"{page.name}: {script} takes no {flag}")
        for named in LANE.findall(text):
            for lane in re.split(r"\s*\|\s*", named):
                if lane not in lanes:
                    problems.append(f"{page.name}: zaxy benchmark has no lane {lane!r}")
    assert not problems, problems


def test_every_section_of_the_benchmarks_page_names_its_command() -> None:
    sections = re.split(r"\n(?=## )", BENCHMARKS.read_text())[1:]
    bare = [
        section.splitlines()[0]
        for section in sections
        if not SCRIPT.search(section) and not LANE.search(section) and "benchmarks/" not in section
    ]
    assert not bare, f"sections of docs/benchmarks.md that name no command producing their figures: {bare}"


TABLE_SECTIONS = {
    "coordinate": ("## Coordinate: guardrail lane", ""),
    "synthesis": ("## Synthesis and skills", "synthesis | "),
    "skills": ("## Synthesis and skills", "skills | "),
}
TOTAL_PHRASES = {
    "causal": r"causal lane 1\.0 on all \w+ metrics \((\d+) checks",
    "consolidation": r"consolidation lane 1\.0 on all \w+ metrics \((\d+) checks",
    "metacognition": r"1\.0 on all seven metrics \((\d+) checks",
}


def documented_checks(lane: str) -> dict[str, int] | int:
    """How many checks docs/benchmarks.md says ``lane`` runs: per metric (its table's ``n/n`` result column) for
    the lanes with such a table, else the total its prose states (``... (121 checks``)."""
    text = BENCHMARKS.read_text()
    if lane in TABLE_SECTIONS:
        heading, prefix = TABLE_SECTIONS[lane]
        body = text.split(heading, 1)[1].split("\n## ", 1)[0]
        rows = re.findall(rf"^\| {re.escape(prefix)}`(\w+)` \|.*\| \d+/(\d+) \|$", body, re.MULTILINE)
        assert rows, f"docs/benchmarks.md has no check counts for the {lane} lane"
        return {metric: int(total) for metric, total in rows}
    found = re.search(TOTAL_PHRASES[lane], " ".join(text.split()))
    assert found, f"docs/benchmarks.md states no check count for the {lane} lane"
    return int(found[1])


def run_counts(report: dict) -> dict[str, int]:
    """``{metric: number of checks}`` of a lane report."""
    return {metric: counts["total"] for metric, counts in report["checks"].items()}

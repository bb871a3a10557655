"""``benchmarks/suite_compare.py`` reads each benchmark's JSON, pairs figures across trees and flags regressions.

The runner is how issue 24's "the existing benchmark suite before/after in one table" is produced; these checks
drive it end to end on one small benchmark against this same tree (two runs of identical code), and pin the parts
that decide what the table says: which figures are compared and which direction counts as worse.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import suite_compare

REPO = Path(__file__).resolve().parents[1]


def test_the_last_json_document_is_read_past_progress_lines() -> None:
    text = 'building 1000 events\n{"not": \n{"a": {"p95_ms": 3.5, "rows": [1, 2]}, "ok": true}\n'
    assert suite_compare.last_json(text) == {"a": {"p95_ms": 3.5, "rows": [1, 2]}, "ok": True}
    assert suite_compare.leaves(suite_compare.last_json(text)) == {"a.p95_ms": 3.5, "a.rows.0": 1.0, "a.rows.1": 2.0}


def test_a_figure_that_moved_the_wrong_way_is_flagged_and_one_that_improved_is_not() -> None:
    samples = {
        "x": {
            "before": [{"checkout.p95_ms": 10.0, "ingest.events_per_s": 1000.0, "rows": 5.0}],
            "after": [{"checkout.p95_ms": 13.0, "ingest.events_per_s": 1500.0, "rows": 9.0}],
        }
    }
    rows = {row["metric"]: row for row in suite_compare.compare(samples, 0.2)}
    assert set(rows) == {"checkout.p95_ms", "ingest.events_per_s"}  # a count is not a headline figure
    assert rows["checkout.p95_ms"]["worse"] and round(rows["checkout.p95_ms"]["ratio"], 2) == 1.3
    assert not rows["ingest.events_per_s"]["worse"]
    slower = {"x": {"before": [{"events_per_s": 1000.0}], "after": [{"events_per_s": 700.0}]}}
    assert suite_compare.compare(slower, 0.2)[0]["worse"]


def test_a_figure_that_slowed_as_much_as_the_baselines_beside_it_is_not_flagged() -> None:
    samples = {
        "x": {
            "before": [{"ours.p95_ms": 10.0, "baseline_bm25.p95_ms": 10.0, "sqlite.p50_ms": 4.0, "ours.per_s": 100.0}],
            "after": [{"ours.p95_ms": 20.0, "baseline_bm25.p95_ms": 19.0, "sqlite.p50_ms": 8.4, "ours.per_s": 52.0}],
        }
    }
    rows = {row["metric"]: row for row in suite_compare.compare(samples, 0.2)}
    assert round(rows["ours.p95_ms"]["drift"], 2) == 2.0  # the median of the two baselines' timing ratios
    assert not rows["ours.p95_ms"]["worse"] and not rows["ours.per_s"]["worse"]
    assert not rows["sqlite.p50_ms"]["worse"]  # a baseline is never flagged: it is the same code in both trees
    recall = {"x": {"before": [{"recall_ours": 1.0, "baseline.p50_ms": 10.0}], "after": [{"recall_ours": 1.0}]}}
    recall["x"]["after"][0]["baseline.p50_ms"] = 5.0  # the machine ran twice as fast: a recall does not care
    (row,) = (r for r in suite_compare.compare(recall, 0.2) if r["metric"] == "recall_ours")
    assert row["adjusted"] == 1.0 and not row["worse"]
    rendered = suite_compare.render(list(rows.values()), {}, 0.2)
    assert "| baseline |" in rendered and "0 worse" in rendered


def test_the_runner_compares_a_real_benchmark_between_two_trees() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "suite_compare.py"),
            "--before",
            str(REPO),
            "--only",
            "citation_reread",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["failures"] == {}
    figures = {row["metric"]: row for row in report["rows"]}
    # the same code on the same generated logs: the share of the file a citation re-read reads barely moves
    assert figures["bytes_ratio"]["after"] == pytest.approx(figures["bytes_ratio"]["before"], rel=0.01)
    assert set(report["seconds"]["citation_reread"]) == {"before", "after"}


def test_an_unknown_benchmark_name_is_refused_with_the_known_ones() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "suite_compare.py"), "--before", str(REPO), "--only", "nope"],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=120,
    )
    assert result.returncode != 0 and "unknown benchmark" in result.stderr and "eventloom" in result.stderr

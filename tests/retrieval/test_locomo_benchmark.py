"""`zaxy benchmark locomo` on a tiny synthetic file of the real shape, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_zaxy, run_zaxy_json
from zaxy_agents.evaluation.locomo import _session_recall
from zaxy_agents.evaluation.locomo_data import load_conversations

SYNTHETIC = [
    {
        "sample_id": "toy-1",
        "conversation": {
            "speaker_a": "Rosa",
            "speaker_b": "Ivan",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Rosa", "dia_id": "D1:1", "text": "Ivan, what did you do this weekend?"},
                {"speaker": "Ivan", "dia_id": "D1:2", "text": "I finally repaired the old sailboat with my uncle."},
                {"speaker": "Rosa", "dia_id": "D1:3", "text": "I started learning the cello last week."},
                {
                    "speaker": "Ivan",
                    "dia_id": "D1:4",
                    "text": "Nice, here is a photo.",
                    "blip_caption": "a red kite",
                    "query": "kite festival beach",  # the dataset's image-search string: not memory
                },
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [
                {"speaker": "Rosa", "dia_id": "D2:1", "text": "My cello teacher says I am improving quickly."},
                {"speaker": "Ivan", "dia_id": "D2:2", "text": "We took the sailboat out on the lake yesterday."},
            ],
        },
        "qa": [
            {"question": "What did Ivan repair?", "answer": "a sailboat", "evidence": ["D1:2"], "category": 4},
            {
                "question": "What instrument is Rosa learning?",
                "answer": "cello",
                "evidence": ["D1:3; D2:1"],
                "category": 1,
            },
            {
                "question": "When did Ivan take the sailboat out?",
                "answer": "19 June 2023",
                "evidence": ["D2:2"],
                "category": 2,
            },
            {"question": "What did Ivan show in the photo?", "answer": "a kite", "evidence": ["D1:4"], "category": 4},
            {
                "question": "What car does Rosa drive?",
                "adversarial_answer": "none",
                "evidence": ["D9:9"],
                "category": 5,
            },
            {
                "question": "What is Ivan's favourite food?",
                "adversarial_answer": "none",
                "evidence": ["D 1:2"],
                "category": 5,
            },
        ],
    }
]


def test_benchmark_command_reports_and_writes_artifacts(tmp_path: Path) -> None:
    dataset = tmp_path / "toy.json"
    dataset.write_text(json.dumps(SYNTHETIC))
    out = tmp_path / "report"
    code, report = run_zaxy_json("benchmark", "locomo", "--dataset", str(dataset), "--k", "1,3", "--output", str(out))
    assert code == 0, report
    ours = report["categories_1_4"]["ours"]
    baseline = report["categories_1_4"]["baseline"]
    assert ours["questions"] == baseline["questions"] == 4
    assert ours["recall@3"] >= 0.75 and ours["recall@3"] >= baseline["recall@3"]
    assert ours["hit@1"] >= baseline["hit@1"]
    assert report["evidence"]["evidence_missing_turn_skipped"] == 1
    assert report["evidence"]["evidence_normalised"] >= 1
    assert report["category_5_adversarial"]["ours"]["questions"] == 1
    assert report["latency_ms"]["p95"] is not None and report["ingest"]["turns_per_s"] > 0
    cpu = report["query_cpu_ms"]  # the querying thread's CPU time beside the wall clock (load inflates the latter)
    assert 0 < cpu["p50"] <= cpu["p95"] <= cpu["p99"]
    ingest = report["ingest"]  # both rates: without and with writing the graph of record (Kuzu)
    assert ingest["graph_commit_seconds"] > 0
    assert 0 < ingest["turns_per_s_with_graph_commit"] < ingest["turns_per_s"]
    assert ingest["graph_commit_cpu_seconds"] > 0  # process CPU beside wall time (steadier on a busy machine)
    assert 0 < ingest["turns_per_cpu_s_with_graph_commit"] < ingest["turns_per_cpu_s"]
    # Session-level recall counts a sitting found when any of its turns is in the top k: never below turn-level.
    for k in (1, 3):
        assert ours[f"recall@{k}"] <= ours[f"session_recall@{k}"] <= 1.0
    # "What instrument is Rosa learning?" has gold turns in two sittings: one of them in the top k is half.
    assert _session_recall(["D1:3", "D2:1"], ["D1:1", "D1:3", "D1:4"], 3) == 0.5
    assert _session_recall(["D1:3", "D2:1"], ["D2:2", "D1:1", "D1:4"], 3) == 1.0
    assert (out / "report.json").exists() and (out / "recall.png").read_bytes()[:4] == b"\x89PNG"


def test_benchmark_reports_both_bm25_baselines(tmp_path: Path) -> None:
    dataset = tmp_path / "toy.json"
    dataset.write_text(json.dumps(SYNTHETIC))
    code, report = run_zaxy_json("benchmark", "locomo", "--dataset", str(dataset), "--k", "1,3")
    assert code == 0, report
    combined = report["categories_1_4"]
    assert set(combined["baselines"]) == {"bm25_plain", "bm25_stemmed"}
    assert combined["baselines"]["bm25_plain"] == combined["baseline"]  # the historical key stays the plain one
    for summary in combined["baselines"].values():
        assert summary["questions"] == 4
        assert all(0.0 <= summary[key] <= 1.0 for key in ("recall@1", "recall@3", "hit@1", "hit@3"))
    # "What did Ivan repair?" only matches "repaired" after stemming: the stemmed baseline must find D1:2.
    stemmed, plain = combined["baselines"]["bm25_stemmed"], combined["baselines"]["bm25_plain"]
    assert stemmed["recall@3"] > plain["recall@3"]
    assert set(combined["ratio_vs_baselines"]) == {"bm25_plain", "bm25_stemmed"}
    assert combined["ratio_vs_baselines"]["bm25_plain"] == combined["ratio_vs_baseline"]
    for row in report["per_category"].values():
        assert set(row["baselines"]) == {"bm25_plain", "bm25_stemmed"}
    human = run_zaxy("benchmark", "locomo", "--dataset", str(dataset), "--k", "3")
    assert human.returncode == 0, human.stderr
    assert "ratio vs BM25+stem" in human.stdout and "ratio vs BM25:" in human.stdout
    assert "session-level recall" in human.stdout and "with the graph commit" in human.stdout


def test_benchmark_rejects_bad_arguments(tmp_path: Path) -> None:
    code, body = run_zaxy_json("benchmark", "locomo", "--dataset", str(tmp_path / "missing.json"))
    assert code == 3 and body["error"]["field"] == "--dataset"  # a missing input file is not_found
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    code, body = run_zaxy_json("benchmark", "locomo", "--dataset", str(bad), "--k", "x")
    assert code == 2 and body["error"]["field"] == "--k"
    human = run_zaxy("benchmark", "locomo", "--dataset", str(bad))
    assert human.returncode == 2 and "Traceback" not in human.stderr


def test_loader_keeps_the_caption_and_drops_the_image_search_query(tmp_path: Path) -> None:
    dataset = tmp_path / "toy.json"
    dataset.write_text(json.dumps(SYNTHETIC))
    turns = {turn.dia_id: turn for turn in load_conversations(dataset)[0].turns}
    assert turns["D1:4"].caption == "a red kite"  # what a real memory of the photo would hold
    assert all("festival" not in (turn.caption or "") + turn.text for turn in turns.values())
    assert turns["D1:1"].caption is None

"""benchmarks/locomo_rerank_study.py on a tiny LoCoMo-shaped file: its default row is the engine's own ranking
(what `zaxy benchmark locomo` scores), and every re-rank family reports a setting chosen on the tuning half with
its paired interval. The measured run on the dev six is in docs/retrieval.md."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from benchmarks.locomo_rerank_study import collect, study
from tests.retrieval.test_locomo_benchmark import SYNTHETIC
from zaxy_agents.evaluation.locomo import run_locomo


def test_study_default_row_is_the_engines_ranking_and_every_family_reports(tmp_path: Path) -> None:
    conversations = []
    for number in range(4):  # three tuning conversations and one held out, like the dev six's halves
        conversation = copy.deepcopy(SYNTHETIC[0])
        conversation["sample_id"] = f"toy-{number}"
        conversations.append(conversation)
    dataset = tmp_path / "toy.json"
    dataset.write_text(json.dumps(conversations))

    questions, names, timing = collect(str(dataset))
    report = study(questions, names, with_cosine=False)

    engine = run_locomo(dataset, ks=(5, 10))["categories_1_4"]["ours"]
    assert report["default"]["all"] == [engine["recall@5"], engine["recall@10"]]
    assert report["ceiling"]["oracle_r10_all"] >= report["default"]["all"][1]
    assert report["ceiling"]["gold_by_named_speaker"] == 1.0  # each toy question names the speaker of its gold
    assert timing["query_cpu_ms_p95"] > 0
    expected = {"neighbour", "sitting", "sitting_top10", "diversity", "coverage", "answer_type", "first_person"}
    assert expected | {"linear", "prf", "conjunction"} <= set(report["families"])
    for family in report["families"].values():
        mean, low, high = family["r10_delta_all_95"]
        assert low <= mean <= high
        assert family["chosen_on_tuning"]

"""The ranking measurement lanes (budget, cache, forgetting, fok, ppr) on small fixtures: each reports ``plain``
beside the other retrieval profiles in one run, and each bar is checked (a lane that cannot fail is no lane)."""

from __future__ import annotations

from tests.conftest import run_zaxy_json
from zaxy_agents.evaluation.checkout_lanes import run_budget_lane, run_cache_lane
from zaxy_agents.evaluation.forgetting_lane import run_forgetting_lane
from zaxy_agents.evaluation.ranking_lanes import run_fok_lane, run_ppr_lane

PROFILES = ["plain", "balanced", "full"]


def test_budget_lane_degrades_gracefully_and_never_claims_what_it_cannot_back() -> None:
    report = run_budget_lane(services=3, budgets=(64, 256, 2048))
    assert list(report["profiles"]) == PROFILES and report["passed"]
    for figures in report["profiles"].values():
        recalls = [point["recall"] for point in figures["curve"]]
        assert recalls[0] == 0.0 and recalls[-1] == 1.0 and figures["unbacked_claims"] == 0


def test_cache_lane_keeps_the_stable_prefix_byte_identical() -> None:
    report = run_cache_lane(rounds=6, services=3, max_tokens=512)
    assert report["passed"]
    for figures in report["profiles"].values():
        assert figures["prefix_identical_rate"] == 1.0 and 0.5 < figures["simulated_cache_hit_rate"] < 1.0


def test_forgetting_lane_loses_nothing_for_explicit_queries() -> None:
    report = run_forgetting_lane(services=4)
    plain, full = report["profiles"]["plain"], report["profiles"]["full"]
    assert report["passed"] and full["explicit_recall@10"] == plain["explicit_recall@10"] == 1.0
    assert (plain["attenuated_labelled"], full["attenuated_labelled"]) == (0.0, 1.0)
    assert full["exempt_kept"] == 1.0 and full["restored"] == 1.0
    assert full["checkout_recall_imported"] < plain["checkout_recall_imported"]  # the floor's cost, reported


def test_fok_lane_beats_the_base_rate() -> None:
    report = run_fok_lane(services=4)
    assert report["passed"]
    for figures in report["profiles"].values():
        assert figures["brier_verdict"] < figures["brier_base_rate"]


def test_ppr_lane_through_the_cli() -> None:
    code, report = run_zaxy_json("benchmark", "ppr", "--size", "6")
    assert code == 0 and report["lane"] == "ppr" and report["default_profile"] == "balanced"
    assert {"plain", "balanced", "full", "plain+ppr"} <= set(report["profiles"])
    single = "graph_single_hop_recall@5"
    assert all(figures[single] >= report["profiles"]["plain"][single] for figures in report["profiles"].values())
    in_process = run_ppr_lane(projects=6)
    assert in_process["profiles"]["plain"] == report["profiles"]["plain"]  # deterministic


def test_cue_lane_through_the_cli() -> None:
    code, report = run_zaxy_json("benchmark", "cues", "--workspaces", "3", "--services", "4")
    assert code == 0 and report["lane"] == "cues" and report["passed"] and list(report["profiles"]) == PROFILES
    plain, balanced = report["profiles"]["plain"], report["profiles"]["balanced"]
    assert plain["context_only_lift@1"] == 0.0  # plain never blends cues
    assert balanced["context_only_lift@1"] > 0 and balanced["worst_loss@1"] == 0.0 and balanced["cues_help"]
    assert balanced["misleading.recall@1_with_cues"] == balanced["misleading.recall@1_without_cues"]

"""``--cue key=value`` on ``zaxy memory append | query | checkout``, through the real CLI in a subprocess."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_zaxy_json

OURS, THEIRS = "to deploy run make release", "to deploy run make ship now"


def test_cues_are_recorded_on_append_and_blended_at_query_and_checkout(tmp_path: Path) -> None:
    memory = ["--eventloom-path", str(tmp_path / "eventloom")]
    code, appended = run_zaxy_json(
        "memory", "append", OURS, "-s", "s", "--kind", "note", "--cue", "repo=zaxy", "--cue", "tool=make", *memory
    )
    assert code == 0 and appended["event"]["payload"]["cues"] == {"workspace": "zaxy", "tool": "make"}
    code, _ = run_zaxy_json("memory", "append", THEIRS, "-s", "s", "--kind", "note", "--cue", "repo=other", *memory)
    assert code == 0

    full = ["--retrieval-profile", "full", *memory]
    code, found = run_zaxy_json("memory", "query", "how do I deploy", "-s", "s", "--cue", "repo=other", *full)
    assert code == 0 and found["hits"][0]["text"].endswith(THEIRS)
    assert found["hits"][0]["score_explanation"]["boosts"]["cue_overlap"] == 1.5
    code, packet = run_zaxy_json("memory", "checkout", "how do I deploy", "-s", "s", "--cue", "task=ship", *full)
    assert code == 0 and packet["prompt"].index(OURS) < packet["prompt"].index(THEIRS)  # no cue matches
    code, packet = run_zaxy_json(
        "memory", "checkout", "how do I deploy", "-s", "s", "--cue", "repo=other", "--cue", "phase=execution", *full
    )
    assert code == 0 and packet["prompt"].index(THEIRS) < packet["prompt"].index(OURS)
    code, fok = run_zaxy_json("memory", "fok", "where is it", "-s", "s", "--cue", "task=deploy", *memory)
    assert code == 0 and fok["signals"]["cues_matched"] == ["mission"]  # FoK probes cue words in memory


def test_bad_cues_are_structured_errors(tmp_path: Path) -> None:
    memory = ["-s", "s", "--eventloom-path", str(tmp_path / "eventloom")]
    for cue, field in (("repo", "--cue"), ("=zaxy", "--cue"), ("colour=red", "cues.colour")):
        code, result = run_zaxy_json("memory", "checkout", "deploy", "--cue", cue, *memory)
        assert code != 0 and result["error"]["code"] == "invalid_request", result
        assert result["error"]["field"] == field and result["error"]["remediation"]
    code, result = run_zaxy_json("memory", "query", "deploy", "--cue", "repo=a", "--cue", "repo=b", *memory)
    assert code != 0 and result["error"]["field"] == "cues.repo"

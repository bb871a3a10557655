"""docs/mcp.md "Feeling of knowing": `possible` also when no question term is in memory but a `cues` value is;
`unlikely` otherwise — through the real `zaxy memory fok`, which runs the predictor the MCP tool runs."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_zaxy, run_zaxy_json


def test_a_cue_found_in_memory_lifts_unlikely_to_possible(tmp_path: Path) -> None:
    memory = ["-s", "s", "--eventloom-path", str(tmp_path / "eventloom")]
    assert run_zaxy("memory", "append", "the deploy pipeline runs on buildkite", *memory).returncode == 0
    code, alone = run_zaxy_json("memory", "fok", "where is the quasar", "--no-record", *memory)
    assert code == 0 and alone["verdict"] == "unlikely"
    code, cued = run_zaxy_json("memory", "fok", "where is the quasar", "--no-record", "--cue", "task=deploy", *memory)
    assert code == 0 and cued["verdict"] == "possible" and cued["signals"]["cues_matched"] == ["mission"]

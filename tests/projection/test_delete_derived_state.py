"""docs/derived-state.md: "you may delete the folder at any time and the next command rebuilds what it needs from
the log" — through the real CLI: after `rm -rf .eventloom/.zaxy` a checkout serves the same current fact (the
superseded one still excluded) and the rebuilt graph has the same digest."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import run_zaxy, run_zaxy_json


def test_deleting_the_derived_folder_loses_nothing(tmp_path: Path) -> None:
    loom = ["--eventloom-path", str(tmp_path / ".eventloom")]
    for port in ("8080", "9090"):
        assert (
            run_zaxy(
                "memory", "append", f"the API listens on port {port}", "--key", "api.port", "-s", "p", *loom
            ).returncode
            == 0
        )
    question = ("memory", "checkout", "which port does the API listen on?", "-s", "p", *loom)
    code, before = run_zaxy_json(*question)
    assert code == 0 and "9090" in before["prompt"] and "8080" not in before["prompt"]
    code, built = run_zaxy_json("reproject", "--digest", *loom)
    assert code == 0

    shutil.rmtree(tmp_path / ".eventloom" / ".zaxy")
    code, after = run_zaxy_json(*question)
    assert code == 0 and after["prompt"] == before["prompt"]  # same packet, same citations
    assert [f["citation"] for f in after["current_facts"]] == [f["citation"] for f in before["current_facts"]]
    code, rebuilt = run_zaxy_json("reproject", "--digest", *loom)
    assert code == 0 and rebuilt["digest"] == built["digest"]

"""The built wheel carries every non-Python asset the code reads through ``zaxy_agents.assets``.

Builds the wheel with pip (build isolation fetches hatchling from the package index, as any user's install
does) and checks, file by file, that each asset folder of the source tree is inside it under
``zaxy_agents/_assets/``. A file missing from the wheel would make ``zaxy init``, ``zaxy hooks`` or
``zaxy ide-config`` fail only after a real ``pip install``, never in an editable checkout.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from zaxy_agents.assets import ASSET_ROOTS

SKIPPED_PARTS = {"__pycache__", ".eventloom", ".zaxy"}


def _source_files(root: str) -> set[str]:
    base = REPO_ROOT / root
    return {
        f"zaxy_agents/_assets/{root}/{path.relative_to(base).as_posix()}"
        for path in base.rglob("*")
        if path.is_file() and not SKIPPED_PARTS.intersection(path.parts) and path.suffix != ".pyc"
    }


def test_the_wheel_ships_every_asset(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO_ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0 and "hatchling" in done.stderr and "No matching distribution" in done.stderr:
        pytest.skip("hatchling is not installable here (no package index)")
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("zaxy_agents-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for root in ASSET_ROOTS:
        expected = _source_files(root)
        assert expected, f"{root}/ is empty in the source tree"
        assert expected <= names, f"missing from the wheel: {sorted(expected - names)[:5]}"
    assert "zaxy_agents/_assets/examples/minimal-graph/agent.py" in names
    page = REPO_ROOT / "zaxy_agents" / "ui" / "static"  # the Memory Inspector's page ships in the package
    shipped = {f"zaxy_agents/ui/static/{p.relative_to(page).as_posix()}" for p in page.rglob("*") if p.is_file()}
    assert shipped and shipped <= names, sorted(shipped - names)
    licenses = [name for name in names if ".dist-info/" in name and name.rsplit("/", 1)[-1] == "LICENSE"]
    assert licenses, "the LICENSE file is not in the wheel"
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Apache-2.0" in metadata
    assert not [name for name in names if "_assets/" in name and ("__pycache__" in name or ".eventloom" in name)]

"""What a newcomer checks first: `zaxy --version` and a LICENSE that matches the package's declared licence."""

from __future__ import annotations

import tomllib

from tests.conftest import REPO_ROOT, run_zaxy
from zaxy_agents import __version__


def test_version_matches_the_package_metadata() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    for flag in ("--version", "-V"):
        result = run_zaxy(flag)
        assert result.returncode == 0 and result.stdout.strip() == f"zaxy {project['version']}"
    assert __version__ == project["version"]
    assert "--version" in run_zaxy("--help").stdout


def test_license_file_matches_pyproject() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "Apache-2.0"}
    text = (REPO_ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text

"""Every repository path the docs name (tests/, benchmarks/, zaxy_agents/, examples/, hooks/, integrations/,
templates/) exists: a page that points at a moved or deleted file sends the reader nowhere."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT

PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
PATH = re.compile(r"(?<![\w./<-])((?:tests|benchmarks|zaxy_agents|examples|hooks|integrations|templates)/[\w./*-]+)")
BUILT_OR_RUNTIME = {"zaxy_agents/_assets/"}  # made when the wheel is built (tests/test_wheel.py)


def test_every_repository_path_in_the_docs_exists() -> None:
    missing = []
    for page in PAGES:
        for path in set(PATH.findall(page.read_text())):
            path = path.rstrip(".,:")
            if path in BUILT_OR_RUNTIME:
                continue
            base = page.parent if path.startswith("examples/") and page.parent.name == "docs" else REPO_ROOT
            if (
                not (list(base.glob(path)) if "*" in path else (base / path).exists())
                and not (REPO_ROOT / path).exists()
            ):
                missing.append(f"{page.name}: {path}")
    assert not missing, f"paths named in the docs that do not exist: {missing}"

"""docs/ui.md: its example runs as written (on a free port) and every screenshot it shows is in the repository."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "ui.md"


def test_ui_page_example_runs(tmp_path: Path) -> None:
    script = re.findall(r"```bash\n(.*?)```", PAGE.read_text().split("## Try it", 1)[1], re.DOTALL)[0]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("ZAXY_AUTH", "ZAXY_ADMIN", "ZAXY_SESS"))}
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script.replace("8766", port)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**environment, "PATH": path, "TMPDIR": str(tmp_path), "NO_COLOR": "1"},
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert f"zaxy ui: http://127.0.0.1:{port}/#token=" in result.stdout
    assert '"session":"demo","event_count":2' in result.stdout


def test_ui_page_screenshots_exist_and_stay_small() -> None:
    images = re.findall(r"!\[[^\]]*\]\((images/[^)]+\.png)\)", PAGE.read_text())
    assert len(images) == 7
    for image in images:
        data = (REPO_ROOT / "docs" / image).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) < 250_000, image

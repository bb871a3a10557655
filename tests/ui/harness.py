"""A real ``zaxy ui`` process on 127.0.0.1 and a real headless Chromium driven by Selenium, for the tests.

The browser is Debian's ``chromium`` with its ``chromedriver`` (``apt-get install -y chromium chromium-driver``;
CI installs them best effort in .ci/browser.sh). Without them, or without the ``selenium`` package, the browser
tests skip and say which is missing.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
DRIVER_NAMES = ("chromedriver",)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,860",
)
INSTALL_HINT = "apt-get install -y chromium chromium-driver (Debian/Ubuntu), and pip install selenium (dev extra)"


@dataclass
class UiServer:
    base: str  # http://127.0.0.1:PORT
    token: str | None  # the token zaxy ui made for this run (None when tokens are configured)
    process: subprocess.Popen[str]
    log: Path

    @property
    def address(self) -> str:
        return f"{self.base}/#token={self.token}" if self.token else f"{self.base}/"

    def client(self, token: str | None = None) -> httpx.Client:
        token = token or self.token
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base, headers=headers, timeout=60)


@contextmanager
def ui_server(eventloom: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[UiServer]:
    """``zaxy ui --port 0`` as a subprocess; yields once it printed its address and answers ``/healthz``."""
    log_path = eventloom.parent / f"ui-{time.monotonic_ns()}.log"
    command = [sys.executable, "-m", "zaxy_agents.cli.entry", "ui", "--eventloom-path", str(eventloom), "--port", "0"]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ZAXY_AUTH", "ZAXY_ADMIN", "ZAXY_SESSION_TOK"))}
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [*command, *args],
            env={**clean, "NO_COLOR": "1", **(env or {})},
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        try:
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], 60)
            line = process.stdout.readline() if ready else ""
            match = re.search(r"(http://127\.0\.0\.1:\d+)/(?:#token=(\S+))?", line)
            assert match, f"zaxy ui printed no address: {line!r} {log_path.read_text()}"
            server = UiServer(match[1], match[2], process, log_path)
            deadline = time.monotonic() + 30
            while httpx.get(f"{server.base}/healthz", timeout=5).status_code != 200:
                assert time.monotonic() < deadline, "zaxy ui did not answer /healthz"
                time.sleep(0.1)
            yield server
        finally:
            process.terminate()
            code = process.wait(timeout=30)
    output = log_path.read_text()
    assert code == 0, output
    assert "Traceback" not in output, output


def browser_problem() -> str | None:
    """Why no browser test can run here (``None`` when Chromium, its driver and Selenium are all present)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return f"the selenium package is missing; {INSTALL_HINT}"
    if chromium_binary() is None:
        return f"no Chromium found ({', '.join(CHROMIUM_NAMES)}); {INSTALL_HINT}"
    if shutil.which("chromedriver") is None:
        return f"no chromedriver found; {INSTALL_HINT}"
    return None


def chromium_binary() -> str | None:
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


@contextmanager
def headless_chromium() -> Iterator[Any]:
    """A Selenium WebDriver on a fresh profile (never Selenium Manager: nothing is downloaded)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="zaxy-ui-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium_binary() or ""
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)

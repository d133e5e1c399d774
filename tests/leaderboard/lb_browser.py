"""The page's browser tests' shared parts: a headless Chromium (a fixture; conftest.py offers it to
the leaderboard tests, other folders import it) and opening a written site."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("GPU2TPU_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser() -> Any:
    """A headless Chromium (the distribution's, driven by Playwright) for the page's tests."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]'")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set GPU2TPU_CHROMIUM)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def open_page(browser: Any, out: Path) -> Any:
    """`out`/index.html in a new page, ready; `page.errors` collects script errors and any request
    that leaves file:// (the page needs no network)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda req: errors.append(f"network: {req.url}")
            if not req.url.startswith(("file://", "data:")) else None)
    page.goto((out / "index.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    page.errors = errors
    return page

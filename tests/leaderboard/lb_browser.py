"""The page's browser tests' shared parts: which Chromium, and opening a written site."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("GPU2TPU_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


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

"""A real browser for the tests (issue 39.4): Debian's headless Chromium (`apt-get install
chromium`) driven by Playwright for Python, which talks to the system browser itself; no
`playwright install` and no downloaded browser build. A test takes the `browser` fixture (one
Chromium for the session; tests/conftest.py imports it, so that every module shares it: two
Playwright drivers cannot run in one thread) and opens its own pages with `new_page`; where the
browser or the library is missing, the tests skip and say which one and how to install it.
Screenshots go to the test's temporary folder; with FACTPROBE_SCREENSHOTS=docs/images set, the
tests that keep one for the docs write it there instead (how docs/images/item-view-*.png are made)."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# A width at which the page must fit (the issue names 1,300 px as where the runs table overflowed).
VIEWPORT = {"width": 1300, "height": 900}


def missing() -> str | None:
    """Why no browser test can run here, or None."""
    if CHROMIUM is None:
        return "no chromium on PATH (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "no playwright (pip install -e '.[dev]'; the system chromium is used, no `playwright install`)"
    return None


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole session (it starts in about a second, but once is enough)."""
    reason = missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        # --no-sandbox: CI and developers run as root, where Chromium's sandbox refuses to start.
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield chromium
        finally:
            chromium.close()


@contextmanager
def new_page(browser, *, offline: bool = False, viewport: dict | None = None):
    """A fresh page of its own context; `offline` cuts the network, for a page that must need none.
    A script error on the page fails the test that opened it: errors are collected in `page.errors`."""
    context = browser.new_context(viewport=viewport or VIEWPORT, offline=offline)
    context.set_default_timeout(10_000)  # a page that never shows what a test waits for fails in 10 s, not 30
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    try:
        yield page
    finally:
        context.close()


def screenshot(page, name: str, scratch: Path) -> Path:
    """The page's viewport as `name` (a PNG) in FACTPROBE_SCREENSHOTS if set, else in `scratch`;
    cut to a 64-colour palette, which keeps a page of text and tables legible at a fifth the size."""
    from PIL import Image

    folder = Path(os.environ.get("FACTPROBE_SCREENSHOTS") or scratch)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    page.screenshot(path=str(target))
    with Image.open(target) as shot:
        small = shot.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(target, optimize=True)
    return target

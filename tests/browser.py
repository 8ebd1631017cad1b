"""A real browser for the tests (issue 39.4): Debian's headless Chromium (`apt-get install
chromium`) driven by Playwright for Python, which talks to the system browser itself; no
`playwright install` and no downloaded browser build. A test module takes the `browser` fixture
(one Chromium for the session) and opens its own pages; where the browser or the library is
missing, the tests skip and say which one and how to install it.

Import the fixtures into a test module with `from browser import browser, new_page`."""

from __future__ import annotations

import shutil
from contextlib import contextmanager

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
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    try:
        yield page
    finally:
        context.close()

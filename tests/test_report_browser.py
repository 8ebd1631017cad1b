"""The report's HTML in a real browser (issues 19.4, 39.4): headless Chromium (Debian's `chromium`
package, driven by Playwright: tests/browser.py) loads the page from a folder that holds nothing
else, with the network cut; every image decodes, the page asks for nothing outside itself, runs no
failing script, and its screenshot shows the plots. Skipped, with the reason, where no Chromium or
no Playwright is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser import new_page
from factprobe.probes.report import write_report
from factprobe.probes.report.loading import load_runs

# matplotlib's first colour (tab:blue), the bars and lines of the first run
TAB_BLUE = (31, 119, 180)
# What the page's images are once it has loaded: how many, and how many did not decode.
IMAGES = "() => { const all = [...document.images]; return [all.length, all.filter(i => !i.complete || i.naturalWidth === 0).length]; }"


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("browser")
    folder = base / "run"
    folder.mkdir()
    items = [{"id": f"i{k}", "relation": "P36", "bucket": ("0", "[1,10)")[k % 2], "correct": k % 3 == 0,
              "position_logprobs": [-2.0 + k / 10, -1.0]} for k in range(12)]
    aggregate = {"method": "ic-lke", "items": 12, "accuracy": 4 / 12,
                 "by_bucket": {"0": {"accuracy": 2 / 6, "correct": 2, "total": 6},
                               "[1,10)": {"accuracy": 2 / 6, "correct": 2, "total": 6}},
                 "by_relation": {"P36": {"accuracy": 4 / 12, "correct": 4, "total": 12}},
                 "reliability": [{"confidence": 0.3, "accuracy": 0.25, "count": 4},
                                 {"confidence": 0.8, "accuracy": 0.5, "count": 8}]}
    (folder / "run.json").write_text(json.dumps({"model": "hf:tiny", "method": "ic-lke", "options": {}}))
    (folder / "aggregate.json").write_text(json.dumps(aggregate))
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    report = write_report(load_runs([folder]), base / "report", "Browser check")
    # The page alone, without the PNGs beside it: it must carry its plots itself.
    alone = base / "alone"
    alone.mkdir()
    (alone / "report.html").write_text(report.html.read_text())
    return alone / "report.html"


def test_every_image_decodes_and_nothing_is_fetched(browser, page):
    asked: list[str] = []
    with new_page(browser, offline=True) as tab:
        tab.on("request", lambda request: asked.append(request.url))
        tab.goto(page.as_uri(), wait_until="load")
        assert tab.evaluate(IMAGES) == [4, 0]  # buckets, reliability, positions, relations
        assert tab.errors == []
    # Only the page itself: its images are data: URIs, no script or font comes from elsewhere.
    assert [url for url in asked if not url.startswith("data:")] == [page.as_uri()]


def test_the_screenshot_shows_the_plots(browser, page, tmp_path):
    import numpy as np
    from PIL import Image

    shot = tmp_path / "shot.png"
    with new_page(browser, offline=True, viewport={"width": 1200, "height": 900}) as tab:
        tab.goto(page.as_uri(), wait_until="load")
        tab.screenshot(path=str(shot), full_page=True)
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=int)
    blue = int((np.abs(pixels - np.array(TAB_BLUE)).max(axis=-1) <= 8).sum())
    assert blue > 2000  # the first run's bars and curves, drawn in the page

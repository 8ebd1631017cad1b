"""The report's HTML in a real browser (issue 19.4): headless Chromium (Debian's `chromium`
package) loads the page from a folder that holds nothing else, every image decodes, and the
screenshot shows the plots. Skipped where no Chromium is installed (`apt-get install chromium`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from factprobe.probes.report import write_report
from factprobe.probes.report.loading import load_runs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium)")
# matplotlib's first colour (tab:blue), the bars and lines of the first run
TAB_BLUE = (31, 119, 180)
# Reports the images that did not decode in the page's title, once everything has loaded.
PROBE = ("<script>window.addEventListener('load', () => { const all = [...document.images]; document.title = "
         "'images ' + all.length + ' broken ' + all.filter(i => !i.complete || i.naturalWidth === 0).length; });"
         "</script>")


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--virtual-time-budget=10000", *args], capture_output=True, text=True, timeout=120)


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
    (alone / "report.html").write_text(report.html.read_text().replace("</body>", PROBE + "</body>"))
    return alone / "report.html"


def test_every_image_decodes(page):
    dom = _chromium("--dump-dom", page.as_uri()).stdout
    found = re.search(r"<title>images (\d+) broken (\d+)</title>", dom)
    assert found, dom[:500]
    assert (int(found[1]), int(found[2])) == (4, 0)  # buckets, reliability, positions, relations


def test_the_screenshot_shows_the_plots(page, tmp_path):
    import numpy as np
    from PIL import Image

    shot = tmp_path / "shot.png"
    _chromium("--window-size=1200,4000", f"--screenshot={shot}", page.as_uri())
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=int)
    blue = int((np.abs(pixels - np.array(TAB_BLUE)).max(axis=-1) <= 8).sum())
    assert blue > 2000  # the first run's bars and curves, drawn in the page

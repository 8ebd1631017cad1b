"""The item view in a real browser (issue 39.4): headless Chromium (Debian's package, driven by
Playwright: tests/browser.py) opens the sample job's report (its items.html, offline) and the same
view served by `factprobe serve --runs` (a real process on 127.0.0.1), applies filters (run,
relation, right/wrong, runs disagree), opens the walkthrough's Germany-Berlin item, and checks
what is shown against the runs' items.jsonl: the rows the filters keep, the exact prompt, the
pick, the gold, each choice's score, and the item in the other runs. The sample job is
tests/fixtures/sample_job.tar.xz (the 10 runs `factprobe run` wrote with SmolLM2-135M-Instruct and
gemma-3-270m, test_report_items.py). Screenshots of both views: docs/images/item-view-report.png
and item-view-served.png (FACTPROBE_SCREENSHOTS=docs/images rewrites them). Skipped, with the
reason, where no Chromium or Playwright is installed."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from browser import new_page, screenshot
from conftest import run_cli
from test_report_items import GERMANY, unpack_sample
from test_service import serving

pytestmark = pytest.mark.slow
SAMPLE_GRAPH = Path(__file__).resolve().parent.parent / "kg" / "data" / "sample_wikidata.json"
LETTERS = "smollm2-135m-instruct--kdf--kdf"  # the run the filters pick: KDF, A-D letters
# The runs over the KDF probe set: an item's rows in the side-by-side, and what "disagree" compares.
KDF_RUNS = (LETTERS, "smollm2-135m-instruct--kdf-text--kdf", "gemma3-270m--kdf--kdf", "gemma3-270m--kdf-text--kdf")
FILTER = {"relation": "P36", "outcome": "wrong", "disagree": "true"}
VIEW = {"width": 1300, "height": 1150}  # tall enough for the screenshots to hold the side-by-side


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return unpack_sample(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def report(sample) -> Path:
    run_cli("report", *sorted((sample / "runs").iterdir()), "--out", str(sample / "report"), "--title",
            "factprobe: sample", check=True)
    return sample / "report"


@pytest.fixture(scope="module")
def served(sample):
    run_cli("ingest", "wikidata", str(SAMPLE_GRAPH), "--store", str(sample / "graph.sqlite"), "--quiet", check=True)
    args = ["--store", str(sample / "graph.sqlite"), "--runs", str(sample / "runs"), "--data", str(sample / "data")]
    with serving(args, sample / "server.log") as client:
        yield client
    log = (sample / "server.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


# -- what the files say ------------------------------------------------------------------------


def records(sample: Path, run: str) -> dict[str, dict]:
    lines = (sample / "runs" / run / "items.jsonl").read_text().splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


def expected_ids(sample: Path) -> list[str]:
    """The filter worked out from items.jsonl alone: LETTERS' P36 items it got wrong that another
    run over the same questions got right, in file order."""
    kdf = {run: records(sample, run) for run in KDF_RUNS}
    return [key for key, record in kdf[LETTERS].items()
            if record["relation"] == "P36" and record["correct"] is False
            and any(kdf[run][key]["correct"] is True for run in KDF_RUNS if key in kdf[run])]


def option_line(prompt: str, letter: str) -> str:
    """The option `letter` of the prompt's last question, as the prompt writes it ("C: Berlin")."""
    question = prompt.rsplit("\n\n", 1)[-1]
    [line] = [line for line in question.splitlines() if line.startswith(f"{letter}: ")]
    return line


def js_number(value: float) -> str:
    """A score as the page writes it: JavaScript's shortest form of the value rounded to 6 places."""
    rounded = round(value, 6)
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


# -- what the page shows -----------------------------------------------------------------------


def run_ids(tab) -> dict[str, str]:
    """The page's run ids by run folder name, from its runs table."""
    rows = tab.eval_on_selector_all("#runs-legend tr[data-run]",
                                    "rows => rows.map(r => [r.dataset.run, r.cells[3].textContent])")
    return {folder.rstrip("/").rsplit("/", 1)[-1]: run for run, folder in rows}


def apply_filters(tab) -> str:
    """Picks the run, then each of FILTER in the page's selects, as a reader would; the run's id."""
    tab.wait_for_selector("#runs-legend tr[data-run]", state="attached")
    run = run_ids(tab)[LETTERS]
    tab.select_option("#filter-run", run)
    for facet, value in FILTER.items():
        tab.select_option(f"#filter-{facet}", value)
    return run


def shown_ids(tab, count: int) -> list[str]:
    tab.wait_for_function("n => document.querySelectorAll('tr[data-testid=item-row]').length === n", arg=count)
    return tab.eval_on_selector_all("tr[data-testid=item-row]", "rows => rows.map(r => r.dataset.id)")


def check_the_germany_item(tab, sample: Path, run_id: dict[str, str]) -> None:
    """Opens GERMANY in LETTERS and checks the detail against items.jsonl, run by run."""
    tab.click(f"tr[data-testid=item-row][data-id='{GERMANY}']")
    tab.wait_for_selector("#item-detail:not([hidden])")
    record = records(sample, LETTERS)[GERMANY]
    prompt = record["prompt"]
    assert tab.text_content("#item-context") + tab.text_content("#item-question") == prompt  # exactly as scored
    assert tab.evaluate("document.getElementById('item-demonstrations').open") is False  # folded
    assert tab.is_visible("#item-question") and not tab.is_visible("#item-context")
    assert tab.text_content("#item-pick") == option_line(prompt, record["prediction"]) == "A: Rabat"
    assert tab.text_content("#item-gold") == option_line(prompt, record["answer"]) == "C: Berlin"
    assert record["object_label"] in tab.text_content("#item-names").split(" · ")
    assert tab.text_content("#item-outcome").startswith("wrong")
    choices = tab.eval_on_selector_all(
        "tr[data-testid=choice-row]",
        "rows => rows.map(r => [r.cells[0].textContent, r.dataset.picked, r.dataset.gold, r.cells[3].textContent])")
    assert choices == [[option_line(prompt, letter), str(letter == record["prediction"]).lower(),
                        str(letter == record["answer"]).lower(), js_number(score)]
                       for letter, score in zip("ABCD", record["letter_logprobs"])]
    # The same question in every run over it: each run's pick and verdict as its items.jsonl has them.
    tab.wait_for_function("() => document.querySelectorAll('tr[data-testid=side-row]').length === 4")
    side = tab.eval_on_selector_all("tr[data-testid=side-row]", "rows => rows.map(r => [r.dataset.run, "
                                    "r.dataset.current, r.cells[2].textContent, r.cells[4].textContent])")
    expected = []
    for run in KDF_RUNS:
        theirs = records(sample, run)[GERMANY]
        pick = option_line(theirs["prompt"], theirs["prediction"]) if "prediction" in theirs else None
        expected.append([run_id[run], str(run == LETTERS).lower(), pick, "right" if theirs["correct"] else "wrong"])
    assert sorted(side) == sorted(expected)
    assert {outcome for *_, outcome in side} == {"right", "wrong"}  # it is an item the runs disagree on


def test_the_filters_premise_read_from_the_files(sample):
    # Before any page: the filter keeps 8 of LETTERS' 96 items, the walkthrough's Germany among them.
    ids = expected_ids(sample)
    assert len(records(sample, LETTERS)) == 96 and len(ids) == 8 and GERMANY in ids


def test_the_reports_item_view_filters_and_opens_an_item(browser, sample, report, tmp_path):
    asked: list[str] = []
    with new_page(browser, offline=True, viewport=VIEW) as tab:
        tab.on("request", lambda request: asked.append(request.url))
        tab.goto((report / "report.html").as_uri(), wait_until="load")
        assert tab.evaluate("[document.documentElement.scrollWidth, innerWidth]") == [1300, 1300]  # 39.3: it fits
        tab.click("a[href='items.html']")
        tab.wait_for_selector("body[data-ready=true]")
        total = sum(1 for _ in tab.query_selector_all("tr[data-testid=item-row]"))
        assert total == 100  # the first page of the 1,162 rows; no sample at this size
        assert tab.text_content("#item-count") == "1162 row(s) match of 1162" and not tab.query_selector("#sample-notice")
        apply_filters(tab)
        ids = expected_ids(sample)
        assert shown_ids(tab, len(ids)) == ids
        assert tab.text_content("#item-count") == f"{len(ids)} row(s) match of 1162"
        check_the_germany_item(tab, sample, run_ids(tab))
        screenshot(tab, "item-view-report.png", tmp_path)
        assert tab.errors == []
    assert {url.split("#")[0] for url in asked} == {(report / "report.html").as_uri(), (report / "items.html").as_uri()}


def test_a_link_reopens_the_filters_and_the_item(browser, sample, report):
    # The filter and the open item live in the page's address: the address, opened again (a
    # reload, a link sent to a colleague), shows the same rows and the same item.
    with new_page(browser, offline=True) as tab:
        tab.goto((report / "items.html").as_uri(), wait_until="load")
        apply_filters(tab)
        ids = expected_ids(sample)
        shown_ids(tab, len(ids))
        tab.click(f"tr[data-testid=item-row][data-id='{GERMANY}']")
        link = tab.url
        tab.goto("about:blank")
        tab.goto(link, wait_until="load")
        assert shown_ids(tab, len(ids)) == ids
        assert tab.is_visible("#item-detail") and tab.text_content("#item-pick") == "A: Rabat"
        assert tab.errors == []


def test_the_served_item_view_filters_and_opens_an_item(browser, sample, served, tmp_path):
    asked: list[str] = []
    with new_page(browser, viewport=VIEW) as tab:
        tab.on("request", lambda request: asked.append(request.url))
        tab.goto(served.base + "/items/view", wait_until="load")
        run = apply_filters(tab)
        ids = expected_ids(sample)
        assert shown_ids(tab, len(ids)) == ids
        assert tab.text_content("#item-count") == f"{len(ids)} row(s) match"
        check_the_germany_item(tab, sample, run_ids(tab))
        screenshot(tab, "item-view-served.png", tmp_path)
        link = tab.url  # the served page keeps its filters and open item in its address too
        tab.goto("about:blank")
        tab.goto(link, wait_until="load")
        assert shown_ids(tab, len(ids)) == ids
        tab.wait_for_selector("#item-detail:not([hidden])")
        assert tab.text_content("#item-pick") == "A: Rabat"
        assert tab.errors == []
    assert [url for url in asked if not url.startswith(served.base + "/items")] == []  # nothing from elsewhere
    # The JSON endpoint the page used answers a script the same, with the filters as parameters.
    query = urllib.parse.urlencode({"run": run, **FILTER})
    with urllib.request.urlopen(f"{served.base}/items?{query}", timeout=30) as answer:
        page = json.load(answer)
    assert page["total"] == len(ids) and [row["id"] for row in page["rows"]] == ids
    [germany] = [row for row in page["rows"] if row["id"] == GERMANY]
    record = records(sample, LETTERS)[GERMANY]
    assert germany["context"] + germany["question"] == record["prompt"]
    assert (germany["pick"], germany["gold"], germany["outcome"]) == ("A: Rabat", "C: Berlin", "wrong")

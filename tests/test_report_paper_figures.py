"""Issue 48 item 3 (and the report's share of item 5): figures a reviewer accepts. The bucket plot
has a panel per method with its chance line, a colour per model and error bars on every bar; the
heatmap names relations and shows intervals; distractor runs show Min@n and Avg@n by bucket and
relation; no table keeps an empty row or column; headline buckets are in numeric order; probe
sets not found are warned of, and the item view names the entities it can; no table word breaks
across lines in Chromium at 1,000, 1,300 and 1,600 px. Runs are written with the real aggregator
and read by the real report; expected values are worked out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser import new_page
from cli_runner import run_cli
from factprobe.probes.document import table
from factprobe.probes.measures.uncertainty import wilson
from factprobe.probes.methods import registered
from factprobe.probes.report.items_data import items_payload, probe_sets_found, report_names
from factprobe.probes.report.labels import Names
from factprobe.probes.report.loading import load_runs
from factprobe.probes.report.plots import plot_buckets, plot_relations
from factprobe.probes.report.views import figure_runs
from test_report_figures import write
from test_report_items import unpack_sample
from test_reports import table_rows


def iclke(k: int, correct: bool) -> dict:
    # a 20-way IC-LKE item: chance 1/20
    return {"id": f"i{k}", "fact": f"f{k}", "relation": "P36", "subject_label": "s", "object_label": "o",
            "bucket": ("0", "[1,10)")[k % 2], "frequency": k % 2 * 5, "prediction": "o" if correct else "x",
            "correct": correct, "choices": 20, "probability": 0.5, "gold_logprob": -1.0}


def kdf(k: int, correct: bool) -> dict:
    # a 4-option KDF item (a score per letter): chance 1/4
    return {"id": f"k{k}", "fact": f"g{k}", "relation": "P36", "subject_label": "s", "object_label": "o",
            "bucket": "0", "frequency": 0, "prediction": "A" if correct else "B", "answer": "A", "correct": correct,
            "letter_logprobs": [-1.0, -2.0, -3.0, -4.0]}


@pytest.fixture
def four_runs(tmp_path):
    """Two models x (IC-LKE, KDF). Model a: IC-LKE 3 of 4 right (bucket 0: 2 of 2, [1,10): 1 of 2);
    model b: IC-LKE 1 of 4; KDF: a 1 of 2, b 2 of 2, all in bucket 0."""
    folders = [write(tmp_path / "a-ic", "ic-lke", [iclke(0, True), iclke(1, True), iclke(2, True), iclke(3, False)],
                     model="hf:m-a", probes="mc.jsonl"),
               write(tmp_path / "b-ic", "ic-lke", [iclke(0, True), iclke(1, False), iclke(2, False), iclke(3, False)],
                     model="hf:m-b", probes="mc.jsonl"),
               write(tmp_path / "a-kdf", "kdf", [kdf(0, True), kdf(1, False)], model="hf:m-a", probes="kdf.jsonl"),
               write(tmp_path / "b-kdf", "kdf", [kdf(0, True), kdf(1, True)], model="hf:m-b", probes="kdf.jsonl")]
    return load_runs(folders)


def test_bucket_plot_has_a_panel_per_method_with_its_chance_and_a_colour_per_model(four_runs, tmp_path):
    from matplotlib.colors import to_hex

    fig = plot_buckets(figure_runs(four_runs), tmp_path / "b.png")
    assert (tmp_path / "b.png").is_file()
    assert [ax.get_title() for ax in fig.axes] == ["ic-lke: accuracy by frequency bucket",
                                                   "kdf: accuracy by frequency bucket"]
    chance = [[tuple(line.get_ydata()) for line in ax.get_lines() if line.get_linestyle() == "--"] for ax in fig.axes]
    assert chance == [[(0.05, 0.05)], [(0.25, 0.25)]]
    for ax in fig.axes:
        bars = [c for c in ax.containers if hasattr(c, "patches")]
        # one bar group per run, coloured by its model: m-a tab:blue, m-b tab:orange, in both panels
        assert [to_hex(c.patches[0].get_facecolor()) for c in bars] == ["#1f77b4", "#ff7f0e"]
        assert all(c.errorbar is not None for c in bars)  # an interval on every bar
        assert all(t.get_fontsize() >= 9 for t in ax.texts)  # the values and counts on the bars
    ic = fig.axes[0]
    heights = [[round(p.get_height(), 4) for p in c.patches] for c in ic.containers if hasattr(c, "patches")]
    assert heights == [[1.0, 0.5], [0.5, 0.0]]  # a: 2/2, 1/2; b: 1/2, 0/2
    # the error bar of a's bucket 0 runs over Wilson's interval for 2 of 2
    low, high = wilson(2, 2).low, wilson(2, 2).high
    segments = next(c for c in ic.containers if hasattr(c, "patches")).errorbar.lines[2][0].get_segments()
    assert segments[0][0][1] == pytest.approx(low) and segments[0][1][1] == pytest.approx(high)


def test_heatmap_names_relations_and_shows_intervals(four_runs, tmp_path):
    names = Names(relations={"P36": "capital"})
    fig = plot_relations(figure_runs(four_runs), tmp_path / "h.png", names)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["capital (P36)"]
    w = wilson(3, 4)  # run R1 (m-a, ic-lke): 3 of 4
    assert ax.texts[0].get_text() == f"0.75\n[{w.low:.2f}, {w.high:.2f}]"
    assert all(t.get_fontsize() >= 9 for t in ax.texts)


def distractor_run(folder: Path, probes: str = "d.jsonl") -> Path:
    """A distractor run with a hand-made aggregate: strategy random, bucket 0 Min@n 0.5 [0.2, 0.8],
    Avg@n 0.75 [0.3, 0.9] over 4 facts, relation P36 the same."""
    entry = {"min_at_n": 0.5, "avg_at_n": 0.75, "items": 4,
             "min_at_n_interval": {"low": 0.2, "high": 0.8, "n": 4, "few": True},
             "avg_at_n_interval": {"low": 0.3, "high": 0.9, "n": 4, "few": True}}
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"model": "hf:m-a", "method": "distractor", "options": {},
                                                 "probes": probes, "probes_sha256": "cd" * 32}))
    (folder / "aggregate.json").write_text(json.dumps({
        "method": "distractor", "items": 4, "accuracy": None, "by_relation": {}, "by_bucket": {},
        "by_strategy": {"random": {**entry, "by_bucket": {"0": entry}, "by_relation": {"P36": entry}}}}))
    records = [{"id": "d1", "fact": "Q1$aa", "relation": "P36", "subject_label": "Croatia", "object_label": "Zagreb",
                "bucket": "0", "correct": None, "by_strategy": {"random": {"min_at_n": 1.0, "avg_at_n": 1.0}},
                "per_cloze": [{"cloze": "The capital of Croatia is", "log_plausibility": {"Q2": -1.0, "Q3": -5.0}}]},
               {"id": "d2", "fact": "Q2$bb", "relation": "P36", "subject_label": "Zagreb", "object_label": "x",
                "bucket": "0", "correct": None, "by_strategy": {"random": {"min_at_n": 0.0, "avg_at_n": 0.5}},
                "per_cloze": [{"cloze": "The capital of Zagreb is", "log_plausibility": {"Q3": -1.0, "Q4": -2.0}}]}]
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def test_distractor_runs_show_min_at_n_by_bucket_and_relation(tmp_path):
    from factprobe.probes.report import write_report

    write_report(load_runs([distractor_run(tmp_path / "d")]), tmp_path / "report", "T")
    markdown = (tmp_path / "report" / "report.md").read_text()
    cell = "Min@n 0.5000 \\[0.20–0.80 few\\]; Avg@n 0.7500 \\[0.30–0.90 few\\] (4)"
    assert f"| Bucket | R1 random |\n|---|---|\n| 0 | {cell} |" in markdown
    assert f"| Relation | R1 random |\n|---|---|\n| P36 | {cell} |" in markdown
    assert (tmp_path / "report" / "accuracy_by_bucket.png").is_file()


def test_tables_keep_no_empty_row_or_column():
    made = table(("Name", "A", "B", "C"), [("x", "–", "1", ""), ("y", "–", "–", ""), ("z", "–", "2", "")])
    assert made.headers == ("Name", "B")
    assert made.rows == (("x", "1"), ("z", "2"))


def test_headline_lists_buckets_by_lower_edge():
    # the keys as a text sort leaves them would read [10,100), [100,inf), 0, [1,10) here
    aggregate = {"accuracy": 0.5, "by_bucket": {"[10,100)": {"accuracy": 0.3}, "[100,inf)": {"accuracy": 0.4},
                                                "0": {"accuracy": 0.1}, "[1,10)": {"accuracy": 0.2}}}
    line = registered()["kdf"].headline(aggregate, None)
    assert line.endswith("by bucket 0 0.10, [1,10) 0.20, [10,100) 0.30, [100,inf) 0.40")


def test_missing_probe_set_is_warned_of_and_picks_are_named(tmp_path):
    run = distractor_run(tmp_path / "deep" / "er" / "d", probes="gone.jsonl")
    done = run_cli("report", str(run), "--out", str(tmp_path / "report"), check=True)
    expected = (f"R1 ({run}): probe set gone.jsonl not found beside the run, in its parent or ../probesets/; "
                "the item view shows what items.jsonl holds")
    assert f"warning: {expected}" in done.stderr
    lines = (tmp_path / "report" / "report.md").read_text().splitlines()
    assert lines[4].startswith("Warning: R1 (") and "gone.jsonl not found beside the run" in lines[4]
    runs = load_runs([run])
    payload = items_payload(runs, names=report_names(runs, probe_sets_found(runs)))
    # d1's best-scored entity is Q2, which d2's fact id names (Q2$bb, subject_label Zagreb): the gold
    first = next(r for r in payload["rows"] if r["id"] == "d1")
    assert first["pick"] == "Zagreb"
    assert [(c["text"], c["gold"]) for c in first["choices"]] == [("Zagreb", True), ("Q3", False)]
    second = next(r for r in payload["rows"] if r["id"] == "d2")
    assert second["pick"] == "Q3"  # no record names Q3: the id stays


# -- no word split across lines, in Chromium ----------------------------------------------------

# Every word (a run of letters and digits) of every table cell whose boxes lie on more than one
# line: what "Ru n" and "Scor ed" were. A line may end after a hyphen, a dash, a slash or at a
# <wbr>, as browsers break "smollm2-135m-instruct--kdf"; never between two letters or digits.
SPLIT_WORDS = """() => {
  const split = [];
  for (const cell of document.querySelectorAll("th, td")) {
    if (!cell.getClientRects().length) continue;  // folded away (a closed <details>)
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/[\\p{L}\\p{N}]+/gu)) {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) split.push(m[0]);
      }
    }
  }
  return split;
}"""


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory) -> Path:
    sample = unpack_sample(tmp_path_factory.mktemp("words"))
    run_cli("report", *map(str, sorted((sample / "runs").iterdir())), "--out", str(sample / "report"), check=True)
    return sample / "report"


@pytest.mark.parametrize("width", [1000, 1300, 1600])
def test_no_table_word_breaks_across_lines(browser, sample_report, width):
    with new_page(browser, offline=True, viewport={"width": width, "height": 900}) as tab:
        tab.goto((sample_report / "report.html").as_uri(), wait_until="load")
        assert tab.evaluate(SPLIT_WORDS) == []
        tab.goto((sample_report / "items.html").as_uri(), wait_until="load")
        tab.wait_for_selector("tr[data-testid=item-row]")
        assert tab.evaluate(SPLIT_WORDS) == []
        tab.locator("tr[data-testid=item-row]").first.click()
        assert tab.evaluate(SPLIT_WORDS) == []
        if width >= 1100:  # side by side: the list a quarter of the page, not 40%
            share = tab.evaluate("() => document.getElementById('item-list-pane').getBoundingClientRect().width"
                                 " / document.getElementById('items-layout').getBoundingClientRect().width")
            assert 0.2 <= share <= 0.32
        assert tab.errors == []


def test_the_served_item_view_names_the_picks_as_the_report_does(tmp_path):
    """GET /items over the same run: the picks and choices the report names, named alike."""
    from fastapi.testclient import TestClient

    from factprobe.cli.service import ServiceConfig, create_app

    run = distractor_run(tmp_path / "runs" / "d", probes="gone.jsonl")
    runs = load_runs([run])
    report = {r["id"]: r for r in items_payload(runs, names=report_names(runs, probe_sets_found(runs)))["rows"]}
    with TestClient(create_app(ServiceConfig(tmp_path / "none.sqlite", tmp_path / "data",
                                             runs=(tmp_path / "runs",)))) as client:
        answer = client.get("/items", params={"limit": 500})
    assert answer.status_code == 200, answer.text
    served = {r["id"]: r for r in answer.json()["rows"]}
    assert served["d1"]["pick"] == "Zagreb" and served["d2"]["pick"] == "Q3"
    for key in ("d1", "d2"):
        assert [(c["text"], c["gold"]) for c in served[key]["choices"]] == \
            [(c["text"], c["gold"]) for c in report[key]["choices"]]
        assert served[key]["notes"] == report[key]["notes"]

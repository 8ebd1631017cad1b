"""Accuracy against popularity (issue 46 item 5): a PopQA import's items carry their subject's
page views as `popularity`, every method's records keep it, and the report bins and draws it as
PopQA's figures do, in log bins as frequency is (0 | [1,2) | [2,4) | ... | [64,128))."""

from __future__ import annotations

from pathlib import Path

from factprobe.probes.methods.base import base_record
from factprobe.probes.report import write_report
from factprobe.probes.report.loading import load_runs
from test_report_figures import write
from test_reports import table_rows


def record(k: int, popularity: int | None, correct: bool) -> dict:
    item = {"id": f"popqa:{k}", "fact": f"f{k}", "relation": "P36", "subject_label": "s", "object_label": "o",
            "bucket": None, "frequency": None, "popularity": popularity}
    return base_record(item, correct=correct, prediction="o" if correct else "x")


def test_records_keep_popularity_and_the_report_bins_it(tmp_path):
    records = [record(0, 0, True), record(1, 1, False), record(2, 3, True), record(3, 3, True), record(4, 100, False),
               record(5, None, True)]
    assert records[4]["popularity"] == 100 and "popularity" not in records[5]
    run = write(tmp_path / "r", "kdf", records)
    files = write_report(load_runs([run]), tmp_path / "report", "T")
    markdown = files.markdown.read_text()
    rows = table_rows(markdown, "| Run | Popularity bin |")
    assert [(r[1], r[3], r[4]) for r in rows] == [("0", "1", "1.0000 (1/1)"), ("[1,2)", "1", "0.0000 (0/1)"),
                                                 ("[2,4)", "2", "1.0000 (2/2)"), ("[64,128)", "1", "0.0000 (0/1)")]
    assert "Items without a popularity, left out: R1 1." in markdown
    assert (tmp_path / "report" / "accuracy_by_popularity.png").is_file()
    csv = (tmp_path / "report" / "accuracy_by_popularity.csv").read_text().splitlines()
    assert len(csv) == 5 and csv[1].startswith("R1,")


def test_no_popularity_no_section(tmp_path):
    run = write(tmp_path / "r", "kdf", [record(0, None, True), record(1, None, False)])
    files = write_report(load_runs([run]), tmp_path / "report", "T")
    assert "Accuracy by popularity" not in files.markdown.read_text()
    assert not (tmp_path / "report" / "accuracy_by_popularity.png").exists()

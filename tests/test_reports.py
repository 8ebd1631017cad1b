"""`factprobe report` and `factprobe compare` over run folders written by hand: every expected
number below is worked out in the comments, not by the code under test."""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

import pytest

from conftest import run_cli

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
BOLD = "<b>bold</b>"  # a relation label that must come out escaped in HTML
TOO_FEW = "n/a (fewer than 5 relations)"

# Six items of one probe set: (id, relation, bucket).
ITEMS = [("i1", "P36", "0"), ("i2", "P36", "[1,10)"), ("i3", "P36", "[100,inf)"),
         ("i4", "P17", "[10,100)"), ("i5", BOLD, "[1,10)"), ("i6", BOLD, None)]
# Known by A: i1 i2 i4.  Known by B: i1 i3 i4 i5.
CORRECT_A = [True, True, False, True, False, False]
CORRECT_B = [True, False, True, True, True, False]


def breakdown(records: list[dict], key: str) -> dict:
    """What aggregate.json holds per relation or bucket (the test's own arithmetic)."""
    out: dict[str, dict] = {}
    for r in records:
        name = "none" if r[key] is None else r[key]
        entry = out.setdefault(name, {"correct": 0, "total": 0})
        entry["correct"] += float(r["correct"])
        entry["total"] += 1
    for entry in out.values():
        entry["accuracy"] = entry["correct"] / entry["total"]
    return out


def write_run(folder: Path, *, model: str, method: str, correct: list, probes: str = "capitals.jsonl",
              sha: str | None = "ab" * 32, extra: dict | None = None, items=ITEMS) -> Path:
    folder.mkdir(parents=True)
    records = [{"id": i, "fact": f"f-{i}", "relation": rel, "subject_label": "s", "object_label": "o",
                "bucket": bucket, "frequency": None, "correct": c}
               for (i, rel, bucket), c in zip(items, correct)]
    (folder / "run.json").write_text(json.dumps({"model": model, "method": method, "options": {}, "seed": 0,
                                                 "probes": probes, "probes_sha256": sha, "kind": "icl-mc"}))
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    aggregate = {"method": method, "items": len(records),
                 "accuracy": sum(map(float, correct)) / len(correct), "scored": len(correct),
                 "by_relation": breakdown(records, "relation"), "by_bucket": breakdown(records, "bucket"),
                 **(extra or {})}
    (folder / "aggregate.json").write_text(json.dumps(aggregate))
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("runs")
    at_k = {"accuracy_at_k": {"0.5": {"accuracy": 0.75, "items": 4}, "0.9": {"accuracy": None, "items": 0}}}
    a = write_run(base / "a", model="hf:model-a", method="ic-lke", correct=CORRECT_A, extra=at_k)
    b = write_run(base / "b", model="hf:model-b", method="ic-lke", correct=CORRECT_B, extra=at_k)
    # A BELIEF run over two of the items: shares, reliability bins, and a breakdown this report
    # has no dedicated table for (as BELIEF-ICL adds), plus a key nobody knows yet.
    belief = {"acc_at_1": {"mean": 0.5, "sd": 0.1, "min": 0.4, "max": 0.6, "range": 0.2, "draws": 10},
              "consistency": 0.25, "overconfidence": 0.125, "one_word_ratio": 1.0,
              "coverage": {"average": 0.5, "maximum": 0.75, "oracle": 1.0},
              "reliability": [{"confidence": 0.2, "accuracy": 0.0, "count": 2},
                              {"confidence": 0.9, "accuracy": 1.0, "count": 2}],
              "by_setting": {"zero-shot": {"accuracy": 0.5, "items": 2, "consistency": 0.5,
                                           "reliability": [{"confidence": 0.5, "accuracy": 0.5, "count": 2}]}},
              "something_new": [1, 2, 3]}
    c = write_run(base / "c", model="hf:model-c", method="belief", correct=[1.0, 0.5], probes="cloze.jsonl",
                  sha="cd" * 32, extra=belief, items=ITEMS[:2])
    return {"a": a, "b": b, "c": c}


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    # The overlap numbers below pin the pooled, item-level definitions (before issue 20); the
    # paper's defaults are pinned in test_paper_compare.py.
    run_cli("report", str(runs["a"]), str(runs["b"]), str(runs["c"]), "--out", str(out), "--title", "Capitals",
            "--known", "all-prompts", "--sharing", "jaccard", check=True)
    return out


def table_rows(markdown: str, header_start: str) -> list[list[str]]:
    """The rows of the Markdown table whose header line starts with `header_start`, each cell's
    text as a renderer shows it (backslash escapes such as `\\[` read back)."""
    lines = markdown.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", c.strip()) for c in line.strip("|").split(" | ")])
    return rows


def test_bucket_table_in_bucket_order_with_counts(report):
    rows = table_rows((report / "report.md").read_text(), "| Bucket |")
    # Runs sort by model: R1 = model-a, R2 = model-b, R3 = model-c (only i1 "0" and i2 "[1,10)").
    # A over [1,10): i2 right, i5 wrong -> 0.5 (1/2). B: i2 wrong, i5 right -> 0.5 (1/2); C: i2 share 0.5.
    assert rows == [
        ["0", "1.0000 (1/1)", "1.0000 (1/1)", "1.0000 (1/1)"],
        ["[1,10)", "0.5000 (1/2)", "0.5000 (1/2)", "0.5000 (0.5000/1)"],
        ["[10,100)", "1.0000 (1/1)", "1.0000 (1/1)", "–"],
        ["[100,inf)", "0.0000 (0/1)", "1.0000 (1/1)", "–"],
        ["none", "0.0000 (0/1)", "0.0000 (0/1)", "–"],
    ]


def test_overlap_of_the_two_runs_over_one_probe_set(report):
    markdown = (report / "report.md").read_text()
    rows = table_rows(markdown, "| A | B |")
    # Only R1 and R2 share a method and a probe set. Known A = {i1,i2,i4}, B = {i1,i3,i4,i5}:
    # both {i1,i4} = 2, only A {i2} = 1, only B {i3,i5} = 2, neither {i6} = 1.
    # A->B = 2/3, B->A = 2/4, sharing = 2/5.
    # Per-relation accuracies A = (P17 1, P36 2/3, bold 0), B = (1, 2/3, 1/2): Pearson = 13/14 (by
    # hand: sxy = 39/162, sxx = 42/81, syy = 42/324), Kendall tau-b = 1 (all three pairs concordant).
    # McNemar: discordant 1 and 2 -> p = 2 * (C(3,0) + C(3,1)) / 2^3 = 1.
    # Three relations are too few for a correlation to mean anything: the cells say so.
    assert rows == [["R1", "R2", "ic-lke", "capitals.jsonl", "6", "0.6667", "0.5000", "0.4000", "2", "1", "2", "1",
                     "3", TOO_FEW, TOO_FEW, "1"]]
    assert "when that share is 1.0" in markdown


def test_the_overlap_table_prints_a_correlation_with_its_fisher_interval(tmp_path):
    """Seven relations of one item each: A knows P1-P4, B knows P1-P3 and P5. Both correlations of
    two 0/1 vectors are the phi coefficient (n11 n00 - n10 n01) / sqrt(n1. n0. n.1 n.0) =
    (3*2 - 1*1) / sqrt(4*3*4*3) = 5/12, and each carries its 95% interval by Fisher's z:
    tanh(atanh(5/12) -+ 1.96 * SE), SE = 1/sqrt(7 - 3) for Pearson, sqrt(0.437 / (7 - 4)) for Kendall."""
    items = [(f"i{k}", f"P{k}", "0") for k in range(1, 8)]
    a = write_run(tmp_path / "a", model="hf:model-a", method="ic-lke", items=items,
                  correct=[True, True, True, True, False, False, False])
    b = write_run(tmp_path / "b", model="hf:model-b", method="ic-lke", items=items,
                  correct=[True, True, True, False, True, False, False])
    run_cli("report", str(a), str(b), "--out", str(tmp_path / "out"), check=True)
    row = table_rows((tmp_path / "out" / "report.md").read_text(), "| A | B |")[0]
    z, z95 = math.atanh(5 / 12), 1.959963984540054
    pearson = [math.tanh(z - z95 / 2), math.tanh(z + z95 / 2)]
    kendall = [math.tanh(z - z95 * math.sqrt(0.437 / 3)), math.tanh(z + z95 * math.sqrt(0.437 / 3))]
    assert row[-4:-1] == ["7", f"0.4167 [{pearson[0]:.4f}, {pearson[1]:.4f}]",
                          f"0.4167 [{kendall[0]:.4f}, {kendall[1]:.4f}]"]
    assert row[-3] == "0.4167 [-0.4902, 0.8904]"  # the same, read off a calculator


def test_overlap_under_the_default_definitions_shows_both_sharing_rates(runs, tmp_path):
    """BELIEF's sharing rate (../shared/papers/000_d5e47173cc9830b1.txt:271) is asymmetric: the
    default report gives each run's rate in a column of its own."""
    run_cli("report", str(runs["a"]), str(runs["b"]), "--out", str(tmp_path), check=True)
    markdown = (tmp_path / "report.md").read_text()
    header = next(line for line in markdown.splitlines() if line.startswith("| A | B |"))
    assert "| Sharing of A's | Sharing of B's |" in header
    # Per relation (IC-LKE's known): A->B = mean(P36 1/2, P17 1) = 0.75 (bold: A knows none, left
    # out); B->A = mean(P36 1/2, P17 1, bold 0) = 0.5. Sharing, pooled: both {i1, i4} = 2 of A's 3
    # known and of B's 4.
    assert table_rows(markdown, "| A | B |") == [
        ["R1", "R2", "ic-lke", "capitals.jsonl", "6", "0.7500", "0.5000", "0.6667", "0.5000", "2", "1", "2", "1",
         "3", TOO_FEW, TOO_FEW, "1"]]
    assert "--sharing asymmetric, BELIEF's" in markdown
    assert (tmp_path / "overlap.png").read_bytes().startswith(PNG_MAGIC)


def test_method_tables_and_unknown_keys(report):
    markdown = (report / "report.md").read_text()
    runs_rows = table_rows(markdown, "| Run | Label |")
    # each run's measure is its method's (issue 39.3): BELIEF's is Acc@1, not the mean share (0.75)
    assert [(r[0], r[1], r[2], r[3], r[5], r[7]) for r in runs_rows] == [
        ("R1", "model-a / ic-lke", "hf:model-a", f"capitals.jsonl ({'ab' * 6})", "6", "Accuracy 0.5000"),  # 3 of 6
        ("R2", "model-b / ic-lke", "hf:model-b", f"capitals.jsonl ({'ab' * 6})", "6", "Accuracy 0.6667"),  # 4 of 6
        # BELIEF's fluctuation, the range of the draws: 0.6 - 0.4 (issue 45.7)
        ("R3", "model-c / belief", "hf:model-c", f"cloze.jsonl ({'cd' * 6})", "2", "Acc@1 0.5000 ± 0.1000 (range 0.2000)"),
    ]
    # no choices in these records: no chance level (issue 45.8), and no column of "–" (issue 48.3)
    assert "| Chance |" not in next(line for line in markdown.splitlines() if line.startswith("| Run | Label |"))
    # aggregates written before intervals existed have none; options set away from the defaults are named
    assert all(r[8] for r in runs_rows)
    assert table_rows(markdown, "| Run | Acc@1") == [["R3", "0.5000 ± 0.1000 (range 0.2000)", "0.2500", "0.1250", "1.0000",
                                                    "0.5000 / 0.7500 / 1.0000"]]
    # no entry has an interval: that column is left out (issue 48.3)
    assert ["R1", "0.5", "0.7500", "4"] in table_rows(markdown, "| Run | K |")
    assert ["R1", "0.9", "n/a", "0"] in table_rows(markdown, "| Run | K |")
    assert table_rows(markdown, "| Run | Setting |") == [["R3", "zero-shot", "0.5000", "2", "0.5000"]]


def test_plots_are_pngs(report):
    for name in ("accuracy_by_bucket.png", "reliability.png", "relation_heatmap.png", "overlap.png"):
        assert (report / name).read_bytes()[:8] == PNG_MAGIC, name
    # The HTML carries them itself (data URIs), so it can travel alone; the Markdown links the files.
    page = (report / "report.html").read_text()
    sources = re.findall(r'<img src="([^"]*)" alt="[^"]*" title="([^"]*)">', page)
    assert sorted(t for _, t in sources) == sorted(("accuracy_by_bucket.png", "reliability.png",
                                                    "relation_heatmap.png", "overlap.png"))
    for source, name in sources:
        assert source.startswith("data:image/png;base64,")
        assert base64.b64decode(source.split(",", 1)[1]) == (report / name).read_bytes()
    assert page.count("<img ") == len(sources)
    assert "](accuracy_by_bucket.png)" in (report / "report.md").read_text()


def test_html_escapes_labels(report):
    page = (report / "report.html").read_text()
    assert BOLD not in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "<style>" in page and "<title>Capitals</title>" in page
    assert "\\<b\\>bold\\</b\\>" in (report / "report.md").read_text()  # literal in Markdown too


def test_report_is_deterministic_whatever_the_order(runs, report, tmp_path):
    again = tmp_path / "again"
    run_cli("report", str(runs["c"]), str(runs["b"]), str(runs["a"]), "--out", str(again), "--title", "Capitals",
            "--known", "all-prompts", "--sharing", "jaccard", check=True)
    for name in ("report.md", "report.html"):
        assert (again / name).read_bytes() == (report / name).read_bytes(), name


def test_missing_or_broken_run_folder(runs, tmp_path):
    empty = tmp_path / "not-a-run"
    empty.mkdir()
    proc = run_cli("report", str(runs["a"]), str(empty), "--out", str(tmp_path / "r"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and str(empty) in proc.stderr and "run.json" in proc.stderr
    assert not (tmp_path / "r" / "report.md").exists()

    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("run.json", "items.jsonl"):
        (broken / name).write_text((runs["a"] / name).read_text())
    (broken / "aggregate.json").write_text("{not json")
    proc = run_cli("compare", str(runs["a"]), str(broken))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "aggregate.json:1: not JSON" in proc.stderr


def test_compare_json(runs):
    proc = run_cli("compare", str(runs["a"]), str(runs["b"]), "--json", "--known", "all-prompts", "--sharing",
                   "jaccard", check=True)
    assert proc.stderr == ""  # same probe set: no warning
    data = json.loads(proc.stdout)
    assert data["same_probe_set"] is True
    assert data["accuracy"]["a"] == pytest.approx(0.5) and data["accuracy"]["b"] == pytest.approx(4 / 6)
    assert data["accuracy"]["difference"] == pytest.approx(1 / 6)
    assert data["overlap"]["both"] == 2 and data["overlap"]["only_a"] == 1
    assert data["overlap"]["only_b"] == 2 and data["overlap"]["neither"] == 1
    assert data["overlap"]["subsumption_a_to_b"] == pytest.approx(2 / 3)
    assert data["overlap"]["subsumption_b_to_a"] == pytest.approx(0.5)
    assert data["overlap"]["sharing"] == pytest.approx(0.4)
    assert data["overlap"]["pearson"] == pytest.approx(13 / 14)
    assert data["overlap"]["kendall_tau"] == pytest.approx(1.0)
    assert data["overlap"]["definitions"] == {"known": "all-prompts", "sharing": "jaccard"}
    # its two items differ by 1 and 0: a resample's mean difference is 0, 0.5 or 1
    interval = {"low": 0.0, "high": 1.0, "n": 2, "resamples": 1000, "seed": 0, "method": "paired bootstrap"}
    assert data["by_relation"][BOLD] == {"a": 0.0, "b": 0.5, "difference": 0.5, "total_a": 2, "total_b": 2,
                                         "difference_interval": interval}
    assert data["by_bucket"]["[100,inf)"]["difference"] == pytest.approx(1.0)
    assert list(data["by_bucket"]) == ["0", "[1,10)", "[10,100)", "[100,inf)", "none"]


def test_compare_text_warns_on_other_probe_sets(runs):
    proc = run_cli("compare", str(runs["a"]), str(runs["c"]), "--known", "all-prompts", "--sharing", "jaccard",
                   check=True)
    warning = proc.stderr.strip()
    assert warning.startswith("warning:") and "\n" not in warning and "different probe sets" in warning
    # Shared ids i1, i2. A knows both; C knows i1 (1.0) but not i2 (a share of 0.5 is not known).
    assert "both know 1, only A 1, only B 0, neither 0" in proc.stdout
    assert "subsumption A->B 0.5000  B->A 1.0000  sharing (jaccard) 0.5000" in proc.stdout


def test_overlap_is_undefined_where_its_denominator_is_empty():
    from factprobe.probes.report import Definitions, overlap

    old = Definitions(known="all-prompts", sharing="jaccard")

    # A knows nothing of the shared items, B knows i2: A->B has no items to ask about, B->A = 0/1,
    # sharing = 0/1. i3 has no verdict in B (a multi-strategy distractor item) and takes no part.
    a = [{"id": "i1", "correct": False}, {"id": "i2", "correct": False}, {"id": "i3", "correct": True}]
    b = [{"id": "i1", "correct": False}, {"id": "i2", "correct": True}, {"id": "i3", "correct": None}]
    o = overlap(a, b, old)
    assert (o.shared, o.both, o.only_a, o.only_b, o.neither) == (2, 0, 0, 1, 1)
    assert (o.subsumption_ab, o.subsumption_ba, o.sharing) == (None, 0.0, 0.0)
    # No verdicts at all: nothing is shared and no rate is claimed.
    none = overlap([{"id": "i1", "correct": None}], [{"id": "i1", "correct": None}], old)
    assert (none.shared, none.subsumption_ab, none.subsumption_ba, none.sharing) == (0, None, None, None)

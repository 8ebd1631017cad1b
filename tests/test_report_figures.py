"""Issue 45 items 5-9: every figure of the report has a definition a reader can check. BELIEF-ICL's
accuracy tables are per ICL setting, never pooled (5); a baselines run's measure is the distractor
paper's, and its thresholded verdict is named with its threshold (6); Acc@1 prints BELIEF's range
beside mean ± SD (7); chance levels and the bootstrap's resamples and seed stand beside the figures
(8); distractor runs are compared on their per-fact Min@n verdicts (9). Run folders are written
with the real aggregator (probes/evaluation/aggregate.py) and the real report; each expected value is worked
out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factprobe.probes.evaluation.aggregate import aggregate
from factprobe.probes.measures.overlap import Definitions, overlap
from factprobe.probes.measures.uncertainty import bootstrap, wilson
from factprobe.probes.report import write_report
from factprobe.probes.report.loading import load_runs
from factprobe.probes.report.sections import run_measure
from factprobe.probes.report.views import accuracy_views, bootstrap_note, chance_text
from test_reports import table_rows


def write(folder: Path, method: str, records: list[dict], options: dict | None = None, model: str = "hf:m-a",
          probes: str = "p.jsonl") -> Path:
    """A run folder as `factprobe eval` writes one: run.json, items.jsonl and the aggregate the real
    aggregator computes over the records."""
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"model": model, "method": method, "options": options or {},
                                                 "probes": probes, "probes_sha256": "ab" * 32, "seed": 0}))
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "aggregate.json").write_text(json.dumps(aggregate(method, records, options or {})))
    return folder


def report(tmp_path: Path, *folders: Path) -> str:
    write_report(load_runs(folders), tmp_path / "report", "T")
    return (tmp_path / "report" / "report.md").read_text()


# -- 5: BELIEF-ICL per setting ---------------------------------------------------------------------

def icl_record(k: int, zero: bool, template: bool, relation: str = "P36") -> dict:
    answer = {True: "Paris", False: "Rome"}
    return {"id": f"icl:{k}", "fact": f"f{k // 2}", "relation": relation, "subject_label": "s", "object_label": "Paris",
            "bucket": "0", "frequency": 0, "template_id": k % 2, "gold": ["Paris"],
            "by_setting": {s: {"prediction": answer[c], "correct": c, "finish_reason": "stop"}
                           for s, c in (("zero-shot", zero), ("x-template", template))},
            "correct": (zero + template) / 2}


# Four prompts of two facts: zero-shot right on 1 of 4, x-template on 3 of 4. Pooled, the records'
# `correct` average (1 + 0 + 0.5 + 0.5) / 4 = 0.5 (2/4, 4 of 8 verdicts): the number no paper defines.
ICL = [icl_record(0, True, True), icl_record(1, False, False), icl_record(2, False, True), icl_record(3, False, True)]


def test_belief_icl_pooled_accuracy_is_in_no_table(tmp_path):
    run = write(tmp_path / "icl", "belief-icl", ICL, {"acc_draws": 100})
    assert json.loads((run / "aggregate.json").read_text())["accuracy"] == 0.5  # the failing example
    markdown = report(tmp_path, run)
    # zero-shot 1/4 = 0.25, x-template 3/4 = 0.75, each with Wilson's interval over its 4 prompts
    zero, template = wilson(1, 4), wilson(3, 4)
    expected = [["0", f"0.2500 (1/4) [{zero.low:.2f}–{zero.high:.2f} few]",
                 f"0.7500 (3/4) [{template.low:.2f}–{template.high:.2f} few]"]]
    assert table_rows(markdown, "| Bucket | R1 zero-shot | R1 x-template |") == expected
    assert table_rows(markdown, "| Relation | R1 zero-shot | R1 x-template |") == [["P36", *expected[0][1:]]]
    assert "(2/4)" not in markdown and "(2.0000/4)" not in markdown
    # the frequency table: both facts at frequency 0, the bin "0", per setting
    rows = table_rows(markdown, "| Run | Frequency bin |")
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [("R1 zero-shot", "0", "4", "0.2500 (1/4)"),
                                                        ("R1 x-template", "0", "4", "0.7500 (3/4)")]
    # the settings table has Acc@1, not the share of prompts right as an "accuracy"
    header = next(line for line in markdown.splitlines() if line.startswith("| Run | Setting |"))
    assert "Accuracy" not in header and "| Prompts |" in header
    assert "the settings are never pooled" in markdown
    csv = (tmp_path / "report" / "accuracy_by_frequency.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in csv[1:]] == ["R1 zero-shot", "R1 x-template"]


def test_accuracy_views_of_a_belief_icl_run_read_each_setting(tmp_path):
    view_zero, view_template = accuracy_views(load_runs([write(tmp_path / "icl", "belief-icl", ICL,
                                                                {"acc_draws": 100})])[0])
    assert [r["correct"] for r in view_zero.items] == [True, False, False, False]
    assert [r["correct"] for r in view_template.items] == [True, False, True, True]
    assert (view_zero.aggregate["accuracy"], view_template.aggregate["accuracy"]) == (0.25, 0.75)



def test_compare_reads_belief_icl_per_setting(tmp_path):
    """`factprobe compare` of two BELIEF-ICL runs: accuracy per setting (A zero-shot 1/4, x-template
    3/4; B all right, all wrong), never the pooled 0.5 of each."""
    from factprobe.probes.report.comparison import compare
    from factprobe.probes.report.write import comparison_text

    b_records = [icl_record(k, True, False) for k in range(4)]
    a = write(tmp_path / "a", "belief-icl", ICL, {"acc_draws": 100})
    b = write(tmp_path / "b", "belief-icl", b_records, {"acc_draws": 100}, model="hf:m-b")
    data = compare(*load_runs([a, b])).as_dict()
    assert data["accuracy"] == {"a": None, "b": None, "difference": None}
    assert {k: {m: v for m, v in row.items() if m != "difference_interval"}
            for k, row in data["accuracy_by_setting"].items()} == {"zero-shot": {"a": 0.25, "b": 1.0, "difference": 0.75},
                                           "x-template": {"a": 0.75, "b": 0.0, "difference": -0.75}}
    assert data["by_relation"]["P36 (zero-shot)"]["a"] == 0.25 and "P36" not in data["by_relation"]
    text = comparison_text(data)
    assert "accuracy (zero-shot)       0.2500  1.0000  +0.7500" in text
    assert not any(line.startswith("accuracy ") and "0.5000" in line for line in text.splitlines())


def test_compare_correlates_belief_icl_relations_per_setting(tmp_path):
    """Pearson over per-relation accuracies reads each ICL setting apart: four points,
    (P30|P36) x (zero-shot|x-template). A: P36 1/2, 1/2; P30 0, 1. B: P36 1, 0; P30 1/2, 1/2
    (zero-shot, x-template). Pooled per relation both would be 0.5 and 0.5, 0.5 and 0.5: no
    correlation defined at all."""
    from factprobe.probes.measures.iclke import pearson
    from factprobe.probes.report.comparison import compare

    a = [icl_record(0, True, True), icl_record(1, False, False),
         icl_record(2, False, True, "P30"), icl_record(3, False, True, "P30")]
    b = [icl_record(0, True, False), icl_record(1, True, False),
         icl_record(2, True, True, "P30"), icl_record(3, False, False, "P30")]
    runs = load_runs([write(tmp_path / "a", "belief-icl", a, {"acc_draws": 100}),
                      write(tmp_path / "b", "belief-icl", b, {"acc_draws": 100}, model="hf:m-b")])
    o = compare(*runs).as_dict()["overlap"]
    # points in natural order of "P30 (x-template)", "P30 (zero-shot)", "P36 (x-template)", "P36 (zero-shot)"
    assert o["relations"] == 4
    assert o["pearson"] == pytest.approx(pearson([1.0, 0.0, 0.5, 0.5], [0.5, 0.5, 0.0, 1.0]), abs=1e-12)

# -- 6: baselines ----------------------------------------------------------------------------------

def baseline_record(k: int, probability: float, precision: float, rouge: float) -> dict:
    return {"id": f"b{k}", "fact": f"b{k}", "relation": "P36", "subject_label": "s", "object_label": "o",
            "bucket": "0", "frequency": 0, "probability": probability, "precision_at_n": precision,
            "rouge_l": rouge, "judge": None, "correct": probability > 0.5}


# Probabilities 0.9, 0.6, 0.2, 0.1: mean 0.45; above 0.5: 2 of 4 (0.5); above 0.65: 1 of 4.
BASELINES = [baseline_record(0, 0.9, 1.0, 1.0), baseline_record(1, 0.6, 1.0, 0.5),
             baseline_record(2, 0.2, 0.0, 0.5), baseline_record(3, 0.1, 0.0, 0.0)]


def test_baselines_measure_is_the_papers_and_the_verdict_names_its_threshold(tmp_path):
    run = write(tmp_path / "b", "baselines", BASELINES)
    assert json.loads((run / "aggregate.json").read_text())["accuracy"] == 0.5  # was the runs table's "Accuracy"
    scored, measure = run_measure(load_runs([run])[0])
    # Probability 0.45 (bootstrap over 4 facts), Precision@3 0.5 (2 of 4, Wilson), ROUGE-L mean 0.5
    b = json.loads((run / "aggregate.json").read_text())["baselines"]
    p, q, r = (b[k + "_interval"] for k in ("probability", "precision_at_n", "rouge_l"))
    assert (scored, measure) == ("4", f"Probability 0.4500 [{p['low']:.2f}–{p['high']:.2f} few]; "
                                      f"Precision@3 0.5000 [{q['low']:.2f}–{q['high']:.2f} few]; "
                                      f"ROUGE-L 0.5000 [{r['low']:.2f}–{r['high']:.2f} few]")
    assert (q["low"], q["high"]) == (wilson(2, 4).low, wilson(2, 4).high)
    markdown = report(tmp_path, run)
    assert "Accuracy 0.5000" not in markdown
    # the verdict, where it is shown, is named with its threshold
    assert table_rows(markdown, "| Bucket | R1 Probability \\> 0.5 |") == [
        ["0", f"0.5000 (2/4) [{wilson(2, 4).low:.2f}–{wilson(2, 4).high:.2f} few]"]]
    row = table_rows(markdown, "| Run | Probability |")[0]
    assert row[-1] == f"0.5000 [{wilson(2, 4).low:.2f}–{wilson(2, 4).high:.2f} few] (> 0.5)"
    assert "is above 0.5 (`threshold`, factprobe's verdict" in markdown


def test_a_baselines_threshold_set_away_from_the_default_is_the_one_named(tmp_path):
    records = [{**r, "correct": r["probability"] > 0.65} for r in BASELINES]
    run = write(tmp_path / "b", "baselines", records, {"threshold": 0.65})
    markdown = report(tmp_path, run)
    assert table_rows(markdown, "| Bucket | R1 Probability \\> 0.65 |")[0][1].startswith("0.2500 (1/4)")
    assert table_rows(markdown, "| Run | Probability |")[0][-1].endswith("(> 0.65)")


# -- 7: Acc@1's range ------------------------------------------------------------------------------

def test_acc_at_1_prints_the_range_of_its_draws(tmp_path):
    run = write(tmp_path / "icl", "belief-icl", ICL, {"acc_draws": 100})
    entry = json.loads((run / "aggregate.json").read_text())["by_setting"]["x-template"]
    acc = entry["acc_at_1"]
    # x-template: fact f0 right on 1 of its 2 prompts, f1 on 2 of 2; a draw's accuracy is 0.5 or 1.0,
    # so over 100 draws min 0.5, max 1.0 (both drawn: each has chance 1/2 per draw), range 0.5
    assert (acc["min"], acc["max"], acc["range"]) == (0.5, 1.0, 0.5)
    _, measure = run_measure(load_runs([run])[0])
    interval = entry["acc_at_1_interval"]
    assert f"x-template: Acc@1 {acc['mean']:.4f} ± {acc['sd']:.4f} (range 0.5000) " \
           f"[{interval['low']:.2f}–{interval['high']:.2f} few]" in measure
    assert interval["method"] == "bootstrap"  # the bracket is the bootstrap interval, said in its header
    markdown = report(tmp_path, run)
    assert "| Acc@1 mean ± SD (range) [95% bootstrap] |" in markdown.replace("\\", "")


# -- 8: chance and the bootstrap's resamples and seed ----------------------------------------------

def test_chance_levels_stand_beside_the_measure(tmp_path):
    ic = [{"id": f"i{k}", "fact": f"i{k}", "relation": "P36", "bucket": "0", "choices": 20, "probability": 0.9,
           "correct": k < 2} for k in range(4)]
    kdf = [{"id": f"k{k}", "fact": f"k{k}", "relation": "P36", "bucket": "0",
            "letter_logprobs": [-1.0, -2.0, -3.0, -4.0], "correct": k == 0} for k in range(4)]
    runs = load_runs([write(tmp_path / "ic", "ic-lke", ic, probes="mc.jsonl"),
                      write(tmp_path / "kdf", "kdf", kdf, model="hf:m-b", probes="kdf.jsonl")])
    assert [chance_text(r) for r in runs] == ["0.0500 (1/20)", "0.2500 (1/4)"]
    rows = table_rows(report(tmp_path, *[Path(r.folder) for r in runs]), "| Run | Label |")
    # IC-LKE 2 of 4 right against 1/20; KDF 1 of 4 against the four letters' 1/4
    assert [(r[7].split(" [")[0], r[8]) for r in rows] == [("Accuracy 0.5000", "0.0500 (1/20)"),
                                                            ("Accuracy 0.2500", "0.2500 (1/4)")]


def test_bootstrap_intervals_record_their_resamples_and_seed():
    found = bootstrap([0.0, 0.5, 1.0], lambda xs: sum(xs) / len(xs), draws=50, seed=3).as_dict()
    assert (found["method"], found["resamples"], found["seed"]) == ("bootstrap", 50, 3)
    assert "resamples" not in wilson(1, 2).as_dict() and "seed" not in wilson(1, 2).as_dict()


def test_the_report_says_how_its_bootstraps_were_drawn(tmp_path):
    run = write(tmp_path / "icl", "belief-icl", ICL, {"acc_draws": 100})
    agg = json.loads((run / "aggregate.json").read_text())
    zero = agg["by_setting"]["zero-shot"]
    # Acc@1's interval (facts' shares 1/2 and 0: not right/wrong, so a bootstrap): 1000 resamples
    # (uncertainty.BOOTSTRAP_DRAWS), seed 0; Consist's shares 0 and 1 get Wilson's, no resamples
    assert (zero["acc_at_1_interval"]["resamples"], zero["acc_at_1_interval"]["seed"]) == (1000, 0)
    assert zero["consistency_interval"]["method"] == "wilson" and "seed" not in zero["consistency_interval"]
    note = bootstrap_note(load_runs([run]))
    assert note.startswith("Bootstrap intervals (scipy.stats.bootstrap, percentile, the facts resampled")
    # the pooled per-relation shares (0.5 per record) are bootstrapped too but shown nowhere: not named
    assert note.endswith("1000 resamples of the facts, seed 0: Acc@1.")
    assert note in report(tmp_path, run).replace("\\", "")


def test_an_aggregate_without_resamples_says_they_are_not_recorded(tmp_path):
    run = write(tmp_path / "icl", "belief-icl", ICL, {"acc_draws": 100})
    agg = json.loads((run / "aggregate.json").read_text())
    for entry in agg["by_setting"].values():
        for key in [k for k in entry if k.endswith("_interval") and isinstance(entry[k], dict)]:
            entry[key] = {k: v for k, v in entry[key].items() if k not in ("resamples", "seed")}
    (run / "aggregate.json").write_text(json.dumps(agg))
    assert "resamples and seed not recorded (an aggregate.json written before factprobe recorded them): Acc@1" in \
        bootstrap_note(load_runs([run]))


# -- 9: overlap of distractor runs -----------------------------------------------------------------

def distractor_record(k: int, random: float, temp: float) -> dict:
    return {"id": f"d{k}", "fact": f"d{k}", "relation": "P36" if k < 2 else "P30", "bucket": "0",
            "by_strategy": {"random": {"min_at_n": random, "avg_at_n": random},
                            "temp+sem": {"min_at_n": temp, "avg_at_n": temp}}, "correct": None}


# Min@n per fact and strategy (a fact's mean over its clozes; 1.0: known on every cloze):
#   A: d0 (1, 1), d1 (1, 0), d2 (0.5, 0), d3 (1, 1)
#   B: d0 (1, 0), d1 (1, 0), d2 (1, 1), d3 (0, 0)
A = [distractor_record(0, 1.0, 1.0), distractor_record(1, 1.0, 0.0), distractor_record(2, 0.5, 0.0),
     distractor_record(3, 1.0, 1.0)]
B = [distractor_record(0, 1.0, 0.0), distractor_record(1, 1.0, 0.0), distractor_record(2, 1.0, 1.0),
     distractor_record(3, 0.0, 0.0)]


def test_distractor_runs_share_their_per_fact_min_at_n_verdicts():
    o = overlap(A, B)
    # units (fact, strategy): 8 in both. Known A: d0r d0t d1r d3r d3t (d2r is 0.5: not on every cloze);
    # known B: d0r d1r d2r d2t. Both: d0r d1r = 2; only A: d0t d3r d3t = 3; only B: d2r d2t = 2; neither d1t = 1
    assert (o.shared, o.both, o.only_a, o.only_b, o.neither) == (8, 2, 3, 2, 1)
    # BELIEF's asymmetric sharing: 2/5 of A's, 2/4 of B's
    assert (o.sharing_a, o.sharing_b) == (0.4, 0.5)
    # subsumption per relation, averaged: P36 A knows d0r d0t d1r, B of them d0r d1r -> 2/3; P30 A knows
    # d3r d3t, B neither -> 0; mean 1/3. B->A: P36 B knows d0r d1r, A both -> 1; P30 B knows d2r d2t,
    # A neither -> 0; mean 0.5
    assert (o.subsumption_ab, o.subsumption_ba) == pytest.approx((1 / 3, 0.5))
    # McNemar over 3 and 2 discordant units: p = 2 * P(X <= 2 | 5, 1/2) = 2 * 16/32 = 1.0; per-relation
    # mean Min@n A: P36 (1+1+1+0)/4 = 0.75, P30 (0.5+0+1+1)/4 = 0.625; B: 0.5, 0.5 (constant): no Pearson
    assert o.p_value == 1.0 and o.relations == 2 and o.pearson is None
    # Jaccard per relation: P36 both d0r d1r of either d0r d0t d1r -> 2/3; P30 none of 4 -> 0; mean 1/3
    assert overlap(A, B, Definitions(sharing="jaccard")).sharing == pytest.approx(1 / 3)


def test_the_report_compares_distractor_runs_on_min_at_n(tmp_path):
    a = write(tmp_path / "a", "distractor", A, model="hf:m-a", probes="d.jsonl")
    b = write(tmp_path / "b", "distractor", B, model="hf:m-b", probes="d.jsonl")
    markdown = report(tmp_path, a, b)
    row = table_rows(markdown, "| A | B |")[0]
    assert row[:5] == ["R1", "R2", "distractor", "d.jsonl", "8"]
    assert row[5:13] == ["0.3333", "0.5000", "0.4000", "0.5000", "2", "3", "2", "1"]
    assert "a unit is a fact under one distractor strategy, known when its Min@n is 1.0" in markdown


def test_runs_that_share_no_unit_say_mcnemar_is_not_applicable(tmp_path):
    a = write(tmp_path / "a", "distractor", A[:2], model="hf:m-a", probes="d.jsonl")
    b = write(tmp_path / "b", "distractor", [{**r, "id": "other" + r["id"]} for r in B[:2]], model="hf:m-b",
              probes="d.jsonl")
    row = table_rows(report(tmp_path, a, b), "| A | B |")[0]
    assert row[4] == "0" and row[-1] == "n/a"

"""IC-LKE's design-space options: which example lines a prompt gets, and per-position probabilities;
and a demonstration pool smaller than the examples asked (refused unless allowed, then recorded)."""

from __future__ import annotations

import json
import math

import pytest

from factprobe.probes.methods import MethodContext
from factprobe.probes.methods.ic_lke import ExamplesShortfall, ICLKE

DEMOS = [{"subject_label": f"Country{k}", "object_label": f"City{k}", "relation": "P36"} for k in range(8)]
ITEM = {"id": "icl-mc:x", "relation": "P36", "subject_label": "France", "choices": ["Paris", "Lyon"],
        "answer_index": 0}


def _method(**options) -> ICLKE:
    # factprobe's preset (newline between pairs), named: the paper's is pinned in test_paper_icl_kdf.py
    return ICLKE(MethodContext({"preset": "factprobe", **options}, seed=1, demonstrations={"P36": DEMOS}))


def test_order_seed_reorders_the_same_examples():
    plain = _method(examples=5).examples(ITEM)
    shuffled = _method(examples=5, order_seed=3).examples(ITEM)
    assert sorted(map(str, plain)) == sorted(map(str, shuffled)) and plain != shuffled
    assert _method(examples=5, order_seed=3).examples(ITEM) == shuffled  # seeded


def test_contiguous_unknown_replacements():
    lines = _method(examples=6, replace=3, replace_positions="contiguous").examples(ITEM)
    kinds = [x["kind"] for x in lines]
    start = kinds.index("unknown")
    assert kinds == ["true"] * start + ["unknown"] * 3 + ["true"] * (3 - start)
    known = {d["subject_label"] for d in DEMOS} | {d["object_label"] for d in DEMOS}
    assert all(x["subject"] not in known and x["object"] not in known for x in lines if x["kind"] == "unknown")


def test_incorrect_replacements_keep_the_subject_and_take_another_examples_object():
    plain = _method(examples=6).examples(ITEM)
    lines = _method(examples=6, replace=2, replace_with="incorrect").examples(ITEM)
    assert [x["kind"] for x in lines].count("incorrect") == 2
    objects = {x["object"] for x in plain}
    for before, after in zip(plain, lines):
        assert before["subject"] == after["subject"]
        if after["kind"] == "incorrect":
            assert after["object"] != before["object"] and after["object"] in objects
    with pytest.raises(ValueError, match="replace_with"):
        _method(replace_with="wrong")


# -- too few demonstrations for the examples asked -------------------------------------------------
# "IC-LKE leverages 50 randomly chosen samples from the training data as in-context examples"
# (002_f44cecac2bc50a79.txt:973). A pool of fewer was used whole, unsaid; now it is refused, as
# EIC-LKE refuses, unless allow_fewer_examples, which records it.


class Scores:
    """A scorer whose every continuation scores -len(continuation)."""

    identity = "scores"

    def loglikelihood(self, requests):
        from types import SimpleNamespace

        return [[SimpleNamespace(logprob=-float(len(c))) for c in r.continuations] for r in requests]


def _mc(relation: str, k: int, split: str) -> dict:
    item = {"id": f"icl-mc:{relation}-{k}", "kind": "icl-mc", "split": split, "relation": relation,
            "subject_label": f"{relation}s{k}", "object_label": f"{relation}o{k}"}
    return item if split == "demo" else {**item, "choices": [f"{relation}o{k}", "Elsewhere"], "answer_index": 0}


def test_too_few_demonstrations_are_refused_naming_each_relation():
    tests = {"P36": [ITEM], "P17": [_mc("P17", 0, "test")], "P30": [_mc("P30", 0, "test")]}
    demos = {"P36": DEMOS, "P30": [_mc("P30", k, "demo") for k in range(50)]}
    with pytest.raises(ExamplesShortfall, match=r"2 relation\(s\) have fewer demonstration items than examples=50 "
                                                r"\(P17 has 0; P36 has 8\)") as refused:
        ICLKE(MethodContext({}, demonstrations=demos, tests=tests))
    assert refused.value.pools == {"P17": 0, "P36": 8}
    # an item outside the context's test items is refused when asked
    with pytest.raises(ExamplesShortfall, match="P36 has 8"):
        _method(examples=9).examples(ITEM)
    assert len(_method(examples=8).examples(ITEM)) == 8  # a pool of exactly 8 is enough


def test_fewer_examples_when_allowed_are_recorded_counted_and_headlined(tmp_path):
    from factprobe.probes.report import build_document, load_runs, to_markdown
    from factprobe.probes.evaluation.runner import evaluate

    # P36: 3 demonstrations, 2 test items; P30: 6 demonstrations, 1 test item; examples=5
    items = ([_mc("P36", k, "demo") for k in range(3)] + [_mc("P36", k, "test") for k in (3, 4)]
             + [_mc("P30", k, "demo") for k in range(6)] + [_mc("P30", 6, "test")])
    probes = tmp_path / "mc.jsonl"
    probes.write_text("".join(json.dumps(i) + "\n" for i in items))
    with pytest.raises(ExamplesShortfall, match=r"\(P36 has 3\)"):
        evaluate(Scores(), "ic-lke", probes, tmp_path / "refused", options={"examples": 5})
    summary = evaluate(Scores(), "ic-lke", probes, tmp_path / "run",
                       options={"examples": 5, "allow_fewer_examples": True})
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert [(r["relation"], r.get("examples_seen"), r.get("examples_requested")) for r in records] == [
        ("P36", 3, 5), ("P36", 3, 5), ("P30", None, None)]
    assert summary.aggregate["examples_short"] == {"items": 2, "requested": 5, "fewest": 3,
                                                   "by_relation": {"P36": {"items": 2, "fewest": 3}}}
    assert json.loads((tmp_path / "run" / "run.json").read_text())["options"]["allow_fewer_examples"] is True
    headline = ICLKE.headline(summary.aggregate, probes)
    assert headline.endswith(" | 2 item(s) with fewer than 5 examples (the fewest 3)")
    text = to_markdown(build_document(load_runs([tmp_path / "run"]), "t"))
    assert "IC-LKE items with fewer examples than asked" in text and "| R1 | P36 | 2 | 3 | 5 |" in text
    # with pools large enough nothing is added: records and aggregate as before
    full = evaluate(Scores(), "ic-lke", probes, tmp_path / "full", options={"examples": 3})
    assert "examples_short" not in full.aggregate and " item(s) with fewer" not in ICLKE.headline(full.aggregate, probes)
    assert not any("examples_seen" in json.loads(line)
                   for line in (tmp_path / "full" / "items.jsonl").read_text().splitlines())


@pytest.mark.slow
def test_per_position_probabilities_on_a_real_model():
    from scoring_models import real_scorer

    demos = [{"subject_label": c, "object_label": o, "relation": "P36"} for c, o in
             [("Germany", "Berlin"), ("Italy", "Rome"), ("Spain", "Madrid"), ("Japan", "Tokyo")]]
    method = ICLKE(MethodContext({"examples": 4, "separator": ": ", "record_positions": True, "replace": 1,
                                  "replace_with": "unknown"}, seed=0, demonstrations={"P36": demos}))
    [record] = method.run(real_scorer("smollm2-135m-instruct"), [ITEM])
    logprobs = record["position_logprobs"]
    assert len(logprobs) == 4 and all(math.isfinite(p) and p < 0 for p in logprobs)
    assert record["example_kinds"].count("unknown") == 1
    # a fictitious object cannot be predicted: its line is the least probable one
    unknown = record["example_kinds"].index("unknown")
    assert logprobs[unknown] == min(logprobs) and math.isfinite(record["gold_logprob"])
    assert record["prediction"] == "Paris"


def test_a_choice_record_keeps_every_choice_score_for_the_item_view():
    from factprobe.probes.methods.ic_lke import choice_record

    item = {"id": "mc:1", "relation": "P36", "choices": ["Bonn", "Berlin", "Paris"], "answer_index": 1}
    record = choice_record(item, [-2.0, -0.5, -1.2345678])
    assert record["choice_logprobs"] == [-2.0, -0.5, -1.234568]
    assert (record["predicted_index"], record["gold_logprob"], record["correct"]) == (1, -0.5, True)

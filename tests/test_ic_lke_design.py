"""IC-LKE's design-space options: which example lines a prompt gets, and per-position probabilities."""

from __future__ import annotations

import math

import pytest

from factprobe.probes.methods import MethodContext
from factprobe.probes.methods.ic_lke import ICLKE

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

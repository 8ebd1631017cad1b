"""BELIEF and BELIEF-ICL after issue 45's items 10-12, each on a set small enough to compute by
hand: the records keep the sampled answers behind a confidence, so a reader can count the
agreeing ones again (item 10); an answer without words is no answer and agrees with nothing, in
Consist and in confidence, where factprobe counted two of them as agreeing (item 11; the paper
defines Consist over "the pairs of predictions", 000:100-104, and says nothing of empty ones);
and Ovconf's bins do not depend on the order of prompts of equal confidence (item 12; the paper
cuts the descending list into bins "with the same amount of data points", 000:76)."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from factprobe.probes.measures.belief import overconfidence, reliability_bins
from factprobe.probes.methods.belief_icl import BeliefICL, agrees
from factprobe.probes.evaluation.runner import evaluate
from factprobe.probes.scoring.requests import Generation

# -- one pair, three templates: France's capital, asked zero-shot ----------------------------------

TEMPLATES = ["The capital of [X] is [Y].", "[X]'s capital is [Y].", "[X] has its capital at [Y]."]
# Per template: the greedy answer, then the four sampled answers (samples=4).
ANSWERS = {TEMPLATES[0]: ("", ["", "", "Paris", "Lyon"]),
           TEMPLATES[1]: ("", ["", "Paris", "Paris", "Paris"]),
           TEMPLATES[2]: ("Paris", ["Paris", "Paris.", "paris", "Lyon"])}


def _item() -> dict:
    prompts = [{"template": t, "template_id": k, "subject_name": "France", "text": t.replace("[X]", "France")}
               for k, t in enumerate(TEMPLATES)]
    return {"id": "cloze:F|P36", "kind": "cloze", "split": "test", "fact": "F|P36", "relation": "P36", "subject": "F",
            "subject_label": "France", "object": "P", "object_label": "Paris", "gold": ["Paris"], "unit": "pair",
            "prompts": prompts}


class Scripted:
    """Answers each prompt as ANSWERS says: its greedy line (n = 1) or its samples."""

    identity = "scripted"

    def generate(self, requests):
        out = []
        for r in requests:
            question = r.prompt.split("\n")[-2]
            greedy, samples = next(v for t, v in ANSWERS.items() if t.replace("[X]", "France").split("[Y]")[0] in question)
            texts = (greedy,) if r.n == 1 else tuple(samples)
            out.append(Generation(texts, ("stop",) * len(texts)))
        return out


def _run(tmp_path, **options) -> tuple[list[dict], dict]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    probes = tmp_path / "cloze.jsonl"
    probes.write_text(json.dumps(_item()) + "\n")
    out = tmp_path / "run"
    evaluate(Scripted(), "belief-icl", probes, out,
             options={"settings": ["zero-shot"], "samples": 4, "sample_prompts": "all", **options})
    records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    return records, json.loads((out / "aggregate.json").read_text())


def _entries(records: list[dict]) -> list[dict]:
    return [p["by_setting"]["zero-shot"] for p in records[0]["prompts"]]


def test_two_empty_answers_do_not_agree_by_default(tmp_path):
    """Answers "", "" and "Paris" under three templates: one pair of three agreed when two empty
    answers counted as the same answer (1/3); none does now (0)."""
    assert not agrees("", "") and not agrees("", "Paris") and agrees("Paris", "paris.")
    assert agrees("", "", "agree")
    _, now = _run(tmp_path / "now")
    _, before = _run(tmp_path / "before", empty_answers="agree")
    assert now["by_setting"]["zero-shot"]["consistency"] == 0.0
    assert before["by_setting"]["zero-shot"]["consistency"] == pytest.approx(1 / 3, abs=1e-12)
    assert now["definitions"]["empty_answers"] == "disagree" and before["definitions"]["empty_answers"] == "agree"


def test_confidence_and_ovconf_with_empty_answers(tmp_path):
    """Confidence: the share of samples agreeing with the greedy answer. Disagree: 0, 0 and 3/4
    ("Paris", "Paris." and "paris" agree; "Lyon" does not); agree: 2/4, 1/4 and 3/4 (the empty
    samples agreed with an empty greedy answer). Three prompts, three bins of one: Ovconf is the
    mean of confidence minus correctness, (0 + 0 + (0.75 - 1)) / 3 and (0.5 + 0.25 - 0.25) / 3."""
    records, now = _run(tmp_path / "now")
    assert [e["confidence"] for e in _entries(records)] == [0.0, 0.0, 0.75]
    assert now["by_setting"]["zero-shot"]["overconfidence"] == pytest.approx(-0.25 / 3, abs=1e-12)
    records, before = _run(tmp_path / "before", empty_answers="agree")
    assert [e["confidence"] for e in _entries(records)] == [0.5, 0.25, 0.75]
    assert before["by_setting"]["zero-shot"]["overconfidence"] == pytest.approx(0.5 / 3, abs=1e-12)


@pytest.mark.parametrize("rule", ["disagree", "agree"])
def test_confidence_is_rederived_from_the_recorded_samples(tmp_path, rule):
    """Each sampled prompt's record keeps its samples, each distinct text with its count, most
    frequent first: counting the agreeing ones again gives the recorded confidence."""
    records, _ = _run(tmp_path, empty_answers=rule)
    entries = _entries(records)
    assert entries[0]["samples"] == [["", 2], ["Paris", 1], ["Lyon", 1]]
    assert entries[2]["samples"] == [["Paris", 1], ["Paris.", 1], ["paris", 1], ["Lyon", 1]]
    for entry in entries:
        total = sum(count for _, count in entry["samples"])
        again = sum(count for text, count in entry["samples"] if agrees(text, entry["prediction"], rule))
        assert total == 4 and again == entry["agreeing"] and again / total == entry["confidence"]


# -- tied confidences ---------------------------------------------------------------------------

# Five prompts in two bins (3 and 2): the three at 0.5 straddle the edge; one of them is right.
CONFIDENCE = [0.9, 0.5, 0.5, 0.5, 0.1]
CORRECT = [True, True, False, False, False]


def test_tied_confidences_take_every_order_at_once():
    """Descending: 0.9, then the three ties, then 0.1; bins of 3 and 2. Each tied position holds
    their share of right answers, 1/3: bin 1 accuracy (1 + 1/3 + 1/3) / 3 = 5/9 at confidence
    1.9/3, bin 2 (1/3 + 0) / 2 = 1/6 at 0.3; Ovconf ((1.9/3 - 5/9) + (0.3 - 1/6)) / 2 = 19/180."""
    bins = reliability_bins(CONFIDENCE, CORRECT, 2)
    assert [b.count for b in bins] == [3, 2]
    assert bins[0].accuracy == pytest.approx(5 / 9, abs=1e-12) and bins[1].accuracy == pytest.approx(1 / 6, abs=1e-12)
    assert overconfidence(CONFIDENCE, CORRECT, 2) == pytest.approx(19 / 180, abs=1e-12)


def test_the_tie_rule_is_the_mean_over_every_order_of_the_ties():
    """Brute force: file order over every permutation of the five prompts gives Ovconf 2/15
    (the right tied prompt in bin 1) or 1/20 (in bin 2); their mean over all 120 orders is the
    tie rule's 19/180, and no order changes the rule's value."""
    rows = list(zip(CONFIDENCE, CORRECT))
    values = []
    for order in itertools.permutations(rows):
        conf, right = zip(*order)
        values.append(overconfidence(conf, right, 2, ties="file-order"))
        assert overconfidence(conf, right, 2) == pytest.approx(19 / 180, abs=1e-12)
    assert sorted({round(v, 12) for v in values}) == [round(1 / 20, 12), round(2 / 15, 12)]
    assert sum(values) / len(values) == pytest.approx(19 / 180, abs=1e-12)


def test_belief_icl_ovconf_does_not_depend_on_the_records_order():
    """Twelve sampled prompts of twelve pairs make 10 bins, of 2, 2, then 1. The three at 0.5 sit
    in bin 2 (two) and bin 3 (one), bins of unequal size, so under file order the place of the
    one right tied prompt changes Ovconf; under the tie rule each tied position holds 1/3:
    (0.85 - 1/2) + 2 x (0.5 - 1/3) + the eight wrong prompts' confidences, over 10 bins."""
    conf = [0.9, 0.8, 0.5, 0.5, 0.5, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05, 0.01]
    right = [True, False, True] + [False] * 9

    def records(order):
        return [{"id": f"r{k}", "fact": f"f{k}", "relation": "P36", "bucket": None,
                 "by_setting": {"zero-shot": {"prediction": "Paris" if right[k] else "Lyon", "correct": right[k],
                                              "confidence": conf[k], "agreeing": None, "finish_reason": "stop"}}}
                for k in order]

    def ovconf(order, **options):
        return BeliefICL.aggregate_extra(records(order), options)["by_setting"]["zero-shot"]["overconfidence"]

    forward, backward = list(range(12)), [0, 1, 4, 3, 2, *range(5, 12)]
    by_hand = ((0.85 - 0.5) + 2 * (0.5 - 1 / 3) + sum(conf[5:])) / 10
    assert ovconf(forward) == pytest.approx(by_hand, abs=1e-12) and ovconf(backward) == pytest.approx(by_hand, abs=1e-12)
    # file order: the right tied prompt in bin 2 (forward) or alone in bin 3 (backward)
    rest = (0.85 - 0.5) + sum(conf[5:])
    assert ovconf(forward, ovconf_ties="file-order") == pytest.approx((rest + 0.0 + 0.5) / 10, abs=1e-12)
    assert ovconf(backward, ovconf_ties="file-order") == pytest.approx((rest + 0.5 - 0.5) / 10, abs=1e-12)
    shuffled = forward[:]
    random.Random(0).shuffle(shuffled)
    assert ovconf(shuffled) == pytest.approx(by_hand, abs=1e-12)

"""BELIEF's measures (Zhao et al.) over the records of probes/methods/belief.py: Acc@1 over draws, Consist, Ovconf with reliability bins, one-word ratio, coverage and
the bias level, each under a definition the aggregate names (`definitions`) and the report
spells out. BELIEF-ICL (belief_icl.py) shares the definitions, the bias level and Ovconf's
interval."""

from __future__ import annotations

from typing import Sequence

from . import belief
from .accuracy import interval, json_numbers
from .uncertainty import bootstrap


def belief_measures(records: Sequence[dict], options: dict) -> dict:
    """BELIEF's measures and its bias level by the run's `bias` option; without one (a run from
    before the option) by what the records hold: the older runs recorded top-1 content-free
    answers."""
    bias = options.get("bias")
    if bias is None:
        bias = "entropy" if any("content_free_bias" in r for r in records) else \
            "top1" if any("content_free_predictions" in r for r in records) else None
    if bias == "entropy":
        found = _entropy_bias(records)
        entries = [r["content_free_bias"] for r in records if r.get("content_free_bias") is not None]
        if any("single_prompt" not in e for e in entries):
            bias = "entropy-rows"  # recorded before issue 28: each prompt's distribution renormalized first
    else:
        found = bias_levels([(answer, free, r.get("relation")) for r in records
                             for answer, free in zip(r["predictions"], r.get("content_free_predictions") or ())])
    # A run from before the `objects` option asked every item.
    definitions = {**belief_definitions(records, options, bias), "objects": options.get("objects", "all")}
    return {**_belief(records, options), **found, "objects_left_out": sum(bool(r.get("left_out")) for r in records),
            "definitions": definitions}


def belief_definitions(records: Sequence[dict], options: dict, bias: str | None) -> dict:
    """The definitions behind the BELIEF numbers, named so a report can say which it shows."""
    return {"unit": _unit(records), "acc_draws": options.get("acc_draws", belief.PAPER_ACC_DRAWS),
            "bias": bias, "coverage_maximum": options.get("coverage_maximum", "best-subject"),
            "ovconf_bins": options.get("ovconf_bins", belief.BIN_ORDERS[0]),
            "ovconf_ties": options.get("ovconf_ties", belief.TIE_RULES[0])}


def _unit(records: Sequence[dict]) -> str:
    """What one item stands for: "pair" (BELIEF's subject-relation pair) or "fact"; records of
    probe sets built before items said so are per fact; "mixed" when records disagree."""
    units = {r.get("unit") or "fact" for r in records}
    return units.pop() if len(units) == 1 else "mixed"


def _belief(records: Sequence[dict], options: dict) -> dict:
    """Acc@1 over `acc_draws` draws, Consist, Ovconf with its reliability bins (10, or one per
    prompt when fewer, so a small run such as --limit 1 still reports), one-word ratio and
    coverage (maximum by `coverage_maximum`). Consist is None when no item has two prompts: it is
    defined over pairs of one item's answers."""
    answered = [r for r in records if r["prompt_correct"]]
    if not answered:
        return {"acc_at_1": None, "consistency": None, "overconfidence": None, "one_word_ratio": None,
                "coverage": None, "reliability": []}
    correct = [r["prompt_correct"] for r in answered]
    acc = belief.acc_at_1(correct, draws=options.get("acc_draws", belief.PAPER_ACC_DRAWS))
    flat_confidence = [c for r in answered for c in r["confidence"]]
    flat_correct = [c for r in answered for c in r["prompt_correct"]]
    bins = min(10, len(flat_confidence))
    order = options.get("ovconf_bins", belief.BIN_ORDERS[0])  # the paper's descending by default (000:76)
    ties = options.get("ovconf_ties", belief.TIE_RULES[0])  # a run before issue 45 is re-read order-free
    coverage = belief.coverage(correct, [r["template_ids"] for r in answered], [r["relation"] for r in answered],
                                maximum=options.get("coverage_maximum", "best-subject"))
    predictions = [r["predictions"] for r in answered]
    facts = [(r["confidence"], [bool(c) for c in r["prompt_correct"]]) for r in answered]
    return {"acc_at_1": {"mean": acc.mean, "sd": acc.sd, "min": acc.min, "max": acc.max, "range": acc.range,
                         "draws": acc.draws},
            "acc_at_1_interval": interval([sum(c) / len(c) for _, c in facts]),
            "consistency_interval": interval([belief.consistency([p]) for p in predictions if len(p) > 1]),
            "overconfidence_interval": overconfidence_interval(facts, bins, order, ties),
            "consistency": belief.consistency(predictions) if any(len(p) > 1 for p in predictions) else None,
            "overconfidence": belief.overconfidence(flat_confidence, flat_correct, bins, order, ties),
            "one_word_ratio": belief.one_word_ratio([p for ps in predictions for p in ps]),
            "coverage": {"average": coverage.average, "maximum": coverage.maximum, "oracle": coverage.oracle},
            "reliability": [{"confidence": b.confidence, "accuracy": b.accuracy, "count": b.count}
                            for b in belief.reliability_bins(flat_confidence, flat_correct, bins, order, ties)]}


def _entropy_bias(records: Sequence[dict]) -> dict:
    """The paper's bias levels: each record carries its relation's 1 - H/H_max, multi-prompt
    (`bias_level`: belief.entropy_bias_level) and single-prompt (`single_prompt`:
    belief.single_prompt_bias_level), computed once per relation by the method
    (probes/methods/belief.py); each averages the relations with equal weight, leaving out those
    without a value (fewer than 2 candidate objects); None when none has one."""
    by_relation: dict[str, dict] = {}
    for r in records:
        entry = r.get("content_free_bias")
        if entry is not None:
            by_relation.setdefault("none" if r.get("relation") is None else str(r["relation"]), entry)

    def mean(key: str) -> float | None:
        values = [e[key] for e in by_relation.values() if e.get(key) is not None]
        return sum(values) / len(values) if values else None

    out = {"bias_level": mean("bias_level"),
           "bias_level_by_relation": {k: e["bias_level"] for k, e in by_relation.items()}}
    if any("single_prompt" in e for e in by_relation.values()):  # runs before issue 28 have none
        out["bias_level_single_prompt"] = mean("single_prompt")
    return out


def bias_levels(rows: Sequence[tuple]) -> dict:
    """belief.bias_level over (answer, content-free answer, relation) rows, one per prompt:
    `bias_level` averages the relations with equal weight, `bias_level_by_relation` is each
    relation's share of prompts answered as their content-free version. Rows without a
    content-free answer (content_free off, no template) are left out; None when none is left."""
    kept = [row for row in rows if row[1] is not None]
    if not kept:
        return {"bias_level": None, "bias_level_by_relation": {}}
    answers, free, relations = zip(*kept)
    groups = ["none" if r is None else str(r) for r in relations]
    by_relation = {}
    for name in dict.fromkeys(groups):
        mine = [k for k, g in enumerate(groups) if g == name]
        by_relation[name] = belief.bias_level([answers[k] for k in mine], [free[k] for k in mine],
                                               [name] * len(mine))
    return {"bias_level": belief.bias_level(answers, free, groups), "bias_level_by_relation": by_relation}


def overconfidence_interval(facts: list[tuple[list[float], list[bool]]], bins: int,
                            order: str = belief.BIN_ORDERS[0], ties: str = belief.TIE_RULES[0]) -> dict | None:
    """Ovconf's bootstrap over facts (a fact's prompts travel together), 200 draws: each draw
    re-bins all its prompts, so it costs a sort of every prompt."""
    def ovconf(sample: list) -> float:
        confidence = [c for conf, _ in sample for c in conf]
        if len(confidence) < bins:
            return float("nan")
        return belief.overconfidence(confidence, [k for _, ks in sample for k in ks], bins, order, ties)

    if not facts:
        return None
    return json_numbers(bootstrap(facts, ovconf, draws=200).as_dict())

"""From per-item records to the numbers a paper reports, built from the pure metrics of
probes/metrics/. Every aggregate has `accuracy` (the mean of the records' `correct`),
breakdowns by relation and frequency bucket, and the method's own measures: what its class's
`aggregate_extra` returns (probes/methods/base.py). The built-in methods' measures are the public
functions below (`icl_measures`, `belief_measures`, `belief_icl_measures`,
`distractor_measures`, `baseline_measures`), each (records, options) -> dict, named by the
method classes; this module does not import the methods, the registry is asked at run time."""

from __future__ import annotations

import math
from typing import Sequence

from . import metrics
from .metrics import answer_key


def aggregate(method: str, records: Sequence[dict], options: dict | None = None) -> dict:
    """`options`: the run's method options (run.json's), for the measures whose definition is an
    option (BELIEF: `acc_draws`, `bias`, `coverage_maximum`); missing ones take the paper's."""
    options = options or {}
    out = {"method": method, "items": len(records), **_accuracy(records)}
    if not records:
        return out
    # `correct` is a share for multi-prompt and multi-cloze methods: breakdowns average it as is.
    out["by_relation"] = _share_breakdown(records, "relation")
    out["by_bucket"] = _share_breakdown(records, "bucket")
    from .methods import registered  # the methods import this module for their measures

    cls = registered().get(method)  # a method no longer registered: the shared measures only
    if cls is not None:
        out.update(cls.aggregate_extra(records, options))
    return out


def _accuracy(records: Sequence[dict]) -> dict:
    scored = [float(r["correct"]) for r in records if r.get("correct") is not None]
    return {"accuracy": sum(scored) / len(scored) if scored else None, "scored": len(scored),
            "accuracy_interval": interval(scored)}


def interval(values: Sequence[float], seed: int = 0) -> dict | None:
    """A mean's standard error and 95% interval: Wilson's when every value is 0 or 1 (a
    proportion), else a seeded bootstrap over the items (shares of prompts or settings); None
    when there is nothing to average. `few` marks figures over fewer than metrics.FEW_ITEMS."""
    if not values:
        return None
    if all(v in (0.0, 1.0) for v in values):
        found = metrics.wilson(int(sum(values)), len(values))
    else:
        found = metrics.bootstrap(list(values), lambda xs: sum(xs) / len(xs), seed=seed)
    return {k: _number(v) if isinstance(v, float) else v for k, v in found.as_dict().items()}


def _breakdown(records: Sequence[dict], key: str) -> dict:
    groups = metrics.accuracy_by([r for r in records if r.get("correct") is not None], key)
    return {name: {"accuracy": g.accuracy, "correct": g.correct, "total": g.total,
                   "interval": _proportion(g.correct, g.total)} for name, g in groups.items()}


def _proportion(correct: int, total: int) -> dict:
    found = metrics.wilson(correct, total).as_dict()
    return {k: _number(v) if isinstance(v, float) else v for k, v in found.items()}


def _unit(records: Sequence[dict]) -> str:
    """What one item stands for: "pair" (BELIEF's subject-relation pair) or "fact"; records of
    probe sets built before items said so are per fact; "mixed" when records disagree."""
    units = {r.get("unit") or "fact" for r in records}
    return units.pop() if len(units) == 1 else "mixed"


def _belief_definitions(records: Sequence[dict], options: dict, bias: str | None) -> dict:
    """The definitions behind the BELIEF numbers, named so a report can say which it shows."""
    return {"unit": _unit(records), "acc_draws": options.get("acc_draws", metrics.PAPER_ACC_DRAWS),
            "bias": bias, "coverage_maximum": options.get("coverage_maximum", "best-subject")}


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
    acc = metrics.acc_at_1(correct, draws=options.get("acc_draws", metrics.PAPER_ACC_DRAWS))
    flat_confidence = [c for r in answered for c in r["confidence"]]
    flat_correct = [c for r in answered for c in r["prompt_correct"]]
    bins = min(10, len(flat_confidence))
    coverage = metrics.coverage(correct, [r["template_ids"] for r in answered], [r["relation"] for r in answered],
                                maximum=options.get("coverage_maximum", "best-subject"))
    predictions = [r["predictions"] for r in answered]
    facts = [(r["confidence"], [bool(c) for c in r["prompt_correct"]]) for r in answered]
    return {"acc_at_1": {"mean": acc.mean, "sd": acc.sd, "min": acc.min, "max": acc.max, "range": acc.range,
                         "draws": acc.draws},
            "acc_at_1_interval": interval([sum(c) / len(c) for _, c in facts]),
            "consistency_interval": interval([metrics.consistency([p]) for p in predictions if len(p) > 1]),
            "overconfidence_interval": _overconfidence_interval(facts, bins),
            "consistency": metrics.consistency(predictions) if any(len(p) > 1 for p in predictions) else None,
            "overconfidence": metrics.overconfidence(flat_confidence, flat_correct, bins),
            "one_word_ratio": metrics.one_word_ratio([p for ps in predictions for p in ps]),
            "coverage": {"average": coverage.average, "maximum": coverage.maximum, "oracle": coverage.oracle},
            "reliability": [{"confidence": b.confidence, "accuracy": b.accuracy, "count": b.count}
                            for b in metrics.reliability_bins(flat_confidence, flat_correct, bins)]}


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
    else:
        found = _bias([(answer, free, r.get("relation")) for r in records
                       for answer, free in zip(r["predictions"], r.get("content_free_predictions") or ())])
    return {**_belief(records, options), **found, "definitions": _belief_definitions(records, options, bias)}


def _entropy_bias(records: Sequence[dict]) -> dict:
    """The paper's bias level: each record carries its relation's 1 - H/H_max (computed once per
    relation by the method, probes/methods/belief.py, with metrics.entropy_bias_level);
    `bias_level` averages the relations with equal weight, leaving out those without a value
    (fewer than 2 candidate objects); None when none has one."""
    by_relation: dict[str, float | None] = {}
    for r in records:
        entry = r.get("content_free_bias")
        if entry is not None:
            by_relation.setdefault("none" if r.get("relation") is None else str(r["relation"]), entry["bias_level"])
    values = [v for v in by_relation.values() if v is not None]
    return {"bias_level": sum(values) / len(values) if values else None, "bias_level_by_relation": by_relation}


def _bias(rows: Sequence[tuple]) -> dict:
    """metrics.bias_level over (answer, content-free answer, relation) rows, one per prompt:
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
        by_relation[name] = metrics.bias_level([answers[k] for k in mine], [free[k] for k in mine],
                                               [name] * len(mine))
    return {"bias_level": metrics.bias_level(answers, free, groups), "bias_level_by_relation": by_relation}


def belief_icl_measures(records: Sequence[dict], options: dict) -> dict:
    """Per ICL setting (`by_setting`): accuracy, Acc@1 over `acc_draws` one-template-per-fact
    draws, Consist
    (pairs of a fact's answers that are the same answer by lemmas, probes/answers.py), Ovconf and
    reliability bins (10, or one per answer when fewer), one-word ratio, relation and bucket
    breakdowns. A record's own `correct` is the share of its settings that are correct, so the
    top-level breakdowns are redone as means of that share (accuracy_by would read it as a bool)."""
    settings = list(dict.fromkeys(s for r in records for s in r["by_setting"]))
    by_setting = {}
    for setting in settings:
        # One flat row per (item, setting): the setting's answer over the item's fields.
        rows = [{**r, **r["by_setting"][setting]} for r in records if setting in r["by_setting"]]
        by_setting[setting] = _belief_icl_setting(rows, options.get("acc_draws", metrics.PAPER_ACC_DRAWS))
    # BELIEF-ICL's bias is the top-1 agreement share (methods/belief_icl.py `bias`); the
    # content-free entropy is not computed for decoders yet.
    definitions = {**_belief_definitions(records, options, options.get("bias", "top1")), "coverage_maximum": None}
    return {"by_setting": by_setting, "by_relation": _share_breakdown(records, "relation"),
            "by_bucket": _share_breakdown(records, "bucket"), "definitions": definitions}


def _belief_icl_setting(rows: list[dict], draws: int) -> dict:
    from .answers import same_answer  # the lemmatizer loads only where answers are compared

    per_fact: dict[str, list[dict]] = {}
    for row in rows:
        per_fact.setdefault(row.get("fact") or row["id"], []).append(row)
    acc = metrics.acc_at_1([[bool(r["correct"]) for r in group] for group in per_fact.values()], draws=draws)
    shares = []
    for group in per_fact.values():
        answers = [r["prediction"] for r in group]
        pairs = [(a, b) for k, a in enumerate(answers) for b in answers[k + 1:]]
        if pairs:
            shares.append(sum(same_answer(a, b) for a, b in pairs) / len(pairs))
    confidence = [r["confidence"] for r in rows]
    correct = [bool(r["correct"]) for r in rows]
    bins = min(10, len(rows))
    facts = [([r["confidence"] for r in g], [bool(r["correct"]) for r in g]) for g in per_fact.values()]
    return {"items": len(rows), "accuracy": sum(correct) / len(correct),
            "accuracy_interval": interval([float(c) for c in correct]),
            "acc_at_1_interval": interval([sum(c) / len(c) for _, c in facts]),
            "consistency_interval": interval(shares),
            "overconfidence_interval": _overconfidence_interval(facts, bins),
            "acc_at_1": {"mean": acc.mean, "sd": acc.sd, "min": acc.min, "max": acc.max, "range": acc.range,
                         "draws": acc.draws},
            "consistency": sum(shares) / len(shares) if shares else None,  # None: no fact has two templates
            "overconfidence": metrics.overconfidence(confidence, correct, bins),
            "mean_confidence": sum(confidence) / len(confidence),
            "one_word_ratio": metrics.one_word_ratio([r["prediction"] for r in rows]),
            "reliability": [{"confidence": b.confidence, "accuracy": b.accuracy, "count": b.count}
                            for b in metrics.reliability_bins(confidence, correct, bins)],
            "by_relation": _breakdown(rows, "relation"), "by_bucket": _breakdown(rows, "bucket"),
            **_bias([(answer_key(r["prediction"]), _key(r.get("content_free_prediction")), r.get("relation"))
                     for r in rows])}


def _key(answer: str | None) -> str | None:
    return None if answer is None else answer_key(answer)


def _overconfidence_interval(facts: list[tuple[list[float], list[bool]]], bins: int) -> dict | None:
    """Ovconf's bootstrap over facts (a fact's prompts travel together), 200 draws: each draw
    re-bins all its prompts, so it costs a sort of every prompt."""
    def ovconf(sample: list) -> float:
        confidence = [c for conf, _ in sample for c in conf]
        if len(confidence) < bins:
            return float("nan")
        return metrics.overconfidence(confidence, [k for _, ks in sample for k in ks], bins)

    if not facts:
        return None
    found = metrics.bootstrap(facts, ovconf, draws=200).as_dict()
    return {k: _number(v) if isinstance(v, float) else v for k, v in found.items()}


def _share_breakdown(records: Sequence[dict], key: str) -> dict:
    groups: dict[str, list[float]] = {}
    for r in records:
        if r.get("correct") is not None:
            groups.setdefault("none" if r.get(key) is None else str(r[key]), []).append(float(r["correct"]))
    return {name: {"accuracy": sum(v) / len(v), "correct": sum(v), "total": len(v), "interval": interval(v)}
            for name, v in groups.items()}


def icl_measures(records: Sequence[dict], options: dict | None = None) -> dict:
    """IC-LKE and EIC-LKE: accuracy over the items whose normalized choice probability is at least k."""
    probability = [r["probability"] for r in records]
    correct = [bool(r["correct"]) for r in records]
    at_k = {}
    for k in (0.5, 0.7, 0.9):
        found = metrics.accuracy_at_k(probability, correct, k)
        right = sum(c for p, c in zip(probability, correct) if p > k)  # as accuracy_at_k selects
        at_k[str(k)] = {"accuracy": _number(found.accuracy), "items": found.count,
                        "interval": _proportion(right, found.count) if found.count else None}
    return {"accuracy_at_k": at_k}


def distractor_measures(records: Sequence[dict], options: dict | None = None) -> dict:
    """Min@n and Avg@n per strategy, each with its own breakdowns by relation and bucket: a
    record's `correct` speaks for one strategy at most, so the top-level breakdowns cannot."""
    strategies = sorted({s for r in records for s in r["by_strategy"]})
    out = {}
    for strategy in strategies:
        # One flat row per (item, strategy): the strategy's scores over the item's fields.
        rows = [{**r, **r["by_strategy"][strategy]} for r in records if strategy in r["by_strategy"]]
        out[strategy] = {**_min_avg(rows), "skipped": sum(len(r.get("skipped") or ()) for r in rows),
                         "by_relation": _min_avg_by(rows, "relation"), "by_bucket": _min_avg_by(rows, "bucket")}
    return {"by_strategy": out}


def _min_avg(rows: Sequence[dict]) -> dict:
    """A record's Min@n / Avg@n is already the mean over its clozes; the probe set's is the mean
    over facts (metrics.mean_over_facts: a distractor set has one item per fact)."""
    scored = [r for r in rows if r.get("min_at_n") is not None]
    facts = [r.get("fact") or r["id"] for r in scored]

    def over_facts(key: str) -> float | None:
        return metrics.mean_over_facts([r[key] for r in scored], facts) if scored else None

    def per_fact(key: str) -> list[float]:
        return metrics.fact_means([r[key] for r in scored], facts) if scored else []

    return {"min_at_n": over_facts("min_at_n"), "avg_at_n": over_facts("avg_at_n"), "items": len(scored),
            "min_at_n_interval": interval(per_fact("min_at_n")), "avg_at_n_interval": interval(per_fact("avg_at_n"))}


def _min_avg_by(rows: Sequence[dict], key: str) -> dict:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault("none" if row.get(key) is None else str(row[key]), []).append(row)
    return {name: _min_avg(group) for name, group in groups.items()}


def baseline_measures(records: Sequence[dict], options: dict | None = None) -> dict:
    """Each baseline's mean verdict over facts (the probability's mean value too), with its 95%
    interval over facts; the judge when it ran. A record's values are already means over its
    clozes (see methods/baselines.py)."""
    out = {}
    for name, key in (("probability", "probability"), ("precision_at_n", "precision_at_n"), ("rouge_l", "rouge_l"),
                      ("judge", "judge"), ("probability_known", "correct")):
        kept = [r for r in records if r.get(key) is not None]
        means = metrics.fact_means([float(r[key]) for r in kept], [r.get("fact") or r["id"] for r in kept]) \
            if kept else []
        out[name] = math.fsum(means) / len(means) if means else None  # metrics.mean_over_facts
        # its 95% interval over facts (Wilson where every fact's value is 0 or 1)
        out[f"{name}_interval"] = interval(means)
    return {"baselines": out}


def _number(value: float) -> float | None:
    """NaN (nothing to average) is written as null: JSON has no NaN."""
    return None if value != value else value


def _mean(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None

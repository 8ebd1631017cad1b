"""From per-item records to the numbers a paper reports: one function per method, built from the
pure metrics of probes/metrics.py. Every aggregate has `accuracy` (the mean of the records'
`correct`), breakdowns by relation and frequency bucket, and the method's own measures."""

from __future__ import annotations

from typing import Sequence

from . import metrics
from .methods.base import answer_key


def aggregate(method: str, records: Sequence[dict]) -> dict:
    out = {"method": method, "items": len(records), **_accuracy(records)}
    if not records:
        return out
    # `correct` is a share for multi-prompt and multi-cloze methods: breakdowns average it as is.
    out["by_relation"] = _share_breakdown(records, "relation")
    out["by_bucket"] = _share_breakdown(records, "bucket")
    extra = {"belief": _belief_and_bias, "belief-icl": _belief_icl, "ic-lke": _icl, "eic-lke": _icl,
             "distractor": _distractor, "baselines": _baselines}.get(method)
    if extra:
        out.update(extra(records))
    return out


def _accuracy(records: Sequence[dict]) -> dict:
    scored = [r["correct"] for r in records if r.get("correct") is not None]
    return {"accuracy": sum(map(float, scored)) / len(scored) if scored else None, "scored": len(scored)}


def _breakdown(records: Sequence[dict], key: str) -> dict:
    groups = metrics.accuracy_by([r for r in records if r.get("correct") is not None], key)
    return {name: {"accuracy": g.accuracy, "correct": g.correct, "total": g.total} for name, g in groups.items()}


def _belief(records: Sequence[dict]) -> dict:
    """Acc@1, Consist, Ovconf with its reliability bins (10, or one per prompt when fewer, so a
    small run such as --limit 1 still reports), one-word ratio and coverage. Consist is None when
    no fact has two prompts: it is defined over pairs of one fact's answers."""
    answered = [r for r in records if r["prompt_correct"]]
    if not answered:
        return {"acc_at_1": None, "consistency": None, "overconfidence": None, "one_word_ratio": None,
                "coverage": None, "reliability": []}
    correct = [r["prompt_correct"] for r in answered]
    acc = metrics.acc_at_1(correct)
    flat_confidence = [c for r in answered for c in r["confidence"]]
    flat_correct = [c for r in answered for c in r["prompt_correct"]]
    bins = min(10, len(flat_confidence))
    coverage = metrics.coverage(correct, [r["template_ids"] for r in answered], [r["relation"] for r in answered])
    predictions = [r["predictions"] for r in answered]
    return {"acc_at_1": {"mean": acc.mean, "sd": acc.sd, "min": acc.min, "max": acc.max, "range": acc.range,
                         "draws": acc.draws},
            "consistency": metrics.consistency(predictions) if any(len(p) > 1 for p in predictions) else None,
            "overconfidence": metrics.overconfidence(flat_confidence, flat_correct, bins),
            "one_word_ratio": metrics.one_word_ratio([p for ps in predictions for p in ps]),
            "coverage": {"average": coverage.average, "maximum": coverage.maximum, "oracle": coverage.oracle},
            "reliability": [{"confidence": b.confidence, "accuracy": b.accuracy, "count": b.count}
                            for b in metrics.reliability_bins(flat_confidence, flat_correct, bins)]}


def _belief_and_bias(records: Sequence[dict]) -> dict:
    rows = [(answer, free, r.get("relation")) for r in records
            for answer, free in zip(r["predictions"], r.get("content_free_predictions") or ())]
    return {**_belief(records), **_bias(rows)}


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


def _belief_icl(records: Sequence[dict]) -> dict:
    """Per ICL setting (`by_setting`): accuracy, Acc@1 over one-template-per-fact draws, Consist
    (pairs of a fact's answers that are the same answer by lemmas, probes/answers.py), Ovconf and
    reliability bins (10, or one per answer when fewer), one-word ratio, relation and bucket
    breakdowns. A record's own `correct` is the share of its settings that are correct, so the
    top-level breakdowns are redone as means of that share (accuracy_by would read it as a bool)."""
    settings = list(dict.fromkeys(s for r in records for s in r["by_setting"]))
    by_setting = {}
    for setting in settings:
        # One flat row per (item, setting): the setting's answer over the item's fields.
        rows = [{**r, **r["by_setting"][setting]} for r in records if setting in r["by_setting"]]
        by_setting[setting] = _belief_icl_setting(rows)
    return {"by_setting": by_setting, "by_relation": _share_breakdown(records, "relation"),
            "by_bucket": _share_breakdown(records, "bucket")}


def _belief_icl_setting(rows: list[dict]) -> dict:
    from .answers import same_answer  # the lemmatizer loads only where answers are compared

    per_fact: dict[str, list[dict]] = {}
    for row in rows:
        per_fact.setdefault(row.get("fact") or row["id"], []).append(row)
    acc = metrics.acc_at_1([[bool(r["correct"]) for r in group] for group in per_fact.values()])
    shares = []
    for group in per_fact.values():
        answers = [r["prediction"] for r in group]
        pairs = [(a, b) for k, a in enumerate(answers) for b in answers[k + 1:]]
        if pairs:
            shares.append(sum(same_answer(a, b) for a, b in pairs) / len(pairs))
    confidence = [r["confidence"] for r in rows]
    correct = [bool(r["correct"]) for r in rows]
    bins = min(10, len(rows))
    return {"items": len(rows), "accuracy": sum(correct) / len(correct),
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


def _share_breakdown(records: Sequence[dict], key: str) -> dict:
    groups: dict[str, list[float]] = {}
    for r in records:
        if r.get("correct") is not None:
            groups.setdefault("none" if r.get(key) is None else str(r[key]), []).append(float(r["correct"]))
    return {name: {"accuracy": sum(v) / len(v), "correct": sum(v), "total": len(v)} for name, v in groups.items()}


def _icl(records: Sequence[dict]) -> dict:
    probability = [r["probability"] for r in records]
    correct = [bool(r["correct"]) for r in records]
    at_k = {}
    for k in (0.5, 0.7, 0.9):
        found = metrics.accuracy_at_k(probability, correct, k)
        at_k[str(k)] = {"accuracy": _number(found.accuracy), "items": found.count}
    return {"accuracy_at_k": at_k}


def _distractor(records: Sequence[dict]) -> dict:
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
    scored = [r for r in rows if r.get("min_at_n") is not None]
    return {"min_at_n": _mean([r["min_at_n"] for r in scored]), "avg_at_n": _mean([r["avg_at_n"] for r in scored]),
            "items": len(scored)}


def _min_avg_by(rows: Sequence[dict], key: str) -> dict:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault("none" if row.get(key) is None else str(row[key]), []).append(row)
    return {name: _min_avg(group) for name, group in groups.items()}


def _baselines(records: Sequence[dict]) -> dict:
    """Each baseline's mean verdict (the probability's mean value too); the judge when it ran."""
    out = {name: _mean([float(r[name]) for r in records if r.get(name) is not None])
           for name in ("probability", "precision_at_n", "rouge_l", "judge")}
    out["probability_known"] = _mean([float(r["correct"]) for r in records])
    return {"baselines": out}


def _number(value: float) -> float | None:
    """NaN (nothing to average) is written as null: JSON has no NaN."""
    return None if value != value else value


def _mean(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None

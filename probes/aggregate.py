"""From per-item records to the numbers a paper reports: one function per method, built from the
pure metrics of probes/metrics.py. Every aggregate has `accuracy` (the mean of the records'
`correct`), breakdowns by relation and frequency bucket, and the method's own measures."""

from __future__ import annotations

from typing import Sequence

from . import metrics


def aggregate(method: str, records: Sequence[dict]) -> dict:
    out = {"method": method, "items": len(records), **_accuracy(records)}
    if not records:
        return out
    out["by_relation"] = _breakdown(records, "relation")
    out["by_bucket"] = _breakdown(records, "bucket")
    extra = {"belief": _belief, "ic-lke": _icl, "distractor": _distractor}.get(method)
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
    correct = [r["prompt_correct"] for r in records if r["prompt_correct"]]
    acc = metrics.acc_at_1(correct)
    flat_confidence = [c for r in records for c in r["confidence"]]
    flat_correct = [c for r in records for c in r["prompt_correct"]]
    coverage = metrics.coverage(correct, [r["template_ids"] for r in records if r["prompt_correct"]],
                                [r["relation"] for r in records if r["prompt_correct"]])
    return {"acc_at_1": {"mean": acc.mean, "sd": acc.sd, "min": acc.min, "max": acc.max, "range": acc.range,
                         "draws": acc.draws},
            "consistency": metrics.consistency([r["predictions"] for r in records]),
            "overconfidence": metrics.overconfidence(flat_confidence, flat_correct),
            "one_word_ratio": metrics.one_word_ratio([p for r in records for p in r["predictions"]]),
            "coverage": {"average": coverage.average, "maximum": coverage.maximum, "oracle": coverage.oracle},
            "reliability": [{"confidence": b.confidence, "accuracy": b.accuracy, "count": b.count}
                            for b in metrics.reliability_bins(flat_confidence, flat_correct)]}


def _icl(records: Sequence[dict]) -> dict:
    probability = [r["probability"] for r in records]
    correct = [bool(r["correct"]) for r in records]
    at_k = {}
    for k in (0.5, 0.7, 0.9):
        found = metrics.accuracy_at_k(probability, correct, k)
        at_k[str(k)] = {"accuracy": _number(found.accuracy), "items": found.count}
    return {"accuracy_at_k": at_k}


def _distractor(records: Sequence[dict]) -> dict:
    strategies = sorted({s for r in records for s in r["by_strategy"]})
    out = {}
    for strategy in strategies:
        values = [r["by_strategy"][strategy] for r in records if strategy in r["by_strategy"]]
        out[strategy] = {name: _mean([v[name] for v in values]) for name in ("min_at_n", "avg_at_n")}
    return {"by_strategy": out}


def _number(value: float) -> float | None:
    """NaN (nothing to average) is written as null: JSON has no NaN."""
    return None if value != value else value


def _mean(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None

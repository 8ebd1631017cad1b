"""What every method's aggregate is made of, over the pure functions beside it: accuracy
(the mean of the records' `correct`) with its 95% interval, breakdowns of it by a record field,
and numbers as JSON holds them. probes/evaluation/aggregate.py gives every run these; each method's own
measures (its `aggregate_extra`) build on them."""

from __future__ import annotations

from typing import Sequence

from . import breakdowns, uncertainty


def accuracy(records: Sequence[dict]) -> dict:
    """`accuracy`, `scored` (the records with a verdict) and `accuracy_interval`."""
    scored = [float(r["correct"]) for r in records if r.get("correct") is not None]
    return {"accuracy": sum(scored) / len(scored) if scored else None, "scored": len(scored),
            "accuracy_interval": interval(scored)}


def interval(values: Sequence[float], seed: int = 0) -> dict | None:
    """A mean's standard error and 95% interval: Wilson's when every value is 0 or 1 (a
    proportion), else a seeded bootstrap over the items (shares of prompts or settings); None
    when there is nothing to average. `few` marks figures over fewer than uncertainty.FEW_ITEMS."""
    if not values:
        return None
    if all(v in (0.0, 1.0) for v in values):
        found = uncertainty.wilson(int(sum(values)), len(values))
    else:
        found = uncertainty.bootstrap(list(values), lambda xs: sum(xs) / len(xs), seed=seed)
    return json_numbers(found.as_dict())


def proportion_interval(correct: int, total: int) -> dict:
    """Wilson's 95% interval of `correct` out of `total`."""
    return json_numbers(uncertainty.wilson(correct, total).as_dict())


def accuracy_breakdown(records: Sequence[dict], key: str) -> dict:
    """Accuracy per value of the records' `key` (right/wrong records), with its interval."""
    groups = breakdowns.accuracy_by([r for r in records if r.get("correct") is not None], key)
    return {name: {"accuracy": g.accuracy, "correct": g.correct, "total": g.total,
                   "interval": proportion_interval(g.correct, g.total)} for name, g in groups.items()}


def share_breakdown(records: Sequence[dict], key: str) -> dict:
    """As `accuracy_breakdown`, with `correct` read as a share (of prompts, settings) and
    averaged as it is; a missing `key` is the group "none"."""
    groups: dict[str, list[float]] = {}
    for r in records:
        if r.get("correct") is not None:
            groups.setdefault("none" if r.get(key) is None else str(r[key]), []).append(float(r["correct"]))
    return {name: {"accuracy": sum(v) / len(v), "correct": sum(v), "total": len(v), "interval": interval(v)}
            for name, v in groups.items()}


def json_number(value: float) -> float | None:
    """NaN (nothing to average) is written as null: JSON has no NaN."""
    return None if value != value else value


def json_numbers(found: dict) -> dict:
    """The mapping with its float values through `json_number`."""
    return {k: json_number(v) if isinstance(v, float) else v for k, v in found.items()}

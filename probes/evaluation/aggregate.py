"""From per-item records to the numbers a paper reports. Every aggregate has `accuracy` (the
mean of the records' `correct`) with its 95% interval and breakdowns by relation and frequency
bucket (probes/measures/accuracy.py), then the method's own measures: what its class's
`aggregate_extra` returns, each method's in its own module under probes/methods/."""

from __future__ import annotations

from typing import Sequence

from ..methods import registered
from ..measures.accuracy import accuracy, share_breakdown


def aggregate(method: str, records: Sequence[dict], options: dict | None = None) -> dict:
    """`options`: the run's method options (run.json's), for the measures whose definition is an
    option (BELIEF: `acc_draws`, `bias`, `coverage_maximum`); missing ones take the paper's."""
    options = options or {}
    out = {"method": method, "items": len(records), **accuracy(records)}
    if not records:
        return out
    # `correct` is a share for multi-prompt and multi-cloze methods: breakdowns average it as is.
    out["by_relation"] = share_breakdown(records, "relation")
    out["by_bucket"] = share_breakdown(records, "bucket")
    cls = registered().get(method)  # a method no longer registered: the shared measures only
    if cls is not None:
        out.update(cls.aggregate_extra(records, options))
    return out

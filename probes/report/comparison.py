"""Runs side by side, no I/O: the pairs of runs a report compares (same method, or a BELIEF run and
a BELIEF-ICL run, over the same probe set),
the `Comparison` behind `factprobe compare`, and IC-LKE's per-position curve. What counts as known
and the overlap measures themselves: probes/measures/overlap.py. The sort orders of relations and
buckets: probes/document/formatting.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..document import breakdown, bucket_key, natural_key, number
from ..measures.overlap import Definitions, Overlap, overlap
from ..measures.uncertainty import Estimate, mean_estimate
from .loading import Run
from .views import accuracy_views


def same_probe_set(a: Run, b: Run) -> bool:
    """The same file contents when both runs know the SHA-256; otherwise the same file name."""
    if a.probes_sha256 and b.probes_sha256:
        return a.probes_sha256 == b.probes_sha256
    return a.probes == b.probes


# BELIEF (masked LMs) and BELIEF-ICL (causal LMs) ask the same MyriadLAMA prompts, and the paper
# compares what an encoder and a decoder know (000:271-273).
ENCODER_DECODER = frozenset({"belief", "belief-icl"})


def across_methods(a: Run, b: Run) -> bool:
    """A BELIEF run and a BELIEF-ICL run: compared on (fact, template) units, the BELIEF-ICL run
    read in one setting (`Definitions.icl_setting`)."""
    return {a.method, b.method} == ENCODER_DECODER


def icl_settings(run: Run) -> list[str]:
    """The ICL settings a BELIEF-ICL run answered in (its aggregate's `by_setting`)."""
    by_setting = run.aggregate.get("by_setting")
    return list(by_setting) if isinstance(by_setting, dict) else []


def missing_setting(a: Run, b: Run, definitions: Definitions) -> Run | None:
    """The BELIEF-ICL run of a BELIEF / BELIEF-ICL pair that has no answers in the chosen setting."""
    if not across_methods(a, b):
        return None
    icl = a if a.method == "belief-icl" else b
    return None if definitions.icl_setting in icl_settings(icl) else icl


@dataclass(frozen=True)
class PairRow:
    a: Run
    b: Run
    overlap: Overlap


def comparable_pairs(runs: Sequence[Run], definitions: Definitions = Definitions()) -> list[PairRow]:
    """Every pair of runs over the same probe set with the same method, or a BELIEF and a
    BELIEF-ICL run whose BELIEF-ICL run answered in `definitions.icl_setting`, in run order."""
    return [PairRow(a, b, overlap(a.items, b.items, definitions, across_methods(a, b)))
            for k, a in enumerate(runs) for b in runs[k + 1:]
            if (a.method == b.method or (across_methods(a, b) and not missing_setting(a, b, definitions)))
            and same_probe_set(a, b)]


def entry_accuracy(entry) -> float | None:
    return number(entry.get("accuracy")) if isinstance(entry, dict) else None


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


@dataclass(frozen=True)
class Comparison:
    a: Run
    b: Run
    same_probe_set: bool
    overlap: Overlap

    def as_dict(self) -> dict:
        """The JSON of `factprobe compare`: differences are B - A. A BELIEF-ICL run's accuracy is
        read per ICL setting (`accuracy_by_setting`, its relations and buckets as "P36 (zero-shot)"),
        never its settings pooled: no paper defines that number."""
        views_a, views_b = _views(self.a), _views(self.b)

        def side(run: Run, views: dict) -> dict:
            pooled = views.get("")
            return {"folder": run.folder, "model": run.model, "method": run.method, "probes": run.probes,
                    "probes_sha256": run.probes_sha256, "items": run.item_count,
                    "accuracy": number(pooled.aggregate.get("accuracy")) if pooled else None}

        def row(x: float | None, y: float | None, **more) -> dict:
            return {"a": x, "b": y, "difference": _diff(x, y), **more}

        def table(key: str, order) -> dict:
            out = {}
            for setting in dict.fromkeys([*views_a, *views_b]):
                ta = breakdown(views_a[setting], key) if setting in views_a else {}
                tb = breakdown(views_b[setting], key) if setting in views_b else {}
                for name in sorted(set(ta) | set(tb), key=order):
                    out[f"{name} ({setting})" if setting else name] = row(
                        entry_accuracy(ta.get(name)), entry_accuracy(tb.get(name)),
                        total_a=(ta.get(name) or {}).get("total"), total_b=(tb.get(name) or {}).get("total"))
            return out

        a, b = side(self.a, views_a), side(self.b, views_b)
        by_setting = {setting: row(number(views_a[setting].aggregate.get("accuracy")) if setting in views_a else None,
                                   number(views_b[setting].aggregate.get("accuracy")) if setting in views_b else None)
                      for setting in dict.fromkeys([*views_a, *views_b]) if setting}
        return {"a": a, "b": b, "same_probe_set": self.same_probe_set,
                "same_method": self.a.method == self.b.method,
                "accuracy": row(a["accuracy"], b["accuracy"]), "accuracy_by_setting": by_setting,
                "by_relation": table("by_relation", natural_key), "by_bucket": table("by_bucket", bucket_key),
                "overlap": self.overlap.as_dict(), "known_rule": self.overlap.describe()}


def _views(run: Run) -> dict[str, Run]:
    """The run as its accuracy is read, by ICL setting for BELIEF-ICL, else under "" alone."""
    views = accuracy_views(run)
    if run.method == "belief-icl" and views and views[0].rid != run.rid:
        return {view.rid[len(run.rid) + 1:]: view for view in views}
    return {"": run}


def compare(a: Run, b: Run, definitions: Definitions = Definitions()) -> Comparison:
    return Comparison(a, b, same_probe_set(a, b), overlap(a.items, b.items, definitions, across_methods(a, b)))


@dataclass(frozen=True)
class PositionPoint:
    position: int  # 1-based: the first demonstration line is 1
    estimate: Estimate  # the mean log-probability of the line's object given the lines before it


def position_curve(run: Run) -> list[PositionPoint]:
    """IC-LKE's per-position curve, from the items' `position_logprobs` (`record_positions=true`):
    per demonstration position, the mean log-probability of that line's object over the items
    that have the position, with its 95% interval. Empty when the run recorded none."""
    by_position: dict[int, list[float]] = {}
    for item in run.items:
        values = item.get("position_logprobs")
        if isinstance(values, list):
            for k, value in enumerate(values, start=1):
                if isinstance(value, (int, float)):
                    by_position.setdefault(k, []).append(float(value))
    return [PositionPoint(k, mean_estimate(v)) for k, v in sorted(by_position.items())]

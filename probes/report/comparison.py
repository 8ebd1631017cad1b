"""Runs side by side, no I/O: the pairs of runs a report compares (same method, or a BELIEF run and
a BELIEF-ICL run, over the same probe set),
the `Comparison` behind `factprobe compare` (each difference B - A with a paired bootstrap
interval over the items both runs scored, each correlation of per-relation accuracies with its
n and a Fisher-z interval, or n/a under MIN_RELATIONS relations), and IC-LKE's per-position
curve. What counts as known and the overlap measures themselves: probes/measures/overlap.py. The sort orders of relations and
buckets: probes/document/formatting.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..document import breakdown, bucket_key, fmt, natural_key, number
from ..measures.overlap import Definitions, Overlap, overlap
from ..measures.uncertainty import BOOTSTRAP_DRAWS, Z_95, Estimate, bootstrap, mean_estimate
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


# Below this many relations a correlation of per-relation accuracies says nothing a reader can
# use (any two points correlate perfectly): compare prints n/a, not 1.0000.
MIN_RELATIONS = 5
TOO_FEW = f"n/a (fewer than {MIN_RELATIONS} relations)"


def paired_difference(pairs: Sequence[tuple[float, float]], *, draws: int = BOOTSTRAP_DRAWS,
                      seed: int = 0) -> Estimate | None:
    """mean(B) - mean(A) over items both runs scored, `pairs` of (A's, B's) verdict, with the
    percentile 95% interval of a paired bootstrap: `draws` resamples of the items (an item's two
    verdicts travel together), uncertainty.bootstrap's seeded scipy resampling. None without pairs."""
    if not pairs:
        return None
    return bootstrap(list(pairs), lambda ps: sum(b - a for a, b in ps) / len(ps), draws=draws, seed=seed)


def fisher_interval(r: float | None, n: int, *, kendall: bool = False) -> dict:
    """A correlation over `n` relations with its 95% interval from Fisher's z = atanh(r): SE
    1/sqrt(n - 3) for Pearson, sqrt(0.437 / (n - 4)) for Kendall's tau (Fieller, Hartley and
    Pearson 1957). Under MIN_RELATIONS relations, or where r is undefined, the value is None and
    `note` says why."""
    if n < MIN_RELATIONS or r is None:
        return {"value": None, "low": None, "high": None, "n": n,
                "note": TOO_FEW if n < MIN_RELATIONS else "n/a (undefined: constant accuracies)"}
    if abs(r) >= 1:  # atanh(r) is infinite there: the interval is the point
        return {"value": r, "low": r, "high": r, "n": n}
    se = math.sqrt(0.437 / (n - 4)) if kendall else 1 / math.sqrt(n - 3)
    z = math.atanh(r)
    return {"value": r, "low": math.tanh(z - Z_95 * se), "high": math.tanh(z + Z_95 * se), "n": n}


def correlation_text(entry: Mapping | None) -> str:
    """A `fisher_interval` as compare and the report print it: "0.5000 [-0.4059, 0.9103]", or
    the reason there is no value."""
    if not isinstance(entry, Mapping):
        return "n/a"
    if entry.get("value") is None:
        return entry.get("note") or "n/a"
    return f"{fmt(entry['value'])} [{fmt(entry['low'])}, {fmt(entry['high'])}]"


def _verdicts(run: Run) -> dict:
    """id -> the item's record, for the items with a verdict (a number or a bool, not NaN)."""
    return {r["id"]: r for r in run.items if isinstance(r, dict) and "id" in r
            and isinstance(r.get("correct"), (bool, int, float)) and r["correct"] == r["correct"]}


def _group(record: dict, key: str) -> str:
    value = record.get(key)
    return "none" if value is None else str(value)


def _interval(estimate: Estimate | None) -> dict | None:
    if estimate is None or math.isnan(estimate.low):
        return None
    return {"low": estimate.low, "high": estimate.high, "n": estimate.n, "resamples": estimate.resamples,
            "seed": estimate.seed, "method": "paired bootstrap"}


@dataclass(frozen=True)
class Comparison:
    a: Run
    b: Run
    same_probe_set: bool
    overlap: Overlap
    draws: int = BOOTSTRAP_DRAWS  # the paired bootstrap's resamples and seed
    seed: int = 0

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

        def row(x: float | None, y: float | None, pairs=None, **more) -> dict:
            interval = _interval(paired_difference(pairs, draws=self.draws, seed=self.seed)) if pairs else None
            return {"a": x, "b": y, "difference": _diff(x, y), **more,
                    **({"difference_interval": interval} if interval else {})}

        def pairs_of(setting: str, key: str | None = None, name: str | None = None) -> list[tuple[float, float]]:
            if setting not in views_a or setting not in views_b:
                return []
            va, vb = _verdicts(views_a[setting]), _verdicts(views_b[setting])
            return [(float(va[i]["correct"]), float(vb[i]["correct"])) for i in sorted(set(va) & set(vb), key=str)
                    if key is None or _group(va[i], key) == name]

        def table(key: str, order) -> dict:
            out = {}
            field = key.removeprefix("by_")
            for setting in dict.fromkeys([*views_a, *views_b]):
                ta = breakdown(views_a[setting], key) if setting in views_a else {}
                tb = breakdown(views_b[setting], key) if setting in views_b else {}
                for name in sorted(set(ta) | set(tb), key=order):
                    out[f"{name} ({setting})" if setting else name] = row(
                        entry_accuracy(ta.get(name)), entry_accuracy(tb.get(name)), pairs_of(setting, field, name),
                        total_a=(ta.get(name) or {}).get("total"), total_b=(tb.get(name) or {}).get("total"))
            return out

        a, b = side(self.a, views_a), side(self.b, views_b)
        by_setting = {setting: row(number(views_a[setting].aggregate.get("accuracy")) if setting in views_a else None,
                                   number(views_b[setting].aggregate.get("accuracy")) if setting in views_b else None,
                                   pairs_of(setting))
                      for setting in dict.fromkeys([*views_a, *views_b]) if setting}
        o = self.overlap
        return {"a": a, "b": b, "same_probe_set": self.same_probe_set,
                "same_method": self.a.method == self.b.method,
                "accuracy": row(a["accuracy"], b["accuracy"], pairs_of("") if "" in views_a else None),
                "accuracy_by_setting": by_setting,
                "by_relation": table("by_relation", natural_key), "by_bucket": table("by_bucket", bucket_key),
                "correlations": {"relations": o.relations, "pearson": fisher_interval(o.pearson, o.relations),
                                 "kendall_tau": fisher_interval(o.kendall, o.relations, kendall=True)},
                "overlap": o.as_dict(), "known_rule": o.describe()}


def _views(run: Run) -> dict[str, Run]:
    """The run as its accuracy is read, by ICL setting for BELIEF-ICL, else under "" alone."""
    views = accuracy_views(run)
    if run.method == "belief-icl" and views and views[0].rid != run.rid:
        return {view.rid[len(run.rid) + 1:]: view for view in views}
    return {"": run}


def compare(a: Run, b: Run, definitions: Definitions = Definitions(), *, draws: int = BOOTSTRAP_DRAWS,
            seed: int = 0) -> Comparison:
    return Comparison(a, b, same_probe_set(a, b), overlap(a.items, b.items, definitions, across_methods(a, b)),
                      draws, seed)


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

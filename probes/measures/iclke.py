"""IC-LKE (Wu et al. 2024): how models' known facts overlap (subsumption and sharing rates,
overall or averaged per relation), Pearson and Kendall tau-b, and accuracy over the items whose
normalized choice probability is above K (Accuracy@K). Conventions: probes/measures/__init__.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Hashable, Mapping, Sequence

from ._checks import _require_items, _require_same_length


# ---------------------------------------------------------------------------------------------
# IC-LKE: overlap between models and correlations


def subsumption_rate(known_a: set, known_b: set) -> float:
    """|A ∩ B| / |A|: the share of the facts model A knows that model B knows too. Not symmetric.
    When A knows nothing the rate is 1.0 (A ⊆ B holds vacuously)."""
    if not known_a:
        return 1.0
    return len(known_a & known_b) / len(known_a)


def sharing_rate(known_by: Mapping[Hashable, set]) -> float:
    """Share of the facts known by at least one model that are known by every model:
    |∩ K_m| / |∪ K_m| (for two models, the Jaccard index of their known facts). 1.0 when no model
    knows anything (vacuously shared). Raises ValueError when no model is given."""
    if not known_by:
        raise ValueError("known_by is empty")
    sets = list(known_by.values())
    union = set().union(*sets)
    if not union:
        return 1.0
    return len(set.intersection(*map(set, sets))) / len(union)


def shared_rate(known_by: Mapping[Hashable, set], probed: set) -> float:
    """Share of the probed units known by every model: |∩ K_m| / |probed|. Unlike
    `sharing_rate` (a Jaccard index over the units some model knows), the denominator is every
    unit all models were asked about, so two models that both know little share little. NaN
    when nothing was probed. Raises ValueError when no model is given or a model knows a unit
    outside `probed`."""
    if not known_by:
        raise ValueError("known_by is empty")
    for model, known in known_by.items():
        if not set(known) <= set(probed):
            raise ValueError(f"model {model!r} knows units that were not probed")
    if not probed:
        return math.nan
    return len(set.intersection(*map(set, known_by.values()))) / len(probed)


def mean_over_relations(relation_of: Mapping[Hashable, Hashable], rate: Callable[[set], float]) -> float:
    """IC-LKE compares models relation by relation: `rate(units)` is computed on the units of
    each relation (`relation_of[unit]` names a unit's relation; a unit is a fact, or one fact
    under one template and setting) and the rates are averaged with equal weight per relation.
    Relations whose rate is NaN (nothing to measure there, e.g. A knows none of its units for a
    subsumption rate) are left out; NaN when every relation is."""
    units_of: dict[Hashable, set] = {}
    for unit, relation in relation_of.items():
        units_of.setdefault(relation, set()).add(unit)
    rates = [r for r in (rate(units) for units in units_of.values()) if not math.isnan(r)]
    return math.fsum(rates) / len(rates) if rates else math.nan


def subsumption_rate_by_relation(known_a: set, known_b: set, relation_of: Mapping[Hashable, Hashable]) -> float:
    """The subsumption rate of A by B per relation, averaged over the relations in which A knows
    at least one unit (`mean_over_relations` of `subsumption_rate`); `relation_of` holds every
    probed unit. NaN when A knows nothing."""
    return mean_over_relations(
        relation_of, lambda units: subsumption_rate(known_a & units, known_b & units) if known_a & units else math.nan)


def _paired(x: Sequence[float], y: Sequence[float]) -> None:
    _require_same_length(x, y, "x", "y")
    if len(x) < 2:
        raise ValueError(f"a correlation needs at least 2 pairs, got {len(x)}")


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r = sum((x - mean x)(y - mean y)) / sqrt(sum((x - mean x)^2) sum((y - mean y)^2))
    (IC-LKE correlates per-relation accuracies with it, seed 002 line 1238): scipy.stats.pearsonr's
    statistic to within 1e-15 (tests/test_stats_scipy.py), kept here with exact sums so that the
    figures already written keep their digits. NaN when x or y is constant (r is undefined) or
    holds a NaN or infinity, as scipy says. Raises ValueError for fewer than 2 pairs or different
    lengths."""
    _paired(x, y)
    if not all(math.isfinite(v) for v in (*x, *y)):
        return math.nan  # clamping NaN below would say 1.0
    mx, my = math.fsum(x) / len(x), math.fsum(y) / len(y)
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = math.fsum((a - mx) ** 2 for a in x)
    syy = math.fsum((b - my) ** 2 for b in y)
    if sxx == 0.0 or syy == 0.0:
        return math.nan
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))  # clamp rounding just past +-1


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)), where over all n0 = n(n-1)/2 pairs C
    counts concordant and D discordant pairs, n1 the pairs tied in x and n2 the pairs tied in y
    (a pair tied in both counts in n1 and n2 and in neither C nor D). NaN when x or y is constant
    or holds a NaN. Computed by scipy.stats.kendalltau (O(n log n)). Tau-b because per-relation
    accuracies and human ratings tie; the distractor paper says only "Kendall's tau" (seed 004
    lines 180, 237). Raises ValueError for fewer than 2 pairs or different lengths."""
    _paired(x, y)
    if len(set(x)) == 1 or len(set(y)) == 1:
        return math.nan  # scipy would also say NaN, with a warning
    from scipy.stats import kendalltau  # scipy is heavy to import and only this needs it

    return float(kendalltau(x, y, variant="b").statistic)


# ---------------------------------------------------------------------------------------------
# IC-LKE: confidence over multiple choices


def normalize_choice_probs(logprobs: Sequence[float]) -> list[float]:
    """Softmax over the choices' log-probabilities: p_i / sum_j p_j, computed as
    exp(l_i - max l) / sum_j exp(l_j - max l) so that large or very negative log-probs neither
    overflow nor underflow to 0/0. -inf entries get probability 0. Raises ValueError on empty
    input or when every entry is -inf (or any is NaN/+inf)."""
    _require_items(logprobs, "logprobs")
    top = max(logprobs)
    if not math.isfinite(top) or any(math.isnan(v) for v in logprobs):
        raise ValueError("logprobs need at least one finite entry and no NaN or +inf")
    weights = [math.exp(v - top) for v in logprobs]
    total = math.fsum(weights)
    return [w / total for w in weights]


@dataclass(frozen=True)
class AccuracyAtK:
    accuracy: float  # accuracy over the selected items; NaN when none is selected
    count: int  # how many items have a normalized probability above K


def accuracy_at_k(probability: Sequence[float], correct: Sequence[bool], k: float) -> AccuracyAtK:
    """IC-LKE's accuracy over confident items: among the items whose normalized probability of
    the predicted choice (see `normalize_choice_probs`) is strictly greater than `k`, the share
    whose prediction is correct, and how many such items there are. NaN accuracy when none is
    above `k`. Raises ValueError on empty or mismatched input."""
    _require_items(probability, "probability")
    _require_same_length(probability, correct, "probability", "correct")
    selected = [bool(c) for p, c in zip(probability, correct) if p > k]
    if not selected:
        return AccuracyAtK(accuracy=math.nan, count=0)
    return AccuracyAtK(accuracy=sum(selected) / len(selected), count=len(selected))

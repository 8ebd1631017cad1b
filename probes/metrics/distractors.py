"""The distractor measure (Ammar Khodja et al. 2025): Min@n and Avg@n of the gold object against
its first n distractors, the per-fact aggregate, and the baselines it is compared with
(Probability, Precision@n, ROUGE-L). Conventions: probes/metrics/__init__.py.
"""

from __future__ import annotations

import math
from typing import Hashable, Sequence

from ._checks import _require_items, _require_same_length


# ---------------------------------------------------------------------------------------------
# Distractors: the gold object against its n most plausible distractors


def _first_n(distractor_plausibilities: Sequence[float], n: int) -> Sequence[float]:
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if len(distractor_plausibilities) < n:
        raise ValueError(f"n={n} but only {len(distractor_plausibilities)} distractors")
    return distractor_plausibilities[:n]


def min_at_n(gold_plausibility: float, distractor_plausibilities: Sequence[float], n: int) -> bool:
    """Min@n: the fact counts as known when the gold object's plausibility is strictly greater
    than that of each of the first n distractors (the distractors in the order the strategy
    ranked them). A tie means not known. Raises ValueError when n < 1 or fewer than n
    distractors are given."""
    return all(gold_plausibility > d for d in _first_n(distractor_plausibilities, n))


def avg_at_n(gold_plausibility: float, distractor_plausibilities: Sequence[float], n: int) -> float:
    """Avg@n: (1/n) * sum over the first n distractors d_i of 1[gold > d_i], strict (a tie scores
    0). Same errors as `min_at_n`."""
    first = _first_n(distractor_plausibilities, n)
    return sum(gold_plausibility > d for d in first) / n


def mean_over_facts(values: Sequence[float], fact_ids: Sequence[Hashable]) -> float:
    """Aggregate per-cloze scores (Min@n as 0/1, Avg@n, any baseline) over a probe set: first the
    mean over each fact's clozes, then the mean over facts, so that a fact with many templates
    weighs as much as a fact with one. Raises ValueError on empty or mismatched input."""
    means = fact_means(values, fact_ids)
    return math.fsum(means) / len(means)


def fact_means(values: Sequence[float], fact_ids: Sequence[Hashable]) -> list[float]:
    """Each fact's mean over its values, facts in order of first appearance: the units that
    `mean_over_facts` averages and that an interval over facts resamples."""
    _require_items(values, "values")
    _require_same_length(values, fact_ids, "values", "fact_ids")
    per_fact: dict[Hashable, list[float]] = {}
    for value, fact in zip(values, fact_ids):
        per_fact.setdefault(fact, []).append(float(value))
    return [math.fsum(v) / len(v) for v in per_fact.values()]


# ---------------------------------------------------------------------------------------------
# Distractors: baselines


def probability_known(gold_prob: float, threshold: float) -> bool:
    """Probability baseline: known when the gold object's probability is strictly above the
    threshold (works the same with log-probabilities and a log threshold)."""
    return gold_prob > threshold


def precision_at_n(ranked_answers: Sequence[str], gold_set: set[str] | frozenset[str], n: int) -> float:
    """Precision@n in LAMA's sense: 1.0 when any of the model's first n ranked answers is one of
    the gold answers (object labels and aliases, compared as given), else 0.0. Averaged over
    facts this is the usual P@n. Raises ValueError when n < 1 or the gold set is empty."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not gold_set:
        raise ValueError("gold_set is empty")
    return 1.0 if any(a in gold_set for a in ranked_answers[:n]) else 0.0


def _lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    # Classic dynamic programme, one row at a time: row[j] = LCS of a[:i] and b[:j].
    row = [0] * (len(b) + 1)
    for token in a:
        diagonal = 0  # the previous row's value at j - 1
        for j, other in enumerate(b, start=1):
            above = row[j]
            row[j] = diagonal + 1 if token == other else max(row[j], row[j - 1])
            diagonal = above
    return row[-1]


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F-measure with beta = 1 over lowercased whitespace tokens (punctuation is not
    split off): with L = length of the longest common subsequence, P = L / |candidate|,
    R = L / |reference|, F = 2PR / (P + R). 0.0 when L = 0, including an empty candidate or
    reference (an empty generation scores 0 rather than failing a whole evaluation)."""
    cand, ref = candidate.lower().split(), reference.lower().split()
    common = _lcs_length(cand, ref) if cand and ref else 0
    if common == 0:
        return 0.0
    precision, recall = common / len(cand), common / len(ref)
    return 2 * precision * recall / (precision + recall)

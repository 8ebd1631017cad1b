"""DistFact's evaluation of knowledge measures against human judgement (seed 004, sections 4.2 to
5.1), as pure functions: Kendall's tau over the facts two value maps share, the seeded K-fold
split, cross-validation with a grid search of each measure's hyperparameters (the configuration
with the highest tau on the training folds is scored on the test fold), each fold's choice
re-scored with more or fewer distractors or clozes, the distractor measure recomputed for any
number of distractors from per-cloze wins, seeded cloze subsets and appendix C's proportional
gain. No I/O: probes/evaluation/assess.py reads the runs and the judgements. The details and where factprobe
reads the paper: docs/design/measures.md.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from .iclke import kendall_tau

Values = Mapping[str, "float | None"]  # fact -> a measure's value (None: the measure has none)

# The paper's grid (004:184): numbers of distractors, and Table 2's aggregations (004:202).
PAPER_DISTRACTORS = (1, 2, 5, 10, *range(20, 201, 20))
AGGREGATIONS = ("min", "avg")
PAPER_FOLDS = 3  # 004:180
# Beam widths the paper searches (004:184); here each is a run (`--option beams=W`).
PAPER_BEAMS = (1, 2, 5, 10, 20, 30, 50, 100)
PAPER_JUDGE_BEAMS = (1, 2, 5)


def paired_tau(a: Values, b: Values, facts: Iterable[str]) -> tuple[float | None, int]:
    """Kendall's tau-b between `a` and `b` over the `facts` both have a value for, and how many
    those are; None when fewer than 2 or either side is constant (tau is undefined)."""
    pairs = [(a[f], b[f]) for f in facts if a.get(f) is not None and b.get(f) is not None]
    if len(pairs) < 2:
        return None, len(pairs)
    tau = kendall_tau([float(x) for x, _ in pairs], [float(y) for _, y in pairs])
    return (None if math.isnan(tau) else tau), len(pairs)


def kfold(count: int, k: int, seed: int) -> list[list[int]]:
    """Positions 0..count-1 shuffled by numpy's RandomState(seed), cut into k contiguous folds,
    the first count % k of them one longer: the split scikit-learn's KFold(k, shuffle=True,
    random_state=seed) makes, which DistFact's authors' notebook uses with seed 42."""
    if k < 2:
        raise ValueError(f"folds: at least 2, not {k}")
    if count < k:
        raise ValueError(f"{count} facts cannot make {k} folds")
    import numpy as np  # the legacy generator: its shuffle is fixed across numpy versions

    order = np.arange(count)
    np.random.RandomState(seed).shuffle(order)
    folds, start = [], 0
    for i in range(k):
        size = count // k + (1 if i < count % k else 0)
        folds.append([int(p) for p in order[start:start + size]])
        start += size
    return folds


@dataclass(frozen=True)
class Config:
    """One point of a measure's grid: its hyperparameters and the value it gives each fact."""

    params: tuple[tuple[str, object], ...]
    values: Values


@dataclass(frozen=True)
class FoldChoice:
    """Fold `fold` as the test fold: the configuration (and threshold, `thresholds=True` only)
    with the highest tau on the other folds, that tau, and its tau on the test fold."""

    fold: int
    params: dict | None  # None: no configuration has a tau on the training folds
    threshold: float | None
    train_tau: float | None
    train_facts: int
    test_tau: float | None
    test_facts: int


def binarize(values: Values, threshold: float) -> dict[str, float | None]:
    """1.0 where the value is above `threshold` (the fact counts as known), else 0.0."""
    return {f: None if v is None else float(v > threshold) for f, v in values.items()}


def thresholds_of(values: Values, facts: Iterable[str]) -> list[float]:
    """The cut points a threshold search tries: every distinct value the facts have but the
    largest (above it no fact would be known, and tau is undefined)."""
    distinct = sorted({float(values[f]) for f in facts if values.get(f) is not None})
    return distinct[:-1]


def best_config(configs: Sequence[Config], human: Values, facts: Sequence[str],
                thresholds: bool = False) -> tuple[int, float | None, float, int] | None:
    """(index, threshold, tau, facts) of the configuration with the highest tau on `facts`; ties
    go to the first in grid order (and the lowest threshold). None when no tau is defined."""
    best = None
    for index, config in enumerate(configs):
        for cut in (thresholds_of(config.values, facts) if thresholds else [None]):
            values = config.values if cut is None else binarize(config.values, cut)
            tau, n = paired_tau(values, human, facts)
            if tau is not None and (best is None or tau > best[2]):
                best = (index, cut, tau, n)
    return best


def cross_validate(configs: Sequence[Config], human: Values, folds: Sequence[Sequence[str]],
                   thresholds: bool = False) -> list[FoldChoice]:
    """Each fold in turn is the test fold: the grid is searched on the other folds together
    (004:180-184), the winner scored on the test fold."""
    choices = []
    for k, test in enumerate(folds):
        train = [f for j, fold in enumerate(folds) if j != k for f in fold]
        best = best_config(configs, human, train, thresholds)
        if best is None:
            choices.append(FoldChoice(k, None, None, None, 0, None, 0))
            continue
        index, cut, train_tau, train_n = best
        values = configs[index].values if cut is None else binarize(configs[index].values, cut)
        test_tau, test_n = paired_tau(values, human, test)
        choices.append(FoldChoice(k, dict(configs[index].params), cut, train_tau, train_n, test_tau, test_n))
    return choices


def mean_and_std(taus: Sequence[float | None]) -> tuple[float | None, float | None]:
    """The mean of the defined taus and their sample standard deviation (n - 1, as pandas'
    std in the authors' notebook); None where there are too few."""
    kept = [t for t in taus if t is not None]
    mean = math.fsum(kept) / len(kept) if kept else None
    return mean, (statistics.stdev(kept) if len(kept) >= 2 else None)


def rescored(choices: Sequence[FoldChoice], folds: Sequence[Sequence[str]], human: Values,
             values_for: Callable[[dict], Values]) -> list[float | None]:
    """Each fold's test tau when its chosen configuration is changed by `values_for` (fewer
    distractors, fewer clozes), its threshold kept (004:253, 257)."""
    taus = []
    for choice, test in zip(choices, folds):
        if choice.params is None:
            taus.append(None)
            continue
        values = values_for(choice.params)
        if choice.threshold is not None:
            values = binarize(values, choice.threshold)
        taus.append(paired_tau(values, human, test)[0])
    return taus


def proportional_gain(tau_m: float | None, tau_1: float | None) -> float | None:
    """(tau_m + 1) / (tau_1 + 1): appendix C's gain of m clozes over one (004:354)."""
    if tau_m is None or tau_1 is None:
        return None
    return (tau_m + 1) / (tau_1 + 1)


def distractor_counts(available: int, grid: Sequence[int] = PAPER_DISTRACTORS) -> list[int]:
    """The grid's numbers of distractors a run can tell apart: those up to `available` (the most
    any fact has) and the first above it, which takes every distractor a fact has (a fact with
    fewer than n uses all of its own, as the authors' code)."""
    kept = [n for n in grid if n < available]
    above = [n for n in grid if n >= available]
    return kept + above[:1] if above else kept


@dataclass(frozen=True)
class ClozeWins:
    """For one cloze: whether the true object beat each named distractor, in the strategy's
    order (1[Pl(o|c) > Pl(o*|c)], 004:92); Min@n and Avg@n over the first n read off it."""

    wins: tuple[bool, ...]

    @classmethod
    def of(cls, gold: float, distractors: Sequence[float]) -> ClozeWins:
        return cls(tuple(gold > d for d in distractors))

    def score(self, agg: str, n: int) -> float | None:
        """Min@n (1.0 when every one of the first n was beaten) or Avg@n over the first
        min(n, named) distractors; None without a named distractor."""
        first = self.wins[:n]
        if not first:
            return None
        if agg == "min":
            return float(all(first))
        if agg == "avg":
            return sum(first) / len(first)
        raise ValueError(f"aggregation: min or avg, not {agg!r}")


def distractor_score(clozes: Sequence[ClozeWins | None], agg: str, n: int,
                     subset: Sequence[int] | None = None) -> float | None:
    """K(f): the mean over the fact's clozes (all, or the positions in `subset`) of Min@n or
    Avg@n (004:96-102); clozes without a verdict are left out, None when none has one."""
    chosen = clozes if subset is None else [clozes[i] for i in subset]
    scores = [s for s in (c.score(agg, n) if c is not None else None for c in chosen) if s is not None]
    return math.fsum(scores) / len(scores) if scores else None


def cloze_subset(fact: str, count: int, m: int, seed: int) -> list[int]:
    """m of a fact's `count` clozes (all when it has no more): the first m of one permutation
    drawn by a generator seeded with (seed, fact), so every measure of the fact gets the same
    clozes and m + 1 adds one (the authors' code shuffles each fact's clozes once)."""
    order = list(range(count))
    random.Random(f"{seed}:{fact}").shuffle(order)
    return sorted(order[:m])


def mean_of(values: Sequence[float | None], subset: Sequence[int] | None = None) -> float | None:
    """The mean of a fact's per-cloze values (those at `subset`), None left out."""
    chosen = values if subset is None else [values[i] for i in subset]
    kept = [float(v) for v in chosen if v is not None]
    return math.fsum(kept) / len(kept) if kept else None

"""How sure a figure is: the standard error and 95% interval of a proportion (Wilson), of any
statistic over facts (a seeded bootstrap that resamples facts), of a mean (normal), and a paired test for two runs
on the same items (McNemar's exact test). Pure functions; an `Estimate` travels with every number.

The bootstrap's resamples and McNemar's test are scipy.stats' (`bootstrap`, `binomtest`), imported
when first called. Wilson's interval is computed here: it equals
`binomtest(k, n).proportion_ci(method="wilson")` to within 4e-16 (tests/test_stats_scipy.py),
takes under 1/200 of its time, and keeps the intervals already written the same numbers.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from ._checks import _require_items, _require_same_length

Z_95 = 1.959963984540054  # the standard normal's 97.5% quantile
BOOTSTRAP_DRAWS = 1000
# Below this many items an interval is too wide to read: figures say so instead of a bare ratio.
FEW_ITEMS = 30


@dataclass(frozen=True)
class Estimate:
    value: float
    se: float  # standard error
    low: float  # 95% interval
    high: float
    n: int  # items (facts) behind the figure
    method: str  # "wilson" or "bootstrap"
    # A bootstrap's resamples and its generator's seed, which the report prints beside the
    # interval; None for the other methods. Not compared: they say how, not what.
    resamples: int | None = field(default=None, compare=False)
    seed: int | None = field(default=None, compare=False)

    @property
    def few(self) -> bool:
        return self.n < FEW_ITEMS

    def as_dict(self) -> dict:
        """JSON-ready; `resamples` and `seed` only where there are some (a bootstrap's)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("resamples", "seed") or v is not None}
        return {**out, "few": self.few}


def wilson(correct: int, total: int, z: float = Z_95) -> Estimate:
    """A proportion's estimate: its binomial standard error sqrt(p(1-p)/n) and Wilson's score
    interval without continuity correction (scipy's method="wilson", not "wilsoncc"), which stays
    inside [0, 1] and is honest near 0 and 1 where p +- z*se is not. `z` 1.96 is the 95% interval."""
    if total <= 0:
        raise ValueError(f"total must be positive, got {total}")
    if not 0 <= correct <= total:
        raise ValueError(f"correct must be in [0, total={total}], got {correct}")
    p = correct / total
    z2 = z * z
    scale = 1 + z2 / total
    center = (p + z2 / (2 * total)) / scale
    half = z / scale * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))
    # At 0 or all correct the interval ends at exactly 0 or 1; center -+ half rounds to 3e-17 or
    # 1 - 1e-16 for some totals (7, 9, 10, 12, 13, ...).
    low = 0.0 if correct == 0 else max(0.0, center - half)
    high = 1.0 if correct == total else min(1.0, center + half)
    return Estimate(p, math.sqrt(p * (1 - p) / total), low, high, total, "wilson")


def proportion(outcomes: Sequence) -> Estimate:
    """`wilson` of a list of outcomes read with bool()."""
    _require_items(outcomes, "outcomes")
    return wilson(sum(bool(x) for x in outcomes), len(outcomes))


def mean_estimate(values: Sequence[float], z: float = Z_95) -> Estimate:
    """A mean's standard error (sample SD / sqrt(n)) and normal 95% interval, for unbounded
    figures such as a demonstration position's mean log-probability. One value: SE and
    interval NaN."""
    _require_items(values, "values")
    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if len(data) < 2:
        return Estimate(mean, math.nan, math.nan, math.nan, len(data), "normal")
    se = float(data.std(ddof=1)) / math.sqrt(len(data))
    return Estimate(mean, se, mean - z * se, mean + z * se, len(data), "normal")


def bootstrap(per_fact: Sequence, statistic: Callable[[list], float], *, draws: int = BOOTSTRAP_DRAWS,
              seed: int = 0) -> Estimate:
    """A statistic over facts (Min@n, Avg@n, consistency, overconfidence, Acc@1 and its SD,
    Accuracy@K) with its bootstrap standard error and percentile 95% interval:
    scipy.stats.bootstrap's `draws` resamples of the facts with replacement, from numpy's generator
    seeded with `seed`, so a figure is the same on every run. Draws where the statistic is undefined
    (NaN) are left out; the SE is the SD of the other draws and the interval their 2.5% and 97.5%
    quantiles (numpy's linear rule: scipy's own interval agrees to 1 unit in the last place).
    Fewer than 2 defined draws give NaN SE and interval."""
    _require_items(per_fact, "per_fact")
    if draws < 2:
        raise ValueError(f"draws must be at least 2, got {draws}")
    items = list(per_fact)
    value = float(statistic(items))
    n = len(items)
    if n == 1:  # every resample is the one fact (scipy asks for two)
        boot = np.full(draws, value)
    else:
        from scipy.stats import bootstrap as scipy_bootstrap  # heavy to import; only figures need it

        with warnings.catch_warnings():  # NaN draws make scipy's interval NaN, with a warning: not used
            warnings.simplefilter("ignore")
            boot = scipy_bootstrap(
                (np.arange(n),), lambda picked: float(statistic([items[k] for k in picked])), vectorized=False,
                n_resamples=draws, method="percentile", rng=np.random.default_rng(seed),
                batch=max(1, (1 << 20) // n),  # a million indices at a time; the draws do not depend on it
            ).bootstrap_distribution
    defined = boot[~np.isnan(boot)]
    if len(defined) < 2:
        return Estimate(value, math.nan, math.nan, math.nan, n, "bootstrap", draws, seed)
    low, high = np.quantile(defined, [0.025, 0.975])
    return Estimate(value, float(defined.std(ddof=1)), float(low), float(high), n, "bootstrap", draws, seed)


@dataclass(frozen=True)
class PairedTest:
    only_a: int  # items run A got right and run B wrong
    only_b: int
    both: int
    neither: int
    p_value: float  # two-sided
    method: str = "mcnemar-exact"


def mcnemar(correct_a: Sequence, correct_b: Sequence) -> PairedTest:
    """McNemar's exact test for two runs on the same items: the items each run alone got right,
    and the two-sided p-value of `mcnemar_p` (the exact binomial test on those discordant items)."""
    _require_items(correct_a, "correct_a")
    _require_same_length(correct_a, correct_b, "correct_a", "correct_b")
    pairs = [(bool(a), bool(b)) for a, b in zip(correct_a, correct_b)]
    only_a = sum(a and not b for a, b in pairs)
    only_b = sum(b and not a for a, b in pairs)
    both = sum(a and b for a, b in pairs)
    return PairedTest(only_a, only_b, both, len(pairs) - only_a - only_b - both, mcnemar_p(only_a, only_b))


def mcnemar_p(only_a: int, only_b: int) -> float:
    """The two-sided exact p-value of McNemar's test from the two discordant counts: under "no
    difference" each discordant item favours either run with probability 1/2, so it is
    scipy.stats.binomtest(min count, discordant, 0.5).pvalue (twice the smaller tail, at most 1).
    1.0 when no item is discordant."""
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest  # heavy to import; only a comparison of two runs needs it

    return float(binomtest(min(only_a, only_b), discordant, 0.5, alternative="two-sided").pvalue)


def items_for_width(width: float, p: float = 0.5, z: float = Z_95) -> int:
    """Items needed for a 95% interval of total width `width` around a proportion near `p`
    (the normal approximation, n = (2z)^2 p(1-p) / width^2; p = 0.5 is the worst case)."""
    if not 0 < width < 1:
        raise ValueError(f"width must be in (0, 1), got {width}")
    return math.ceil((2 * z) ** 2 * p * (1 - p) / width ** 2)

"""Accuracy against frequency in log-spaced bins, as Kandpal et al. 2023 plot it (accuracy against
the number of pretraining documents that hold both the question's and the answer's entity, x on
a log axis). Pure functions over (frequency, correct) pairs.

A frequency of 0 has no place on a log axis: it is a bin of its own. Every other count f lies in
[base^k, base^(k+1)) for one k >= 0; with base 2 the bins are 0 | [1,2) | [2,4) | [4,8) | ...
Only bins that hold an item are returned. Each bin's accuracy is the mean of its items' `correct`
(a share for multi-prompt methods) with the 95% interval every aggregate carries
(probes/measures/accuracy.py `interval`: Wilson's for right/wrong items).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from .accuracy import interval

LOG_BASE = 2


@dataclass(frozen=True)
class FrequencyBin:
    low: int  # the smallest frequency in the bin
    high: int  # the first frequency above it (exclusive); the 0 bin is [0, 1)
    n: int  # items
    correct: float  # the sum of their `correct`
    interval: dict | None  # accuracy's 95% interval (accuracy.interval)

    @property
    def accuracy(self) -> float:
        return self.correct / self.n

    @property
    def label(self) -> str:
        return "0" if self.low == 0 else f"[{self.low},{self.high})"

    @property
    def center(self) -> float | None:
        """Where the bin sits on a log axis: the geometric mean of its smallest and largest whole
        count (so [1,2) sits at 1, [2,4) at sqrt(2*3)); None for the 0 bin, drawn apart."""
        return None if self.low == 0 else math.sqrt(self.low * (self.high - 1))


def bin_edges(frequency: int, base: int = LOG_BASE) -> tuple[int, int]:
    """The bin [low, high) that holds `frequency` (a whole count, 0 or more)."""
    if frequency < 0 or base < 2:
        raise ValueError(f"frequency {frequency} with base {base}: a count is 0 or more, the base 2 or more")
    if frequency == 0:
        return 0, 1
    low = 1
    while low * base <= frequency:  # whole numbers: no rounding of a logarithm at an edge
        low *= base
    return low, low * base


def frequency_bins(pairs: Iterable[tuple[int, float]], base: int = LOG_BASE) -> list[FrequencyBin]:
    """(frequency, correct) pairs -> the non-empty bins, lowest first."""
    grouped: dict[tuple[int, int], list[float]] = {}
    for frequency, correct in pairs:
        grouped.setdefault(bin_edges(int(frequency), base), []).append(float(correct))
    return [FrequencyBin(low, high, len(values), sum(values), interval(values))
            for (low, high), values in sorted(grouped.items())]

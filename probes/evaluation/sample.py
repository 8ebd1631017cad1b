"""Which test items `--limit N` evaluates: a seeded sample stratified by relation (the default) or
by frequency bucket, or the first N in file order (`none`, the behaviour before issue 48).

The first N of a file built relation by relation are all one relation, so a smoke run says
nothing about the set; a sample that keeps each stratum's share of the set (at least one item of
every stratum while N allows) does. Declared once here; `factprobe eval`, the pipeline's
evaluations and the service's eval jobs pass a `Sample` to probes/evaluation/runner.plan_eval.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

STRATIFY = ("relation", "bucket", "none")
DEFAULT_STRATIFY = "relation"


@dataclass(frozen=True)
class Sample:
    """`limit` items (None: all), stratified by `stratify` (an item field, or "none": the first
    `limit` in file order), drawn with `seed`."""
    limit: int | None
    stratify: str = DEFAULT_STRATIFY
    seed: int = 0

    def __post_init__(self) -> None:
        if self.stratify not in STRATIFY:
            raise ValueError(f"stratify {self.stratify!r}: one of {', '.join(STRATIFY)}")
        if self.limit is not None and (isinstance(self.limit, bool) or self.limit < 1):
            raise ValueError(f"limit {self.limit!r}: a positive whole number of items")


def stratum(item: dict, key: str) -> str:
    """The stratum an item falls in: its `key` field as text, "none" where it has none."""
    value = item.get(key)
    return "none" if value is None else str(value)


def stratum_sequence(sizes: Sequence[int], length: int) -> list[int]:
    """The strata the first `length` draws take from, one draw at a time: first one from each
    stratum (the largest first, ties to the earlier), then always from the stratum furthest below
    its share of the draws so far (ties to the earlier). A prefix of this sequence is every
    sample's, so the sample of N is inside the sample of N + k: a larger --limit continues a run."""
    total, taken, sequence = sum(sizes), [0] * len(sizes), []
    for k in sorted(range(len(sizes)), key=lambda k: (-sizes[k], k))[:length]:
        taken[k] += 1
        sequence.append(k)
    while len(sequence) < min(length, total):
        n = len(sequence) + 1
        k = max((k for k in range(len(sizes)) if taken[k] < sizes[k]),
                key=lambda k: (sizes[k] * n / total - taken[k], -k))
        taken[k] += 1
        sequence.append(k)
    return sequence


def quotas(sizes: Sequence[int], limit: int) -> list[int]:
    """Items each stratum of `sizes` gives to a sample of `limit`: in proportion to its size, at
    least one each once `limit` reaches the number of strata (stratum_sequence)."""
    counts = [0] * len(sizes)
    for k in stratum_sequence(sizes, limit):
        counts[k] += 1
    return counts


def ranked(items: Sequence[dict], stratify: str, seed: int, length: int | None = None) -> list[int]:
    """The positions of `items` in the order samples take them (the first N: the sample of N):
    file order for "none"; otherwise each stratum's items in a seeded shuffle, taken from the
    strata as stratum_sequence says. `length`: only the first so many."""
    length = len(items) if length is None else min(length, len(items))
    if stratify == "none":
        return list(range(length))
    groups: dict[str, list[int]] = {}
    for position, item in enumerate(items):
        groups.setdefault(stratum(item, stratify), []).append(position)
    members = list(groups.values())
    for k, group in enumerate(members):  # text seeds: the same draw on every Python
        random.Random(f"{seed}|sample|{stratify}|{k}").shuffle(group)
    next_of = [0] * len(members)
    order = []
    for k in stratum_sequence([len(m) for m in members], length):
        order.append(members[k][next_of[k]])
        next_of[k] += 1
    return order


def sample_items(items: Sequence[dict], sample: Sample) -> list[dict]:
    """The items `sample` selects, in their file order (a method's own order comes after)."""
    if sample.limit is None or sample.limit >= len(items):
        return list(items)
    return [items[p] for p in sorted(ranked(items, sample.stratify, sample.seed, sample.limit))]

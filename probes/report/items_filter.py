"""What the item view's filters mean, written once: `ItemQuery.matches` over a row's facets (run,
method, relation, frequency bucket, distractor strategy, ICL setting, outcome, and whether the
runs disagree on it). The service's /items applies this function; the report's page applies the
same rule in its script (equal values, any of those given per field, every field given), and a
test holds the two to the same rows on the sample job. Also what the facets are made of: which
rows the runs disagree on (`disagreeing`), and the seeded sample of items a page holds when the
runs are too large for it (`sample_ids`). Pure functions, no I/O.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, fields
from typing import Hashable, Iterable, Mapping, Sequence

# The facets a filter names, in the order the page shows them; `disagree` is a yes/no besides.
FACETS = ("run", "method", "relation", "bucket", "strategy", "setting", "outcome")
# Outcomes with a verdict, as bits: rows of two runs with different ones disagree; unscored rows never do.
SCORED = {"right": 1, "wrong": 2, "partly": 4}


@dataclass(frozen=True)
class ItemQuery:
    """A filter: per facet, the values a row may have (empty: any); `disagree` True keeps the
    rows whose runs disagree, False those they agree on, None both."""
    run: tuple[str, ...] = ()
    method: tuple[str, ...] = ()
    relation: tuple[str, ...] = ()
    bucket: tuple[str, ...] = ()
    strategy: tuple[str, ...] = ()
    setting: tuple[str, ...] = ()
    outcome: tuple[str, ...] = ()
    disagree: bool | None = None

    @classmethod
    def of(cls, given: Mapping[str, object]) -> ItemQuery:
        """From a mapping of facet -> a value or a list of values (None or "" for any)."""
        values = {}
        for facet in FACETS:
            value = given.get(facet)
            listed = value if isinstance(value, (list, tuple)) else [] if value in (None, "") else [value]
            values[facet] = tuple(str(v) for v in listed if v not in (None, ""))
        disagree = given.get("disagree")
        return cls(**values, disagree=None if disagree in (None, "") else disagree in (True, "true", "1", 1))

    def matches(self, facets: Mapping[str, object]) -> bool:
        """The one rule: every facet given holds one of its values, and `disagree` agrees."""
        for facet in FACETS:
            allowed = getattr(self, facet)
            if allowed and facets.get(facet) not in allowed:
                return False
        return self.disagree is None or bool(facets.get("disagree")) == self.disagree

    def as_dict(self) -> dict:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}


def select(rows: Iterable[Mapping], query: ItemQuery) -> list[Mapping]:
    """The rows the query keeps, in their order."""
    return [row for row in rows if query.matches(row)]


def disagreeing(rows: Iterable[tuple[Hashable, str]]) -> set:
    """The keys whose rows have different verdicts: right in one run and wrong or partly right in
    another. `rows`: (key, outcome), a row per run; a key is the item id with its setting or
    strategy, among the runs over one probe set (the only runs whose ids name the same items).
    A key's verdicts are held as bits, so millions of keys fit (the service's runs)."""
    seen: dict[Hashable, int] = {}
    for key, outcome in rows:
        bit = SCORED.get(outcome)
        if bit:
            seen[key] = seen.get(key, 0) | bit
    return {key for key, bits in seen.items() if bits & (bits - 1)}  # more than one bit set


@dataclass(frozen=True)
class Sample:
    """The items a page holds: all of them, or a seeded sample when their rows exceed `limit`."""
    ids: frozenset[str] | None  # None: every item
    seed: int
    items: int  # items kept
    items_total: int
    rows: int  # rows kept
    rows_total: int

    @property
    def sampled(self) -> bool:
        return self.ids is not None

    def notice(self) -> str:
        if not self.sampled:
            return ""
        return (f"A seeded sample (seed {self.seed}): {self.rows:,} of {self.rows_total:,} rows, every run's rows of "
                f"{self.items:,} of {self.items_total:,} items, so that runs still compare side by side. "
                "`factprobe serve --runs DIR` pages through all of them.")


def sample_ids(ids: Sequence[str], limit: int, seed: int = 0) -> Sample:
    """`ids`: every row's item id (an item has a row per run, setting, strategy). Items are drawn
    in a seeded order and kept while their rows fit in `limit`; the draw is the same for the
    same ids whatever their order."""
    counts = Counter(ids)
    total = sum(counts.values())
    if total <= limit:
        return Sample(None, seed, len(counts), len(counts), total, total)
    order = sorted(counts)
    random.Random(seed).shuffle(order)
    kept, rows = set(), 0
    for item in order:
        if rows + counts[item] <= limit:
            kept.add(item)
            rows += counts[item]
    return Sample(frozenset(kept), seed, len(kept), len(counts), rows, total)

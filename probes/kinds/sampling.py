"""What the probe-set kinds share when they draw: a seeded random stream per purpose, a view of
a list without one subject's entries, and a relation's objects as fair choices.

Every draw is seeded by the build's seed and the names of what it is for, never by global
random state, so the same facts, options and seed give the same items byte for byte.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence as SequenceABC
from typing import Sequence

from ...index.text import name_key
from ..building.facts import ProbeFact


def seeded(seed: int, *parts: str) -> random.Random:
    """The random stream of one purpose (`seeded(7, "choices", fact_id)`)."""
    return random.Random("|".join([str(seed), *parts]))


class AllBut(SequenceABC):
    """`items` without the positions in `skipped` (sorted), read-only and not copied.

    The builders draw demonstrations from "every fact but this subject's" once per fact; copying
    that list each time made them quadratic in the number of facts. Element for element this view
    equals the filtered list, so a seeded `sample` over it draws the same items (same bytes)."""

    def __init__(self, items: Sequence, skipped: Sequence[int]) -> None:
        self.items, self.skipped = items, skipped

    def __len__(self) -> int:
        return len(self.items) - len(self.skipped)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[k] for k in range(*j.indices(len(self)))]
        if j < 0:
            j += len(self)
        if not 0 <= j < len(self):
            raise IndexError(j)
        # The position i of the j-th kept item satisfies i = j + (skipped positions <= i); iterating
        # from i = j climbs to the least such i, which is never a skipped one.
        i = j
        while (nxt := j + bisect_right(self.skipped, i)) != i:
            i = nxt
        return self.items[i]


def positions_by_subject(facts: Sequence[ProbeFact]) -> dict[str, list[int]]:
    """Subject -> its facts' positions in `facts`, ascending (what `AllBut` skips)."""
    where: dict[str, list[int]] = defaultdict(list)
    for k, fact in enumerate(facts):
        where[fact.subject].append(k)
    return where


class ChoicePool:
    """A relation's objects as choices, with what one fact must leave out found by lookup.

    Two entities with the same normalized label would give two identical choice strings, so the
    pool keeps one per label (the first by id) and files every member's names and id under it."""

    def __init__(self, objects: Sequence[tuple[str, str, tuple[str, ...]]]) -> None:
        self.rows: list[tuple[str, str]] = []  # (entity, label) shown as a choice
        self.row_of: dict[str, int] = {}  # every object, a representative or not -> its row
        self.rows_named: dict[str, set[int]] = defaultdict(set)  # name key -> rows bearing it
        self.names: dict[str, tuple[str, ...]] = {}  # every object -> its label and names
        row_of_label: dict[str, int] = {}
        for entity, label, names in objects:
            self.names[entity] = (label, *names)
            key = name_key(label)
            if key not in row_of_label:
                row_of_label[key] = len(self.rows)
                self.rows.append((entity, label))
            row = self.row_of[entity] = row_of_label[key]
            for name in (label, *names):
                self.rows_named[name_key(name)].add(row)

    def unfair(self, fact: ProbeFact, true: set[str]) -> list[int]:
        """Rows that may not be a choice for `fact`, ascending: the objects in `true` (those true
        for the subject, or every one it ever held), the subject (a symmetric relation lists it
        among its objects), and any row sharing a name with one of them, with a gold answer or
        with the subject's label."""
        out = {self.row_of[e] for e in (*true, fact.object, fact.subject) if e in self.row_of}
        kept_out = [name for e in sorted(true) for name in self.names.get(e, ())]
        for name in (*fact.gold, fact.subject_label, *kept_out):
            out |= self.rows_named.get(name_key(name), set())
        return sorted(out)

    def fair(self, fact: ProbeFact, true: set[str]) -> AllBut:
        """The rows that may be a choice for `fact`, in pool order."""
        return AllBut(self.rows, self.unfair(fact, true))


def distinct_by_name(candidates: Sequence[tuple[str, str]], taken: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(entity, label) candidates in their order, without those whose normalized label is in
    `taken` or was seen earlier: two options that read the same cannot both be answered."""
    seen = {name_key(name) for name in taken}
    out = []
    for entity, label in candidates:
        key = name_key(label)
        if key not in seen:
            seen.add(key)
            out.append((entity, label))
    return out

"""Accuracy per group of records: per frequency bucket (KDF's buckets), relation, distractor
strategy or ICL setting (`accuracy_by`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping


# ---------------------------------------------------------------------------------------------
# Breakdowns (frequency bucket, relation, distractor strategy, ICL setting; KDF's buckets)


@dataclass(frozen=True)
class GroupAccuracy:
    correct: int
    total: int
    accuracy: float  # correct / total


def accuracy_by(records: Iterable[Mapping], key: str, correct_key: str = "correct") -> dict[str, GroupAccuracy]:
    """Accuracy per value of `records[i][key]`, keyed by str(value), in first-seen order.

    A record whose value is None, or that lacks `key`, falls into the group "none" (a probe set
    mixing kinds has records without, say, a distractor strategy). `record[correct_key]` is read
    with bool() and must be present. Raises ValueError when there are no records, when no record
    has `key` at all (almost surely a misspelt key), or when a record lacks `correct_key`.
    """
    groups: dict[str, list[int]] = {}
    seen_key = False
    count = 0
    for i, record in enumerate(records):
        count += 1
        if correct_key not in record:
            raise ValueError(f"record {i} has no {correct_key!r}")
        seen_key = seen_key or key in record
        value = record.get(key)
        tally = groups.setdefault("none" if value is None else str(value), [0, 0])
        tally[0] += bool(record[correct_key])
        tally[1] += 1
    if count == 0:
        raise ValueError("records is empty")
    if not seen_key:
        raise ValueError(f"no record has the key {key!r}")
    return {name: GroupAccuracy(correct=c, total=t, accuracy=c / t) for name, (c, t) in groups.items()}

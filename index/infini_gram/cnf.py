"""infini-gram's CNF count (terms OR-ed into clauses, clauses AND-ed), computed exactly on a local
index for `factprobe serve`'s infini-gram API.

A clause's occurrences are the distinct positions where any of its terms starts. With one clause
that is the count. With several, the count is of the rarest clause's occurrences that have an
occurrence of every other clause starting within `max_diff_tokens` tokens, in the same document:
infini-gram's window co-occurrence, without its subsampling and without a window that crosses a
document boundary. It is still a count of positions, not of documents.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .layout import Occurrences, TokenIndexFolder


def clause_occurrences(index: TokenIndexFolder, clause: Sequence[Sequence[int]]) -> Occurrences:
    docs, ats = [], []
    for term in clause:
        found = index.occurrences(term)
        docs.append(found.doc)
        ats.append(found.at)
    doc, at = np.concatenate(docs), np.concatenate(ats)
    if doc.size == 0:
        return Occurrences(doc.astype(np.int64), at.astype(np.int64))
    pairs = np.unique(np.stack([doc, at], axis=1), axis=0)
    return Occurrences(pairs[:, 0].copy(), pairs[:, 1].copy())


def cnf_count(index: TokenIndexFolder, cnf: Sequence[Sequence[Sequence[int]]],
              max_diff_tokens: int) -> int:
    clauses = [clause_occurrences(index, clause) for clause in cnf]
    if len(clauses) == 1:
        return len(clauses[0])
    anchor_at = min(range(len(clauses)), key=lambda k: len(clauses[k]))
    anchor = clauses[anchor_at]
    if len(anchor) == 0:
        return 0
    where, start, end = index.spans(anchor)
    keep = np.ones(len(anchor), dtype=bool)
    for number, other in enumerate(clauses):
        if number == anchor_at:
            continue
        positions = np.sort(index.spans(other)[0])
        low = np.maximum(where - max_diff_tokens, start)
        high = np.minimum(where + max_diff_tokens, end - 1)
        keep &= np.searchsorted(positions, high, side="right") > np.searchsorted(positions, low)
    return int(keep.sum())

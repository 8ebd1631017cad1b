"""Counting by reading every document: the path for raw strings (which no index holds) and the
plain definition the indexes are checked against. Slow by design: one pass over the corpus."""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from .corpus import Document
from .text import AliasFilter, name_key, normalize, occurs


def scan_count(documents: Iterable[Document], terms: Sequence[Sequence[str]],
               alias_filter: AliasFilter = AliasFilter(min_length=1), *,
               convert: Callable[[str], str] | None = None) -> int:
    """Documents in which every term occurs; a term occurs when any of its names does. `convert`
    (Chinese to simplified characters, index/chinese.py) rewrites names and texts before they meet."""
    same = convert or (lambda text: text)
    keep = alias_filter.converted(same).keeps
    prepared = [[k for k in (name_key(same(n)) for n in names) if keep(k)] for names in terms]
    if any(not names for names in prepared):
        return 0
    hits = 0
    for document in documents:
        text = normalize(same(document.searchable))
        if all(any(occurs(text, name) for name in names) for names in prepared):
            hits += 1
    return hits

"""Which entities a document mentions: one Aho-Corasick pass over the text for all names at once.

Names are matched on a copy of the text with every non-alphanumeric character marked, so a hit
sits on word boundaries by construction, and each hit is confirmed against the normalized text;
documents are scanned a batch at a time. Why: docs/design-notes.md.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from functools import lru_cache
from typing import Iterable, Sequence

import ahocorasick
import numpy as np

from .corpus import Document
from .text import AliasFilter, name_key, normalize

_NOT_ALNUM = re.compile(r"[\W_]")  # for str patterns \w is str.isalnum() plus "_"
MARK = "\x01"
_ASCII_MARKS = bytes(b if chr(b).isalnum() else 1 for b in range(128)) + bytes(range(128, 256))


@lru_cache(maxsize=1)
def _bmp_alnum() -> np.ndarray:
    return np.array([chr(c).isalnum() for c in range(0x10000)], dtype=bool)


def mark_text(text: str) -> str:
    """`text` with every character that is not alphanumeric (str.isalnum) replaced by MARK."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_MARKS).decode("ascii")
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    keep = _bmp_alnum()[np.minimum(points, 0xFFFF)]
    astral = np.flatnonzero(points > 0xFFFF)  # beyond the table: ask Python, they are rare
    keep[astral] = [chr(points[i]).isalnum() for i in astral]
    return np.where(keep, points, np.uint32(1)).tobytes().decode("utf-32-le", "surrogatepass")


def marked(normalized: str) -> str:
    return MARK + _NOT_ALNUM.sub(MARK, normalized) + MARK


class MentionFinder:
    """Built once from (entity, name) pairs; then called on a batch of documents, it gives the set
    of entities each one mentions."""

    def __init__(self, names: Iterable[tuple[str, str]], alias_filter: AliasFilter = AliasFilter()) -> None:
        by_name: dict[str, set[str]] = defaultdict(set)
        for entity, name in names:
            key = name_key(name)
            if alias_filter.keeps(key):
                by_name[key].add(entity)
        by_mark: dict[str, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)
        for key, entities in by_name.items():
            by_mark[marked(key)].append((key, tuple(sorted(entities))))
        self.automaton = ahocorasick.Automaton()
        for mark, candidates in by_mark.items():
            self.automaton.add_word(mark, (len(mark) - 2, tuple(candidates)))
        self.names = len(by_name)
        self.entities = len({e for es in by_name.values() for e in es})
        if self.names:
            self.automaton.make_automaton()

    def __call__(self, documents: Sequence[Document]) -> list[set[str]]:
        """The `mentions` function an index takes."""
        return self.in_texts([d.searchable for d in documents])

    def mentions(self, document: Document) -> set[str]:
        return self.in_texts([document.searchable])[0]

    def in_texts(self, texts: Sequence[str]) -> list[set[str]]:
        found: list[set[str]] = [set() for _ in texts]
        if not self.names or not texts:
            return found
        normalized = [normalize(t) for t in texts]
        starts, ends, at = [], [], 1
        for text in normalized:  # where each text begins and ends in the joined string
            starts.append(at)
            at += len(text)
            ends.append(at)
            at += 1
        joined = MARK + MARK.join(normalized) + MARK
        for end, (length, candidates) in self.automaton.iter(mark_text(joined)):
            start = end - length  # `end` is the name's trailing mark
            doc = bisect_right(starts, start) - 1
            if end > ends[doc]:  # spans the joint between two texts
                continue
            for name, entities in candidates:
                if joined.startswith(name, start):
                    found[doc].update(entities)
        return found

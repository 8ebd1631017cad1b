"""Which entities a document mentions: one Aho-Corasick pass over the text for all names at once."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

import ahocorasick

from .corpus import Document
from .text import AliasFilter, at_word_boundaries, normalize


class MentionFinder:
    """Built once from (entity, name) pairs; then `entities_in(text)` for every document."""

    def __init__(self, names: Iterable[tuple[str, str]], alias_filter: AliasFilter = AliasFilter()) -> None:
        by_name: dict[str, set[str]] = defaultdict(set)
        for entity, name in names:
            key = normalize(name).strip()
            if alias_filter.keeps(key):
                by_name[key].add(entity)
        self.automaton = ahocorasick.Automaton()
        for key, entities in by_name.items():
            self.automaton.add_word(key, (len(key), tuple(sorted(entities))))
        self.names = len(by_name)
        self.entities = len({e for es in by_name.values() for e in es})
        if self.names:
            self.automaton.make_automaton()

    def mentions(self, document: Document) -> set[str]:
        return self.entities_in(document.searchable)

    __call__ = mentions  # a finder is the `mentions` function an index takes

    def entities_in(self, text: str) -> set[str]:
        found: set[str] = set()
        if not self.names:
            return found
        normalized = normalize(text)
        for end, (length, entities) in self.automaton.iter(normalized):
            if at_word_boundaries(normalized, end - length + 1, end + 1):
                found.update(entities)
        return found

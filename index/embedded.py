"""The embedded frequency index: one SQLite file of per-entity document bitmaps.

An entity's postings are the roaring bitmap of the documents that mention it: a frequency is a
cardinality, a pair's co-occurrence an intersection's, and no text is read at query time. A
document id already indexed is skipped, so counts stay exact. Tracked pairs: docs/design/frequency.md.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from pyroaring import BitMap, FrozenBitMap

from .corpus import Document

Mentions = Callable[[Sequence[Document]], Sequence[Iterable[str]]]  # per document, the entities it mentions


def linked(documents: Sequence[Document]) -> list[tuple[str, ...]]:
    """Link-based counting: the entities the corpus's own annotations link in each document."""
    return [document.links for document in documents]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (ordinal INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS postings (entity TEXT PRIMARY KEY, docs BLOB NOT NULL) WITHOUT ROWID;
-- tracked pairs as registered (a fact's subject and object), keyed "head<TAB>tail": annotating
-- reads the whole table into a dict, and a ready key is what makes that read cheap
CREATE TABLE IF NOT EXISTS pair_counts (pair TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
"""


class IndexSettingsError(ValueError):
    """An index asked to count under settings other than those it was built with."""


class EmbeddedIndex:
    def __init__(self, path: str | Path, mentions: Mentions | None = None) -> None:
        """`mentions(document)` says which entities a document mentions: a `MentionFinder` for
        names in the text, `linked` for the corpus's own entity links. Counting needs none."""
        self.path = Path(path)
        self.mentions = mentions
        self.db = sqlite3.connect(self.path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(_SCHEMA)
        self._cache: dict[str, BitMap] = {}
        self._tracked: list[tuple[str, str]] | None = None  # loaded when linking
        self._pair_table: dict[str, int] | None = None  # loaded when counting

    def settings(self) -> dict | None:
        row = self.db.execute("SELECT value FROM meta WHERE key='settings'").fetchone()
        return json.loads(row[0]) if row else None

    def bind_settings(self, settings: dict) -> None:
        """Record how names are matched; adding documents under other settings would mix two
        meanings of "mentions" in one set of counts, so it is refused."""
        stored = self.settings()
        if stored is None:
            with self.db:
                self.db.execute("INSERT INTO meta VALUES ('settings', ?)", (json.dumps(settings, sort_keys=True),))
        elif stored != json.loads(json.dumps(settings)):
            raise IndexSettingsError(
                f"{self.path} was built with {stored}; refusing to add documents with {settings}. "
                f"Use a new index file for other settings{mentions_hint(stored, settings)}")

    def add_documents(self, documents: Iterable[Document], *, batch: int = 20_000) -> Iterator[int]:
        """Index documents; yields the number of documents taken after each committed batch.

        A batch's documents and postings are committed together (a kill loses at most one
        batch); each commit rewrites the bitmap of every entity the batch touched, so batches
        are large."""
        if self.mentions is None:
            raise ValueError("adding documents needs mentions=... (a MentionFinder, or linked)")
        pending: list[Document] = []
        for document in documents:
            pending.append(document)
            if len(pending) >= batch:
                yield self._commit(pending)
                pending = []
        if pending:
            yield self._commit(pending)

    def _commit(self, documents: list[Document]) -> int:
        fresh: dict[str, Document] = {}
        for document in documents:
            fresh.setdefault(document.id, document)
        known = set()
        ids = list(fresh)
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            known.update(r[0] for r in self.db.execute(
                f"SELECT id FROM documents WHERE id IN ({','.join('?' * len(chunk))})", chunk))
        new = [d for d in fresh.values() if d.id not in known]
        next_ordinal = (self.db.execute("SELECT max(ordinal) FROM documents").fetchone()[0] or 0) + 1
        postings: dict[str, list[int]] = defaultdict(list)
        for ordinal, entities in enumerate(self.mentions(new), start=next_ordinal):
            for entity in set(entities):
                postings[entity].append(ordinal)
        added = {entity: FrozenBitMap(ordinals) for entity, ordinals in postings.items()}
        pair_hits = self._tracked_hits(added)
        self._pair_table = None
        with self.db:
            self.db.executemany("UPDATE pair_counts SET docs = docs + ? WHERE pair=?", pair_hits)
            self.db.executemany("INSERT INTO documents VALUES (?, ?)",
                                [(o, d.id) for o, d in enumerate(new, start=next_ordinal)])
            for entity, bitmap in added.items():
                bitmap = self._stored(entity) | bitmap
                self.db.execute("INSERT OR REPLACE INTO postings VALUES (?, ?)", (entity, bitmap.serialize()))
                self._cache.pop(entity, None)
        return len(new)

    def _tracked_hits(self, added: dict[str, FrozenBitMap]) -> list[tuple[int, str]]:
        """(new documents, pair key) of the tracked pairs that co-occur in a batch: one bitmap
        intersection per tracked pair whose two entities the batch touched."""
        touched = [(h, t) for h, t in self._tracked_pairs() if h in added and t in added]
        if not touched:
            return []
        heads, tails = zip(*touched)
        get = added.__getitem__
        hits = map(FrozenBitMap.intersection_cardinality, map(get, heads), map(get, tails))
        return [(n, f"{h}\t{t}") for n, h, t in zip(hits, heads, tails) if n]

    def _tracked_pairs(self) -> list[tuple[str, str]]:
        if self._tracked is None:
            self._tracked = [tuple(key.split("\t")) for (key,) in self.db.execute("SELECT pair FROM pair_counts")]
        return self._tracked

    def track_pairs(self, pairs: Iterable[tuple[str, str]]) -> int:
        """Count these pairs while linking from now on; returns how many were new. Their counts
        over the documents already indexed are taken from the bitmaps first."""
        fresh = {(h, t) for h, t in pairs if h != t} - set(self._tracked_pairs())
        if not fresh:
            return 0
        ordered = sorted(fresh)
        counts = self._intersections(ordered) if self.document_count() else [0] * len(ordered)
        with self.db:
            self.db.executemany("INSERT INTO pair_counts VALUES (?, ?)",
                                [(f"{h}\t{t}", n) for (h, t), n in zip(ordered, counts)])
        self._tracked = self._pair_table = None
        return len(ordered)

    def _stored(self, entity: str) -> BitMap:
        row = self.db.execute("SELECT docs FROM postings WHERE entity=?", (entity,)).fetchone()
        return BitMap.deserialize(row[0]) if row else BitMap()

    def _bitmap(self, entity: str) -> BitMap:
        found = self._cache.get(entity)
        if found is None:
            if len(self._cache) > 100_000:
                self._cache.clear()
            found = self._cache[entity] = self._stored(entity)
        return found

    def document_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM documents").fetchone()[0]

    def entity_frequency(self, entity: str) -> int:
        return len(self._bitmap(entity))

    def pair_frequency(self, head: str, tail: str) -> int:
        return self._bitmap(head).intersection_cardinality(self._bitmap(tail))

    def pair_frequencies(self, pairs: Sequence[tuple[str, str]]) -> list[int]:
        """Many pairs at once: tracked pairs are read from their table, the others intersected.
        The per-pair steps are C-level `map`s: at 50k facts, Python loops would cost more than the
        counting itself."""
        if not pairs:
            return []
        keys = list(map("\t".join, pairs))
        counts = list(map(self._tracked_counts(keys).get, keys))
        if None in counts:
            missing = [i for i, n in enumerate(counts) if n is None]
            for i, n in zip(missing, self._intersections([pairs[i] for i in missing])):
                counts[i] = n
        return counts

    def _tracked_counts(self, keys: list[str]) -> dict[str, int]:
        """"head<TAB>tail" -> documents, for the tracked pairs among `keys` (perhaps more)."""
        total = self.db.execute("SELECT count(*) FROM pair_counts").fetchone()[0]
        if not total:
            return {}
        if len(keys) * 4 > total:  # one scan beats many lookups; kept for the next chunk of facts
            if self._pair_table is None:
                self._pair_table = dict(self.db.execute("SELECT pair, docs FROM pair_counts"))
            return self._pair_table
        found = {}
        for key in set(keys):
            row = self.db.execute("SELECT docs FROM pair_counts WHERE pair=?", (key,)).fetchone()
            if row:
                found[key] = row[0]
        return found

    def _intersections(self, pairs: Sequence[tuple[str, str]]) -> list[int]:
        """Every bitmap the pairs need is read in a few queries, then the intersections run as one
        `map` over the two sides (the loop is in C; per pair, Python only hands two bitmaps over)."""
        heads, tails = zip(*pairs)
        needed = set(heads) | set(tails)
        bitmaps = dict.fromkeys(needed, FrozenBitMap())  # a pair with itself: the entity's own count
        if len(needed) * 8 > self.db.execute("SELECT count(*) FROM postings").fetchone()[0]:
            rows = self.db.execute("SELECT entity, docs FROM postings")  # one scan beats many lookups
        else:
            ids = sorted(needed)
            rows = (row for start in range(0, len(ids), 900) for row in self.db.execute(
                f"SELECT entity, docs FROM postings WHERE entity IN ({','.join('?' * len(ids[start:start + 900]))})",
                ids[start:start + 900]))
        deserialize = FrozenBitMap.deserialize
        for entity, blob in rows:
            if entity in bitmaps:
                bitmaps[entity] = deserialize(blob)
        get = bitmaps.__getitem__
        return list(map(FrozenBitMap.intersection_cardinality, map(get, heads), map(get, tails)))

    def close(self) -> None:
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def mentions_hint(stored: dict, given: dict) -> str:
    """Where only `mentions` differs: how to add to the index as it counts (an index recorded
    without it was built before the setting existed and counts every occurrence)."""
    if {k: v for k, v in stored.items() if k != "mentions"} != {k: v for k, v in given.items() if k != "mentions"}:
        return ""
    return f", or add to this one with --mentions {stored.get('mentions', 'any')}"

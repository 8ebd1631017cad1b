"""Wikidata5M (Wang et al. 2021): triples, entity/relation alias files, and the corpus.

Tab-separated files (optionally compressed) become facts, entities with English names, and
documents with ids `wikidata5m:Q...`, so they never replace T-REx's; a bad line is a reject with
its line number. Formats and rows: docs/design/graph.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..identity import InputDigest
from ..ingest import ParseResult
from ..model import INSTANCE_OF, LANGUAGES, NORMAL, SUBCLASS_OF, Rows, derived_fact_id, fact_row
from ..readers import MAX_RECORD_BYTES, Chunk, excerpt, line_chunks, split_lines

SOURCE = "wikidata5m"
FILE_KINDS = ("triples", "entity-aliases", "relation-aliases", "corpus")  # the parts Wikidata5M ships as files
DOCUMENT_PREFIX = "wikidata5m:"
NAMES_LANGUAGE = "en"

_Q = re.compile(r"^Q[1-9][0-9]*$")
_P = re.compile(r"^P[1-9][0-9]*$")
_BOM = "\ufeff"


def document_id(entity: str) -> str:
    """The stored id of the corpus document about `entity`."""
    return DOCUMENT_PREFIX + entity


@dataclass(frozen=True)
class Wikidata5mSource:
    kind: str = "triples"
    languages: tuple[str, ...] = LANGUAGES
    chunk_bytes: int = 4 << 20
    labels_from: str | None = None  # corpus only: store file whose entity labels become titles
    max_record_bytes: int = MAX_RECORD_BYTES  # a longer line is rejected unread (kg/readers.py)

    def __post_init__(self) -> None:
        if self.kind not in FILE_KINDS:
            raise ValueError(f"unknown Wikidata5M file kind {self.kind!r}; one of {', '.join(FILE_KINDS)}")

    @property
    def name(self) -> str:
        # Per kind, so one file ingested as two kinds keeps two resume states.
        return f"{SOURCE}-{self.kind}"

    def chunks(self, path: Path, start: int, position: int, digest: InputDigest | None = None) -> Iterator[Chunk]:
        return line_chunks(path, start_line=start, start_position=position, chunk_bytes=self.chunk_bytes,
                           digest=digest, max_line_bytes=self.max_record_bytes)

    def parse(self, chunk: Chunk) -> ParseResult:
        rows = Rows()
        rejects: list[tuple[int, str, str]] = list(chunk.rejects)  # the lines over the cap
        records = 0
        handle = {
            "triples": self._triple,
            "entity-aliases": self._aliases,
            "relation-aliases": self._aliases,
            "corpus": self._document,
        }[self.kind]
        corpus: list[tuple[int, str, str]] = []
        for line_no, raw in split_lines(chunk):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                rejects.append((line_no, "invalid UTF-8", excerpt(raw)))
                continue
            if line_no == 1 and line.startswith(_BOM):
                line = line[1:]
            if not line.strip():
                continue
            problem = handle(line, rows, corpus, line_no)
            if problem:
                rejects.append((line_no, problem, excerpt(raw)))
            else:
                records += 1
        if corpus:
            titles = self._titles([entity for _, entity, _ in corpus])
            for _, entity, text in corpus:
                rows.documents.append((document_id(entity), titles.get(entity) or entity, text, SOURCE))
        return ParseResult(rows, records, rejects)

    # Each handler adds the rows of one line and returns None, or returns why the line is bad.

    def _triple(self, line: str, rows: Rows, corpus: list, line_no: int) -> str | None:
        cols = [c.strip() for c in line.split("\t")]
        if len(cols) != 3:
            return f"expected 3 tab-separated columns (head, relation, tail), found {len(cols)}"
        head, relation, tail = cols
        if not _Q.match(head):
            return f"head {head!r} is not a Q id"
        if not _P.match(relation):
            return f"relation {relation!r} is not a P id"
        if not _Q.match(tail):
            return f"tail {tail!r} is not a Q id"
        fid = derived_fact_id(SOURCE, head, relation, tail)
        rows.facts.append(fact_row(fid, head, relation, tail, "item", rank=NORMAL, source=SOURCE))
        if relation == INSTANCE_OF or relation == SUBCLASS_OF:
            rows.types.append((head, tail, relation))
        return None

    def _aliases(self, line: str, rows: Rows, corpus: list, line_no: int) -> str | None:
        cols = [c.strip() for c in line.split("\t")]
        eid = cols[0]
        if self.kind == "entity-aliases":
            if not _Q.match(eid):
                return f"{eid!r} is not an entity (Q) id"
            kind = "item"
        else:
            if not _P.match(eid):
                return f"{eid!r} is not a relation (P) id"
            kind = "property"
        names: list[str] = []
        for name in cols[1:]:
            if name and name not in names:
                names.append(name)
        if not names:
            return f"{eid}: no names"
        english = NAMES_LANGUAGE in self.languages
        rows.entities.append((eid, kind, names[0] if english else None, None, 0, None))
        if english:
            rows.names.append((eid, NAMES_LANGUAGE, names[0], 0))
            rows.names.extend((eid, NAMES_LANGUAGE, alias, 1) for alias in names[1:])
        return None

    def _document(self, line: str, rows: Rows, corpus: list, line_no: int) -> str | None:
        cols = line.split("\t", 1)
        if len(cols) != 2:
            return "expected 2 tab-separated columns (entity, text), found 1"
        eid, text = cols[0].strip(), cols[1].strip()
        if not _Q.match(eid):
            return f"{eid!r} is not an entity (Q) id"
        if not text:
            return f"{eid}: empty text"
        corpus.append((line_no, eid, text))
        return None

    def _titles(self, entities: list[str]) -> dict[str, str]:
        """Labels of these entities in the store named by `labels_from` (none if unset or
        unreadable: titles then fall back to the ids)."""
        if not self.labels_from or not Path(self.labels_from).exists():
            return {}
        import sqlite3

        from ..store import StoreError, connect

        found: dict[str, str] = {}
        try:
            conn = connect(self.labels_from, create=False, readonly=True)
        except (StoreError, sqlite3.Error):  # a store that cannot be read only costs the titles
            return {}
        try:
            unique = sorted(set(entities))
            for i in range(0, len(unique), 500):
                batch = unique[i:i + 500]
                marks = ",".join("?" * len(batch))
                for eid, label in conn.execute(
                    f"SELECT id, label FROM entities WHERE id IN ({marks}) AND label IS NOT NULL", batch
                ):
                    found[eid] = label
        except sqlite3.Error:
            return {}
        finally:
            conn.close()
        return found

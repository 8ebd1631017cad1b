"""T-REx documents (Elsahar et al. 2018) and REBEL's T-REx-style JSON Lines (Huguet Cabot and
Navigli 2021): aligned triples with their annotator, the document texts, and the entity links
inside them. The release's one big JSON array (or a file of JSON lines) is cut into documents in
a single streaming pass (kg/sources/trex_split.py: memory bounded by one block plus one document).

What a bad part costs: a document that is not a JSON object, or has no docid or text, or whose
`entities`/`triples` are not lists, is rejected whole. A mention whose uri names nothing
readable (REBEL's `"None"`/`""` for a mention its linker found no entity for, an unknown form,
bad boundaries, an impossible date or number) is dropped alone, as is a triple whose subject,
predicate or object is such a mention or whose predicate is not a property: each drop is named
(document, path such as `entities[3]` or `triples[0].object`, reason) and counted apart from
rejected documents; the rest of the document is stored. Date and number values: see
kg/sources/trex_values.py (a date keeps the precision its mention states). Rows written, aligner
names and resuming: docs/design/graph.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..identity import InputDigest
from ..ingest import ParseResult
from ..model import INSTANCE_OF, LANGUAGES, NORMAL, SUBCLASS_OF, Rows, derived_fact_id, fact_row
from ..readers import (
    Chunk,
    TruncatedInput,
    DamagedInput,  # raised by decompressed_blocks at a corrupt or cut compressed tail
    check_readable,
    json_record,
    excerpt,
    too_long,
    MAX_RECORD_BYTES,
)
from .trex_split import DocumentChunk, DocumentSplitter, TooLong, document_blocks
from .trex_values import ENTITY_URI, Literal, Unreadable, read_uri

SOURCE = "trex"


class BadDocument(ValueError):
    pass


_VALUE_TYPES = {"Q": "item", "P": "property", "L": "lexeme"}

# Aligner names of the T-REx pipeline -> the paper's names, keyed without case or punctuation.
_ALIGNERS = {
    "nosubjecttriplealigner": "NoSub",
    "nosub": "NoSub",
    "simplealigner": "AllEnt",
    "allent": "AllEnt",
    "spoaligner": "SPO",
    "spo": "SPO",
}
_NON_ALNUM = re.compile(r"[^0-9a-z]")


def normalize_aligner(name: object) -> str:
    if not isinstance(name, str):
        return ""
    return _ALIGNERS.get(_NON_ALNUM.sub("", name.lower()), name)


def _boundaries(value: object, *, optional: bool) -> tuple[int, int] | None:
    """(start, end) character offsets; raises ValueError when not two integers."""
    if value is None and optional:
        return None
    if (
        isinstance(value, list) and len(value) == 2
        and all(type(x) is int and 0 <= x < 1 << 63 for x in value) and value[0] <= value[1]
    ):
        return value[0], value[1]
    raise ValueError(f"boundaries {value!r} are not two integers start <= end")


def document_id(docid: str) -> str:
    """The stored id of a T-REx document: bare entity id for an entity URI, else as given."""
    text = docid.strip()
    m = ENTITY_URI.match(text)
    return m.group(1) if m else text


def _list(doc: dict, key: str, bad) -> list:
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad(f"{key} is not a list")
    return value


@dataclass(frozen=True)
class TrexSource:
    """T-REx JSON documents. `languages` is accepted for symmetry with the other sources; T-REx
    carries no labels, so it changes nothing."""

    languages: tuple[str, ...] = LANGUAGES
    chunk_bytes: int = 4 << 20  # document bytes per chunk (also the read size)
    chunk_documents: int = 2000  # at most this many documents per chunk
    max_record_bytes: int = MAX_RECORD_BYTES  # a longer document is rejected unkept (kg/readers.py)
    name: str = SOURCE

    def chunks(self, path: Path, start: int, position: int, digest: InputDigest | None = None) -> Iterator[Chunk]:
        p = check_readable(path)
        offset, in_array = position >> 1, bool(position & 1)
        splitter = DocumentSplitter(offset, in_array, cap=self.max_record_bytes)
        first = start + 1
        docs: list[bytes] = []
        rejects: list[tuple[int, str, str]] = []  # documents over the cap, each standing as b""
        size = 0
        last = position
        disk = 0

        def make() -> DocumentChunk:
            ends, total = [], 0
            for d in docs:
                total += len(d)
                ends.append(total)
            return DocumentChunk(first, len(docs), b"".join(docs), last, disk, tuple(rejects), ends=tuple(ends))

        def add(raw: bytes) -> None:
            if isinstance(raw, TooLong):
                rejects.append((first + len(docs), too_long("document", self.max_record_bytes), excerpt(raw)))
                raw = b""
            docs.append(raw)

        try:
            for block, disk in document_blocks(p, offset, max(1, min(self.chunk_bytes, 4 << 20)), digest):
                for raw, code in splitter.feed(block):
                    add(raw)
                    size += len(raw)
                    last = code
                    if size >= self.chunk_bytes or len(docs) >= self.chunk_documents:
                        yield make()
                        first += len(docs)
                        docs, size, rejects = [], 0, []
        except DamagedInput as exc:
            # Documents completed before the damage are good; the one in progress is not.
            if docs:
                yield make()
                first += len(docs)
            raise TruncatedInput(str(p), first, str(exc)) from exc
        for raw, code in splitter.feed(b"", final=True):
            add(raw)
            last = code
        if docs:
            yield make()

    def parse(self, chunk: Chunk) -> ParseResult:
        rows = Rows()
        rejects: list[tuple[int, str, str]] = list(chunk.rejects)  # the documents over the cap
        too_long_at = {r[0] for r in chunk.rejects}
        dropped: list[tuple[int, str, str, str, str]] = []
        records = 0
        ends = getattr(chunk, "ends", None) or (len(chunk.data),)
        begin = 0
        for i, end in enumerate(ends):
            raw = chunk.data[begin:end]
            begin = end
            index = chunk.first + i
            if index in too_long_at:
                continue
            if not raw:
                rejects.append((index, "input ends inside the JSON array (truncated file?)", ""))
                continue
            doc, reason = json_record(raw)
            if reason:
                rejects.append((index, reason, excerpt(raw)))
                continue
            try:
                drops = _document(doc, rows)
            except BadDocument as exc:
                rejects.append((index, str(exc), excerpt(raw)))
                continue
            dropped.extend((index, *drop) for drop in drops)
            records += 1
        return ParseResult(rows, records, rejects, dropped=dropped)


class _Drop(Exception):
    """A mention or triple that cannot be stored: `path` inside the document and why."""

    def __init__(self, path: str, reason: str, unit: object):
        super().__init__(reason)
        self.path, self.reason, self.unit = path, reason, unit


def _document(doc: dict, rows: Rows) -> list[tuple[str, str, str, str]]:
    """Add one document's rows; returns what it drops as (document, path, reason, excerpt).
    A document without an id or text, or whose entities or triples are not lists, raises
    BadDocument; a bad mention or triple costs only itself."""
    raw_id = doc.get("docid")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise BadDocument("document without docid")
    docid = document_id(raw_id)

    def bad(message: str) -> BadDocument:
        return BadDocument(f"document {docid}: {message}")

    text = doc.get("text")
    if not isinstance(text, str):
        raise bad("no text")
    title = doc.get("title")
    if title is not None and not isinstance(title, str):
        raise bad("title is not a string")
    entities, triples = _list(doc, "entities", bad), _list(doc, "triples", bad)

    drops: list[tuple[str, str, str, str]] = []
    annotations = []
    for k, ent in enumerate(entities):
        try:
            value, start, end, surface = _mention(ent, text, f"entities[{k}]", optional=False)
        except _Drop as drop:
            drops.append((docid, drop.path, drop.reason, excerpt(orjson.dumps(drop.unit))))
            continue
        if isinstance(value, str):  # dates and numbers are values, not entity links
            annotator = ent.get("annotator")
            annotations.append((docid, value, start, end, surface,
                                annotator if isinstance(annotator, str) else ""))

    facts: dict[str, tuple] = {}
    types = set()
    provenance = set()
    for k, triple in enumerate(triples):
        try:
            subject, relation, obj = _triple(triple, text, f"triples[{k}]")
        except _Drop as drop:
            drops.append((docid, drop.path, drop.reason, excerpt(orjson.dumps(drop.unit))))
            continue
        if isinstance(obj, str):
            fid = derived_fact_id(SOURCE, subject, relation, obj)
            if fid not in facts:
                facts[fid] = fact_row(fid, subject, relation, obj, _VALUE_TYPES[obj[0]],
                                      rank=NORMAL, source=SOURCE)
            if relation == INSTANCE_OF or relation == SUBCLASS_OF:
                types.add((subject, obj, relation))
        else:
            fid = derived_fact_id(SOURCE, subject, relation, obj.value)
            if fid not in facts:
                facts[fid] = fact_row(fid, subject, relation, None, obj.value_type, obj.value, obj.extra,
                                      rank=NORMAL, source=SOURCE)
        provenance.add((fid, SOURCE, normalize_aligner(triple.get("annotator")), docid))

    rows.documents.append((docid, title, text, SOURCE))
    rows.annotations.extend(annotations)
    rows.facts.extend(facts.values())
    rows.types.extend(sorted(types))
    rows.provenance.extend(sorted(provenance))
    return drops


def _mention(part: object, text: str, path: str, *,
             optional: bool) -> tuple[str | Literal, int | None, int | None, str | None]:
    """(entity id or Literal, start, end, surface form) of one mention; raises _Drop.
    `optional`: boundaries may be null (a triple's predicate)."""
    if not isinstance(part, dict):
        raise _Drop(path, "not an object", part)
    try:
        span = _boundaries(part.get("boundaries"), optional=optional)
    except ValueError as exc:
        raise _Drop(path, str(exc), part) from None
    surface = part.get("surfaceform")
    if not isinstance(surface, str):
        surface = text[span[0]:span[1]] if span else None
    try:
        value = read_uri(part.get("uri"), surface)
    except Unreadable as exc:
        raise _Drop(path, str(exc), part) from None
    return value, span[0] if span else None, span[1] if span else None, surface


def _triple(triple: object, text: str, path: str) -> tuple[str, str, str | Literal]:
    """(subject id, property id, object id or Literal) of one triple; raises _Drop."""
    if not isinstance(triple, dict):
        raise _Drop(path, "not an object", triple)
    parts = []
    for role in ("subject", "predicate", "object"):
        try:
            parts.append(_mention(triple.get(role), text, f"{path}.{role}", optional=True)[0])
        except _Drop as drop:
            raise _Drop(drop.path, drop.reason, triple) from None
    subject, relation, obj = parts
    if not isinstance(relation, str) or not relation.startswith("P"):
        raise _Drop(f"{path}.predicate", f"not a property: {triple['predicate'].get('uri')!r:.80}", triple)
    if not isinstance(subject, str):
        raise _Drop(f"{path}.subject", f"a {subject.value_type} value, not an entity", triple)
    return subject, relation, obj

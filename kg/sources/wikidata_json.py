"""Wikidata JSON dumps (`.json`, plain or .gz/.bz2/.xz): one entity per line inside a JSON array;
also the JSON Special:EntityData and wbgetentities serve for one entity or a few
(`{"entities": {"Q8646": {...}}}`, on one line or pretty-printed: wikidata_documents.py).

Kept: labels/aliases/descriptions in the chosen languages, sitelink count, and every statement
whose value is an entity, time, quantity, string, monolingual text or globe coordinate, with its
rank and its P580/P582/P585 qualifiers. Skipped on purpose: external identifiers (most claims of a
real dump, and never a fact a model is probed on; `keep_external_ids=True` keeps them),
references and other qualifiers. somevalue/novalue statements are stored with no object, so
they can be counted but are never true of anything.

A value that cannot be read costs the smallest unit that holds it, dropped and named (record
id, path, line) while the rest of the record is stored: a validity qualifier itself, a main value
its statement, a label, description or alias itself (wikidata_statements.py). A record whose id,
revision or structure cannot be read is rejected whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..identity import InputDigest
from ..ingest import ParseResult
from ..model import INSTANCE_OF, LANGUAGES, SUBCLASS_OF, Rows, fact_row
from ..readers import MAX_RECORD_BYTES, TOO_DEEP, Chunk, excerpt, json_record, line_chunks, split_lines
from ..revisions import replaces
from .wikidata_documents import document_chunks, entity_members, opens_document, peek, records_of
from .wikidata_statements import statement
from .wikidata_values import BadField, entity_id, expected, mapping, optional_text, property_id, revision, text

SOURCE = "wikidata-json"
_dumps = orjson.dumps
_PROPERTIES: set[str] = set()  # claim keys already found to be property ids
_REVISION = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T")


def revision_date(modified: object) -> str:
    """An entity record's `modified` ("2024-05-01T12:00:00Z") as its date; "" when absent or not
    a timestamp (it dates the graph only, so a bad one is no reason to reject the record)."""
    return modified[:10] if isinstance(modified, str) and _REVISION.match(modified) else ""


@dataclass(frozen=True)
class WikidataJsonSource:
    """The Wikidata JSON dump format (`latest-all.json.gz`, one entity per line; .json, .gz,
    .bz2) as a source for `kg.ingest.ingest`. `languages`: the names kept (labels, aliases,
    descriptions); `keep_external_ids`: also store external-id statements; `chunk_bytes`: input
    per parsing task and committed checkpoint; `relations`: keep only these properties'
    statements (`kg.restrict.ingest_relations` uses it). A value that cannot be stored as
    written costs its unit, dropped and named by line, record and path; a record that cannot be
    stored at all is rejected with its line and the field (wikidata_values.py)."""

    languages: tuple[str, ...] = LANGUAGES
    keep_external_ids: bool = False
    # 16 MiB per parsing task and per committed checkpoint: every commit writes each page it
    # touched to the WAL (and a checkpoint writes it again), so fewer, larger commits write
    # less. On the 200k-entity bench (bench/ingest.py) 4 MiB chunks took 68 s and 16 MiB 38 s
    # before the random indexes were deferred, 33-40 s vs 29-30 s after; 32 MiB gained nothing
    # more. A killed ingest redoes at most one chunk, a few seconds of work.
    chunk_bytes: int = 16 << 20
    # Keep only the statements of these properties (None: all). P31/P279 statements still
    # give the types table its rows; they are facts only when listed. Everything is decoded
    # as without the filter, so the same entities are rejected (and units dropped) either way.
    relations: frozenset[str] | None = None
    # The longest line, or pretty-printed EntityData file, read: a longer one is rejected as it
    # streams past, never held (kg/readers.py).
    max_record_bytes: int = MAX_RECORD_BYTES
    name: str = SOURCE
    # Its rows are upserts that read back only by primary key or subject (the revisions of
    # kg/revisions.py), so a bulk load may build the randomly filled indexes at the end
    # (kg/ingest.py, Store.defer_random_indexes).
    _bulk_upserts_only = True

    def chunks(self, path: Path, start: int, position: int, digest: InputDigest | None = None) -> Iterator[Chunk]:
        if start == 0 and opens_document(peek(Path(path))):  # a pretty-printed EntityData file
            return document_chunks(path, digest, max_bytes=self.max_record_bytes)
        return line_chunks(path, start_line=start, start_position=position, chunk_bytes=self.chunk_bytes,
                           digest=digest, max_line_bytes=self.max_record_bytes)

    def parse(self, chunk: Chunk) -> ParseResult:
        return self._parse_with_null(chunk, None)

    def _parse_with_null(self, chunk: Chunk, null: object) -> ParseResult:
        """`parse`, with `null` instead of None in the absent columns of the fact rows it
        builds itself (most of them). The ingest's workers pass NaN, which SQLite stores as
        NULL just like None but binds several times faster (see kg/ingest.py); `parse`
        passes None."""
        b = _Batch(null)
        b.rejects.extend(chunk.rejects)  # the lines the reader left out, over the cap
        if not (chunk.first == 1 and opens_document(chunk.data[:4096]) and self._document(b, chunk)):
            for line_no, raw in split_lines(chunk):
                line = raw.strip()
                if line[-1:] == b",":
                    line = line[:-1]
                if not line or line == b"[" or line == b"]":
                    continue
                entity, reason = json_record(line)
                if reason:
                    b.rejects.append((line_no, reason, excerpt(raw)))
                elif (members := entity_members(entity)) is None:
                    self._record(b, line_no, entity, raw)
                else:  # EntityData's JSON as served, on one line
                    for at, key, record in records_of(members, line, line_no):
                        self._member(b, at, key, record)
        if b.latest:
            b.rows.meta.append(("as_of", b.latest))
        return ParseResult(b.rows, b.records, b.rejects, b.ignored, b.dropped)

    def _document(self, b: _Batch, chunk: Chunk) -> bool:
        """A pretty-printed EntityData / wbgetentities file's entities, or one pretty-printed
        entity record, into `b`; False when the chunk is neither (then it is read line by line,
        as a dump)."""
        whole, why = json_record(chunk.data.strip())
        if why and why.endswith(TOO_DEEP):  # read line by line, every line of it would be a reject of its own
            b.rejects.append((chunk.first, why, excerpt(chunk.data)))  # the object that starts here
            return True
        if type(whole) is dict and "id" in whole:  # one entity record saved pretty-printed (wikibase-sdk, jq)
            self._record(b, chunk.first, whole, None)
            return True
        members = entity_members(whole) if whole is not None else None
        if members is None:
            return False
        for at, key, record in records_of(members, chunk.data, chunk.first):
            self._member(b, at, key, record)
        return True

    def _member(self, b: _Batch, line_no: int, key: str, record: object) -> None:
        if type(record) is not dict:
            b.rejects.append((line_no, f"entities.{key[:40]}: {expected('an object', record)}", _excerpt(record)))
        else:
            self._record(b, line_no, record, None)

    def _record(self, b: _Batch, line_no: int, entity: dict, raw: bytes | None) -> None:
        """One entity record (`raw`: its line, None inside an EntityData object) into `b`."""
        eid = entity.get("id")
        if not isinstance(eid, str) or not eid:
            b.rejects.append((line_no, "entity without id", _excerpt(entity, raw)))
            return
        if "missing" in entity:  # how wbgetentities answers an id it does not hold
            b.rejects.append((line_no, f"{eid[:40]}: missing (no such entity where it was fetched)", _excerpt(entity, raw)))
            return
        rows = b.rows
        tables = (rows.entities, rows.names, rows.types, rows.facts, b.dropped)
        marks = tuple(map(len, tables))
        try:
            entity_id(eid, "id")
            rev = revision(entity)
            self._entity(entity, rows, line_no, b.dropped, b.null)
        except (BadField, KeyError, TypeError, ValueError, AttributeError) as exc:
            # Drop whatever the broken entity had already added: all of it or nothing.
            for table, mark in zip(tables, marks):
                del table[mark:]
            why = str(exc) if isinstance(exc, BadField) else f"bad entity ({type(exc).__name__}: {exc})"
            b.rejects.append((line_no, f"{eid[:40]}: {why}", _excerpt(entity, raw)))
            return
        b.latest = max(b.latest, revision_date(rev[0]))
        if eid in b.seen:  # twice in one chunk: the newer record stays (kg/revisions.py)
            if not replaces(rev, b.seen[eid]):
                b.ignored += 1
                for table, mark in zip(tables, marks):
                    del table[mark:]
                return
            for table, column, mark in zip(tables, (0, 0, 0, 1, 1), marks):
                table[:mark] = [r for r in table[:mark] if r[column] != eid]
            rows.revisions[:] = [r for r in rows.revisions if r[0] != eid]
        else:
            b.records += 1
        b.seen[eid] = rev
        rows.revisions.append((eid, rev[0], rev[1], line_no))

    def _entity(self, e: dict, rows: Rows, line_no: int, dropped: list, null: object = None) -> None:
        """Entity `e`'s rows; what cannot be read inside it goes to `dropped`, unit by unit
        (kg/ingest.py ParseResult.dropped). BadField: the record cannot be stored at all."""
        eid = e["id"]

        def drop(path: str, exc: BadField, unit: object) -> None:
            dropped.append((line_no, eid, path, str(exc) if exc.path else exc.problem, _excerpt(unit)))

        kind = optional_text(e, "type", "item")
        langs = self.languages
        wanted = tuple(dict.fromkeys((*langs, "mul")))
        labels = _terms(mapping(e, "labels"), "labels", wanted, drop)
        descriptions = _terms(mapping(e, "descriptions"), "descriptions", wanted, drop)
        aliases = _aliases(mapping(e, "aliases"), wanted, drop)
        # The label shown for an entity: first configured language, then Wikidata's "mul".
        label = next((labels[lang] for lang in wanted if lang in labels), None)
        description = next((descriptions[lang] for lang in wanted if lang in descriptions), None)
        names = rows.names
        mul_label, mul_aliases = labels.get("mul"), aliases.get("mul", ())
        for lang in langs:
            # Wikidata's "mul" names hold in every language that has none of its own.
            own = labels.get(lang) or mul_label
            seen = {own}
            for text_ in (*aliases.get(lang, ()), *mul_aliases):
                if text_ not in seen:
                    seen.add(text_)
                    names.append((eid, lang, text_, 1))
            if own is not None:
                names.append((eid, lang, own, 0))
        rows.entities.append((eid, kind, label, description, len(mapping(e, "sitelinks")),
                              optional_text(e, "datatype")))

        claims = mapping(e, "claims")
        facts, types = rows.facts, rows.types
        own = eid + "$"  # how Wikidata writes the ids of the entity's statements (Q42$F078E5B3-...)
        keep_ext = self.keep_external_ids
        relations = self.relations
        # The time columns of a fact row without qualifiers, and its source (model.fact_row).
        no_times = (null,) * 9 + (SOURCE,)
        used: dict[str, tuple[str, int]] = {}  # statement id -> (property, index) of the statement holding it
        for prop, statements in claims.items():
            if prop not in _PROPERTIES:  # checked once per property and process
                try:
                    _PROPERTIES.add(property_id(prop, "claims"))
                except BadField:
                    drop(f"claims.{prop[:60]}", BadField("", "not a property id"), statements)
                    continue
            if type(statements) is not list:
                drop(f"claims.{prop}", BadField("", expected("an array", statements)), statements)
                continue
            for i, st in enumerate(statements):
                # Most claims of a real dump are external ids, skipped unread: no call for them.
                if not keep_ext and type(st) is dict:
                    snak = st.get("mainsnak")
                    if type(snak) is dict and snak.get("datatype") == "external-id":
                        continue
                try:
                    parsed = statement(st, keep_ext)
                except BadField as exc:  # a value the statement cannot be stored without
                    drop(f"claims.{prop}[{i}]", exc, st)
                    continue
                if parsed is None:
                    continue
                obj, vtype, value, extra, rank, sid, q, bad = parsed
                if sid and not sid.startswith(own) and (why := _foreign(sid, eid)):
                    # Statement ids are the facts' keys: another entity's id would overwrite its fact.
                    drop(f"claims.{prop}[{i}]", BadField("id", why), st)
                    continue
                if sid:  # Wikidata's ids are unique: a second one would replace the first one's fact
                    if sid in used:
                        at = "claims.{}[{}]".format(*used[sid])
                        drop(f"claims.{prop}[{i}]", BadField("", f"statement id {sid[:60]} already used at {at}"), st)
                        continue
                    used[sid] = (prop, i)
                for where, exc, unit in bad or ():  # qualifiers left out, the statement kept
                    drop(f"claims.{prop}[{i}].{where}", exc, unit)
                if relations is not None and prop not in relations:
                    pass  # decoded all the same (qualifiers included): the same records are rejected
                elif q:
                    row = fact_row(sid or f"{eid}${prop}${i}", eid, prop, obj, vtype, value, extra,
                                   rank, *q, SOURCE)
                    facts.append(row if null is None else tuple([null if x is None else x for x in row]))
                else:
                    # Most statements have no qualifiers: the row fact_row would build, without
                    # the call (the bulk path runs this millions of times).
                    facts.append((sid or f"{eid}${prop}${i}", eid, prop, null if obj is None else obj,
                                  vtype, null if value is None else value, null if extra is None else extra,
                                  rank) + no_times)
                if obj is not None and rank and (prop == INSTANCE_OF or prop == SUBCLASS_OF):
                    types.append((eid, obj, prop))


@dataclass
class _Batch:
    """What parsing one chunk has made so far (WikidataJsonSource._parse_with_null)."""

    null: object
    rows: Rows = field(default_factory=Rows)
    rejects: list = field(default_factory=list)
    dropped: list = field(default_factory=list)
    records: int = 0
    ignored: int = 0
    latest: str = ""  # the chunk's latest `modified` date: the graph's date is the dump's (as_of)
    seen: dict = field(default_factory=dict)  # entity -> revision of its record in this chunk


def _excerpt(value: object, raw: bytes | None = None) -> str:
    """The excerpt naming a rejected record (its line when known) or a dropped unit (its JSON)."""
    if raw is not None:
        return excerpt(raw)
    try:
        return excerpt(_dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return excerpt(repr(value))


def _terms(terms: dict, field_: str, langs: tuple[str, ...], drop) -> dict[str, str]:
    """The text of each label or description the record has in `langs`; one that cannot be
    read is dropped alone (as if the record had none in that language)."""
    out = {}
    for lang in langs:
        if lang in terms:
            term = terms[lang]
            try:
                if type(term) is not dict:
                    raise BadField("", expected("an object", term))
                out[lang] = text(term.get("value"), "value")
            except BadField as exc:
                drop(f"{field_}.{lang}", exc, term)
    return out


def _aliases(aliases: dict, langs: tuple[str, ...], drop) -> dict[str, list[str]]:
    """The aliases the record has in each of `langs`; one that cannot be read is dropped alone."""
    out: dict[str, list[str]] = {}
    for lang in langs:
        if lang not in aliases:
            continue
        group, texts = aliases[lang], out.setdefault(lang, [])
        if type(group) is not list:
            drop(f"aliases.{lang}", BadField("", expected("an array", group)), group)
            continue
        for k, alias in enumerate(group):
            try:
                if type(alias) is not dict:
                    raise BadField("", expected("an object", alias))
                texts.append(text(alias.get("value"), "value"))
            except BadField as exc:
                drop(f"aliases.{lang}[{k}]", exc, alias)
    return out


def _foreign(sid: str, eid: str) -> str:
    """Why statement id `sid` is not one of entity `eid`'s ("" when it is). Wikidata writes the
    entity part in either case (`q42$...` occurs in real dumps); a lexeme's form and sense
    statements carry the sub-entity (`L1-F1$...`)."""
    head, dollar, _ = sid.partition("$")
    owner = head.upper()
    if dollar and (owner == eid or owner.startswith(eid + "-")):
        return ""
    named = f"names {head[:40]!r}" if dollar else "names no entity"
    return f"statement id {sid[:60]!r} {named}, not {eid}"

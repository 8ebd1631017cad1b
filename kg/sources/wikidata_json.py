"""Wikidata JSON dumps (`.json`, plain or .gz/.bz2/.xz): one entity per line inside a JSON array.

Kept: labels/aliases/descriptions in the chosen languages, sitelink count, and every statement
whose value is an entity, time, quantity, string, monolingual text or globe coordinate, with its
rank and its P580/P582/P585 qualifiers. Skipped on purpose: external identifiers (most claims of a
real dump, and never a fact a model is probed on; `keep_external_ids=True` keeps them),
references and other qualifiers. somevalue/novalue statements are stored with no object, so
they can be counted but are never true of anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..identity import InputDigest
from ..ingest import ParseResult
from ..model import (
    END_TIME,
    INSTANCE_OF,
    LANGUAGES,
    NORMAL,
    POINT_IN_TIME,
    RANKS,
    START_TIME,
    SUBCLASS_OF,
    Rows,
    TimeValue,
    fact_row,
)
from ..readers import Chunk, excerpt, json_record, line_chunks, split_lines
from ..revisions import replaces
from .wikidata_values import (
    BadField,
    decimal,
    entity_id,
    expected,
    integer,
    is_entity_id,
    mapping,
    number,
    obj_field,
    optional_text,
    property_id,
    revision,
    text,
    time_value,
)

SOURCE = "wikidata-json"
_SKIPPED_DATATYPES = frozenset({"external-id"})
_dumps = orjson.dumps


class BadValue(ValueError):
    """A statement skipped on purpose (an unknown datavalue or snak type): the record is kept
    without it, and the skip is a reject row."""


# The datavalue type each datatype holds; a statement whose value is of another type is wrong
# (e.g. a string where the property holds entities). Datatypes not listed are not checked.
_ENTITY_VALUE = "wikibase-entityid"
_DATAVALUE_OF = {
    **dict.fromkeys(("wikibase-item", "wikibase-property", "wikibase-lexeme", "wikibase-form",
                     "wikibase-sense", "entity-schema"), _ENTITY_VALUE),
    "time": "time", "quantity": "quantity", "monolingualtext": "monolingualtext",
    "globe-coordinate": "globecoordinate",
    **dict.fromkeys(("string", "external-id", "url", "commonsMedia", "geo-shape", "tabular-data", "math",
                     "musical-notation"), "string"),
}
_DATAVALUE_TYPES = frozenset(_DATAVALUE_OF.values())
_ENTITY_PREFIX = {"item": "Q", "property": "P", "lexeme": "L"}
_PROPERTIES: set[str] = set()  # claim keys already found to be property ids


def _entity_value(v: object) -> tuple[str, str]:
    """(id, entity type) of a wikibase-entityid value."""
    if type(v) is not dict:
        raise BadField("", expected("an object", v))
    kind = optional_text(v, "entity-type", "item")
    if not kind:
        raise BadField("entity-type", "empty")
    if "id" in v:
        return entity_id(v["id"], "id"), kind
    # very old dumps carry only numeric-id
    number = integer(v.get("numeric-id"), "numeric-id", 1, (1 << 63) - 1)
    return entity_id(f"{_ENTITY_PREFIX.get(kind, 'Q')}{number}", "numeric-id"), kind


def _datavalue(kind: str, v: object) -> tuple[str | None, str, str | None, str | None]:
    """(object id, value type, literal, extra JSON) of a datavalue of type `kind`; BadField
    paths are relative to the datavalue."""
    try:
        if kind == _ENTITY_VALUE:
            eid, etype = _entity_value(v)
            return eid, etype, None, None
        if type(v) is not dict and kind != "string":
            raise BadField("", expected("an object", v))
        if kind == "time":
            t = time_value(v)
            calendar = optional_text(v, "calendarmodel", "")
            extra = {"precision": v.get("precision"), "calendar": calendar.rsplit("/", 1)[-1]}
            return None, "time", t.time, _dumps(extra).decode()
        if kind == "quantity":
            unit = optional_text(v, "unit", "1")
            extra = {"unit": unit.rsplit("/", 1)[-1] if unit != "1" else "1"}
            for bound in ("lowerBound", "upperBound"):
                if bound in v:
                    extra[bound] = decimal(v[bound], bound)
            return None, "quantity", decimal(v.get("amount"), "amount"), _dumps(extra).decode()
        if kind == "string":
            return None, "string", text(v, ""), None
        if kind == "monolingualtext":
            return (None, "monolingualtext", text(v.get("text"), "text"),
                    _dumps({"language": text(v.get("language"), "language")}).decode())
        if kind == "globecoordinate":
            lat, lon = number(v.get("latitude"), "latitude", 90), number(v.get("longitude"), "longitude", 360)
            precision = v.get("precision")
            if precision is not None:
                number(precision, "precision", 360)
            globe = v.get("globe")
            extra = {"latitude": lat, "longitude": lon, "precision": precision,
                     "globe": (text(globe, "globe") if globe is not None else "").rsplit("/", 1)[-1]}
            return None, "globecoordinate", f"{lat},{lon}", _dumps(extra).decode()
    except BadField as exc:
        raise exc.within("value") from None
    raise BadValue(f"unknown datavalue type {kind!r}")


def _qualifier_time(qualifiers: dict, prop: str) -> TimeValue | None:
    """The first time value of a validity qualifier; every snak of it is checked."""
    snaks = qualifiers.get(prop)
    if snaks is None:
        return None
    if type(snaks) is not list:
        raise BadField(f"qualifiers.{prop}", expected("an array", snaks))
    found = None
    for k, snak in enumerate(snaks):
        try:
            if type(snak) is not dict:
                raise BadField("", expected("an object", snak))
            if optional_text(snak, "snaktype", "value") != "value":
                continue
            dv = obj_field(snak, "datavalue")
            if dv.get("type") != "time":
                raise BadField("datavalue.type", f"expected 'time' (a validity qualifier), got {dv.get('type')!r:.40}")
            try:
                t = time_value(dv.get("value"), keyed=True)
            except BadField as exc:
                raise exc.within("datavalue.value") from None
            found = found or t
        except BadField as exc:
            raise exc.within(f"qualifiers.{prop}[{k}]") from None
    return found


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
    statements (`kg.restrict.ingest_relations` uses it). A record that cannot be stored as
    written is rejected with its line and the field (wikidata_values.py)."""

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
    # as without the filter, so the same entities are accepted or rejected either way.
    relations: frozenset[str] | None = None
    name: str = SOURCE
    # Its rows are upserts that read back only by primary key or subject (the revisions of
    # kg/revisions.py), so a bulk load may build the randomly filled indexes at the end
    # (kg/ingest.py, Store.defer_random_indexes).
    _bulk_upserts_only = True

    def chunks(self, path: Path, start: int, position: int, digest: InputDigest | None = None) -> Iterator[Chunk]:
        return line_chunks(path, start_line=start, start_position=position, chunk_bytes=self.chunk_bytes,
                           digest=digest)

    def parse(self, chunk: Chunk) -> ParseResult:
        return self._parse_with_null(chunk, None)

    def _parse_with_null(self, chunk: Chunk, null: object) -> ParseResult:
        """`parse`, with `null` instead of None in the absent columns of the fact rows it
        builds itself (most of them). The ingest's workers pass NaN, which SQLite stores as
        NULL just like None but binds several times faster (see kg/ingest.py); `parse`
        passes None."""
        rows = Rows()
        rejects: list[tuple[int, str, str]] = []
        records = ignored = 0
        latest = ""  # the chunk's latest `modified` date: the graph's date is the dump's (as_of)
        seen: dict[str, tuple] = {}  # entity -> revision of its record in this chunk
        for line_no, raw in split_lines(chunk):
            line = raw.strip()
            if line[-1:] == b",":
                line = line[:-1]
            if not line or line == b"[" or line == b"]":
                continue
            entity, reason = json_record(line)
            if reason:
                rejects.append((line_no, reason, excerpt(raw)))
                continue
            eid = entity.get("id")
            if not isinstance(eid, str) or not eid:
                rejects.append((line_no, "entity without id", excerpt(raw)))
                continue
            marks = (len(rows.entities), len(rows.names), len(rows.types), len(rows.facts), len(rejects))
            try:
                entity_id(eid, "id")
                rev = revision(entity)
                self._entity(entity, rows, line_no, rejects, null)
            except (BadField, KeyError, TypeError, ValueError, AttributeError) as exc:
                # Drop whatever the broken entity had already added: all of it or nothing.
                for table, mark in zip((rows.entities, rows.names, rows.types, rows.facts, rejects), marks):
                    del table[mark:]
                why = str(exc) if isinstance(exc, BadField) else f"bad entity ({type(exc).__name__}: {exc})"
                rejects.append((line_no, f"{eid[:40]}: {why}", excerpt(raw)))
                continue
            latest = max(latest, revision_date(rev[0]))
            if eid in seen:  # twice in one chunk: the newer record stays (kg/revisions.py)
                if not replaces(rev, seen[eid]):
                    ignored += 1
                    for table, mark in zip((rows.entities, rows.names, rows.types, rows.facts), marks):
                        del table[mark:]
                    continue
                for table, column, mark in zip((rows.entities, rows.names, rows.types, rows.facts), (0, 0, 0, 1), marks):
                    table[:mark] = [r for r in table[:mark] if r[column] != eid]
                rows.revisions[:] = [r for r in rows.revisions if r[0] != eid]
            else:
                records += 1
            seen[eid] = rev
            rows.revisions.append((eid, rev[0], rev[1], line_no))
        if latest:
            rows.meta.append(("as_of", latest))
        return ParseResult(rows, records, rejects, ignored)

    def _entity(self, e: dict, rows: Rows, line_no: int, rejects: list, null: object = None) -> None:
        eid = e["id"]
        kind = optional_text(e, "type", "item")
        labels, descriptions, aliases = mapping(e, "labels"), mapping(e, "descriptions"), mapping(e, "aliases")
        langs = self.languages
        # The label shown for an entity: first configured language, then Wikidata's "mul".
        label = description = None
        for lang in (*langs, "mul"):
            if label is None:
                label = _term(labels, lang, "labels")
            if description is None:
                description = _term(descriptions, lang, "descriptions")
        names = rows.names
        mul_label = _term(labels, "mul", "labels")
        mul_aliases = _aliases(aliases, "mul")
        for lang in langs:
            # Wikidata's "mul" names hold in every language that has none of its own.
            own = _term(labels, lang, "labels") or mul_label
            seen = {own}
            for text_ in (*_aliases(aliases, lang), *mul_aliases):
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
        for prop, statements in claims.items():
            if prop not in _PROPERTIES:  # checked once per property and process
                _PROPERTIES.add(property_id(prop, "claims"))
            if type(statements) is not list:
                raise BadField(f"claims.{prop}", expected("an array", statements))
            for i, st in enumerate(statements):
                # Most claims of a real dump are external ids, skipped unread: no call for them.
                if not keep_ext and type(st) is dict:
                    snak = st.get("mainsnak")
                    if type(snak) is dict and snak.get("datatype") == "external-id":
                        continue
                try:
                    parsed = _statement(st, keep_ext)
                except BadValue as exc:
                    rejects.append((line_no, f"{eid} {prop}{exc}", _statement_id(st)))
                    continue
                except BadField as exc:
                    raise exc.within(f"claims.{prop}[{i}]") from None
                if parsed is None:
                    continue
                obj, vtype, value, extra, rank, sid, q = parsed
                if sid and not sid.startswith(own) and (why := _foreign(sid, eid)):
                    # Statement ids are the facts' keys: another entity's id would overwrite its fact.
                    rejects.append((line_no, f"{eid} claims.{prop}[{i}].id: {why}; statement skipped", sid[:160]))
                    continue
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


def _term(terms: dict, lang: str, field: str) -> str | None:
    """The text of a label or description in `lang`, None when it has none."""
    if lang not in terms:
        return None
    term = terms[lang]
    if type(term) is not dict:
        raise BadField(f"{field}.{lang}", expected("an object", term))
    return text(term.get("value"), f"{field}.{lang}.value")


def _aliases(aliases: dict, lang: str) -> list[str]:
    if lang not in aliases:
        return []
    group = aliases[lang]
    if type(group) is not list:
        raise BadField(f"aliases.{lang}", expected("an array", group))
    out = []
    for k, alias in enumerate(group):
        if type(alias) is not dict:
            raise BadField(f"aliases.{lang}[{k}]", expected("an object", alias))
        out.append(text(alias.get("value"), f"aliases.{lang}[{k}].value"))
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


def _statement_id(st: object) -> str:
    sid = st.get("id") if type(st) is dict else None
    return sid if type(sid) is str else ""


def _statement(st: object, keep_ext: bool) -> tuple | None:
    """(object, value type, literal, extra, rank, statement id, qualifier times or None) of a
    statement; None for an external id that is not kept. BadValue: skip the statement. The
    checks are written out inline: the bulk path runs this for every statement of a dump."""
    if type(st) is not dict:
        raise BadField("", expected("an object", st))
    snak = st.get("mainsnak")
    if type(snak) is not dict:
        raise BadField("mainsnak", "missing" if snak is None else expected("an object", snak))
    datatype = snak.get("datatype")
    if datatype is not None and (type(datatype) is not str or "\x00" in datatype):
        raise BadField("mainsnak.datatype", expected("a string", datatype) if type(datatype) is not str
                       else "contains a NUL character")
    if datatype in _SKIPPED_DATATYPES and not keep_ext:
        return None
    snaktype = snak.get("snaktype", "value")
    if snaktype == "value":
        dv = snak.get("datavalue")
        if type(dv) is not dict:
            raise BadField("mainsnak.datavalue", "missing" if dv is None else expected("an object", dv))
        kind, v = dv.get("type"), dv.get("value")
        # Entity values are the most common kind: decoded here without a call.
        if (kind == _ENTITY_VALUE and type(v) is dict and type(obj := v.get("id")) is str
                and is_entity_id(obj) and v.get("entity-type", "item") == "item"):
            vtype, value, extra = "item", None, None
        else:
            if type(kind) is not str:
                raise BadField("mainsnak.datavalue.type", expected("a string", kind))
            if kind not in _DATAVALUE_TYPES:
                raise BadValue(f" statement skipped: unknown datavalue type {kind!r}")
            try:
                obj, vtype, value, extra = _datavalue(kind, v)
            except BadField as exc:
                raise exc.within("mainsnak.datavalue") from None
        holds = _DATAVALUE_OF.get(datatype)
        if holds is not None and holds != kind:
            raise BadField("mainsnak.datavalue.type",
                           f"{kind!r} where the property's datatype {datatype!r} holds {holds!r}")
    elif snaktype == "somevalue" or snaktype == "novalue":
        obj, vtype, value, extra = None, snaktype, None, None
    elif type(snaktype) is not str or "\x00" in snaktype:
        raise BadField("mainsnak.snaktype", expected("a string", snaktype) if type(snaktype) is not str
                       else "contains a NUL character")
    else:
        raise BadValue(f": unknown snaktype {snaktype[:40]!r}")
    rank = st.get("rank", "normal")
    rank_value = RANKS.get(rank) if type(rank) is str else None
    if rank_value is None:
        raise BadField("rank", expected("a string", rank) if type(rank) is not str else f"unknown rank {rank[:40]!r}")
    sid = st.get("id")
    if sid is not None and (type(sid) is not str or "\x00" in sid):
        raise BadField("id", expected("a string", sid) if type(sid) is not str else "contains a NUL character")
    q = st.get("qualifiers")
    if not q:
        if q is None or q == [] or q == {}:
            return obj, vtype, value, extra, rank_value, sid, None
        raise BadField("qualifiers", expected("an object", q))
    if type(q) is not dict:
        raise BadField("qualifiers", expected("an object", q))
    times = (_qualifier_time(q, START_TIME), _qualifier_time(q, END_TIME), _qualifier_time(q, POINT_IN_TIME))
    return obj, vtype, value, extra, rank_value, sid, times

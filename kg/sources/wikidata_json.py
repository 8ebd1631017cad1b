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

from ..ingest import ParseResult
from ..model import (
    END_TIME,
    INSTANCE_OF,
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

SOURCE = "wikidata-json"
_ENTITY_TYPES = {"item": "item", "property": "property", "lexeme": "lexeme"}
_SKIPPED_DATATYPES = frozenset({"external-id"})
_dumps = orjson.dumps


class BadValue(ValueError):
    pass


def _time(value: dict) -> TimeValue:
    return TimeValue(value["time"], int(value.get("precision", 11)))


def _datavalue(dv: dict) -> tuple[str | None, str, str | None, str | None]:
    """(object id, value type, literal, extra JSON) of a snak's datavalue."""
    kind = dv.get("type")
    v = dv.get("value")
    if kind == "wikibase-entityid":
        eid = v.get("id")
        if not eid:  # very old dumps carry only numeric-id
            prefix = {"item": "Q", "property": "P", "lexeme": "L"}.get(v.get("entity-type"), "Q")
            eid = f"{prefix}{v['numeric-id']}"
        return eid, v.get("entity-type", "item"), None, None
    if kind == "time":
        extra = {"precision": v.get("precision"), "calendar": v.get("calendarmodel", "").rsplit("/", 1)[-1]}
        return None, "time", v["time"], _dumps(extra).decode()
    if kind == "quantity":
        unit = v.get("unit", "1")
        extra = {"unit": unit.rsplit("/", 1)[-1] if unit != "1" else "1"}
        for bound in ("lowerBound", "upperBound"):
            if bound in v:
                extra[bound] = v[bound]
        return None, "quantity", v["amount"], _dumps(extra).decode()
    if kind == "string":
        return None, "string", v, None
    if kind == "monolingualtext":
        return None, "monolingualtext", v["text"], _dumps({"language": v["language"]}).decode()
    if kind == "globecoordinate":
        extra = {"latitude": v["latitude"], "longitude": v["longitude"],
                 "precision": v.get("precision"), "globe": (v.get("globe") or "").rsplit("/", 1)[-1]}
        return None, "globecoordinate", f"{v['latitude']},{v['longitude']}", _dumps(extra).decode()
    raise BadValue(f"unknown datavalue type {kind!r}")


def _qualifier_time(qualifiers: dict, prop: str) -> TimeValue | None:
    for snak in qualifiers.get(prop, ()):
        if snak.get("snaktype") == "value":
            dv = snak.get("datavalue") or {}
            if dv.get("type") == "time":
                return _time(dv["value"])
    return None


_REVISION = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T")


def revision_date(modified: object) -> str:
    """An entity record's `modified` ("2024-05-01T12:00:00Z") as its date; "" when absent or not
    a timestamp (it dates the graph only, so a bad one is no reason to reject the record)."""
    return modified[:10] if isinstance(modified, str) and _REVISION.match(modified) else ""


@dataclass(frozen=True)
class WikidataJsonSource:
    languages: tuple[str, ...] = ("en",)
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
    # Its rows are plain upserts (nothing is read back while writing), so a bulk load may
    # build the randomly filled indexes at the end (kg/ingest.py, Store.defer_random_indexes).
    _bulk_upserts_only = True

    def chunks(self, path: Path, start: int, position: int) -> Iterator[Chunk]:
        return line_chunks(path, start_line=start, start_position=position, chunk_bytes=self.chunk_bytes)

    def parse(self, chunk: Chunk) -> ParseResult:
        return self._parse_with_null(chunk, None)

    def _parse_with_null(self, chunk: Chunk, null: object) -> ParseResult:
        """`parse`, with `null` instead of None in the absent columns of the fact rows it
        builds itself (most of them). The ingest's workers pass NaN, which SQLite stores as
        NULL just like None but binds several times faster (see kg/ingest.py); `parse`
        passes None."""
        rows = Rows()
        rejects: list[tuple[int, str, str]] = []
        records = 0
        latest = ""  # the chunk's latest `modified` date: the graph's date is the dump's (as_of)
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
            if not isinstance(entity.get("id"), str) or not entity["id"]:
                rejects.append((line_no, "entity without id", excerpt(raw)))
                continue
            marks = (len(rows.entities), len(rows.names), len(rows.types), len(rows.facts))
            try:
                self._entity(entity, rows, line_no, rejects, null)
                records += 1
                latest = max(latest, revision_date(entity.get("modified")))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                # Drop whatever the broken entity had already added: all of it or nothing.
                for table, mark in zip((rows.entities, rows.names, rows.types, rows.facts), marks):
                    del table[mark:]
                rejects.append((line_no, f"{entity['id']}: bad entity ({type(exc).__name__}: {exc})",
                                excerpt(raw)))
        if latest:
            rows.meta.append(("as_of", latest))
        return ParseResult(rows, records, rejects)

    def _entity(self, e: dict, rows: Rows, line_no: int, rejects: list, null: object = None) -> None:
        eid = e["id"]
        kind = _ENTITY_TYPES.get(e.get("type", "item"), e.get("type", "item"))
        labels = e.get("labels") or {}
        descriptions = e.get("descriptions") or {}
        aliases = e.get("aliases") or {}
        langs = self.languages
        # The label shown for an entity: first configured language, then Wikidata's "mul".
        label = description = None
        for lang in (*langs, "mul"):
            if label is None and lang in labels:
                label = labels[lang]["value"]
            if description is None and lang in descriptions:
                description = descriptions[lang]["value"]
        names = rows.names
        mul_label = labels.get("mul", {}).get("value")
        mul_aliases = aliases.get("mul", ())
        for lang in langs:
            # Wikidata's "mul" names hold in every language that has none of its own.
            own = labels.get(lang, {}).get("value") or mul_label
            seen = {own}
            for alias in (*aliases.get(lang, ()), *mul_aliases):
                text = alias["value"]
                if text not in seen:
                    seen.add(text)
                    names.append((eid, lang, text, 1))
            if own is not None:
                names.append((eid, lang, own, 0))
        rows.entities.append((eid, kind, label, description, len(e.get("sitelinks") or ()), e.get("datatype")))

        claims = e.get("claims") or {}
        facts, types = rows.facts, rows.types
        keep_ext = self.keep_external_ids
        relations = self.relations
        # The time columns of a fact row without qualifiers, and its source (model.fact_row).
        no_times = (null,) * 9 + (SOURCE,)
        for prop, statements in claims.items():
            for i, st in enumerate(statements):
                snak = st["mainsnak"]
                if not keep_ext and snak.get("datatype") in _SKIPPED_DATATYPES:
                    continue
                snaktype = snak.get("snaktype", "value")
                if snaktype == "value":
                    dv = snak["datavalue"]
                    try:
                        v = dv.get("value")
                        # Entity values are the most common kind: decoded here without a call,
                        # exactly as _datavalue does; anything unusual goes through _datavalue.
                        if dv.get("type") == "wikibase-entityid" and v.get("id"):
                            obj, vtype, value, extra = v["id"], v.get("entity-type", "item"), None, None
                        else:
                            obj, vtype, value, extra = _datavalue(dv)
                    except BadValue as exc:
                        rejects.append((line_no, f"{eid} {prop} statement skipped: {exc}", st.get("id", "")))
                        continue
                elif snaktype in ("somevalue", "novalue"):
                    obj, vtype, value, extra = None, snaktype, None, None
                else:
                    rejects.append((line_no, f"{eid} {prop}: unknown snaktype {snaktype!r}", st.get("id", "")))
                    continue
                rank = RANKS.get(st.get("rank", "normal"), NORMAL)
                q = st.get("qualifiers")
                if relations is not None and prop not in relations:
                    if q:  # decoded all the same: a bad qualifier rejects the entity either way
                        for qualifier in (START_TIME, END_TIME, POINT_IN_TIME):
                            _qualifier_time(q, qualifier)
                elif q:
                    row = fact_row(st.get("id") or f"{eid}${prop}${i}", eid, prop, obj, vtype, value, extra,
                                   rank, _qualifier_time(q, START_TIME), _qualifier_time(q, END_TIME),
                                   _qualifier_time(q, POINT_IN_TIME), SOURCE)
                    facts.append(row if null is None else tuple([null if x is None else x for x in row]))
                else:
                    # Most statements have no qualifiers: the row fact_row would build, without
                    # the call (the bulk path runs this millions of times).
                    facts.append((st.get("id") or f"{eid}${prop}${i}", eid, prop, null if obj is None else obj,
                                  vtype, null if value is None else value, null if extra is None else extra,
                                  rank) + no_times)
                if obj is not None and rank and (prop == INSTANCE_OF or prop == SUBCLASS_OF):
                    types.append((eid, obj, prop))

"""Wikidata-style RDF via rdflib: N-Triples (`.nt`, `.nt.gz`, `.nt.bz2`) and Turtle (`.ttl`,
`.ttl.gz`), as in Wikidata's RDF dumps and query service.

Mapping (namespaces are recognised by path, so any Wikibase host works, not only wikidata.org):
- `wd:X wdt:P v` (truthy) -> a fact of rank normal with the derived id
  `model.derived_fact_id("rdf", X, P, v)`; `wdt:P31`/`wdt:P279` also -> the types table.
- `wd:X p:P wds:S . wds:S ps:P v ; pq:P580|P582|P585 t ; wikibase:rank r` (full statement)
  -> a fact with the statement's own id, written as Wikidata writes it (`wds:Q42-ABC` becomes
  `Q42$ABC`), so the same statement ingested from a JSON dump and from RDF is one row.
  `wds:S a wdno:P` is a novalue statement, a blank node or `.well-known/genid` value a
  somevalue one (no object, never true). Truthy triples restate best-rank statements, so a
  truthy fact is dropped when a full statement with the same subject, relation and value is
  known (from this or any earlier ingest); otherwise a dump with both would count every fact
  twice, and a former capital's truthy twin would look current.
- `rdfs:label`/`skos:prefLabel`/`schema:name` -> labels, `skos:altLabel` -> aliases (configured
  languages), `schema:description` -> description; the entity's display label/description is
  the first configured language that has one, then Wikidata's `mul`.
  `wikibase:sitelinks` -> sitelink count, `wikibase:propertyType` -> datatype.
- Literals: xsd:dateTime -> time (`+YYYY-MM-DDT00:00:00Z`; precision and calendar from the
  `psv:`/`pqv:` value node's `wikibase:timePrecision`/`timeCalendarModel` when present, else
  day precision 11; RDF's XSD 1.1 years <= 0 are shifted back to Wikidata's BCE numbering for
  Gregorian dates, and imprecise dates get Wikidata's `-00` month/day), xsd numbers -> quantity
  (unit and bounds from the value node), plain strings -> string, language strings ->
  monolingualtext, geo:wktLiteral -> globecoordinate, other IRIs -> string (Commons files by
  file name). Qualifier values other than times, references and sitelink articles are skipped;
  an entity seen only as an object gets an entity row only once it has labels.
- RDF carries no property datatypes on the triples, so unlike the JSON source, external ids are
  kept as string facts.

Statement assembly across chunks
--------------------------------
A statement is a handful of triples (the `p:` link, the `ps:` value, rank, qualifiers, and value
nodes that Wikidata shares between statements and writes once), in any order, possibly chunks
or whole megabytes apart. Parsing workers therefore never build facts themselves: they turn
every triple into a small *piece* `(owner, part, key, value)` (owner = statement id, entity id,
value node or truthy id). The driver writes a chunk's batch inside the transaction that also
records its checkpoint; there the batch (`RdfRows.write_staged`) stages its pieces in the
store's `staged_parts` table and re-assembles, from *all* pieces staged so far, exactly the
records that this chunk touched (statements referring to a touched value node included), and
upserts them. Each record is a pure function of the set of its pieces, so:
- the final store is the same whatever the chunking or the order of triples (a statement whose
  value arrives before its rank is first written with rank normal and corrected when the rank
  comes; a truthy fact is deleted when its full statement arrives, or never written if the
  statement came first);
- resume after SIGKILL is exact: pieces, assembled rows and checkpoint commit together, so a
  rerun replays nothing twice and misses nothing;
- memory stays constant in the input size (one chunk's pieces at a time); the price is disk:
  the staged pieces stay in the store (roughly the size of the facts they assemble), because a
  later chunk or file may still add a piece to any statement.
A record with no value yet (only qualifiers or a rank seen) has no fact row until its value
arrives. Where a statement has several values for one slot (malformed data), the smallest is
used; of several P580/P585 values the earliest, of several P582 values the latest.

Turtle is read in blocks: Wikidata's Turtle is a prefix header followed by one block per
subject, separated by blank lines. Chunks end at a blank line and carry every `@prefix`/`PREFIX`
/`@base` directive seen before them (on resume, the skipped part of the file is re-read for
directives), so each chunk parses on its own. A chunk that fails to parse is re-parsed block by
block, and each bad block is one reject naming its first line. (A long `\"\"\"` string literal
containing a blank line would be cut; Wikidata's dumps escape newlines, so they have none.)
N-Triples are parsed line by line; a malformed line is one reject with its line number.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

import orjson
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.exceptions import ParserError
from rdflib.plugins.parsers.ntriples import W3CNTriplesParser

from ..ingest import ParseResult
from ..model import (
    DEPRECATED,
    END_TIME,
    INSTANCE_OF,
    NORMAL,
    POINT_IN_TIME,
    PRECISION_DAY,
    PRECISION_MONTH,
    PRECISION_YEAR,
    RANKS,
    START_TIME,
    SUBCLASS_OF,
    Rows,
    TimeValue,
    derived_fact_id,
    fact_row,
)
from ..readers import CHUNK_BYTES, Chunk, InputError, excerpt, line_chunks, split_lines

SOURCE = "rdf"

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_LABELS = frozenset({
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name",
})
_ALIAS = "http://www.w3.org/2004/02/skos/core#altLabel"
_DESCRIPTION = "http://schema.org/description"
_WIKIBASE = ("http://wikiba.se/ontology#", "http://wikiba.se/ontology-beta#")
_XSD = "http://www.w3.org/2001/XMLSchema#"
_TIME_TYPES = frozenset({_XSD + "dateTime", _XSD + "date"})
_NUMBER_TYPES = frozenset(_XSD + t for t in (
    "decimal", "integer", "double", "float", "int", "long", "short", "byte",
    "nonNegativeInteger", "positiveInteger", "negativeInteger", "nonPositiveInteger",
    "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"))
_STRING_TYPES = frozenset({_XSD + "string"})
_WKT = "http://www.opengis.net/ont/geosparql#wktLiteral"
_GENID = "/.well-known/genid/"
_COMMONS_FILE = ("http://commons.wikimedia.org/wiki/Special:FilePath/",
                 "https://commons.wikimedia.org/wiki/Special:FilePath/")
_JULIAN = "Q1985786"
_UNIT_ONE = "Q199"  # Wikidata's RDF writes the unit "1" (dimensionless) as wd:Q199

_RANK_IRIS = {"PreferredRank": RANKS["preferred"], "NormalRank": RANKS["normal"],
              "DeprecatedRank": RANKS["deprecated"]}
_TIME_QUALIFIERS = (START_TIME, END_TIME, POINT_IN_TIME)
_TYPE_RELATIONS = (INSTANCE_OF, SUBCLASS_OF)
# Value-node fields kept (wikibase:<name>); everything else about a value node is skipped.
_NODE_FIELDS = frozenset({
    "timeValue", "timePrecision", "timeCalendarModel", "quantityUnit", "quantityLowerBound",
    "quantityUpperBound", "geoPrecision", "geoGlobe"})
_DATATYPES = {
    "WikibaseItem": "wikibase-item", "WikibaseProperty": "wikibase-property",
    "WikibaseLexeme": "wikibase-lexeme", "WikibaseForm": "wikibase-form",
    "WikibaseSense": "wikibase-sense", "String": "string", "Monolingualtext": "monolingualtext",
    "Time": "time", "Quantity": "quantity", "GlobeCoordinate": "globe-coordinate",
    "ExternalId": "external-id", "Url": "url", "CommonsMedia": "commonsMedia", "Math": "math",
    "GeoShape": "geo-shape", "TabularData": "tabular-data", "MusicalNotation": "musical-notation",
    "EntitySchema": "entity-schema",
}

# Wikibase IRI paths: entity/statement/Q42-..., entity/Q42, prop/direct/P31, ...
# (alternatives are tried in order, longest first where one is a prefix of another).
_WB_IRI = re.compile(
    r"^https?://[^/]+/(entity/statement/|entity/|prop/direct/|prop/statement/value/|"
    r"prop/statement/|prop/qualifier/value/|prop/qualifier/|prop/novalue/|prop/|value/)"
    r"([^/#?]+)$"
)
_NAMESPACES = {
    "entity/statement/": "statement", "entity/": "entity", "prop/direct/": "wdt",
    "prop/statement/value/": "psv", "prop/statement/": "ps", "prop/qualifier/value/": "pqv",
    "prop/qualifier/": "pq", "prop/novalue/": "wdno", "prop/": "p", "value/": "value",
}
_ENTITY_ID = re.compile(r"^(?:[QPL][1-9][0-9]*|L[1-9][0-9]*-[FS][1-9][0-9]*)$")
_PROPERTY_ID = re.compile(r"^P[1-9][0-9]*$")
_STATEMENT_ID = re.compile(r"^([QPLqpl][1-9][0-9]*(?:-[FS][1-9][0-9]*)?)-(.+)$")
_STATEMENT_SUBJECT = re.compile(r"^([QPLqpl][1-9][0-9]*(?:-[FS][1-9][0-9]*)?)\$")
_RDF_TIME = re.compile(r"^\s*([+-]?)(\d{1,16})-(\d{2})-(\d{2})")
_WKT_POINT = re.compile(
    r"^\s*(?:<([^>]*)>\s*)?Point\s*\(\s*([-+0-9.eE]+)\s+([-+0-9.eE]+)\s*\)\s*$", re.I)

SOMEVALUE, NOVALUE = "~somevalue", "~novalue"
_ENTITY_PARTS = frozenset({"entity", "label", "alias", "description", "sitelinks", "datatype"})
_STATEMENT_PARTS = frozenset({"link", "value", "novalue", "rank", "qual", "ref"})

_dumps = orjson.dumps


# -- terms ------------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _classify(iri: str) -> tuple[str, str] | None:
    """(namespace kind, local name) of a Wikibase IRI, or None."""
    m = _WB_IRI.match(iri)
    if not m:
        return None
    return _NAMESPACES[m.group(1)], m.group(2)


def _wikibase_name(iri: str) -> str | None:
    for ns in _WIKIBASE:
        if iri.startswith(ns):
            return iri[len(ns):]
    return None


def _entity_of(iri: str) -> str | None:
    c = _classify(iri)
    if c and c[0] == "entity" and _ENTITY_ID.match(c[1]):
        return c[1]
    return None


def entity_kind(entity_id: str) -> str:
    if "-F" in entity_id:
        return "form"
    if "-S" in entity_id:
        return "sense"
    return {"Q": "item", "P": "property", "L": "lexeme"}.get(entity_id[:1], "item")


def statement_id(local: str) -> tuple[str, str | None]:
    """Wikidata's id of a `wds:` statement (`Q42-ABC` -> `Q42$ABC`) and its subject."""
    m = _STATEMENT_ID.match(local)
    if not m:
        return local, None
    return f"{m.group(1)}${m.group(2)}", m.group(1).upper()


def _rdf_time(lexical: str) -> str:
    """`+YYYY-MM-DD` of an xsd:dateTime/date as written in RDF (XSD 1.1 years)."""
    m = _RDF_TIME.match(lexical)
    if not m:
        raise ValueError(f"unparseable date/time {lexical!r}")
    sign = "-" if m.group(1) == "-" else "+"
    return f"{sign}{int(m.group(2)):04d}-{m.group(3)}-{m.group(4)}"


def wikidata_time(rdf_time: str, precision: int, calendar: str = "") -> str:
    """Wikidata's `+YYYY-MM-DDT00:00:00Z` for an RDF date of the given precision."""
    m = _RDF_TIME.match(rdf_time)
    if not m:
        raise ValueError(f"unparseable date/time {rdf_time!r}")
    year = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
    month, day = int(m.group(3)), int(m.group(4))
    if year <= 0 and calendar != _JULIAN:
        year -= 1  # XSD 1.1 has a year 0 (= 1 BCE); Wikidata counts 1 BCE as -1
    if precision <= PRECISION_YEAR:
        month = day = 0
    elif precision == PRECISION_MONTH:
        day = 0
    return f"{'-' if year < 0 else '+'}{abs(year):04d}-{month:02d}-{day:02d}T00:00:00Z"


def _amount(lexical: str) -> str:
    """A Wikidata amount (`+1.5`, `-3`) from an xsd number, in one canonical form."""
    try:
        d = Decimal(lexical.strip())
    except InvalidOperation:
        raise ValueError(f"not a number {lexical!r}") from None
    if not d.is_finite():
        raise ValueError(f"not a finite number {lexical!r}")
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("-0", ""):
        text = "0"
    return text if text.startswith("-") else "+" + text


def term_key(o) -> str:
    """A compact, source-independent encoding of an RDF object: an entity id, `~somevalue`,
    or a JSON array [kind, value, ...] of a normalized literal."""
    if isinstance(o, URIRef):
        iri = str(o)
        eid = _entity_of(iri)
        if eid:
            return eid
        if _GENID in iri:
            return SOMEVALUE
        for prefix in _COMMONS_FILE:
            if iri.startswith(prefix):
                return _dumps(["string", unquote(iri[len(prefix):])]).decode()
        return _dumps(["string", iri]).decode()
    if isinstance(o, BNode):
        return SOMEVALUE
    if isinstance(o, Literal):
        lexical = str(o)
        if o.language:
            return _dumps(["monolingualtext", lexical, o.language]).decode()
        dt = str(o.datatype) if o.datatype is not None else None
        if dt in _TIME_TYPES:
            return _dumps(["time", _rdf_time(lexical)]).decode()
        if dt in _NUMBER_TYPES:
            return _dumps(["quantity", _amount(lexical)]).decode()
        if dt == _WKT:
            m = _WKT_POINT.match(lexical)
            if not m:
                raise ValueError(f"unsupported WKT literal {lexical!r}")
            globe = _entity_of(m.group(1)) if m.group(1) else None
            lon, lat = float(m.group(2)), float(m.group(3))
            return _dumps(["globecoordinate", lat, lon, globe or "Q2"]).decode()
        return _dumps(["string", lexical]).decode()
    raise ValueError(f"unsupported RDF term {o!r}")


def _node_value(name: str, o) -> str:
    """A value node field, normalized."""
    if name == "timeValue":
        return _rdf_time(str(o))
    if name in ("timePrecision",):
        return str(int(str(o)))
    if name in ("quantityLowerBound", "quantityUpperBound"):
        return _amount(str(o))
    if name == "geoPrecision":
        return repr(float(str(o)))
    if isinstance(o, URIRef):
        eid = _entity_of(str(o))
        return eid if eid else str(o)
    return str(o)


# -- triples -> pieces ------------------------------------------------------------------------


class _Collector:
    """Turns triples into staged pieces (owner, part, key, value); also an rdflib sink."""

    def __init__(self, languages: Iterable[str]):
        self.names = frozenset(lang.lower() for lang in languages)
        self.label_langs = self.names | {"mul"}
        self.parts: set[tuple[str, str, str, str]] = set()
        self.used = 0

    def triple(self, s, p, o) -> None:
        if isinstance(s, URIRef):
            c = _classify(str(s))
            if c is not None and self._triple(c, str(p), o):
                self.used += 1

    def _triple(self, subject: tuple[str, str], p: str, o) -> bool:
        kind, local = subject
        add = self.parts.add
        if kind == "entity":
            if not _ENTITY_ID.match(local):
                return False
            x = local
            if p in _LABELS or p == _DESCRIPTION or p == _ALIAS:
                if not isinstance(o, Literal) or not o.language:
                    return False
                lang = o.language.lower()
                if p == _ALIAS:
                    if lang not in self.names:
                        return False
                    add((x, "alias", lang, str(o)))
                elif lang in self.label_langs:
                    add((x, "label" if p in _LABELS else "description", lang, str(o)))
                else:
                    return False
                return True
            if p == RDF_TYPE:
                oc = _classify(str(o)) if isinstance(o, URIRef) else None
                if oc is not None and oc[0] == "wdno" and _PROPERTY_ID.match(oc[1]):
                    self._truthy(x, oc[1], NOVALUE)
                    return True
                if isinstance(o, URIRef) and _wikibase_name(str(o)) in ("Item", "Property", "Lexeme"):
                    add((x, "entity", "", ""))
                    return True
                return False
            name = _wikibase_name(p)
            if name == "sitelinks":
                add((x, "sitelinks", "", str(int(str(o)))))
                return True
            if name == "propertyType" and isinstance(o, URIRef):
                local_type = _wikibase_name(str(o)) or str(o).rsplit("/", 1)[-1]
                add((x, "datatype", "", _DATATYPES.get(local_type, local_type.lower())))
                return True
            pc = _classify(p)
            if pc is None or not _PROPERTY_ID.match(pc[1]):
                return False
            if pc[0] == "wdt":
                self._truthy(x, pc[1], term_key(o))
                return True
            if pc[0] == "p" and isinstance(o, URIRef):
                oc = _classify(str(o))
                owner = statement_id(oc[1])[0] if oc and oc[0] == "statement" else f"<{o}>"
                add((x, "entity", "", ""))
                add((owner, "link", pc[1], x))
                return True
            return False
        if kind == "statement":
            owner = statement_id(local)[0]
            name = _wikibase_name(p)
            if name == "rank":
                rank = _RANK_IRIS.get(_wikibase_name(str(o)) or "")
                if rank is None:
                    raise ValueError(f"unknown rank {o}")
                add((owner, "rank", "", str(rank)))
                return True
            if p == RDF_TYPE:
                oc = _classify(str(o)) if isinstance(o, URIRef) else None
                if oc is not None and oc[0] == "wdno" and _PROPERTY_ID.match(oc[1]):
                    add((owner, "novalue", oc[1], ""))
                    return True
                return False
            pc = _classify(p)
            if pc is None or not _PROPERTY_ID.match(pc[1]):
                return False
            pkind, prop = pc
            if pkind == "ps":
                add((owner, "value", prop, term_key(o)))
                return True
            if pkind in ("psv", "pqv"):
                if pkind == "pqv" and prop not in _TIME_QUALIFIERS:
                    return False
                oc = _classify(str(o)) if isinstance(o, URIRef) else None
                if oc is None or oc[0] != "value":
                    return False
                add((owner, "ref", f"wdv:{oc[1]}", "value" if pkind == "psv" else prop))
                return True
            if pkind == "pq" and prop in _TIME_QUALIFIERS:
                add((owner, "qual", prop, term_key(o)))
                return True
            return False
        if kind == "value":
            name = _wikibase_name(p)
            if name in _NODE_FIELDS:
                add((f"wdv:{local}", "node", name, _node_value(name, o)))
                return True
        return False

    def _truthy(self, subject: str, relation: str, term: str) -> None:
        self.parts.add((subject, "entity", "", ""))
        owner = derived_fact_id(SOURCE, subject, relation, term)
        self.parts.add((owner, "truthy", f"{subject}\t{relation}", term))

    def rows(self) -> RdfRows:
        return RdfRows(parts=sorted(self.parts))


# -- pieces -> rows (runs in the writing process, inside the chunk's transaction) -------------


@dataclass
class RdfRows(Rows):
    """A batch whose rows are assembled from staged pieces when the store writes it."""

    parts: list[tuple[str, str, str, str]] = field(default_factory=list)

    def write_staged(self, store, conn) -> None:
        if self.parts:
            assemble(store, conn, self.parts)


def assemble(store, conn, parts: list[tuple[str, str, str, str]]) -> None:
    """Stage pieces, then re-assemble and upsert every record they touch."""
    store.stage_parts(conn, parts)
    entities, statements, truthy, nodes = set(), set(), set(), set()
    for owner, part, _key, _value in parts:
        if part in _STATEMENT_PARTS:
            statements.add(owner)
        elif part in _ENTITY_PARTS:
            entities.add(owner)
        elif part == "truthy":
            truthy.add(owner)
        elif part == "node":
            nodes.add(owner)
    for node in sorted(nodes):
        statements.update(store.staged_owners(conn, "ref", node))
    if statements:
        _assemble_statements(store, conn, statements)
    if truthy:
        _assemble_truthy(store, conn, truthy)
    if entities:
        _assemble_entities(store, conn, entities)


def _decode(term: str):
    return orjson.loads(term) if term.startswith("[") else term


def _value(term: str, node: dict[str, str] | None) -> tuple[str | None, str, str | None, str | None]:
    """(object id, value type, literal, extra JSON) of a term, with its value node's details."""
    if term == SOMEVALUE:
        return None, "somevalue", None, None
    if term == NOVALUE:
        return None, "novalue", None, None
    v = _decode(term)
    if isinstance(v, str):
        return v, entity_kind(v), None, None
    node = node or {}
    kind = v[0]
    if kind == "time":
        precision = int(node.get("timePrecision", PRECISION_DAY))
        calendar = node.get("timeCalendarModel", "")
        extra = {"precision": precision, "calendar": calendar}
        return None, "time", wikidata_time(v[1], precision, calendar), _dumps(extra).decode()
    if kind == "quantity":
        if not node:
            return None, "quantity", v[1], None
        unit = node.get("quantityUnit", _UNIT_ONE)
        extra = {"unit": "1" if unit == _UNIT_ONE else unit}
        for bound in ("lowerBound", "upperBound"):
            if "quantity" + bound[0].upper() + bound[1:] in node:
                extra[bound] = node["quantity" + bound[0].upper() + bound[1:]]
        return None, "quantity", v[1], _dumps(extra).decode()
    if kind == "monolingualtext":
        return None, "monolingualtext", v[1], _dumps({"language": v[2]}).decode()
    if kind == "globecoordinate":
        lat, lon = v[1], v[2]
        precision = float(node["geoPrecision"]) if "geoPrecision" in node else None
        extra = {"latitude": lat, "longitude": lon, "precision": precision,
                 "globe": node.get("geoGlobe", v[3])}
        return None, "globecoordinate", f"{lat},{lon}", _dumps(extra).decode()
    return None, "string", v[1], None


def _qualifier_time(terms: list[str], refs: list[str], nodes: dict[str, dict[str, str]],
                    bound: str) -> TimeValue | None:
    times = [v[1] for v in map(_decode, terms) if isinstance(v, list) and v[0] == "time"]
    if not times:
        return None
    candidates = []
    for rdf_time in times:
        node = next((nodes[r] for r in refs if nodes.get(r, {}).get("timeValue") == rdf_time), None)
        if node is None and len(refs) == 1 and len(times) == 1:
            node = nodes.get(refs[0])
        node = node or {}
        precision = int(node.get("timePrecision", PRECISION_DAY))
        tv = TimeValue(wikidata_time(rdf_time, precision, node.get("timeCalendarModel", "")), precision)
        candidates.append(((tv.sort_key(bound) or 0), tv.time, tv))
    candidates.sort(key=lambda c: (c[0], c[1]))
    return (candidates[-1] if bound == "end" else candidates[0])[2]


def _statement(owner: str, parts: list[tuple[str, str, str]], nodes: dict[str, dict[str, str]]):
    links, values, novalues, ranks = [], [], [], []
    quals: dict[str, list[str]] = {}
    refs: dict[str, list[str]] = {}
    for part, key, value in parts:
        if part == "link":
            links.append((key, value))
        elif part == "value":
            values.append((key, value))
        elif part == "novalue":
            novalues.append(key)
        elif part == "rank":
            ranks.append(int(value))
        elif part == "qual":
            quals.setdefault(key, []).append(value)
        elif part == "ref":
            refs.setdefault(value, []).append(key)
    if values:
        relation, term = min(values)
    elif novalues:
        relation, term = min(novalues), NOVALUE
    else:
        return None  # no value yet: no fact until it arrives
    m = _STATEMENT_SUBJECT.match(owner)
    subject = m.group(1).upper() if m else None
    if subject is None and links:
        subject = min(links)[1]
    if subject is None:
        return None
    rank = min(ranks) if ranks else NORMAL
    main_refs = sorted(refs.get("value", ()))
    obj, vtype, value, extra = _value(term, nodes.get(main_refs[0]) if main_refs else None)
    times = {
        q: _qualifier_time(quals.get(q, []), sorted(refs.get(q, ())), nodes, bound)
        for q, bound in ((START_TIME, "start"), (END_TIME, "end"), (POINT_IN_TIME, "start"))
    }
    row = fact_row(owner, subject, relation, obj, vtype, value, extra, rank,
                   times[START_TIME], times[END_TIME], times[POINT_IN_TIME], SOURCE)
    return row, subject, relation, term, obj, rank


def _assemble_statements(store, conn, owners: set[str]) -> None:
    staged = store.staged_parts(conn, owners)
    node_ids = {key for parts in staged.values() for part, key, _ in parts if part == "ref"}
    nodes: dict[str, dict[str, str]] = {}
    for node, fields in store.staged_parts(conn, node_ids).items():
        for part, name, value in fields:
            if part == "node":
                nodes.setdefault(node, {}).setdefault(name, value)
    facts, types, drops, spo, replaced = [], [], [], [], []
    for owner in sorted(staged):
        built = _statement(owner, staged[owner], nodes)
        if built is None:
            continue
        row, subject, relation, term, obj, rank = built
        facts.append(row)
        spo.append((owner, "spo", f"{subject}\t{relation}", term))
        replaced.append(derived_fact_id(SOURCE, subject, relation, term))
        if relation in _TYPE_RELATIONS and obj is not None:
            (types if rank > DEPRECATED else drops).append((subject, obj, relation))
    store.write(Rows(facts=facts, types=types), conn)
    store.unstage_parts(conn, [piece[0] for piece in spo], "spo")
    store.stage_parts(conn, spo)
    store.delete_facts(conn, replaced)
    store.drop_unsupported_types(conn, drops)


def _assemble_truthy(store, conn, owners: set[str]) -> None:
    staged = store.staged_parts(conn, owners)
    facts, types, drops, suppressed = [], [], [], []
    for owner in sorted(staged):
        for part, key, term in staged[owner]:
            if part != "truthy":
                continue
            subject, relation = key.split("\t")
            obj, vtype, value, extra = _value(term, None)
            full = store.staged_owners(conn, "spo", key, term) or (
                obj is not None and store.has_statement(conn, subject, relation, obj))
            if full:
                suppressed.append(owner)
                if relation in _TYPE_RELATIONS and obj is not None:
                    drops.append((subject, obj, relation))
                continue
            facts.append(fact_row(owner, subject, relation, obj, vtype, value, extra, NORMAL,
                                  source=SOURCE))
            if relation in _TYPE_RELATIONS and obj is not None:
                types.append((subject, obj, relation))
    store.delete_facts(conn, suppressed)
    store.write(Rows(facts=facts, types=types), conn)
    store.drop_unsupported_types(conn, drops)


def _assemble_entities(store, conn, owners: set[str]) -> None:
    languages = store.languages
    staged = store.staged_parts(conn, owners)
    entities, names = [], []
    for eid in sorted(staged):
        labels: dict[str, list[str]] = {}
        aliases: dict[str, list[str]] = {}
        descriptions: dict[str, list[str]] = {}
        sitelinks: int | None = None
        datatype: str | None = None
        for part, key, value in staged[eid]:
            if part == "label":
                labels.setdefault(key, []).append(value)
            elif part == "alias":
                aliases.setdefault(key, []).append(value)
            elif part == "description":
                descriptions.setdefault(key, []).append(value)
            elif part == "sitelinks":
                sitelinks = max(sitelinks or 0, int(value))
            elif part == "datatype" and datatype is None:
                datatype = value
        order = [lang.lower() for lang in (*languages, "mul")]  # pieces carry lower-case tags
        label = next((min(labels[lang]) for lang in order if labels.get(lang)), None)
        description = next((min(descriptions[lang]) for lang in order if descriptions.get(lang)), None)
        entities.append((eid, entity_kind(eid), label, description, sitelinks, datatype))
        for lang in languages:
            own = set(labels.get(lang.lower(), ()))
            names.extend((eid, lang, text, 0) for text in sorted(own))
            names.extend((eid, lang, text, 1)
                         for text in sorted(set(aliases.get(lang.lower(), ())) - own))
    store.merge_entities(conn, entities)
    store.write(Rows(names=names), conn)


# -- reading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurtleChunk(Chunk):
    """A chunk of Turtle blocks plus the directives (`@prefix`...) declared before it."""

    header: bytes = b""


_BLANK_LINE = re.compile(rb"\n[ \t\r]*\n")
_DIRECTIVE = re.compile(
    rb"^[ \t]*(?:(?:@prefix|prefix)[ \t]+([^ \t:]*:)|(@base|base)[ \t])[^\n]*", re.M | re.I)


def _collect_directives(directives: dict[bytes, bytes], data: bytes) -> None:
    if b"prefix" not in data.lower() and b"base" not in data.lower():
        return
    for m in _DIRECTIVE.finditer(data):
        directives[m.group(1) or b"@base"] = m.group(0).rstrip(b"\r") + b"\n"


def _last_blank_line(buf: bytes) -> int:
    """Offset just after the last blank line of buf, or 0 if it has none."""
    size = 1 << 16
    while True:
        start = max(0, len(buf) - size)
        last = None
        for last in _BLANK_LINE.finditer(buf, start):
            pass
        if last is not None:
            return last.end()
        if start == 0:
            return 0
        size <<= 2


def turtle_chunks(path: str | Path, *, start_line: int = 0, start_position: int = 0,
                  chunk_bytes: int = CHUNK_BYTES) -> Iterator[TurtleChunk]:
    """Chunks of whole blank-line-separated Turtle blocks, each with the directives declared
    before it. A resumed read re-reads the skipped part for its directives."""
    directives: dict[bytes, bytes] = {}
    pending = b""
    first, position, progress = start_line + 1, start_position, 0
    for lc in line_chunks(path, chunk_bytes=chunk_bytes):
        data, progress = lc.data, lc.progress
        begin = lc.position - len(data)
        if begin < start_position:
            skip = min(len(data), start_position - begin)
            _collect_directives(directives, data[:skip])
            data = data[skip:]
            if not data:
                continue
        pending += data
        cut = _last_blank_line(pending)
        if cut:
            piece, pending = pending[:cut], pending[cut:]
            n = piece.count(b"\n")
            yield TurtleChunk(first, n, piece, position + cut, progress,
                              header=b"".join(directives.values()))
            _collect_directives(directives, piece)
            first, position = first + n, position + cut
    if position < start_position:
        raise InputError(f"{path}: shorter than the recorded resume position; use --restart")
    if pending.strip():
        n = pending.count(b"\n") + (0 if pending.endswith(b"\n") else 1)
        yield TurtleChunk(first, n, pending, position + len(pending), progress,
                          header=b"".join(directives.values()))


# -- the source -------------------------------------------------------------------------------


class _StableBNodes(dict):
    """N-Triples blank node labels kept as they are, so `_:b1` names one node in every chunk."""

    def get(self, key, default=None):
        return key


@contextlib.contextmanager
def _quiet_rdflib() -> Iterator[None]:
    """rdflib logs a warning with a traceback for every literal it cannot convert to a Python
    value (BCE dates, year 0); we read lexical forms, so those are noise."""
    logger = logging.getLogger("rdflib.term")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _one_line(exc: BaseException, limit: int = 120) -> str:
    text = str(exc)
    m = re.search(r"Bad syntax \(([^)]*)\)", text)
    if m:
        text = m.group(1)
    elif text.startswith("Failed to eat"):  # rdflib's N-Triples parser names its regex
        text = "cannot parse at " + repr(text.split(" at ", 1)[-1][:40])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


_FORMATS = {"nt": "nt", "ntriples": "nt", "n-triples": "nt", "ttl": "ttl", "turtle": "ttl"}


@dataclass(frozen=True)
class RdfSource:
    languages: tuple[str, ...] = ("en",)
    format: str | None = None  # "nt" | "ttl"; None: from the file extension
    chunk_bytes: int = CHUNK_BYTES
    name: str = SOURCE

    def syntax(self, path: str | Path) -> str:
        if self.format:
            try:
                return _FORMATS[self.format.lower()]
            except KeyError:
                raise InputError(f"unknown RDF format {self.format!r} (use nt or ttl)") from None
        name = Path(path).name.lower()
        for suffix in (".gz", ".bz2", ".xz"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        ext = name.rsplit(".", 1)[-1] if "." in name else ""
        if ext in _FORMATS:
            return _FORMATS[ext]
        raise InputError(f"{path}: cannot tell the RDF syntax from the file name; use --format nt|ttl")

    def chunks(self, path: Path, start: int, position: int) -> Iterator[Chunk]:
        if self.syntax(path) == "ttl":
            return turtle_chunks(path, start_line=start, start_position=position,
                                 chunk_bytes=self.chunk_bytes)
        return line_chunks(path, start_line=start, start_position=position,
                           chunk_bytes=self.chunk_bytes)

    def parse(self, chunk: Chunk) -> ParseResult:
        collector = _Collector(self.languages)
        rejects: list[tuple[int, str, str]] = []
        with _quiet_rdflib():
            if isinstance(chunk, TurtleChunk):
                self._parse_turtle(chunk, collector, rejects)
            else:
                self._parse_ntriples(chunk, collector, rejects)
        return ParseResult(collector.rows(), collector.used, rejects)

    @staticmethod
    def _parse_ntriples(chunk: Chunk, collector: _Collector, rejects: list) -> None:
        parser = W3CNTriplesParser(sink=collector)
        bnodes = _StableBNodes()
        for line_no, raw in split_lines(chunk):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                rejects.append((line_no, "invalid UTF-8", excerpt(raw)))
                continue
            parser.line = text
            try:
                parser.parseline(bnode_context=bnodes)
            except ParserError as exc:
                rejects.append((line_no, f"malformed N-Triples: {_one_line(exc)}", excerpt(raw)))
            except (ValueError, TypeError) as exc:
                rejects.append((line_no, f"bad value: {_one_line(exc)}", excerpt(raw)))

    @staticmethod
    def _parse_turtle(chunk: TurtleChunk, collector: _Collector, rejects: list) -> None:
        try:
            graph = Graph().parse(data=(chunk.header + chunk.data).decode("utf-8"), format="turtle")
        except Exception:  # noqa: BLE001 - any failure: find the bad blocks one by one
            graph = None
        if graph is not None:
            try:
                for s, p, o in graph:
                    collector.triple(s, p, o)
                return
            except (ValueError, TypeError):
                collector.parts.clear()
                collector.used = 0
        header = chunk.header
        for first, block in _blocks(chunk):
            data = b"\n".join(block) + b"\n"
            try:
                sub = _Collector(collector.names)
                for s, p, o in Graph().parse(data=(header + data).decode("utf-8"), format="turtle"):
                    sub.triple(s, p, o)
            except UnicodeDecodeError:
                rejects.append((first, "invalid UTF-8", excerpt(block[0])))
            except (ValueError, TypeError) as exc:
                rejects.append((first, f"bad value: {_one_line(exc)}", excerpt(block[0])))
            except Exception as exc:  # noqa: BLE001 - rdflib raises several syntax error types
                rejects.append((first, f"malformed Turtle: {_one_line(exc)}", excerpt(block[0])))
            else:
                collector.parts |= sub.parts
                collector.used += sub.used
            directives: dict[bytes, bytes] = {}
            _collect_directives(directives, data)
            header += b"".join(directives.values())


def _blocks(chunk: Chunk) -> Iterator[tuple[int, list[bytes]]]:
    """(first line number, lines) of each blank-line-separated block of a chunk."""
    block: list[bytes] = []
    first = chunk.first
    for line_no, raw in split_lines(chunk):
        if not raw.strip():
            if block:
                yield first, block
                block = []
            continue
        if not block:
            first = line_no
        block.append(raw)
    if block:
        yield first, block

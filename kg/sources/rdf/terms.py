"""Terms of Wikidata's RDF: which Wikibase IRI is an entity, a statement, a property path or a
value node, and how RDF literals become Wikidata's values (times with Wikidata's precision and
BCE numbering, amounts, coordinates). Pure functions and constants; no I/O.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from urllib.parse import unquote

import orjson
from rdflib import BNode, Literal, URIRef

from ...model import PRECISION_MONTH, PRECISION_YEAR


SOURCE = "rdf"

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
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
ENTITY_ID = re.compile(r"^(?:[QPL][1-9][0-9]*|L[1-9][0-9]*-[FS][1-9][0-9]*)$")
PROPERTY_ID = re.compile(r"^P[1-9][0-9]*$")
# A statement's local name is its GUID with `-` for `$`: `Q42-F9192141-ED87-...` is Q42's
# statement F9192141-ED87-..., not one of a form `Q42-F9192141` (only lexemes have forms and
# senses, `L1-F2-<uuid>`). The UUID at the end tells where the entity ends; a GUID not ending
# in one is read by the entity id's own shape.
_GUID_UUID = re.compile(r"^(.+?)-([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$")
_STATEMENT_ENTITY = re.compile(r"^(?:[QPqp][1-9][0-9]*|[Ll][1-9][0-9]*(?:-[FS][1-9][0-9]*)?)$")
_STATEMENT_ID = re.compile(r"^([QPqp][1-9][0-9]*|[Ll][1-9][0-9]*(?:-[FS][1-9][0-9]*)?)-(.+)$")
_STATEMENT_SUBJECT = re.compile(r"^([QPqp][1-9][0-9]*|[Ll][1-9][0-9]*(?:-[FS][1-9][0-9]*)?)\$")
_RDF_TIME = re.compile(r"^\s*([+-]?)(\d{1,16})-(\d{2})-(\d{2})")
_WKT_POINT = re.compile(
    r"^\s*(?:<([^>]*)>\s*)?Point\s*\(\s*([-+0-9.eE]+)\s+([-+0-9.eE]+)\s*\)\s*$", re.I)

SOMEVALUE, NOVALUE = "~somevalue", "~novalue"

_dumps = orjson.dumps


# -- terms ------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _scheme(prefix: str | None) -> tuple[re.Pattern, dict[str, str]]:
    """The pattern of a Wikibase's IRIs and the kind of each namespace it matches. None: any
    host's `/entity/`, `/prop/...` and `/value/` (Wikidata, and every Wikibase whose concept
    URI is `<server>/entity/`). A concept URI (`wd:`) names one Wikibase's as Wikibase writes
    them: statements under `<concept>statement/`, properties and values under the concept URI
    less a final `entity/` (`.../id/` gives `.../id/prop/direct/P31`, `.../id/value/...`)."""
    if prefix is None:
        return _WB_IRI, _NAMESPACES
    top = prefix[:-len("entity/")] if prefix.endswith("entity/") else prefix
    kinds = {prefix + "statement/": "statement", prefix: "entity"}
    for path, kind in _NAMESPACES.items():
        if not path.startswith("entity/"):
            kinds[top + path] = kind
    alternatives = "|".join(re.escape(ns) for ns in sorted(kinds, key=len, reverse=True))
    return re.compile(f"^({alternatives})([^/#?]+)$"), kinds


@lru_cache(maxsize=65536)
def classify(iri: str, prefix: str | None = None) -> tuple[str, str] | None:
    """(namespace kind, local name) of a Wikibase IRI, or None; `prefix`: the Wikibase's
    concept URI (None: Wikidata's layout on any host, see _scheme)."""
    pattern, kinds = _scheme(prefix)
    m = pattern.match(iri)
    if not m:
        return None
    return kinds[m.group(1)], m.group(2)


def wikibase_name(iri: str) -> str | None:
    for ns in _WIKIBASE:
        if iri.startswith(ns):
            return iri[len(ns):]
    return None


def entity_of(iri: str, prefix: str | None = None) -> str | None:
    c = classify(iri, prefix)
    if c and c[0] == "entity" and ENTITY_ID.match(c[1]):
        return c[1]
    return None


def statement_subject(statement: str) -> str | None:
    """The subject of a statement id as Wikidata writes it (`Q42$ABC` -> `Q42`), or None."""
    m = _STATEMENT_SUBJECT.match(statement)
    return m.group(1).upper() if m else None


def entity_kind(entity_id: str) -> str:
    if "-F" in entity_id:
        return "form"
    if "-S" in entity_id:
        return "sense"
    return {"Q": "item", "P": "property", "L": "lexeme"}.get(entity_id[:1], "item")


def statement_id(local: str) -> tuple[str, str | None]:
    """Wikidata's id of a `wds:` statement (`Q42-ABC` -> `Q42$ABC`) and its subject."""
    m = _GUID_UUID.match(local)
    if not (m and _STATEMENT_ENTITY.match(m.group(1))):
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


def _last_segment(iri: str) -> str:
    """What Wikidata's JSON keeps of a calendar, unit or globe IRI: its last segment (`Q1985727`).
    Not read by the entity prefix: every Wikibase writes calendars and the unit 1 as Wikidata's
    IRIs (`http://www.wikidata.org/entity/Q199`), beside its own units and globes."""
    return iri.rsplit("/", 1)[-1]


def term_key(o, prefix: str | None = None) -> str:
    """A compact, source-independent encoding of an RDF object: an entity id, `~somevalue`,
    or a JSON array [kind, value, ...] of a normalized literal. `prefix`: as for classify."""
    if isinstance(o, URIRef):
        iri = str(o)
        eid = entity_of(iri, prefix)
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
            globe = _last_segment(m.group(1)) if m.group(1) else None
            lon, lat = float(m.group(2)), float(m.group(3))
            return _dumps(["globecoordinate", lat, lon, globe or "Q2"]).decode()
        return _dumps(["string", lexical]).decode()
    raise ValueError(f"unsupported RDF term {o!r}")


def node_value(name: str, o) -> str:
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
        return _last_segment(str(o))
    return str(o)

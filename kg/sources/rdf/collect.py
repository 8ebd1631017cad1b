"""Triples to pieces: `TripleCollector` turns every parsed triple into a small staged piece
`(owner, part, key, value)` (also as an rdflib sink). Parsing workers never build facts: a
statement's triples may be chunks apart (see assemble.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rdflib import Literal, URIRef

from ...model import END_TIME, POINT_IN_TIME, RANKS, START_TIME, derived_fact_id
from .assemble import RdfRows
from .terms import (ENTITY_ID, NOVALUE, PROPERTY_ID, RDF_TYPE, SOURCE, classify, entity_of, node_value, statement_id,
                    term_key, wikibase_name)

_LABELS = frozenset({
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name",
})
_ALIAS = "http://www.w3.org/2004/02/skos/core#altLabel"
_DESCRIPTION = "http://schema.org/description"
_ABOUT = "http://schema.org/about"
_DATE_MODIFIED = "http://schema.org/dateModified"
# Wikibase's data node of an entity (`data:Q42`, on any wiki): it carries the sitelink count
# (`wikibase:sitelinks`) and the revision's date, not the entity.
_DATA_NODE = re.compile(r"/Special:EntityData/[^/#?]+$")
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T")
_RANK_IRIS = {"PreferredRank": RANKS["preferred"], "NormalRank": RANKS["normal"],
              "DeprecatedRank": RANKS["deprecated"]}
_TIME_QUALIFIERS = (START_TIME, END_TIME, POINT_IN_TIME)
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


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _surrogate(text: str) -> str:
    return next(f"U+{ord(c):04X}" for c in text if 0xD800 <= ord(c) <= 0xDFFF)


# -- triples -> pieces ------------------------------------------------------------------------


class TripleCollector:
    """Turns triples into staged pieces (owner, part, key, value); also an rdflib sink.
    `prefix`: the Wikibase's concept URI (terms.classify; None: Wikidata's layout on any host);
    `skip_datatypes`: properties of these datatypes give no facts (the JSON reader's default
    skips external ids), once the property's `wikibase:propertyType` is read."""

    def __init__(self, languages: Iterable[str], prefix: str | None = None,
                 skip_datatypes: Iterable[str] = ()):
        self.names = frozenset(lang.lower() for lang in languages)
        # Wikidata's "mul" names hold in every language that has none of its own (assemble.py)
        self.label_langs = self.names | {"mul"}
        self.prefix = prefix
        self.skip_datatypes = sorted(skip_datatypes)
        self.parts: set[tuple[str, str, str, str]] = set()
        self.used = 0
        # Data nodes read with their schema:about, and their revisions' dates: the latest is the
        # graph's date (as_of), as the JSON reader takes it from its records' `modified`
        self.abouts: set[str] = set()
        self.dates: dict[str, str] = {}

    def triple(self, s, p, o) -> None:
        """Take one triple in. ValueError: a term holds what UTF-8 cannot (a lone surrogate,
        as N-Triples' and JSON's \\uD800 escapes write one): the store could not write it, so
        the triple is the parser's to reject, before anything of it is kept."""
        for role, term in (("subject", s), ("predicate", p), ("object", o),
                           ("object's datatype", getattr(o, "datatype", None) or "")):
            if not term.isascii() and not _utf8(term):
                raise ValueError(f"the {role} holds a lone surrogate ({_surrogate(term)}), which UTF-8 cannot hold")
        if isinstance(s, URIRef):
            iri = str(s)
            c = classify(iri, self.prefix)
            if self._triple(c, str(p), o) if c is not None else self._page(iri, str(p), o):
                self.used += 1

    def _page(self, iri: str, p: str, o) -> bool:
        """Triples about a page of an entity: its data node (`data:Q42 schema:about wd:Q42;
        wikibase:sitelinks 129; schema:dateModified ...`) and its sitelinks' articles
        (`<https://en.wikipedia.org/wiki/Douglas_Adams> schema:about wd:Q42`), which count its
        sitelinks as the JSON reader counts them. A data node is known as an entity's by its
        schema:about (its own IRI is the wiki's, not the entities'): its count is staged under
        the node and assemble.py hands it to the entity once both are read."""
        if _DATA_NODE.search(iri):
            if p == _ABOUT and isinstance(o, URIRef) and (eid := entity_of(str(o), self.prefix)):
                self.parts.add((iri, "about", "", eid))
                self.abouts.add(iri)
                return True
            if wikibase_name(p) == "sitelinks":
                self.parts.add((iri, "page", "sitelinks", str(int(str(o)))))
            elif p == _DATE_MODIFIED and _DATE.match(str(o)):
                self.dates[iri] = max(self.dates.get(iri, ""), str(o)[:10])
            return False  # used once its schema:about is
        if p == _ABOUT and isinstance(o, URIRef) and (eid := entity_of(str(o), self.prefix)):
            self.parts.add((eid, "article", "", iri))
            return True
        return False

    def merge(self, other: TripleCollector) -> None:
        """Take in what another collector of the same options read (a chunk read block by block)."""
        self.parts |= other.parts
        self.used += other.used
        self.abouts |= other.abouts
        for iri, date in other.dates.items():
            self.dates[iri] = max(self.dates.get(iri, ""), date)

    def clear(self) -> None:
        self.parts.clear()
        self.used = 0
        self.abouts.clear()
        self.dates.clear()

    def _triple(self, subject: tuple[str, str], p: str, o) -> bool:
        kind, local = subject
        add = self.parts.add
        if kind == "entity":
            if not ENTITY_ID.match(local):
                return False
            x = local
            if p in _LABELS or p == _DESCRIPTION or p == _ALIAS:
                if not isinstance(o, Literal) or not o.language:
                    return False
                lang = o.language.lower()
                if p == _ALIAS:
                    if lang not in self.label_langs:
                        return False
                    add((x, "alias", lang, str(o)))
                elif lang in self.label_langs:
                    add((x, "label" if p in _LABELS else "description", lang, str(o)))
                else:
                    return False
                return True
            if p == RDF_TYPE:
                oc = classify(str(o), self.prefix) if isinstance(o, URIRef) else None
                if oc is not None and oc[0] == "wdno" and PROPERTY_ID.match(oc[1]):
                    self._truthy(x, oc[1], NOVALUE)
                    return True
                if isinstance(o, URIRef) and wikibase_name(str(o)) in ("Item", "Property", "Lexeme"):
                    add((x, "entity", "", ""))
                    return True
                return False
            name = wikibase_name(p)
            if name == "sitelinks":
                add((x, "sitelinks", "", str(int(str(o)))))
                return True
            if name == "propertyType" and isinstance(o, URIRef):
                local_type = wikibase_name(str(o)) or str(o).rsplit("/", 1)[-1]
                add((x, "datatype", "", _DATATYPES.get(local_type, local_type.lower())))
                return True
            pc = classify(p, self.prefix)
            if pc is None or not PROPERTY_ID.match(pc[1]):
                return False
            if pc[0] == "wdt":
                self._truthy(x, pc[1], term_key(o, self.prefix))
                return True
            if pc[0] == "p" and isinstance(o, URIRef):
                oc = classify(str(o), self.prefix)
                owner = statement_id(oc[1])[0] if oc and oc[0] == "statement" else f"<{o}>"
                add((x, "entity", "", ""))
                add((owner, "link", pc[1], x))
                return True
            return False
        if kind == "statement":
            owner = statement_id(local)[0]
            name = wikibase_name(p)
            if name == "rank":
                rank = _RANK_IRIS.get(wikibase_name(str(o)) or "")
                if rank is None:
                    raise ValueError(f"unknown rank {o}")
                add((owner, "rank", "", str(rank)))
                return True
            if p == RDF_TYPE:
                oc = classify(str(o), self.prefix) if isinstance(o, URIRef) else None
                if oc is not None and oc[0] == "wdno" and PROPERTY_ID.match(oc[1]):
                    add((owner, "novalue", oc[1], ""))
                    return True
                return False
            pc = classify(p, self.prefix)
            if pc is None or not PROPERTY_ID.match(pc[1]):
                return False
            pkind, prop = pc
            if pkind == "ps":
                add((owner, "value", prop, term_key(o, self.prefix)))
                return True
            if pkind in ("psv", "pqv"):
                if pkind == "pqv" and prop not in _TIME_QUALIFIERS:
                    return False
                oc = classify(str(o), self.prefix) if isinstance(o, URIRef) else None
                if oc is None or oc[0] != "value":
                    return False
                add((owner, "ref", f"wdv:{oc[1]}", "value" if pkind == "psv" else prop))
                return True
            if pkind == "pq" and prop in _TIME_QUALIFIERS:
                add((owner, "qual", prop, term_key(o, self.prefix)))
                return True
            return False
        if kind == "value":
            name = wikibase_name(p)
            if name in _NODE_FIELDS:
                add((f"wdv:{local}", "node", name, node_value(name, o)))
                return True
        return False

    def _truthy(self, subject: str, relation: str, term: str) -> None:
        self.parts.add((subject, "entity", "", ""))
        owner = derived_fact_id(SOURCE, subject, relation, term)
        self.parts.add((owner, "truthy", f"{subject}\t{relation}", term))

    def rows(self) -> RdfRows:
        latest = max((date for iri, date in self.dates.items() if iri in self.abouts), default="")
        return RdfRows(parts=sorted(self.parts), meta=[("as_of", latest)] if latest else [],
                       skip_datatypes=list(self.skip_datatypes))

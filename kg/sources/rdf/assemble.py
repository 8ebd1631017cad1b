"""Pieces to rows, in the writing process inside the chunk's transaction: a chunk's pieces are
staged (staging.py) and every record they touch is re-assembled from all its pieces staged so
far and upserted, so the store does not depend on chunking, order or resume.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from ...model import (
    DEPRECATED,
    END_TIME,
    INSTANCE_OF,
    NORMAL,
    POINT_IN_TIME,
    PRECISION_DAY,
    START_TIME,
    SUBCLASS_OF,
    Rows,
    TimeValue,
    derived_fact_id,
    fact_row,
)
from . import staging
from .terms import NOVALUE, SOMEVALUE, SOURCE, entity_kind, statement_subject, wikidata_time

_ENTITY_PARTS = frozenset({"entity", "label", "alias", "description", "sitelinks", "datatype"})
_STATEMENT_PARTS = frozenset({"link", "value", "novalue", "rank", "qual", "ref"})
_TYPE_RELATIONS = (INSTANCE_OF, SUBCLASS_OF)
_UNIT_ONE = "Q199"  # Wikidata's RDF writes the unit "1" (dimensionless) as wd:Q199


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
    staging.stage_parts(conn, parts)
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
        statements.update(staging.staged_owners(conn, "ref", node))
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
        return None, "time", wikidata_time(v[1], precision, calendar), orjson.dumps(extra).decode()
    if kind == "quantity":
        if not node:
            return None, "quantity", v[1], None
        unit = node.get("quantityUnit", _UNIT_ONE)
        extra = {"unit": "1" if unit == _UNIT_ONE else unit}
        for bound in ("lowerBound", "upperBound"):
            if "quantity" + bound[0].upper() + bound[1:] in node:
                extra[bound] = node["quantity" + bound[0].upper() + bound[1:]]
        return None, "quantity", v[1], orjson.dumps(extra).decode()
    if kind == "monolingualtext":
        return None, "monolingualtext", v[1], orjson.dumps({"language": v[2]}).decode()
    if kind == "globecoordinate":
        lat, lon = v[1], v[2]
        precision = float(node["geoPrecision"]) if "geoPrecision" in node else None
        extra = {"latitude": lat, "longitude": lon, "precision": precision,
                 "globe": node.get("geoGlobe", v[3])}
        return None, "globecoordinate", f"{lat},{lon}", orjson.dumps(extra).decode()
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
    subject = statement_subject(owner)
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
    staged = staging.staged_parts(conn, owners)
    node_ids = {key for parts in staged.values() for part, key, _ in parts if part == "ref"}
    nodes: dict[str, dict[str, str]] = {}
    for node, fields in staging.staged_parts(conn, node_ids).items():
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
    staging.unstage_parts(conn, [piece[0] for piece in spo], "spo")
    staging.stage_parts(conn, spo)
    store.delete_facts(conn, replaced)
    store.drop_unsupported_types(conn, drops)


def _assemble_truthy(store, conn, owners: set[str]) -> None:
    staged = staging.staged_parts(conn, owners)
    facts, types, drops, suppressed = [], [], [], []
    for owner in sorted(staged):
        for part, key, term in staged[owner]:
            if part != "truthy":
                continue
            subject, relation = key.split("\t")
            obj, vtype, value, extra = _value(term, None)
            full = staging.staged_owners(conn, "spo", key, term) or (
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
    staged = staging.staged_parts(conn, owners)
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

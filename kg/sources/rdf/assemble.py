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

_ENTITY_PARTS = frozenset({"entity", "label", "alias", "description", "sitelinks", "article", "datatype"})
_STATEMENT_PARTS = frozenset({"link", "value", "novalue", "rank", "qual", "ref"})
_PAGE_PARTS = frozenset({"about", "page"})  # of a data node (`data:Q42`, collect.py)
_TYPE_RELATIONS = (INSTANCE_OF, SUBCLASS_OF)
_UNIT_ONE = "Q199"  # Wikidata's RDF writes the unit "1" (dimensionless) as wd:Q199


# -- pieces -> rows (runs in the writing process, inside the chunk's transaction) -------------


@dataclass
class RdfRows(Rows):
    """A batch whose rows are assembled from staged pieces when the store writes it."""

    parts: list[tuple[str, str, str, str]] = field(default_factory=list)
    # Datatypes whose properties give no facts (the source's option; a list, as Rows' fields are)
    skip_datatypes: list[str] = field(default_factory=list)

    def write_staged(self, store, conn) -> None:
        if self.parts:
            assemble(store, conn, self.parts, frozenset(self.skip_datatypes))


def assemble(store, conn, parts: list[tuple[str, str, str, str]],
             skip_datatypes: frozenset[str] = frozenset()) -> None:
    """Stage pieces, then re-assemble and upsert every record they touch. A property of a
    datatype in `skip_datatypes` gives no facts: those assembled before its datatype was read
    are deleted when it is."""
    staging.stage_parts(conn, parts)
    entities, statements, truthy, nodes, pages = set(), set(), set(), set(), set()
    for owner, part, _key, _value in parts:
        if part in _STATEMENT_PARTS:
            statements.add(owner)
        elif part in _ENTITY_PARTS:
            entities.add(owner)
        elif part == "truthy":
            truthy.add(owner)
        elif part == "node":
            nodes.add(owner)
        elif part in _PAGE_PARTS:
            pages.add(owner)
    if pages:
        entities |= _hand_over_pages(conn, pages)
    for node in sorted(nodes):
        statements.update(staging.staged_owners(conn, "ref", node))
    if statements:
        _assemble_statements(store, conn, statements, skip_datatypes)
    if truthy:
        _assemble_truthy(store, conn, truthy, skip_datatypes)
    if entities:
        _assemble_entities(store, conn, entities, skip_datatypes)


def _hand_over_pages(conn, pages: set[str]) -> set[str]:
    """Stage each data node's counts (`wikibase:sitelinks`) on the entity its schema:about
    names, whichever of them was read first; returns those entities."""
    handed, entities = [], set()
    for pieces in staging.staged_parts(conn, pages).values():
        for eid in (value for part, _key, value in pieces if part == "about"):
            handed += [(eid, name, "", value) for part, name, value in pieces if part == "page"]
            entities.add(eid)
    staging.stage_parts(conn, handed)
    return entities


def _skipped(conn, relations: set[str], skip_datatypes: frozenset[str]) -> set[str]:
    """The relations among these whose property's datatype (as staged so far) is skipped."""
    if not skip_datatypes or not relations:
        return set()
    return {prop for prop, pieces in staging.staged_parts(conn, relations).items()
            if any(part == "datatype" and value in skip_datatypes for part, _key, value in pieces)}


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


def _assemble_statements(store, conn, owners: set[str], skip_datatypes: frozenset[str]) -> None:
    staged = staging.staged_parts(conn, owners)
    node_ids = {key for parts in staged.values() for part, key, _ in parts if part == "ref"}
    nodes: dict[str, dict[str, str]] = {}
    for node, fields in staging.staged_parts(conn, node_ids).items():
        for part, name, value in fields:
            if part == "node":
                nodes.setdefault(node, {}).setdefault(name, value)
    built = [b for b in (_statement(owner, staged[owner], nodes) for owner in sorted(staged)) if b is not None]
    skipped = _skipped(conn, {b[2] for b in built}, skip_datatypes)
    facts, types, drops, spo, replaced = [], [], [], [], []
    for row, subject, relation, term, obj, rank in built:
        owner = row[0]
        spo.append((owner, "spo", f"{subject}\t{relation}", term))
        replaced.append(derived_fact_id(SOURCE, subject, relation, term))
        if relation in skipped:
            replaced.append(owner)
            continue
        facts.append(row)
        if relation in _TYPE_RELATIONS and obj is not None:
            (types if rank > DEPRECATED else drops).append((subject, obj, relation))
    store.write(Rows(facts=facts, types=types), conn)
    staging.unstage_parts(conn, [piece[0] for piece in spo], "spo")
    staging.stage_parts(conn, spo)
    store.delete_facts(conn, replaced)
    store.drop_unsupported_types(conn, drops)


def _assemble_truthy(store, conn, owners: set[str], skip_datatypes: frozenset[str]) -> None:
    staged = staging.staged_parts(conn, owners)
    pieces = [(owner, key, term) for owner in sorted(staged) for part, key, term in staged[owner] if part == "truthy"]
    skipped = _skipped(conn, {key.split("\t")[1] for _, key, _ in pieces}, skip_datatypes)
    facts, types, drops, suppressed = [], [], [], []
    for owner, key, term in pieces:
        subject, relation = key.split("\t")
        if relation in skipped:
            suppressed.append(owner)
            continue
        obj, vtype, value, extra = _value(term, None)
        full = staging.staged_owners(conn, "spo", key, term) or (
            obj is not None and store.has_statement(conn, subject, relation, obj))
        if full:
            suppressed.append(owner)
            if relation in _TYPE_RELATIONS and obj is not None:
                drops.append((subject, obj, relation))
            continue
        facts.append(fact_row(owner, subject, relation, obj, vtype, value, extra, NORMAL, source=SOURCE))
        if relation in _TYPE_RELATIONS and obj is not None:
            types.append((subject, obj, relation))
    store.delete_facts(conn, suppressed)
    store.write(Rows(facts=facts, types=types), conn)
    store.drop_unsupported_types(conn, drops)


def _assemble_entities(store, conn, owners: set[str], skip_datatypes: frozenset[str]) -> None:
    languages = store.languages
    staged = staging.staged_parts(conn, owners)
    entities, names = [], []
    for eid in sorted(staged):
        row, entity_names = _entity(eid, staged[eid], languages)
        entities.append(row)
        names.extend(entity_names)
    store.merge_entities(conn, entities)
    store.write(Rows(names=names), conn)
    # A property of a skipped datatype read after its statements: they go now.
    for eid, *_, datatype in entities:
        if datatype in skip_datatypes:
            store.delete_facts(conn, [r[0] for r in conn.execute(
                "SELECT id FROM facts WHERE relation=? AND source=?", (eid, SOURCE))])


def _entity(eid: str, pieces: list[tuple[str, str, str]], languages) -> tuple[tuple, list[tuple]]:
    """An entity's row and names from its pieces, as the JSON reader reads its record: the
    display label and description in the first language that has one, then `mul`; in every
    language, its own label or else the `mul` one, and its own and the `mul` aliases."""
    labels: dict[str, list[str]] = {}
    aliases: dict[str, list[str]] = {}
    descriptions: dict[str, list[str]] = {}
    declared: int | None = None
    articles = 0
    datatype: str | None = None
    for part, key, value in pieces:
        if part == "label":
            labels.setdefault(key, []).append(value)
        elif part == "alias":
            aliases.setdefault(key, []).append(value)
        elif part == "description":
            descriptions.setdefault(key, []).append(value)
        elif part == "sitelinks":
            declared = max(declared or 0, int(value))
        elif part == "article":
            articles += 1
        elif part == "datatype" and datatype is None:
            datatype = value
    # The count Wikibase declares on the data node, or the sitelinks' articles where it has none
    sitelinks = max(declared or 0, articles) if declared is not None or articles else None
    order = [lang.lower() for lang in (*languages, "mul")]  # pieces carry lower-case tags
    label = next((min(labels[lang]) for lang in order if labels.get(lang)), None)
    description = next((min(descriptions[lang]) for lang in order if descriptions.get(lang)), None)
    names = []
    for lang in languages:
        own = set(labels.get(lang.lower()) or labels.get("mul", ()))
        names.extend((eid, lang, text, 0) for text in sorted(own))
        others = {*aliases.get(lang.lower(), ()), *aliases.get("mul", ())}
        names.extend((eid, lang, text, 1) for text in sorted(others - own))
    return (eid, entity_kind(eid), label, description, sitelinks, datatype), names

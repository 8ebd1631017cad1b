"""Human-readable and JSON views of graph contents for the CLI."""

from __future__ import annotations

import json

from ..kg.graph import KnowledgeGraph
from ..kg.model import RANK_NAMES, Fact, Stats, date_key, time_key


def _label(kg: KnowledgeGraph, entity_id: str | None) -> str | None:
    if entity_id is None:
        return None
    e = kg.entity(entity_id)
    return e.label if e else None


def fact_record(kg: KnowledgeGraph, fact: Fact) -> dict:
    return {
        "id": fact.id,
        "subject": fact.subject,
        "subject_label": _label(kg, fact.subject),
        "relation": fact.relation,
        "relation_label": _label(kg, fact.relation),
        "object": fact.object,
        "object_label": _label(kg, fact.object),
        "value_type": fact.value_type,
        "value": fact.value,
        "extra": json.loads(fact.extra) if fact.extra else None,
        "rank": RANK_NAMES[fact.rank],
        "start": fact.start.time if fact.start else None,
        "start_precision": fact.start.precision if fact.start else None,
        "end": fact.end.time if fact.end else None,
        "end_precision": fact.end.precision if fact.end else None,
        "point": fact.point.time if fact.point else None,
        "point_precision": fact.point.precision if fact.point else None,
        "source": fact.source,
    }


def entity_record(kg: KnowledgeGraph, entity_id: str) -> dict | None:
    e = kg.entity(entity_id)
    if e is None:
        return None
    return {
        "id": e.id,
        "kind": e.kind,
        "label": e.label,
        "description": e.description,
        "sitelinks": e.sitelinks,
        "datatype": e.datatype,
        "names": {lang: {"label": (ls := kg.labels(e.id, lang)).label, "aliases": list(ls.aliases)}
                  for lang in kg.languages},
        "types": [{"id": t, "label": _label(kg, t)} for t in kg.types(e.id)],
        "facts": [fact_record(kg, f) for f in kg.facts(subject=e.id, include_deprecated=True)],
    }


def _short_time(text: str | None, precision: int | None) -> str:
    if not text:
        return "?"
    sign = "-" if text.startswith("-") else ""
    date = text.lstrip("+-").split("T")[0]
    if precision is not None and precision <= 9:
        return sign + date.split("-")[0]
    if precision == 10:
        return sign + "-".join(date.split("-")[:2])
    return sign + date


def _value(r: dict) -> str:
    if r["object"]:
        return f"{r['object_label'] or '?'} ({r['object']})"
    if r["value_type"] in ("somevalue", "novalue"):
        return f"<{r['value_type']}>"
    if r["value_type"] == "time":
        return _short_time(r["value"], (r["extra"] or {}).get("precision"))
    return str(r["value"])


def render_fact_line(r: dict) -> str:
    when = []
    if r["start"] or r["end"]:
        when.append(f"{_short_time(r['start'], r['start_precision']) if r['start'] else '...'}"
                    f" - {_short_time(r['end'], r['end_precision']) if r['end'] else 'now'}")
    if r["point"]:
        when.append(f"at {_short_time(r['point'], r['point_precision'])}")
    tags = [r["rank"]] if r["rank"] != "normal" else []
    suffix = f"  [{', '.join(when + tags)}]" if when or tags else ""
    return (f"{r['subject_label'] or r['subject']} ({r['subject']})  "
            f"{r['relation_label'] or r['relation']} ({r['relation']})  {_value(r)}{suffix}")


def render_entity(kg: KnowledgeGraph, record: dict, at: str | None = None) -> str:
    lines = [f"{record['label'] or '(no label)'} ({record['id']}, {record['kind']}, "
             f"{record['sitelinks']} sitelinks)"]
    if record["description"]:
        lines.append(f"  {record['description']}")
    for lang, names in record["names"].items():
        if names["label"] or names["aliases"]:
            aliases = f"; aliases: {', '.join(names['aliases'])}" if names["aliases"] else ""
            lines.append(f"  [{lang}] {names['label'] or '-'}{aliases}")
    if record["types"]:
        lines.append("  types: " + ", ".join(f"{t['label'] or '?'} ({t['id']})" for t in record["types"]))
    today = date_key(at)
    lines.append("  statements" + (f" valid at {at}" if at else "") + ":")
    # Grouped by property (numerically), each group in time order: tenures read as a history.
    ordered = sorted(record["facts"], key=lambda r: (
        int(r["relation"][1:]), time_key(r["start"], r["start_precision"]) or -10**12, r["id"]))
    for r in ordered:
        if at and r["object"] and not kg.is_fact(r["subject"], r["relation"], r["object"], at=at):
            continue
        ended = r["end"] and (time_key(r["end"], r["end_precision"], "end") or 0) < today
        lines.append(f"   {'was' if ended else '   '} {render_fact_line(r).split('  ', 1)[1]}")
    return "\n".join(lines)


def render_stats(store: str, s: Stats) -> str:
    lines = [
        f"graph {store}",
        f"  entities        {s.entities:>10,}  ({s.items:,} items, {s.properties:,} properties)",
        f"  labels+aliases  {s.names:>10,}",
        f"  type edges      {s.types:>10,}",
        f"  facts           {s.facts:>10,}  ({s.entity_facts:,} entity-valued, {s.literal_facts:,} literal)",
        f"    temporal      {s.temporal_facts:>10,}",
        f"    deprecated    {s.deprecated_facts:>10,}",
        f"  relations       {s.relations:>10,}",
    ]
    if s.documents:
        lines.append(f"  documents       {s.documents:>10,}  ({s.annotations:,} entity links)")
    for source, n in s.sources.items():
        lines.append(f"  from {source:<14} {n:>8,} facts")
    return "\n".join(lines)

"""`factprobe kg`: look into an ingested graph: its statistics, one entity with its
statements, and a stream of facts filtered by relation, subject and date.
"""

from __future__ import annotations

import json

import click

from ..kg.graph import KnowledgeGraph
from ..kg.store import StoreError
from .errors import EXIT_FAILURE, EXIT_USAGE, fail
from .options import json_option, store_option
from .terminal import echo


@click.group("kg")
def kg_group() -> None:
    """Look into an ingested graph."""


def _open(store_path) -> KnowledgeGraph:
    try:
        return KnowledgeGraph(store_path)
    except StoreError as exc:
        fail(str(exc), EXIT_USAGE)
        raise  # unreachable


@kg_group.command("stats")
@store_option
@json_option
def kg_stats(store, as_json):
    """Counts of entities, names, types, facts (by kind and source), documents."""
    from dataclasses import asdict

    with _open(store) as kg:
        stats = kg.stats()
    if as_json:
        echo(json.dumps(asdict(stats), indent=2))
        return
    from .render import render_stats

    echo(render_stats(store, stats))


@kg_group.command("entity")
@click.argument("entity_id")
@store_option
@click.option("--at", default=None, help="Show facts valid at this date (YYYY or YYYY-MM-DD) instead of today.")
@json_option
def kg_entity(entity_id, store, at, as_json):
    """One entity: labels, aliases, types and its statements (temporal ones with their dates)."""
    from .render import entity_record, render_entity

    with _open(store) as kg:
        record = entity_record(kg, entity_id.strip().upper())
        if record is None:
            fail(f"{entity_id}: not in {store}", EXIT_FAILURE)
        if as_json:
            echo(json.dumps(record, indent=2, ensure_ascii=False))
        else:
            echo(render_entity(kg, record, at=at))


@kg_group.command("facts")
@click.option("--relation", default=None, help="Property id, e.g. P36.")
@click.option("--subject", default=None, help="Subject entity id, e.g. Q183.")
@click.option("--at", default=None, help="Only facts valid at this date (YYYY or YYYY-MM-DD).")
@click.option("--current", is_flag=True, help="Only facts valid today.")
@click.option("--include-deprecated", is_flag=True, help="Also deprecated-rank statements.")
@click.option("--limit", type=int, default=None, help="Stop after this many facts.")
@store_option
@json_option
def kg_facts(relation, subject, at, current, include_deprecated, limit, store, as_json):
    """Stream facts (JSON lines with --json, one per fact), with object labels and dates."""
    from .render import fact_record, render_fact_line

    if not relation and not subject:
        raise click.UsageError("give --relation and/or --subject")
    with _open(store) as kg:
        n = 0
        for fact in kg.facts(relation=relation, subject=subject, include_deprecated=include_deprecated):
            if (at or current) and not (fact.object and kg.is_fact(fact.subject, fact.relation, fact.object, at=at)):
                continue
            record = fact_record(kg, fact)
            echo(json.dumps(record, ensure_ascii=False) if as_json else render_fact_line(record))
            n += 1
            if limit and n >= limit:
                break


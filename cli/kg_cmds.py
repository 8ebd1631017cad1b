"""`factprobe kg`: look into an ingested graph: its statistics, its relations with their counts,
one entity with its statements, and a stream of facts filtered by relation, subject and date.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..kg.graph import KnowledgeGraph
from ..kg.store import StoreError
from .errors import EXIT_FAILURE, EXIT_USAGE, fail
from .options import json_option, store_option
from .template_cmds import templates_option
from .terminal import echo


@click.group("kg")
def kg_group() -> None:
    """Look into an ingested graph."""


def _relation(kg: KnowledgeGraph, text: str) -> str:
    from .relations import relation_id

    try:
        return relation_id(kg, text)
    except ValueError as error:
        fail(f"--relation: {error}", EXIT_USAGE)


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


@kg_group.command("relations")
@store_option
@click.option("--index", "index_path", type=click.Path(), default=None,
              help="A frequency index (`corpus index`: an embedded index file, or a token index folder): add "
                   "each relation's facts per KDF bucket, counted now.")
@templates_option
@json_option
def kg_relations(store, index_path, template_dirs, as_json):
    """Every relation with entity-valued facts, most facts first. A relation is named by its id or
    by its label wherever one is asked for (--relation, a pipeline file's `relations`, the
    service); this table shows both.

    \b
    Columns, over the statements that can be probed (an entity
    object, not deprecated):
      id        the property id (P36)
      label     its label in the store (- where the store has none)
      facts     statements
      subjects  distinct subjects
      objects   distinct objects
      current   true today: no end, or an end today or later
      ended     an end before today (Bonn, Germany's capital to 1990)
      cloze qa  templates of each kind (English; shipped and --templates)
      0 [1,10) [10,100) [100,inf)
                with --index: statements per KDF bucket (documents
                that mention both subject and object)

    \b
    factprobe kg relations --store graph.sqlite
    factprobe kg relations --store graph.sqlite --index freq.sqlite --json
    """
    from ..probes.templates import TemplateError, load_templates, template_dirs_from_env
    from .relations import count_buckets, relation_records, render_relations

    try:
        templates = load_templates([Path(d) for d in template_dirs] if template_dirs else template_dirs_from_env())
    except TemplateError as error:
        fail(str(error), EXIT_USAGE)
    with _open(store) as kg:
        relations = [row.id for row in kg.relation_rows()] if index_path else []
        buckets = count_buckets(store, index_path, relations) if index_path else None
        records = relation_records(kg, templates, buckets)
    if as_json:
        echo(json.dumps(records, indent=2, ensure_ascii=False))
    else:
        echo(render_relations(records, store))


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
@click.option("--relation", default=None, help="A property id (P36) or a relation's label (capital; `kg relations`).")
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
        if relation:
            relation = _relation(kg, relation)
        n = 0
        for fact in kg.facts(relation=relation, subject=subject, include_deprecated=include_deprecated):
            if (at or current) and not (fact.object and kg.is_fact(fact.subject, fact.relation, fact.object, at=at)):
                continue
            record = fact_record(kg, fact)
            echo(json.dumps(record, ensure_ascii=False) if as_json else render_fact_line(record))
            n += 1
            if limit and n >= limit:
                break


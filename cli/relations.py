"""Relations as the commands take and show them. A relation a person names (--relation, a
pipeline file's `relations`, the service's parameters) is read by kg/relations.py
`resolve_relation`, with the shipped templates' labels behind the store's; `kg relations` shows
each relation's counts (KnowledgeGraph.relation_rows), its templates per kind and, given a
frequency index, its facts per KDF bucket.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..kg.graph import KnowledgeGraph
from ..kg.relations import is_property_id, resolve_relation
from ..probes.templates import shipped_labels
from .errors import EXIT_USAGE, fail


def relation_id(kg: KnowledgeGraph | None, text: str) -> str:
    """`text` (a P-id or a label) as its relation id; ValueError in one line where it names none
    or several (the store's labels first, then the shipped templates')."""
    return resolve_relation(kg, text, shipped_labels)


def relation_ids_or_fail(store, texts: Iterable[str], option: str = "--relation",
                         keep: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Each of `texts` as its relation id (those in `keep`, such as "all", as they are), for a
    command: an error is one line and exit 2. The store is opened only when one is a label."""
    texts = tuple(texts)
    if all(t in keep or is_property_id(t) for t in texts):
        return tuple(t if t in keep else relation_id(None, t) for t in texts)
    from ..kg.store import StoreError

    try:
        with KnowledgeGraph(store) as kg:
            return tuple(t if t in keep else relation_id(kg, t) for t in texts)
    except (ValueError, StoreError) as error:
        fail(f"{option}: {error}", EXIT_USAGE)


def relation_records(kg: KnowledgeGraph, templates: dict, buckets: dict[str, dict[str, int]] | None) -> list[dict]:
    """`kg relations --json`'s rows: the store's counts, the templates of each kind (the English
    ones, as a build asks them), and the facts per bucket where an index counted them (else None)."""
    from dataclasses import asdict

    from ..probes.templates import TEMPLATE_KINDS

    records = []
    for row in kg.relation_rows():
        entry = templates.get(row.id)
        records.append({**asdict(row),
                        "templates": {kind: len(getattr(entry, kind)) if entry else 0 for kind in TEMPLATE_KINDS},
                        "buckets": buckets[row.id] if buckets is not None else None})
    return records


def count_buckets(store, index_path: str, relations: list[str]) -> dict[str, dict[str, int]]:
    """Each relation's facts per KDF bucket in the frequency index at `index_path` (an embedded
    index file, or an infini-gram token index folder); an index that cannot count: exit 2."""
    from ..index.backend import Backend, NoIndex
    from ..index.corpus_jobs import relation_buckets
    from ..index.embedded import IndexSettingsError

    backend = Backend("infini-gram" if Path(index_path).is_dir() else "embedded", index_path)
    try:
        return relation_buckets(backend, store, relations)
    except (NoIndex, IndexSettingsError, OSError, ValueError) as error:
        fail(f"--index: {error}", EXIT_USAGE)


def render_relations(records: list[dict], store) -> str:
    """The aligned table `kg relations` prints, most facts first."""
    bucket_names = list(records[0]["buckets"]) if records and records[0]["buckets"] is not None else []
    kinds = list(records[0]["templates"]) if records else []
    width = min(40, max([len(r["label"] or "") for r in records] + [5]))
    numbers = ["facts", "subjects", "objects", "current", "ended"]
    head = [f"{'id':<8} {'label':<{width}}", *(f"{n:>8}" for n in numbers), *(f"{k:>6}" for k in kinds),
            *(f"{b:>10}" for b in bucket_names)]
    lines = [" ".join(head)]
    for r in records:
        label = r["label"] or "-"
        label = label if len(label) <= width else label[:width - 1] + "…"
        lines.append(" ".join([f"{r['id']:<8} {label:<{width}}", *(f"{r[n]:>8,}" for n in numbers),
                               *(f"{r['templates'][k]:>6}" for k in kinds),
                               *(f"{r['buckets'][b]:>10,}" for b in bucket_names)]))
    lines.append(f"{len(records)} relations with entity-valued facts in {store} (literal-valued ones, such as "
                 "dates, are not probed: `kg stats` counts them)")
    return "\n".join(lines)

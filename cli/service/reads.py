"""The HTTP service's reads, one APIRouter per OpenAPI tag: `service` (/health), `graph`
(entities, search, facts, relations), `frequency` (corpus counts from the configured index) and
`distractors` (random, sem, temp+sem). None needs a token; each reaches the graph and indexes
through the app's ServiceState (state.py)."""

from __future__ import annotations

import itertools
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Path as PathParam, Query
from pydantic import AfterValidator

from ... import __version__
from ...kg.graph import KnowledgeGraph
from ...kg.relations import RELATION_NAME
from .checks import calendar_date
from .jobs import DATE
from .state import ENTITY_ID, ITEM_ID, State

RELATION = f"^{RELATION_NAME}$"
RELATION_HELP = "A property id (P36) or a relation's label in the store (capital), as GET /relations lists them."
EntityId = Annotated[str, PathParam(pattern=ENTITY_ID, description="A Wikidata id, e.g. Q90 or P36.")]

service_router = APIRouter(tags=["service"])
graph_router = APIRouter(tags=["graph"])
frequency_router = APIRouter(tags=["frequency"])
distractors_router = APIRouter(tags=["distractors"])


def known(kg: KnowledgeGraph, entity_id: str) -> None:
    if kg.entity(entity_id) is None:
        raise HTTPException(404, f"{entity_id}: not in the store")


@service_router.get("/health")
def health(state: State) -> dict:
    config = state.config
    return {"status": "ok", "version": __version__, "index": config.index is not None,
            "semantic": config.semantic is not None, "token_configured": bool(config.token),
            "models": list(config.models), "unexpected_errors": state.errors.unexpected,
            "jobs": state.jobs.store.counts()}


@service_router.get("/models")
def models(state: State) -> dict:
    """What this server loads for a client, as its operator set it at start: `served`, the models
    evaluation jobs may use (`serve --models`); `allowed`, every model, file or URL an option may
    name (the served models and `serve --allow-model`); `options`, the options that name one
    (by their declared exposure: local, served-model, url), each checked against `allowed`."""
    from .checks import checked_options

    config = state.config
    return {"served": list(config.models), "allowed": list(config.allowed), "options": checked_options()}


# -- graph ----------------------------------------------------------------------------------------


@graph_router.get("/entities/{entity_id}")
def entity(entity_id: EntityId, state: State) -> dict:
    kg = state.res.kg()
    found = kg.entity(entity_id)
    if found is None:
        raise HTTPException(404, f"{entity_id}: not in the store")
    names = {lang: kg.labels(entity_id, lang) for lang in kg.languages}
    return {"id": found.id, "kind": found.kind, "label": found.label, "description": found.description,
            "sitelinks": found.sitelinks, "datatype": found.datatype,
            "labels": {lang: {"label": n.label, "aliases": list(n.aliases)} for lang, n in names.items()},
            "types": [{"id": t, "label": kg.labels(t).label} for t in kg.types(entity_id)]}


@graph_router.get("/search")
def search(q: Annotated[str, Query(min_length=1, max_length=200, description="A label or alias (exact, "
                                                                              "case-insensitive).")],
           state: State, limit: Annotated[int, Query(ge=1, le=100)] = 20) -> dict:
    kg = state.res.kg()
    hits = kg.search(q, limit=limit)
    return {"q": q, "results": [{"id": e, "label": kg.labels(e).label} for e in hits]}


def relation_id(kg: KnowledgeGraph, text: str) -> str:
    """A relation parameter (a P-id or a label, kg/relations.py) as its id; 422 where it names none or several."""
    from ..relations import relation_id as resolve

    try:
        return resolve(kg, text)
    except ValueError as error:
        raise HTTPException(422, str(error)) from None


@graph_router.get("/facts")
def facts(state: State, subject: Annotated[str | None, Query(pattern=ITEM_ID)] = None,
          relation: Annotated[str | None, Query(pattern=RELATION, description=RELATION_HELP)] = None,
          limit: Annotated[int, Query(ge=1, le=500)] = 100,
          offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0) -> dict:
    from ..render import fact_record

    if not subject and not relation:
        raise HTTPException(422, "give subject and/or relation")
    kg = state.res.kg()
    relation = relation_id(kg, relation) if relation else None
    # one extra fact tells whether there is a next page without counting them all
    page = [fact_record(kg, f) for f in itertools.islice(kg.facts(relation=relation, subject=subject),
                                                         offset, offset + limit + 1)]
    more = len(page) > limit
    return {"offset": offset, "limit": limit, "items": page[:limit], "next_offset": offset + limit if more else None}


@graph_router.get("/relations")
def relations(state: State) -> dict:
    """Every relation with entity-valued facts, most first, as `factprobe kg relations` counts them
    (KnowledgeGraph.relation_rows): statements, distinct subjects and objects, current and ended."""
    from dataclasses import asdict

    return {"relations": [asdict(row) for row in state.res.kg().relation_rows()]}


# -- frequency ------------------------------------------------------------------------------------


@frequency_router.get("/frequency/entity/{entity_id}")
def frequency_entity(entity_id: Annotated[str, PathParam(pattern=ITEM_ID)], state: State) -> dict:
    from ...index.corpus import bucket_of
    from ...index.corpus_jobs import entity_labels

    index = state.res.frequency()
    known(state.res.kg(), entity_id)
    count = index.entity_frequency(entity_id)
    label = entity_labels(state.res.kg())  # as `factprobe frequency entity --json` names it
    return {"entity": entity_id, "label": label(entity_id), "documents": count, "bucket": bucket_of(count)}


@frequency_router.get("/frequency/pair")
def frequency_pair(head: Annotated[str, Query(pattern=ITEM_ID)], tail: Annotated[str, Query(pattern=ITEM_ID)],
                   state: State) -> dict:
    from ...index.corpus import bucket_of
    from ...index.corpus_jobs import entity_labels

    index = state.res.frequency()
    for entity_id in (head, tail):
        known(state.res.kg(), entity_id)
    count = index.pair_frequency(head, tail)
    label = entity_labels(state.res.kg())
    return {"head": head, "head_label": label(head), "tail": tail, "tail_label": label(tail), "documents": count,
            "bucket": bucket_of(count)}


# -- distractors ----------------------------------------------------------------------------------


@distractors_router.get("/distractors")
def distractors(subject: Annotated[str, Query(pattern=ITEM_ID)],
                relation: Annotated[str, Query(pattern=RELATION, description=RELATION_HELP)],
                object: Annotated[str, Query(pattern=ITEM_ID)],
                state: State,
                strategy: Annotated[Literal["random", "sem", "temp+sem"],
                                    Query(description="appropt needs a model and is not served "
                                                      "(write + as %2B in a query string).")] = "sem",
                n: Annotated[int, Query(ge=1, le=50)] = 5,
                seed: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
                at: Annotated[str | None, Query(pattern=DATE), AfterValidator(calendar_date)] = None) -> dict:
    res = state.res
    kg = res.kg()
    for entity_id in (subject, object):  # relations need no entity record of their own in a store
        known(kg, entity_id)
    relation = relation_id(kg, relation)
    finder = res.finder(strategy != "random")
    try:
        if strategy == "random":
            found = finder.find(subject, relation, object, strategy=strategy, n=n, at=at, seed=seed)
        else:
            with res.semantic_lock:
                found = finder.find(subject, relation, object, strategy=strategy, n=n, at=at, seed=seed)
    except ValueError as error:  # e.g. a date the graph cannot read
        raise HTTPException(422, str(error)) from None
    return found.to_dict()


ROUTERS = (service_router, graph_router, frequency_router, distractors_router)

"""The HTTP service (`factprobe serve`): the graph, frequency counts and distractors to read, and
probe-set builds and evaluation runs as background jobs.

Every path comes from the server's configuration (`ServiceConfig`); a client names entities,
relations and job ids, never files. Reads need no token; POSTs need the configured bearer token.
Every input is validated (4xx on bad input); guards and error handlers live in service_guard.py,
jobs in service_jobs.py.
"""

from __future__ import annotations

import itertools
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from fastapi import Depends, FastAPI, HTTPException, Path as PathParam, Query

from .. import __version__
from ..kg.graph import KnowledgeGraph
from .service_guard import BodyLimit, ErrorCounter, install_error_handlers, token_guard
from .service_jobs import (DATE, JOB_ID, EvalRequest, Job, JobQueue, ProbesetRequest, Scorers, eval_work,
                           probeset_work, read_json, read_page)

ENTITY_ID = r"^[QP][1-9][0-9]{0,9}$"
ITEM_ID = r"^Q[1-9][0-9]{0,9}$"
DEFAULT_MODELS = ("smollm2-135m-instruct", "gemma3-270m")

EntityId = Annotated[str, PathParam(pattern=ENTITY_ID, description="A Wikidata id, e.g. Q90 or P36.")]
JobId = Annotated[str, PathParam(pattern=JOB_ID, description="A job id as POST /jobs/... returned it.")]


@dataclass(frozen=True)
class ServiceConfig:
    store: Path
    data_dir: Path  # jobs write under DATA/jobs/<id>/
    index: Path | None = None  # embedded frequency index
    semantic: Path | None = None  # semantic index folder (sem, temp+sem)
    token: str | None = None  # None: mutating endpoints answer 503
    models: tuple[str, ...] = DEFAULT_MODELS
    es_url: str | None = None  # counts from this Elasticsearch cluster instead of the embedded index
    es_index: str = "factprobe-corpus"


class Resources:
    """Per-thread handles: FastAPI runs sync endpoints on a thread pool and a SQLite connection
    is best kept to one thread; the semantic index is loaded once and shared."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        self.local = threading.local()
        self.semantic = None
        self.semantic_lock = threading.Lock()  # a pool is built once (a pass over its members), not per thread

    def kg(self) -> KnowledgeGraph:
        if getattr(self.local, "kg", None) is None:
            self.local.kg = KnowledgeGraph(self.config.store)
        return self.local.kg

    def frequency(self):
        if self.config.index is None and self.config.es_url is None:
            raise HTTPException(404, "no frequency index configured (start the server with --index FILE or --es-url)")
        if getattr(self.local, "index", None) is None:
            from ..index.backend import Backend, NoIndex, open_for_counting
            from ..index.elastic import BackendUnavailable

            backend = (Backend("elasticsearch", es_url=self.config.es_url, es_index=self.config.es_index)
                       if self.config.es_url else Backend("embedded", str(self.config.index)))
            try:
                self.local.index = open_for_counting(backend, self.config.store)
            except NoIndex as error:
                raise HTTPException(409, str(error)) from None
            except BackendUnavailable as error:
                raise HTTPException(503, str(error)) from None
        return self.local.index

    def finder(self, needs_semantic: bool):
        from ..index.distractors import DistractorFinder

        if needs_semantic and self.semantic is None:
            if self.config.semantic is None:
                raise HTTPException(409, "no semantic index configured (start the server with --semantic DIR); "
                                         "strategy random needs none")
            from ..index.semantic import SemanticIndex

            with self.semantic_lock:
                if self.semantic is None:
                    try:
                        self.semantic = SemanticIndex.load(self.config.semantic)
                    except (FileNotFoundError, ValueError) as error:
                        raise HTTPException(409, f"semantic index unusable: {error}") from None
        if getattr(self.local, "finder", None) is None:
            self.local.finder = DistractorFinder(self.kg(), None)
        self.local.finder.semantic = self.semantic
        return self.local.finder


def create_app(config: ServiceConfig) -> FastAPI:
    res = Resources(config)
    jobs = JobQueue(config.data_dir)
    scorers = Scorers()
    errors = ErrorCounter()
    require_token = token_guard(config.token)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        jobs.shutdown()

    app = FastAPI(title="factprobe", version=__version__, lifespan=lifespan,
                  description="Factual-knowledge probing over a knowledge graph: entities, facts, corpus frequency, "
                              "distractors; probe-set builds and evaluation runs as background jobs. "
                              "POST endpoints need the server's bearer token.")
    app.add_middleware(BodyLimit)
    install_error_handlers(app, errors)

    def known(kg: KnowledgeGraph, entity_id: str) -> None:
        if kg.entity(entity_id) is None:
            raise HTTPException(404, f"{entity_id}: not in the store")

    # -- reads ------------------------------------------------------------------------------

    @app.get("/health", tags=["service"])
    def health() -> dict:
        return {"status": "ok", "version": __version__, "index": config.index is not None,
                "semantic": config.semantic is not None, "token_configured": bool(config.token),
                "models": list(config.models), "unexpected_errors": errors.unexpected}

    @app.get("/entities/{entity_id}", tags=["graph"])
    def entity(entity_id: EntityId) -> dict:
        kg = res.kg()
        found = kg.entity(entity_id)
        if found is None:
            raise HTTPException(404, f"{entity_id}: not in the store")
        names = {lang: kg.labels(entity_id, lang) for lang in kg.languages}
        return {"id": found.id, "kind": found.kind, "label": found.label, "description": found.description,
                "sitelinks": found.sitelinks, "datatype": found.datatype,
                "labels": {lang: {"label": n.label, "aliases": list(n.aliases)} for lang, n in names.items()},
                "types": [{"id": t, "label": kg.labels(t).label} for t in kg.types(entity_id)]}

    @app.get("/search", tags=["graph"])
    def search(q: Annotated[str, Query(min_length=1, max_length=200, description="A label or alias (exact, "
                                                                                  "case-insensitive).")],
               limit: Annotated[int, Query(ge=1, le=100)] = 20) -> dict:
        kg = res.kg()
        hits = kg.search(q, limit=limit)
        return {"q": q, "results": [{"id": e, "label": kg.labels(e).label} for e in hits]}

    @app.get("/facts", tags=["graph"])
    def facts(subject: Annotated[str | None, Query(pattern=ITEM_ID)] = None,
              relation: Annotated[str | None, Query(pattern=r"^P[1-9][0-9]{0,9}$")] = None,
              limit: Annotated[int, Query(ge=1, le=500)] = 100,
              offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0) -> dict:
        from .render import fact_record

        if not subject and not relation:
            raise HTTPException(422, "give subject and/or relation")
        kg = res.kg()
        # one extra fact tells whether there is a next page without counting them all
        page = [fact_record(kg, f) for f in itertools.islice(kg.facts(relation=relation, subject=subject),
                                                             offset, offset + limit + 1)]
        more = len(page) > limit
        return {"offset": offset, "limit": limit, "items": page[:limit],
                "next_offset": offset + limit if more else None}

    @app.get("/relations", tags=["graph"])
    def relations() -> dict:
        return {"relations": [{"id": r, "label": label, "facts": n} for r, label, n in res.kg().relations()]}

    @app.get("/frequency/entity/{entity_id}", tags=["frequency"])
    def frequency_entity(entity_id: Annotated[str, PathParam(pattern=ITEM_ID)]) -> dict:
        from ..index.corpus import bucket_of

        index = res.frequency()
        known(res.kg(), entity_id)
        count = index.entity_frequency(entity_id)
        return {"entity": entity_id, "documents": count, "bucket": bucket_of(count)}

    @app.get("/frequency/pair", tags=["frequency"])
    def frequency_pair(head: Annotated[str, Query(pattern=ITEM_ID)],
                       tail: Annotated[str, Query(pattern=ITEM_ID)]) -> dict:
        from ..index.corpus import bucket_of

        index = res.frequency()
        for entity_id in (head, tail):
            known(res.kg(), entity_id)
        count = index.pair_frequency(head, tail)
        return {"head": head, "tail": tail, "documents": count, "bucket": bucket_of(count)}

    @app.get("/distractors", tags=["distractors"])
    def distractors(subject: Annotated[str, Query(pattern=ITEM_ID)],
                    relation: Annotated[str, Query(pattern=r"^P[1-9][0-9]{0,9}$")],
                    object: Annotated[str, Query(pattern=ITEM_ID)],
                    strategy: Annotated[Literal["random", "sem", "temp+sem"],
                                        Query(description="appropt needs a model and is not served "
                                                          "(write + as %2B in a query string).")] = "sem",
                    n: Annotated[int, Query(ge=1, le=50)] = 5,
                    seed: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
                    at: Annotated[str | None, Query(pattern=DATE)] = None) -> dict:
        kg = res.kg()
        for entity_id in (subject, object):  # relations need no entity record of their own in a store
            known(kg, entity_id)
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

    # -- jobs -------------------------------------------------------------------------------

    def started(job: Job | None) -> dict:
        if job is None:
            raise HTTPException(429, "too many jobs queued or running; try again later")
        return {"job_id": job.id, "status": job.status}

    @app.post("/jobs/probeset", status_code=202, tags=["jobs"], dependencies=[Depends(require_token)])
    def start_probeset(request: ProbesetRequest) -> dict:
        if request.relations:
            present = {r for r, _, _ in res.kg().relations()}
            missing = [r for r in request.relations if r not in present]
            if missing:
                raise HTTPException(422, f"no entity-valued facts of {', '.join(missing)} in the store")
        if set(request.strategies) - {"random"} and request.kind == "distractor" and config.semantic is None:
            raise HTTPException(409, "strategies sem and temp+sem need a semantic index (--semantic DIR)")
        return started(jobs.submit("probeset", request.model_dump(),
                                   probeset_work(config.store, config.semantic, request)))

    @app.post("/jobs/eval", status_code=202, tags=["jobs"], dependencies=[Depends(require_token)])
    def start_eval(request: EvalRequest) -> dict:
        from ..probes.methods import METHODS

        if request.model not in config.models:
            raise HTTPException(422, f"model {request.model!r}: use one of {', '.join(config.models)}")
        method = METHODS[request.method]
        unknown = set(request.options) - set(method.defaults)
        if unknown:
            raise HTTPException(422, f"method {request.method} has no option {', '.join(sorted(unknown))} "
                                     f"(it takes {', '.join(sorted(method.defaults)) or 'none'})")
        # options that would make the server call out to a client-chosen place are not served
        remote = sorted(k for k in request.options if k.startswith("judge") or k.endswith(("_url", "_path", "_dir")))
        if remote:
            raise HTTPException(422, f"option(s) {', '.join(remote)} are not allowed over HTTP")
        source = jobs.get(request.probeset_job)
        if source is None or source.kind != "probeset":
            raise HTTPException(404, f"no probeset job {request.probeset_job}")
        if source.status != "done":
            raise HTTPException(409, f"probeset job {source.id} is {source.status}, not done")
        kind = source.params["kind"]
        if kind not in method.kinds:
            raise HTTPException(422, f"method {request.method} reads {' or '.join(method.kinds)} probe sets; "
                                     f"job {source.id} built {kind}")
        return started(jobs.submit("eval", request.model_dump(), eval_work(scorers, source.probes, request)))

    def job_of(job_id: str) -> Job:
        job = jobs.get(job_id)
        if job is None:
            raise HTTPException(404, f"no job {job_id}")
        return job

    @app.get("/jobs/{job_id}", tags=["jobs"])
    def job_status(job_id: JobId) -> dict:
        return job_of(job_id).view()

    @app.get("/jobs/{job_id}/result", tags=["jobs"])
    def job_result(job_id: JobId, offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
                   limit: Annotated[int, Query(ge=1, le=500)] = 100) -> dict:
        job = job_of(job_id)
        if job.status != "done":
            raise HTTPException(409, f"job {job_id} is {job.status}" + (f": {job.error}" if job.error else ""))
        if job.kind == "probeset":
            from ..probes.probeset import sidecar_path

            meta = read_json(sidecar_path(job.probes))
            items = read_page(job.probes, offset, limit)
            total = meta["items"] if meta else None
            extra = {"meta": meta}
        else:
            aggregate = read_json(job.run_dir / "aggregate.json")
            items = read_page(job.run_dir / "items.jsonl", offset, limit)
            total = job.summary.get("items")
            extra = {"aggregate": aggregate}
        more = total is not None and offset + len(items) < total
        return {"job_id": job.id, "kind": job.kind, "offset": offset, "limit": limit, "total": total,
                "items": items, "next_offset": offset + limit if more else None, **extra}

    return app

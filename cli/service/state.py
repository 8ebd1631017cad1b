"""What every route of the HTTP service shares: the server's configuration (`ServiceConfig`),
per-thread handles on the graph and the indexes (`Resources`), the job queue (its records read
back and its unfinished jobs resumed when the state is made), and the FastAPI
dependency `service_state` through which a route reaches them (the app keeps them in
`app.state.factprobe`; create_app in service.py puts them there)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from ...kg.graph import KnowledgeGraph
from .guard import ErrorCounter
from ...probes.scoring.model_cache import ModelCache
from .admission import resumed_work
from .config import DEFAULT_MODELS, ServiceConfig  # noqa: F401  (the service's other modules import them from here)
from .jobs import JobQueue

ENTITY_ID = r"^[QP][1-9][0-9]{0,9}$"
ITEM_ID = r"^Q[1-9][0-9]{0,9}$"
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
            from ...index.backend import Backend, NoIndex, open_for_counting
            from ...index.elastic import BackendUnavailable

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
        from ...index.distractors import DistractorFinder

        if needs_semantic and self.semantic is None:
            if self.config.semantic is None:
                raise HTTPException(409, "no semantic index configured (start the server with --semantic DIR); "
                                         "strategy random needs none")
            from ...index.semantic import SemanticIndex

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


@dataclass
class ServiceState:
    """One app's configuration, handles, jobs, loaded model and error count."""
    config: ServiceConfig
    res: Resources
    jobs: JobQueue
    models: ModelCache  # honours FACTPROBE_DEVICE / FACTPROBE_DTYPE, as the pipeline's and eval's
    errors: ErrorCounter

    @classmethod
    def create(cls, config: ServiceConfig, errors: ErrorCounter) -> ServiceState:
        """The state of a server starting on `config`: the jobs its data folder records are read
        back, those a stopped server left unfinished queued again when they pass the checks a new
        job passes under `config` (failed otherwise), or marked interrupted."""
        jobs = JobQueue(config.data_dir)
        state = cls(config, Resources(config), jobs, ModelCache(), errors)
        jobs.recover(lambda job: resumed_work(job, state))  # each job checked as a new one is, by this start
        return state


def service_state(request: Request) -> ServiceState:
    """The dependency through which a route reaches its app's ServiceState."""
    return request.app.state.factprobe


State = Annotated[ServiceState, Depends(service_state)]

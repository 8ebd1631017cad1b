"""The HTTP service (`factprobe serve`): the graph, frequency counts and distractors to read, and
probe-set builds and evaluation runs as background jobs.

`create_app` composes the app: one APIRouter per OpenAPI tag (reads.py: service, graph,
frequency, distractors; job_routes.py: jobs; item_routes.py: items, the item view over the
runs it knows), the guards and error handlers of
guard.py, and the state the routes share (state.py). Every path comes from the
server's configuration (`ServiceConfig`); a client names entities, relations and job ids, and a
model, file or URL only among those the operator allowed at start (`--models`, `--allow-model`;
GET /models). Reads need no token; POSTs need the configured bearer token. Every input is
validated (4xx on bad input).
"""

from __future__ import annotations

from contextlib import asynccontextmanager

from fastapi import FastAPI

from ... import __version__
from .guard import BodyLimit, ErrorCounter, install_error_handlers
from .item_index import ItemCatalog
from .item_routes import items_router, known_runs
from .job_routes import jobs_router
from .ngram_routes import ngram_router
from .reads import ROUTERS
from .state import DEFAULT_MODELS, ServiceConfig, ServiceState

__all__ = ["DEFAULT_MODELS", "ServiceConfig", "create_app"]


def create_app(config: ServiceConfig) -> FastAPI:
    errors = ErrorCounter()
    state = ServiceState.create(config, errors)
    items = ItemCatalog(lambda: known_runs(config.runs, state.jobs))  # the item view's runs, indexed once

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        items.warm()  # indexes the runs in the background: the first /items need not wait for them all
        yield
        state.jobs.shutdown()

    app = FastAPI(title="factprobe", version=__version__, lifespan=lifespan,
                  description="Factual-knowledge probing over a knowledge graph: entities, facts, corpus frequency, "
                              "distractors; probe-set builds and evaluation runs as background jobs. "
                              "POST endpoints need the server's bearer token.")
    app.state.factprobe = state  # what the routes reach through service_state.service_state
    app.state.items = items
    app.add_middleware(BodyLimit)
    install_error_handlers(app, errors)
    for router in (*ROUTERS, jobs_router, items_router, ngram_router):
        app.include_router(router)
    return app

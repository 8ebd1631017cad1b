"""The HTTP service (`factprobe serve`): a FastAPI app over one graph store, its read endpoints,
and the background jobs that build probe sets and run evaluations through the same step
functions as the command line (cli/steps.py). Modules: app (create_app), guard (body limits,
the bearer token, errors as JSON), state (what a running service holds), reads (graph, facts,
runs), job_routes and jobs (the job endpoints and the work they queue), store (job records in
SQLite), checks (values checked at the door)."""

from .app import ServiceConfig, create_app

__all__ = ["ServiceConfig", "create_app"]

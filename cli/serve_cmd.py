"""`factprobe serve`: the HTTP service (FastAPI on uvicorn)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import click

from ..index.backend import Backend
from ..probes.scoring.specs import SHORTCUTS
from .errors import EXIT_FAILURE, EXIT_USAGE, fail
from .options import FolderPath, store_option
from .outputs import claim_data_folder, overwrite_option
from .terminal import echo



@click.command("serve")
@store_option
@click.option("--index", "index_path", type=click.Path(dir_okay=False), default=None,
              help="Embedded frequency index (from `factprobe corpus index`) for /frequency.")
@click.option("--semantic", "semantic_dir", type=FolderPath("input"), default=None,
              help="Semantic index folder (from `factprobe distractors build`) for sem and temp+sem.")
@click.option("--data", "data_dir", type=FolderPath(), default="factprobe-data", show_default=True,
              help="Folder where jobs write their outputs (DATA/jobs/<job id>/) and their records "
                   "(DATA/jobs.sqlite): a restarted server answers for its jobs and resumes those it left unfinished.")
@click.option("--es-url", envvar="FACTPROBE_ES_URL", default=None,
              help="Count /frequency in this Elasticsearch cluster instead (env FACTPROBE_ES_URL).")
@click.option("--es-index", envvar="FACTPROBE_ES_INDEX", default=Backend.es_index, show_default=True,
              help="The Elasticsearch index holding the corpus (env FACTPROBE_ES_INDEX).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--token-env", default="FACTPROBE_TOKEN", show_default=True,
              help="Environment variable holding the bearer token of POST endpoints (unset: they answer 503).")
@click.option("--models", default=",".join(SHORTCUTS), show_default=True,
              help="Comma-separated model specs that evaluation jobs may use.")
@click.option("--allow-model", "allow", multiple=True, metavar="NAME",
              help="A model, folder or URL (as written) a client may name in an option that loads or calls one "
                   "(bertscore_model, judge_model, judge_base_url, templates, ...), besides --models; nothing "
                   "else a client names is loaded. Repeatable; GET /models lists them.")
@click.option("--runs", "runs", multiple=True, type=FolderPath("input", exists=True), metavar="DIR",
              help="A run folder, or a folder of them (`factprobe run`'s OUT/runs), for the item view: "
                   "GET /items/view, and /items for scripts; the finished eval jobs are there too. Repeatable.")
@click.option("--ngram-index", "ngram_indexes", multiple=True, type=FolderPath("input", exists=True),
              metavar="DIR",
              help="A token index in infini-gram's layout that POST /infini-gram answers infini-gram's API "
                   "for, named by its folder's name. Repeatable.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True)
@overwrite_option
def serve_command(store, index_path, semantic_dir, data_dir, es_url, es_index, host, port, token_env, models,
                  allow, runs, ngram_indexes, log_level, overwrite):
    """Serve the graph, frequency counts, distractors, and probe-set / evaluation jobs over HTTP.

    \b
    FACTPROBE_TOKEN=secret factprobe serve --store graph.sqlite --index freq.sqlite --semantic semantic-index
    curl http://127.0.0.1:8000/entities/Q90          # OpenAPI docs at /docs
    factprobe serve --store runs/sample/graph.sqlite --runs runs/sample/runs   # items: /items/view
    """
    try:
        import uvicorn

        from .service import ServiceConfig, create_app
    except ImportError as error:
        fail(f"the service needs its extra: pip install 'factprobe[service]' ({error})", EXIT_USAGE)

    if not Path(store).is_file():
        fail(f"no knowledge-graph store at {store}", EXIT_USAGE)
    if index_path and not Path(index_path).is_file():
        fail(f"no frequency index at {index_path}", EXIT_USAGE)
    if semantic_dir and not Path(semantic_dir).is_dir():
        fail(f"no semantic index folder at {semantic_dir}", EXIT_USAGE)
    names = [Path(folder).name for folder in ngram_indexes]
    if len(set(names)) < len(names):
        fail(f"--ngram-index: two folders named {next(n for n in names if names.count(n) > 1)!r}; "
             "clients name an index by its folder's name", EXIT_USAGE)
    if ngram_indexes:
        from ..index.infini_gram.layout import LayoutError, TokenIndexFolder, token_folder

        for folder in ngram_indexes:  # a folder that is no index is refused now, not per request
            try:
                TokenIndexFolder(token_folder(folder)).close()
            except LayoutError as error:
                fail(f"--ngram-index: {error}", EXIT_USAGE)
    claim_data_folder(data_dir, overwrite=overwrite, inputs=[store, *([index_path] if index_path else [])])
    served = tuple(m.strip() for m in models.split(",") if m.strip())
    token = os.environ.get(token_env) or None
    if token is None:
        echo(f"warning: ${token_env} is not set: POST endpoints will answer 503", err=True)
    config = ServiceConfig(Path(store), Path(data_dir), Path(index_path) if index_path else None,
                           Path(semantic_dir) if semantic_dir else None, token, served, es_url, es_index,
                           tuple(dict.fromkeys(a.strip() for a in allow if a.strip())),
                           tuple(Path(r) for r in runs), tuple(Path(f).resolve() for f in ngram_indexes))
    try:
        app = create_app(config)  # reads the data folder's job records back
    except (OSError, RuntimeError, sqlite3.Error) as error:  # a folder in use, unwritable, or of another schema
        fail(f"cannot serve from the data folder {data_dir}: {error}", EXIT_FAILURE)
    uvicorn.run(app, host=host, port=port, log_level=log_level)

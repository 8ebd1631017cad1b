"""The server's configuration: what `factprobe serve` was started with. Its own module so that
the job admission (admission.py) and the shared state (state.py) both read it without importing
each other."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...index.backend import Backend
from ...probes.scoring.specs import SHORTCUTS

DEFAULT_MODELS = tuple(SHORTCUTS)  # the two real models that install from PyPI


@dataclass(frozen=True)
class ServiceConfig:
    store: Path
    data_dir: Path  # jobs write under DATA/jobs/<id>/, their records in DATA/jobs.sqlite
    index: Path | None = None  # embedded frequency index
    semantic: Path | None = None  # semantic index folder (sem, temp+sem)
    token: str | None = None  # None: mutating endpoints answer 503
    models: tuple[str, ...] = DEFAULT_MODELS
    es_url: str | None = None  # counts from this Elasticsearch cluster instead of the embedded index
    es_index: str = Backend.es_index
    # Models, files and URLs (as written) a client may name in an option that loads or calls one,
    # besides `models` (`serve --allow-model`); nothing else a client names is loaded.
    allow: tuple[str, ...] = ()
    # Run folders (or folders of them) the item view shows besides the finished eval jobs (`serve --runs`).
    runs: tuple[Path, ...] = ()
    # Token indexes in infini-gram's layout that POST /infini-gram answers for, by folder name
    # (`serve --ngram-index`).
    ngram_indexes: tuple[Path, ...] = ()

    @property
    def allowed(self) -> tuple[str, ...]:
        """What a client may name in an option that names a model, a file or a URL: the served
        models, then those the operator allowed besides."""
        return tuple(dict.fromkeys((*self.models, *self.allow)))

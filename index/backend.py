"""One interface, two backends: the embedded index (default: one SQLite file, no server) and
Elasticsearch (scale-out). Both give identical counts on the same corpus under the same settings;
tests/test_frequency_contract.py holds them to it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Protocol, Sequence

from .corpus import Document
from .settings import IndexSettings, StoreNames

BACKENDS = ("embedded", "elasticsearch", "infini-gram", "infini-gram-api")


class FrequencyIndex(Protocol):
    def settings(self) -> dict | None: ...
    def bind_settings(self, settings: dict) -> None: ...
    def add_documents(self, documents: Iterable[Document], *, batch: int = ...) -> Iterator[int]: ...
    def track_pairs(self, pairs: Iterable[tuple[str, str]]) -> int: ...
    def document_count(self) -> int: ...
    def entity_frequency(self, entity: str) -> int: ...
    def pair_frequency(self, head: str, tail: str) -> int: ...
    def pair_frequencies(self, pairs: Sequence[tuple[str, str]]) -> list[int]: ...
    def close(self) -> None: ...


class NoIndex(LookupError):
    """Counting was asked of an index that has not been built."""


@dataclass(frozen=True)
class Backend:
    kind: str = "embedded"
    path: str = "frequency.sqlite"  # embedded: the index file
    es_url: str = "http://127.0.0.1:9200"
    es_index: str = "factprobe-corpus"  # elasticsearch: one index per corpus
    # infini-gram: `path` is the index folder; the model's tokenizer.json (probes/scoring/
    # tokenizer_file.py resolves a model spec to it) and its name. Building needs them; counting
    # reads the folder's own copy and, when one is given, refuses another tokenizer.
    tokenizer: str | None = None
    tokenizer_name: str | None = None
    # infini-gram-api: an index on an infini-gram API server, counted by occurrences and window
    # co-occurrence, never documents (index/infini_gram/api_backend.py); `tokenizer` as above
    api_index: str | None = None
    api_url: str = "https://api.infini-gram.io/"

    def __post_init__(self) -> None:
        if self.kind not in BACKENDS:
            raise ValueError(f"backend {self.kind!r}: use one of {', '.join(BACKENDS)}")

    def describe(self) -> str:
        if self.kind == "infini-gram-api":
            return f"{self.api_url} index {self.api_index}"
        return self.path if self.kind in ("embedded", "infini-gram") else f"{self.es_url} index {self.es_index}"


def open_for_indexing(backend: Backend, settings: IndexSettings, store: str | Path | None) -> FrequencyIndex:
    """An index to add documents to, its settings bound (a mismatch raises IndexSettingsError).
    The embedded backend links documents now, so it reads every name from the store first; so
    does Elasticsearch under mentions="maximal" (a phrase query cannot know that a longer name
    holds its match, so each document carries the entities it mentions). A Chinese index without
    OpenCC raises ConverterMissing before anything is read or written."""
    if backend.kind == "infini-gram":
        return _token_index_for_building(backend, settings)
    if backend.kind == "infini-gram-api":
        from .infini_gram.api_backend import ApiBackendError

        raise ApiBackendError("an infini-gram API index is built by its server: nothing can be added to it")
    if backend.kind == "embedded":
        from .embedded import EmbeddedIndex, linked

        index = EmbeddedIndex(backend.path, linked if settings.method == "links" else finder(settings, store))
    else:
        from .elastic import ElasticsearchIndex

        settings.converter()  # a missing OpenCC says so before the cluster is touched
        mentions = finder(settings, store) if settings.method == "names" and settings.mentions == "maximal" else None
        # "any": names are matched at query time, by phrase queries
        index = ElasticsearchIndex(backend.es_url, backend.es_index, mentions=mentions)
    try:
        index.bind_settings(settings.to_dict())
    except Exception:
        index.close()
        raise
    return index


def finder(settings: IndexSettings, store: str | Path | None):
    """The MentionFinder of name-based `settings`: every name of every entity in the store, in
    the settings' languages, as they filter, convert and count occurrences."""
    from .mentions import MentionFinder

    names = StoreNames(store, settings)
    try:
        return MentionFinder(names.pairs(), settings.alias_filter, settings.converter(), settings.mentions,
                             settings.particles)
    finally:
        names.close()


def open_for_counting(backend: Backend, store: str | Path | None) -> FrequencyIndex:
    """An index to count with, under the settings it was built with."""
    if backend.kind == "infini-gram":
        return _token_index_for_counting(backend, store)
    if backend.kind == "infini-gram-api":
        from .infini_gram.api_backend import open_api_index

        return open_api_index(backend, store)
    if backend.kind == "embedded":
        from .embedded import EmbeddedIndex

        if not Path(backend.path).is_file():
            raise NoIndex(f"no frequency index at {backend.path}; build one with `factprobe corpus index`")
        return EmbeddedIndex(backend.path)
    from .elastic import ElasticsearchIndex

    index = ElasticsearchIndex(backend.es_url, backend.es_index)
    stored = index.settings()
    if stored is None:
        index.close()
        raise NoIndex(f"no index {backend.es_index!r} at {backend.es_url}; build one with "
                      "`factprobe corpus index --backend elasticsearch`")
    settings = IndexSettings.from_dict(stored)
    if settings.method == "names" and settings.mentions == "any":  # "maximal" counts the documents' own field
        if store is None or not Path(store).is_file():
            index.close()
            raise NoIndex(f"counting names in Elasticsearch needs the knowledge-graph store (no store at {store})")
        index.names = StoreNames(store, settings)
    return index


def _token_index_for_building(backend: Backend, settings: IndexSettings) -> FrequencyIndex:
    """The token backend counts names at query time: only its settings are bound now."""
    from .infini_gram.store import TokenIndexError, TokenIndexWriter

    if settings.method != "names":
        raise TokenIndexError("the infini-gram backend counts names in the text; links need another backend")
    if not backend.tokenizer:
        raise TokenIndexError("building a token index needs the model's tokenizer (--model SPEC)")
    index = TokenIndexWriter(backend.path, backend.tokenizer, backend.tokenizer_name or Path(backend.tokenizer).stem,
                             settings.converter())
    index.bind_settings(settings.to_dict())
    return index


def _token_index_for_counting(backend: Backend, store: str | Path | None) -> FrequencyIndex:
    from .infini_gram.count import TokenCountIndex
    from ..kg.identity import file_sha256
    from .infini_gram.store import MANIFEST

    if not (Path(backend.path) / MANIFEST).is_file():
        raise NoIndex(f"no token index at {backend.path}; build one with "
                      "`factprobe corpus index --backend infini-gram --model SPEC`")
    if store is None or not Path(store).is_file():
        raise NoIndex(f"counting names in a token index needs the knowledge-graph store (no store at {store})")
    index = TokenCountIndex(backend.path, store)
    if backend.tokenizer:
        digest = file_sha256(Path(backend.tokenizer))
        if digest != index.tokenizer.get("sha256"):
            index.close()
            from .infini_gram.store import TokenIndexError

            raise TokenIndexError(f"{backend.path} was built with {index.tokenizer.get('name')}'s tokenizer; "
                                  f"{backend.tokenizer_name or backend.tokenizer} has another "
                                  f"(sha256 {digest[:12]}, not {str(index.tokenizer.get('sha256'))[:12]})")
    return index

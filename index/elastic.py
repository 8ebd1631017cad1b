"""The Elasticsearch frequency backend: one index per corpus, counts by phrase queries.

Text is tokenized here, in Python, with the embedded backend's `normalize` (Elasticsearch only
splits on white space), so both backends count the same documents and a stock single-node image
serves. The token scheme and why it matches exactly: docs/design/frequency.md. Chinese is converted
here too, before it is sent (index/chinese.py): documents as they are indexed, with the converter
of the index's settings, and names by StoreNames, as the embedded backend converts both.

Under mentions="maximal" (IndexSettings) a phrase query would count "czech" inside "czech
republic": there each document carries a `mentions` keyword field, the entities the embedded
backend's MentionFinder finds in it at index time, and counting is term filters on that field.
Under "any" counting stays phrase queries on `tokens`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable, Iterable, Iterator, Sequence

from .corpus import Document
from .writing_systems import UNSPACED_RANGES
from .settings import IndexSettings
from .text import normalize

LONG_RUN = 200
_UNSPACED = "[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in UNSPACED_RANGES) + "]"
_PIECES = re.compile(r"[^\W_]+|[\W_]")  # for str patterns, [^\W_] is exactly str.isalnum()
# a run of letters and digits that holds a script without spaces: its characters one by one, other runs whole
_RUN_PIECES = re.compile(rf"{_UNSPACED}|(?:(?!{_UNSPACED})[^\W_])+")
_IS_UNSPACED = re.compile(_UNSPACED)
_ANALYZER = "factprobe_tokens"


class BackendUnavailable(RuntimeError):
    """Elasticsearch could not be reached or refused a request; the message is one line."""


def tokens(normalized: str) -> list[str]:
    """The token scheme of docs/design/frequency.md: a run of letters and digits, or one letter or
    digit of a script without spaces, is a token as it is; any other character is spelled from
    its code point and from whether a letter or digit that can glue to it touches it."""
    pieces = _PIECES.findall(normalized)
    apart = [False] * len(pieces)  # a character of a script without spaces: nothing glues to it
    if _IS_UNSPACED.search(normalized):  # Latin text skips this
        pieces = [p for piece in pieces for p in (_RUN_PIECES.findall(piece) if len(piece) > 1 and piece[0].isalnum()
                                                   and _IS_UNSPACED.search(piece) else (piece,))]
        apart = [len(p) == 1 and _IS_UNSPACED.match(p) is not None for p in pieces]
    # True for a run of letters and digits (it glues to a neighbour); False for what never glues
    gluing = [piece[0].isalnum() and not alone for piece, alone in zip(pieces, apart)]
    out = []
    for i, piece in enumerate(pieces):
        if piece[0].isalnum():
            out.append(piece if len(piece) <= LONG_RUN else "#" + hashlib.blake2b(piece.encode(), digest_size=16).hexdigest())
        elif apart[i]:
            out.append(f"_bb{ord(piece):x}")
        else:
            left = "w" if i > 0 and gluing[i - 1] else "b"
            right = "w" if i + 1 < len(pieces) and gluing[i + 1] else "b"
            out.append(f"_{left}{right}{ord(piece):x}")
    return out


def analysed(text: str) -> str:
    """What is sent for the `tokens` field (and, for a name key, as the phrase)."""
    return " ".join(tokens(normalize(text)))


def document_source(document: Document, convert: Callable[[str], str] | None = None,
                    mentions: Iterable[str] | None = None) -> dict:
    """What is sent for one document: its fields as read, the tokens of its searchable text
    after `convert` (the index's converter: Chinese to simplified characters, or None), and, under
    mentions="maximal", the entities it mentions (`mentions`, sorted)."""
    searchable = convert(document.searchable) if convert else document.searchable
    source = {"id": document.id, "title": document.title, "text": document.text, "tokens": analysed(searchable),
              "links": list(document.links)}
    if document.url:  # kept where the corpus gives one (WikiExtractor), for a reader to find the page
        source["url"] = document.url
    if mentions is not None:
        source["mentions"] = sorted(mentions)
    return source


def index_body(settings: IndexSettings, shards: int = 1) -> dict:
    """The index's creation request; the `mentions` field only where it is counted (name-based,
    mentions="maximal"), so an index under "any" is created as before the setting existed."""
    body = {
        "settings": {
            "number_of_shards": shards,
            "analysis": {
                "tokenizer": {"factprobe_ws": {"type": "whitespace", "max_token_length": 4 * LONG_RUN}},
                "analyzer": {_ANALYZER: {"type": "custom", "tokenizer": "factprobe_ws"}},
            },
        },
        "mappings": {
            "_meta": {"factprobe": {"format": 1, "settings": settings.to_dict()}},
            "dynamic": "strict",
            "_source": {"excludes": ["tokens"]},
            "properties": {
                "id": {"type": "keyword"},
                "title": {"type": "text", "index": False},
                "url": {"type": "keyword", "index": False},
                "text": {"type": "text", "index": False},
                "tokens": {"type": "text", "analyzer": _ANALYZER, "index_options": "positions", "norms": False},
                "links": {"type": "keyword"},
            },
        },
    }
    if stores_mentions(settings):
        body["mappings"]["properties"]["mentions"] = {"type": "keyword"}
    return body


def stores_mentions(settings: IndexSettings) -> bool:
    """Whether documents carry their `mentions` (entities found at index time) and counts use them."""
    return settings.method == "names" and settings.mentions == "maximal"


def _one_line(error: Exception) -> str:
    text = " ".join(str(error).split())
    refused = re.search(r"\[Errno -?\d+\] [^)\]]*", text)
    if refused:  # the transport wraps the socket's reason in three layers of repr
        return f"cannot connect ({refused.group(0)})"
    return text if len(text) <= 300 else text[:297] + "..."


class ElasticsearchIndex:
    """Counts in an Elasticsearch index. `names(entity)` gives an entity's name keys for
    name-based counting under mentions="any" (for example `StoreNames`); link-based counting needs
    none. `mentions` (a MentionFinder under the index's settings) finds the entities each added
    document mentions, which an index under mentions="maximal" stores and counts by."""

    def __init__(self, url: str, index: str, names: Callable[[str], Sequence[str]] | None = None,
                 *, timeout: float = 60.0,
                 mentions: Callable[[Sequence[Document]], Sequence[Iterable[str]]] | None = None) -> None:
        from elasticsearch import Elasticsearch

        self.url, self.index, self.names, self.mentions = url, index, names, mentions
        self.stored_mentions = False  # the bound settings count documents' `mentions` field
        self.convert: Callable[[str], str] | None = None  # documents' text, as the bound settings say
        self.client = Elasticsearch(url, request_timeout=timeout, max_retries=2, retry_on_timeout=True)
        self._call(self.client.info)
        self._phrases: dict[str, list[str]] = {}

    def _call(self, method, *args, **kwargs):
        """Every request goes through here, so that any failure is one line that names the URL."""
        from elastic_transport import TransportError
        from elasticsearch import ApiError

        try:
            return method(*args, **kwargs)
        except (TransportError, ApiError) as error:
            raise BackendUnavailable(f"Elasticsearch at {self.url}: {_one_line(error)}") from None

    def exists(self) -> bool:
        return bool(self._call(self.client.indices.exists, index=self.index))

    def settings(self) -> dict | None:
        if not self.exists():
            return None
        mapping = self._call(self.client.indices.get_mapping, index=self.index)
        meta = next(iter(mapping.body.values()))["mappings"].get("_meta", {}).get("factprobe")
        if meta is None:
            raise BackendUnavailable(f"Elasticsearch at {self.url}: index {self.index!r} was not made by factprobe")
        return meta["settings"]

    def bind_settings(self, settings: dict) -> None:
        from .embedded import IndexSettingsError, mentions_hint

        stored = self.settings()
        if stored is None:
            self._call(self.client.indices.create, index=self.index, **index_body(IndexSettings.from_dict(settings)))
        elif stored != settings:
            raise IndexSettingsError(
                f"index {self.index!r} at {self.url} was built with {stored}; refusing to add documents with "
                f"{settings}. Use another --es-index for other settings{mentions_hint(stored, settings)}")
        bound = IndexSettings.from_dict(settings)
        self.convert = bound.converter()
        self.stored_mentions = stores_mentions(bound)

    def add_documents(self, documents: Iterable[Document], *, batch: int = 2_000) -> Iterator[int]:
        """Bulk-index documents; yields how many were new after each batch. A document id already
        in the index is left alone (op type `create`), so a rerun or a later addition keeps
        every count exact."""
        from elasticsearch.helpers import streaming_bulk

        if self.stored_mentions and self.mentions is None:
            raise ValueError("an index under mentions=maximal stores each document's mentions: "
                             "give mentions=... (a MentionFinder)")

        def actions():
            for chunk in _batches(documents, batch):
                found = self.mentions(chunk) if self.stored_mentions else [None] * len(chunk)
                for document, entities in zip(chunk, found):
                    yield {"_op_type": "create", "_index": self.index, "_id": _doc_id(document.id),
                           "_source": document_source(document, self.convert, entities)}

        added = seen = 0
        results = streaming_bulk(self.client.options(request_timeout=300), actions(), chunk_size=batch,
                                 raise_on_error=False, max_retries=3)
        try:
            for ok, item in results:
                outcome = item.get("create", {})
                if ok:
                    added += 1
                elif outcome.get("status") != 409:  # 409: already indexed
                    raise BackendUnavailable(f"Elasticsearch at {self.url} refused document "
                                             f"{outcome.get('_id')!r}: {_one_line(Exception(outcome.get('error')))}")
                seen += 1
                if seen % batch == 0:
                    yield added
                    added = 0
        except BackendUnavailable:
            raise
        except Exception as error:  # transport failures surface from inside the helper
            raise BackendUnavailable(f"Elasticsearch at {self.url}: {_one_line(error)}") from None
        self._call(self.client.indices.refresh, index=self.index)
        yield added

    def track_pairs(self, pairs) -> int:
        """Nothing to prepare: a cluster counts any pair when asked (the embedded index precounts)."""
        return 0

    def document_count(self) -> int:
        return self._call(self.client.count, index=self.index)["count"]

    # -- counting -------------------------------------------------------------------------------

    def _counted_by(self) -> str:
        """The field a count reads: "links", "mentions" (stored at index time) or "tokens" (phrases)."""
        if not hasattr(self, "_bound_field"):
            stored = self.settings()
            if stored is None:
                raise BackendUnavailable(f"Elasticsearch at {self.url}: no index {self.index!r}; "
                                         "build it with `factprobe corpus index --backend elasticsearch`")
            bound = IndexSettings.from_dict(stored)
            self._bound_field = "links" if bound.method == "links" else "mentions" if stores_mentions(bound) else "tokens"
        return self._bound_field

    def _mentions(self, entity: str) -> dict | None:
        """The filter for "mentions entity"; None when nothing can match (an entity without names)."""
        field = self._counted_by()
        if field != "tokens":
            return {"term": {field: entity}}
        if self.names is None:
            raise ValueError("name-based counting needs the entities' names (names=...)")
        phrases = self._phrases.get(entity)
        if phrases is None:
            phrases = self._phrases[entity] = [" ".join(tokens(key)) for key in self.names(entity)]
        if not phrases:
            return None
        return {"bool": {"should": [{"match_phrase": {"tokens": p}} for p in phrases], "minimum_should_match": 1}}

    def _search(self, entities: Sequence[str]) -> dict | None:
        filters = [self._mentions(e) for e in entities]
        if any(f is None for f in filters):
            return None
        return {"size": 0, "track_total_hits": True, "query": {"bool": {"filter": filters}}}

    def entity_frequency(self, entity: str) -> int:
        return self.pair_frequencies([(entity,)])[0]

    def pair_frequency(self, head: str, tail: str) -> int:
        return self.pair_frequencies([(head, tail)])[0]

    def pair_frequencies(self, pairs: Sequence[Sequence[str]], *, per_request: int = 200) -> list[int]:
        """One `_msearch` per `per_request` pairs, each a size-0 search with its filters."""
        counts = [0] * len(pairs)
        for start in range(0, len(pairs), per_request):
            searches, slots = [], []
            for slot in range(start, min(start + per_request, len(pairs))):
                body = self._search(pairs[slot])
                if body is not None:
                    searches += [{"index": self.index}, body]
                    slots.append(slot)
            if not searches:
                continue
            answer = self._call(self.client.msearch, searches=searches)
            for slot, response in zip(slots, answer["responses"]):
                if "error" in response:
                    raise BackendUnavailable(f"Elasticsearch at {self.url}: a count for {pairs[slot]} failed: "
                                             f"{_one_line(Exception(response['error']))}")
                counts[slot] = response["hits"]["total"]["value"]
        return counts

    def close(self) -> None:
        self.client.close()
        if self.names is not None and hasattr(self.names, "close"):
            self.names.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _batches(documents: Iterable[Document], size: int) -> Iterator[list[Document]]:
    chunk: list[Document] = []
    for document in documents:
        chunk.append(document)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _doc_id(document_id: str) -> str:
    """Elasticsearch ids are at most 512 bytes; longer ones go in by digest (the id field keeps them)."""
    if len(document_id.encode()) <= 512:
        return document_id
    return "sha256:" + hashlib.sha256(document_id.encode()).hexdigest()

"""POST /infini-gram: infini-gram's API (the request and answer shapes of
https://api.infini-gram.io/) answered from the token indexes the operator named at start
(`serve --ngram-index DIR`, repeatable), so index/infini_gram/api.py's client runs the same
against this server as against the public one.

A client names an index by its folder's name only, among those configured: no path a client
sends is ever opened. Queries are token ids (`query_ids`): the server holds no tokenizer. Sizes
are bounded below the service's 64 KB body limit: at most MAX_IDS ids a term, MAX_CLAUSES clauses
of MAX_TERMS terms. It reads only, so like the service's GET routes it needs no token.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Annotated, Literal, Union

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from .state import State

MAX_IDS = 1000
# A CNF is counted exactly from every clause's positions; past this many a request would cost a
# stranger's worth of memory and time, so it is refused (the public API subsamples instead).
MAX_CLAUSE_OCCURRENCES = 2_000_000
MAX_CLAUSES = 8
MAX_TERMS = 32
TokenId = Annotated[int, Field(ge=0, le=2**32 - 1, strict=True)]
Term = Annotated[list[TokenId], Field(max_length=MAX_IDS)]
Clause = Annotated[list[Term], Field(min_length=1, max_length=MAX_TERMS)]
Cnf = Annotated[list[Clause], Field(min_length=1, max_length=MAX_CLAUSES)]

ngram_router = APIRouter(tags=["infini-gram"])
_open_lock = threading.Lock()


class NgramQuery(BaseModel):
    # infini-gram's clients send fields this server does not use (`corpus`, `maxnum`): ignored.
    model_config = ConfigDict(extra="ignore")

    index: str = Field(min_length=1, max_length=200)
    query_type: Literal["count", "find"]
    query_ids: Union[Term, Cnf, None] = None
    query: str | None = Field(None, max_length=2000)
    max_clause_freq: int = Field(50_000, ge=1, le=500_000)
    max_diff_tokens: int = Field(100, ge=1, le=1000)


class NgramIndexes:
    """The configured folders by name, each opened once on first use and shared by the threads
    (a TokenIndexFolder only reads its maps)."""

    def __init__(self, folders: tuple[Path, ...]) -> None:
        self.folders = {folder.name: folder for folder in folders}
        self.opened: dict = {}

    def get(self, name: str):
        from ...index.infini_gram.layout import TokenIndexFolder, token_folder

        if name not in self.folders:
            return None
        with _open_lock:
            if name not in self.opened:
                self.opened[name] = TokenIndexFolder(token_folder(self.folders[name]))
            return self.opened[name]


def _indexes(request: Request, state) -> NgramIndexes:
    found = getattr(request.app.state, "ngram_indexes", None)
    if found is None:
        with _open_lock:
            found = getattr(request.app.state, "ngram_indexes", None)
            if found is None:
                found = NgramIndexes(tuple(state.config.ngram_indexes))
                request.app.state.ngram_indexes = found
    return found


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


@ngram_router.post("/infini-gram")
def infini_gram(body: NgramQuery, request: Request, state: State):
    """count (an n-gram's occurrences; a CNF's window co-occurrence) and find (suffix-array
    ranks by shard), as infini-gram's API answers them."""
    from ...index.infini_gram.cnf import cnf_count
    from ...index.infini_gram.layout import LayoutError

    began = time.perf_counter()
    indexes = _indexes(request, state)
    try:
        index = indexes.get(body.index)
    except LayoutError as error:
        return _error(503, f"index {body.index} unusable: {error}")
    if index is None:
        served = ", ".join(sorted(indexes.folders)) or "none (start with --ngram-index DIR)"
        return _error(404, f"unknown index {body.index!r}; this server serves: {served}")
    if body.query_ids is None:
        return _error(400, "this server counts token ids: send query_ids, tokenized with the "
                           "index's own tokenizer (it holds none to read `query`)")
    ids = body.query_ids
    nested = bool(ids) and isinstance(ids[0], list)
    if body.query_type == "find":
        if nested:
            return _error(400, "find takes one n-gram (a list of token ids); find_cnf is not served")
        if not ids:
            return _error(400, "find needs a non-empty n-gram")
        segments = index.segments(ids)
        answer = {"cnt": sum(hi - lo for lo, hi in segments),
                  "segment_by_shard": [list(s) for s in segments]}
    elif not nested:
        answer = {"count": index.count(ids) if ids else index.tokens, "approx": False}
    else:
        if any(not term for clause in ids for term in clause):
            return _error(400, "every term of a CNF query needs at least one token id")
        if len(ids) > 1:
            for number, clause in enumerate(ids):
                total = sum(index.count(term) for term in clause)
                if total > MAX_CLAUSE_OCCURRENCES:
                    return _error(400, f"clause {number} occurs {total} times, over the "
                                       f"{MAX_CLAUSE_OCCURRENCES} this server counts exactly")
        answer = {"count": cnf_count(index, ids, body.max_diff_tokens), "approx": False}
    return {**answer, "token_ids": ids, "latency": (time.perf_counter() - began) * 1000}

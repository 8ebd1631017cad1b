"""Counts from an infini-gram API server: the public one over Dolma, RedPajama, the Pile and
OLMo-2's data (https://api.infini-gram.io/), or `factprobe serve` answering the same API from a
local index (POST /infini-gram).

What these counts are is said in every result (`semantics`), never left to the reader: an n-gram
count is occurrences (every position), not documents; an AND of terms is infini-gram's window
co-occurrence, positions where the terms fall within `max_diff_tokens` tokens of each other,
subsampled (approximate) past `max_clause_freq` occurrences of a term and blind to a document
boundary inside the window. Neither is KDF's count of documents that mention both.

Queries go as token ids (`query_ids`) tokenized by the caller with the tokenizer the index was
built with (Llama-2's for almost every public index). urllib only: no new dependency.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field

PUBLIC_URL = "https://api.infini-gram.io/"
MAX_RESPONSE_BYTES = 1 << 20
DEFAULT_MAX_DIFF_TOKENS = 100
DEFAULT_MAX_CLAUSE_FREQ = 50_000

OCCURRENCES = ("occurrences: positions where the token n-gram occurs (infini-gram's count), "
               "not documents")
ANY_OCCURRENCES = ("occurrences: positions where any of the token n-grams occurs (infini-gram's "
                   "OR count), not documents")
WINDOWED = ("window co-occurrence (approximate): positions where the terms fall within {window} "
            "tokens of each other (infini-gram's AND count), not KDF's document counts")
SUBSAMPLED = "; approximate: a term past {cap} occurrences was subsampled"


class ApiError(RuntimeError):
    """The server refused the query or answered something that is not infini-gram's API."""


class ApiUnavailable(ApiError):
    """The server could not be reached (network, timeout, 5xx) after the retries."""


@dataclass(frozen=True)
class ApiCount:
    index: str
    count: int
    approx: bool
    semantics: str  # what `count` counts, in words: never document counts
    query_ids: list = field(default_factory=list)
    documents: bool = False  # always False: no infini-gram API count is a count of documents


def _check_ids(ids: Sequence[int], what: str) -> list[int]:
    values = [int(i) for i in ids]
    if not values:
        raise ValueError(f"{what}: an empty n-gram")
    if min(values) < 0:
        raise ValueError(f"{what}: negative token id {min(values)}")
    return values


class InfiniGramApi:
    """One index on one infini-gram API server."""

    def __init__(self, index: str, url: str = PUBLIC_URL, *, timeout: float = 30.0,
                 retries: int = 2, backoff: float = 0.5, token: str | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"{url!r}: an infini-gram API URL starts with http:// or https://")
        self.index, self.url = index, url
        self.timeout, self.retries, self.backoff, self.token = timeout, retries, backoff, token

    def _post(self, payload: dict) -> dict:
        data = json.dumps({"index": self.index, **payload}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    body = response.read(MAX_RESPONSE_BYTES + 1)
            except urllib.error.HTTPError as error:
                body = error.read(MAX_RESPONSE_BYTES + 1)
                if error.code >= 500:
                    last = f"HTTP {error.code}"
                    continue
                raise ApiError(f"{self.url}: {self._message(body) or f'HTTP {error.code}'}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                last = str(getattr(error, "reason", error))
                continue
            return self._answer(body)
        raise ApiUnavailable(f"{self.url}: unreachable after {self.retries + 1} tries ({last})")

    def _message(self, body: bytes) -> str | None:
        try:
            answer = json.loads(body)
        except ValueError:
            return None
        if isinstance(answer, dict):
            found = answer.get("error") or answer.get("detail")
            if isinstance(found, list):  # a validation error: the first field it names
                first = found[0] if found else {}
                return f"{'.'.join(map(str, first.get('loc', [])))}: {first.get('msg', '')}"
            return str(found) if found else None
        return None

    def _answer(self, body: bytes) -> dict:
        if len(body) > MAX_RESPONSE_BYTES:
            raise ApiError(f"{self.url}: a response over {MAX_RESPONSE_BYTES} bytes")
        try:
            answer = json.loads(body)
        except ValueError:
            raise ApiError(f"{self.url}: not a JSON response") from None
        if not isinstance(answer, dict):
            raise ApiError(f"{self.url}: not a JSON object")
        if answer.get("error"):
            raise ApiError(f"{self.url}: {answer['error']}")
        return answer

    def _count(self, query_ids: list, semantics: str, extra: dict | None = None) -> ApiCount:
        answer = self._post({"query_type": "count", "query_ids": query_ids, **(extra or {})})
        count, approx = answer.get("count"), answer.get("approx", False)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ApiError(f"{self.url}: count {count!r} is not a count")
        if approx:
            cap = (extra or {}).get("max_clause_freq", DEFAULT_MAX_CLAUSE_FREQ)
            semantics += SUBSAMPLED.format(cap=cap)
        return ApiCount(self.index, count, bool(approx), semantics, query_ids)

    def count(self, ids: Sequence[int]) -> ApiCount:
        """Occurrences of one token n-gram."""
        return self._count(_check_ids(ids, "count"), OCCURRENCES)

    def counts(self, queries: Sequence[Sequence[int]]) -> list[ApiCount]:
        return [self.count(ids) for ids in queries]

    def any_count(self, variants: Sequence[Sequence[int]]) -> ApiCount:
        """Occurrences of any of a name's token forms (one OR clause)."""
        clause = [_check_ids(ids, "any_count") for ids in variants]
        if not clause:
            raise ValueError("any_count: no token forms")
        if len(clause) == 1:
            return self._count(clause[0], OCCURRENCES)
        return self._count([clause], ANY_OCCURRENCES)

    def cooccurrence(self, head: Sequence[Sequence[int]], tail: Sequence[Sequence[int]], *,
                     max_diff_tokens: int = DEFAULT_MAX_DIFF_TOKENS,
                     max_clause_freq: int = DEFAULT_MAX_CLAUSE_FREQ) -> ApiCount:
        """infini-gram's AND of two OR clauses (each a name's token forms): window co-occurrence,
        approximate by construction, never a document count."""
        cnf = [[_check_ids(ids, "cooccurrence") for ids in head],
               [_check_ids(ids, "cooccurrence") for ids in tail]]
        if not cnf[0] or not cnf[1]:
            raise ValueError("cooccurrence: each side needs at least one token form")
        extra = {"max_diff_tokens": int(max_diff_tokens), "max_clause_freq": int(max_clause_freq)}
        result = self._count(cnf, WINDOWED.format(window=max_diff_tokens), extra)
        return ApiCount(result.index, result.count, True, result.semantics, cnf)

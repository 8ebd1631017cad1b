"""On-disk results of a scorer (`CachedScorer`), for `factprobe model ... --cache FILE`: a request
answered once, by this command or an earlier one killed partway, is read back instead of asked of
the model again. Evaluations do not use it; they resume from their own items.jsonl (runner.py).

A result is stored under (model identity, kind, request digest), the digest being the SHA-256 of
the request's canonical JSON, which holds everything that determines the answer (text, sampling
settings, seed). A request is the unit: a context is scored with all its continuations or not at
all. A recomputed request may share its passes with other requests than the first time, so its
numbers agree to the float rounding of those passes (within 1e-4 nats, tests/test_scoring_exact.py),
bit for bit where the scorer scores each context on its own (`share_across_requests=False`). Each
chunk of answers is committed as soon as it is computed; a kill loses at most the chunk in flight.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Sequence

from tqdm import tqdm

from .requests import (ContinuationScore, FillMaskRequest, Generation, GenerateRequest, LabelPathRequest,
                       LabelPathScore, LoglikelihoodRequest, MaskCandidate)
from .scorer import Scorer

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    model TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (model, kind, key)
) WITHOUT ROWID;
"""


def request_key(kind: str, request) -> str:
    fields = asdict(request)
    # `beams` came later: a request without beam search keys as it did before, so caches written
    # then are still read.
    if fields.get("beams") == 1:
        del fields["beams"]
    canonical = json.dumps([kind, fields], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class CachedScorer(Scorer):
    """Wraps a scorer; answers from the cache what it can and asks the model only for the rest."""

    def __init__(self, inner: Scorer, path: str | Path, *, chunk: int = 32, progress: bool = False) -> None:
        super().__init__()
        self.inner = inner
        self.identity = inner.identity
        self.work = inner.work
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(_SCHEMA)
        self.chunk = chunk
        self.progress = progress
        self.hits = 0
        self.computed = 0

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[list[ContinuationScore]]:
        # Requests that share a context go to the model together, so it encodes the context once.
        return self._answer("loglikelihood", requests, self.inner.loglikelihood,
                            lambda v: [ContinuationScore(**s) for s in v], order=lambda r: r.context)

    def label_paths(self, requests: Sequence[LabelPathRequest]) -> list[list[LabelPathScore]]:
        return self._answer("label_paths", requests, self.inner.label_paths,
                            lambda v: [LabelPathScore(**s) for s in v], order=lambda r: r.prompt)

    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        return self._answer("generate", requests, self.inner.generate,
                            lambda v: Generation(tuple(v["texts"]), tuple(v["finish_reasons"])))

    def fill_mask(self, requests: Sequence[FillMaskRequest]) -> list[list[MaskCandidate]]:
        return self._answer("fill_mask", requests, self.inner.fill_mask,
                            lambda v: [MaskCandidate(**c) for c in v])

    def _answer(self, kind: str, requests: Sequence, compute: Callable, decode: Callable, order=None) -> list:
        keys = [request_key(kind, r) for r in requests]
        answers: list = [None] * len(requests)
        missing: list[int] = []
        for i, key in enumerate(keys):
            row = self.db.execute("SELECT value FROM results WHERE model=? AND kind=? AND key=?",
                                  (self.identity, kind, key)).fetchone()
            if row is None:
                missing.append(i)
            else:
                answers[i] = decode(json.loads(row[0]))
        self.hits += len(requests) - len(missing)
        if order is not None:
            missing.sort(key=lambda i: order(requests[i]))
        bar = tqdm(total=len(requests), initial=len(requests) - len(missing), desc=f"{kind} {self.identity}",
                   unit="req", disable=not self.progress, dynamic_ncols=True)
        for start in range(0, len(missing), self.chunk):
            chunk = missing[start:start + self.chunk]
            computed = compute([requests[i] for i in chunk])
            with self.db:
                self.db.executemany(
                    "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?)",
                    [(self.identity, kind, keys[i], json.dumps(_plain(value))) for i, value in zip(chunk, computed)])
            for i, value in zip(chunk, computed):
                answers[i] = value
            self.computed += len(chunk)
            bar.update(len(chunk))
        bar.close()
        return answers

    def close(self) -> None:
        self.db.close()
        self.inner.close()


def _plain(value):
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return asdict(value)

"""The semantic index: which entities resemble which, for Sem and Temp+Sem distractors.

Each entity is a TF-IDF-weighted bag of graph features (itself, its relations, its objects, its
(relation, object) pairs). Sem ranks a pool by exact cosine to o, ties by id, not by approximate
nearest neighbours, which got real graphs wrong (measured in docs/design/frequency.md).
"""

from __future__ import annotations

import bisect
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
from scipy import sparse

from ..kg.outputs import replace_file, replacing

FORMAT = 2
DECIMALS = 6  # similarities are compared, and ties broken by id, at this precision
MIN_DF = 1  # a feature is kept when at least this many entities hold it (distractors build --min-df)


def feature_bags(kg) -> Iterator[tuple[str, list[str]]]:
    """(entity, features) for every item entity of the graph, in id order."""
    facts = kg.facts()
    pending = next(facts, None)
    for entity in kg.entity_ids("item"):
        bag = [entity]
        while pending is not None and pending.subject < entity:
            pending = next(facts, None)
        while pending is not None and pending.subject == entity:
            bag.append(pending.relation)
            if pending.object is not None:
                bag += [pending.object, f"{pending.relation}={pending.object}"]
            pending = next(facts, None)
        yield entity, bag


def _identity(bag: list[str]) -> list[str]:
    return bag


@dataclass(frozen=True)
class Pool:
    """A candidate pool as the index sees it: the members sorted by id, and the pool's inverted
    index (feature x member TF-IDF weights; a member the index does not know has an empty
    column and similarity 0). Features most members share (the pool's own type, the relations
    every member has) are kept as dense rows: summing them is a dense product, many times
    cheaper per member than scattered postings."""
    members: tuple[str, ...]
    postings: sparse.csr_matrix  # the features held sparse (a dense feature's row is empty)
    dense: np.ndarray  # (dense features x members), float64
    dense_row: dict[int, int]  # feature -> its row in `dense`

    def __len__(self) -> int:
        return len(self.members)


DENSE_SHARE = 1 / 16  # a feature held by this share of a pool's members is scored densely
DENSE_MAX = 64  # at most this many dense rows (8 bytes x members each)
DENSE_MIN_POOL = 4096  # below this a pool is all postings: nothing to gain


class SemanticIndex:
    def __init__(self, entities: list[str], matrix: sparse.csr_matrix, meta: dict):
        self.entities = entities
        self.row = {e: i for i, e in enumerate(entities)}
        self.matrix = matrix
        self.meta = meta

    # -- building -----------------------------------------------------------------------------

    @classmethod
    def build(cls, bags: Iterable[tuple[str, list[str]]], *, min_df: int = MIN_DF,
              on_stage: Callable[[str], None] = lambda stage: None) -> SemanticIndex:
        from sklearn.feature_extraction.text import TfidfVectorizer

        started = time.perf_counter()
        on_stage("reading feature bags")
        entities, docs = [], []
        for entity, bag in bags:
            entities.append(entity)
            docs.append(bag)
        on_stage(f"TF-IDF over {len(entities):,} entities")
        vectorizer = TfidfVectorizer(analyzer=_identity, min_df=min_df, sublinear_tf=True, dtype=np.float32)
        matrix = vectorizer.fit_transform(docs).tocsr() if docs else sparse.csr_matrix((0, 0), dtype=np.float32)
        matrix.sort_indices()
        meta = {"format": FORMAT, "entities": len(entities), "features": int(matrix.shape[1]),
                "indexed": int(np.count_nonzero(matrix.getnnz(axis=1))), "min_df": min_df,
                "build_seconds": round(time.perf_counter() - started, 2)}
        return cls(entities, matrix, meta)

    # -- files --------------------------------------------------------------------------------

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        replace_file(folder / "entities.txt", "\n".join(self.entities) + "\n")  # never through a link
        with replacing(folder / "tfidf.npz") as stream:
            sparse.save_npz(stream, self.matrix, compressed=False)
        (folder / "hnsw.bin").unlink(missing_ok=True)  # an index of format 1 had one; nothing reads it now
        replace_file(folder / "meta.json", json.dumps(self.meta, indent=2) + "\n")

    @classmethod
    def load(cls, folder: str | Path) -> SemanticIndex:
        folder = Path(folder)
        if not (folder / "meta.json").is_file():
            raise FileNotFoundError(f"no semantic index in {folder}; build one with `factprobe distractors build`")
        meta = json.loads((folder / "meta.json").read_text())
        if meta.get("format") != FORMAT:
            raise ValueError(f"{folder}: semantic index format {meta.get('format')}, this factprobe reads {FORMAT}; "
                             f"rebuild it with `factprobe distractors build`")
        entities = (folder / "entities.txt").read_text(encoding="utf-8").split()
        matrix = sparse.load_npz(folder / "tfidf.npz").tocsr()
        return cls(entities, matrix, meta)

    # -- searching ----------------------------------------------------------------------------

    def has_vector(self, entity: str) -> bool:
        row = self.row.get(entity)
        return row is not None and self.matrix.indptr[row + 1] > self.matrix.indptr[row]

    def pool(self, members: Iterable[str]) -> Pool:
        """The pool of `members` (any order, duplicates allowed), ready to be searched."""
        members = tuple(sorted(set(members)))
        known = [(k, self.row[e]) for k, e in enumerate(members) if e in self.row]
        columns = np.fromiter((k for k, _ in known), dtype=np.int64, count=len(known))
        rows = self.matrix[np.fromiter((r for _, r in known), dtype=np.int64, count=len(known))]
        member_of_entry = np.repeat(columns, np.diff(rows.indptr))
        postings = sparse.csr_matrix((rows.data, (rows.indices, member_of_entry)),
                                     shape=(self.matrix.shape[1], len(members)), dtype=np.float32)
        postings.sort_indices()
        dense_row: dict[int, int] = {}
        dense = np.zeros((0, len(members)))
        if len(members) >= DENSE_MIN_POOL:
            counts = np.diff(postings.indptr)
            common = np.flatnonzero(counts >= len(members) * DENSE_SHARE)
            common = common[np.argsort(-counts[common], kind="stable")][:DENSE_MAX]
            if len(common):
                dense = postings[common].toarray().astype(np.float64)
                dense_row = {int(f): k for k, f in enumerate(common)}
                keep = np.ones(postings.shape[0], dtype=bool)
                keep[common] = False
                postings = sparse.diags(keep.astype(np.float32)) @ postings
                postings.eliminate_zeros()
                postings.sort_indices()
        return Pool(members, postings.tocsr(), dense, dense_row)

    def scores(self, entity: str, pool: Pool) -> np.ndarray:
        """Cosine of `entity` with every member of `pool` (float64, rounded to DECIMALS): the sum,
        over the entity's own features, of the members' weights for that feature."""
        if not self.has_vector(entity):
            return np.zeros(len(pool))
        row = self.row[entity]
        lo, hi = self.matrix.indptr[row], self.matrix.indptr[row + 1]
        features, weights = self.matrix.indices[lo:hi], self.matrix.data[lo:hi].astype(np.float64)
        hits = pool.postings[features]
        contributions = hits.data * np.repeat(weights, np.diff(hits.indptr))
        # float64 even when no posting matches: numpy 2 gives int64 zeros for an empty input,
        # which neither takes the dense rows' float products nor the -inf `ranked` marks with
        total = np.bincount(hits.indices, weights=contributions, minlength=len(pool)).astype(np.float64, copy=False)
        # Dense rows one at a time, in feature order: a BLAS product would sum in an order that
        # depends on its thread count (ties between near-duplicates must not), and is slower
        # here under load than these few vector updates.
        scaled = np.empty(len(pool))
        for f, w in zip(features.tolist(), weights.tolist()):
            k = pool.dense_row.get(f)
            if k is not None:
                total += np.multiply(pool.dense[k], w, out=scaled)
        return np.round(total, DECIMALS, out=total)

    def ranked(self, entity: str, pool: Pool, first: int = 64) -> Iterator[tuple[str, float]]:
        """Every member of `pool` but `entity` itself, most similar first, ties by id: the exact Sem
        order. Lazy: each round takes the next best `take` with a partial sort, so the first few
        cost one pass over the pool's scores."""
        if not self.has_vector(entity):
            return
        scores = self.scores(entity, pool)
        left = len(pool)
        own = bisect.bisect_left(pool.members, entity)
        if own < len(pool) and pool.members[own] == entity:
            scores[own], left = -np.inf, left - 1
        take = first
        while left:
            if take < left:
                edge = np.partition(scores, len(scores) - take)[len(scores) - take]
                above = np.flatnonzero(scores > edge)
                # near-duplicates tie by the thousand: of a tie at the edge only the smallest ids
                # are due this round (positions are in id order); the rest stay for the next
                tied = np.flatnonzero(scores == edge)[:take - len(above)]
                chosen = np.concatenate([above, tied])
            else:
                chosen = np.flatnonzero(scores > -np.inf)
            # members are sorted by id, so the position breaks ties by id
            chosen = chosen[np.lexsort((chosen, -scores[chosen]))]
            for k in chosen.tolist():
                yield pool.members[k], float(scores[k])
            scores[chosen] = -np.inf  # taken
            left -= len(chosen)
            take *= 8

    def similarities(self, entity: str, others: Sequence[str]) -> list[float]:
        """Exact cosine of `entity` with each of `others` (0 for an entity without a vector)."""
        if not self.has_vector(entity):
            return [0.0] * len(others)
        rows = [self.row.get(o) for o in others]
        known = [i for i, r in enumerate(rows) if r is not None]
        out = [0.0] * len(others)
        if known:
            scores = (self.matrix[[rows[i] for i in known]] @ self.matrix[self.row[entity]].T).toarray().ravel()
            for i, s in zip(known, scores):
                out[i] = round(float(s), DECIMALS)
        return out

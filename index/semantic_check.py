"""Building the semantic index from a store, with a check of its own answers.

`build_semantic_index` is what `factprobe distractors build`, the pipeline and a Python user call.
After building it asks Sem's questions for a seeded sample of real facts (the pool of each fact's
object, as the distractor strategies form it) and compares the served ranking with a brute-force
one (the pool's rows times the query as a plain matrix-vector product, sorted by similarity then
id). The served path is exact by design, so anything below 1.0 is a defect to report, not a
setting to tune; the check also says what a query costs at the pool sizes of this graph.
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .semantic import DECIMALS, MIN_DF, Pool, SemanticIndex, feature_bags

RECALL_FLOOR = 0.95
CHECK_QUERIES = 200  # facts a build's self-check asks about (distractors build --check)


@dataclass(frozen=True)
class CheckReport:
    queries: int
    k: int
    recall: float | None  # mean share of the brute-force top k that the served top k holds
    ms_per_query: float | None  # served path, pools already built
    largest_pool: int
    pools: int
    below: list[str] = field(default_factory=list)  # "subject relation object" of queries that missed

    @property
    def ok(self) -> bool:
        return self.recall is None or self.recall >= RECALL_FLOOR

    def summary(self) -> str:
        if not self.queries:
            return "self-check: no fact with an indexed object to ask about"
        text = (f"self-check: Sem recall@{self.k} {self.recall:.4f} against brute force over {self.queries} "
                f"sampled facts ({self.pools} pools, largest {self.largest_pool:,}), "
                f"{self.ms_per_query:.2f} ms per query")
        if not self.ok:
            text += (f"; BELOW {RECALL_FLOOR}: the served ranking disagrees with brute force on "
                     f"{len(self.below)} facts (first: {self.below[0]}). This is a defect: please report it "
                     f"with the store; meanwhile `distractors query` shows the affected facts")
        return text


def reference_top(index: SemanticIndex, entity: str, pool: Pool, k: int) -> list[tuple[str, float]]:
    """Brute force: every pool member's row times the query (a plain matrix-vector product, no
    inverted index), sorted by (-cosine, id)."""
    query = index.matrix[index.row[entity]].toarray().ravel().astype(np.float64)
    scores = np.zeros(len(pool))
    known = [(i, index.row[m]) for i, m in enumerate(pool.members) if m in index.row]
    if known:
        rows = index.matrix[[r for _, r in known]].astype(np.float64)
        scores[[i for i, _ in known]] = np.round(rows @ query, DECIMALS)
    order = sorted((i for i, m in enumerate(pool.members) if m != entity), key=lambda i: (-scores[i], i))
    return [(pool.members[i], float(scores[i])) for i in order[:k]]


def check(index: SemanticIndex, kg, *, queries: int = CHECK_QUERIES, k: int = 10, seed: int = 0,
          max_reference_pool: int = 200_000) -> CheckReport:
    """Served Sem rankings against brute force for up to `queries` facts drawn from the graph.
    Pools larger than `max_reference_pool` are timed but not brute-forced (a dense pass over them
    would take longer than the build)."""
    from .distractors import DistractorFinder

    finder = DistractorFinder(kg, index)
    sample = _sample_facts(kg, index, queries, seed)
    recalls, below, seconds, sizes = [], [], 0.0, {}
    for subject, relation, obj in sample:
        key = finder.pool_key(finder.rules(subject, relation, obj))
        pool = finder._semantic_pool(key)
        sizes[key] = len(pool)
        started = time.perf_counter()
        served = [e for e, _ in itertools.islice(index.ranked(obj, pool), k)]
        seconds += time.perf_counter() - started
        if len(pool) > max_reference_pool:
            continue
        truth = [e for e, _ in reference_top(index, obj, pool, k)]
        recall = len(set(served) & set(truth)) / len(truth) if truth else 1.0
        if served != truth:
            below.append(f"{subject} {relation} {obj}")
        recalls.append(recall)
    return CheckReport(len(sample), k, float(np.mean(recalls)) if recalls else None,
                       seconds / len(sample) * 1e3 if sample else None, max(sizes.values(), default=0),
                       len(sizes), below)


def _sample_facts(kg, index: SemanticIndex, queries: int, seed: int) -> list[tuple[str, str, str]]:
    """A seeded reservoir sample of entity-object facts whose object the index knows."""
    rng = random.Random(seed)
    sample: list[tuple[str, str, str]] = []
    seen = 0
    for fact in kg.facts(entity_objects_only=True):
        if not index.has_vector(fact.object):
            continue
        seen += 1
        if len(sample) < queries:
            sample.append((fact.subject, fact.relation, fact.object))
        else:
            j = rng.randrange(seen)
            if j < queries:
                sample[j] = (fact.subject, fact.relation, fact.object)
    return sorted(sample)


def build_semantic_index(kg, out: str | Path, *, min_df: int = MIN_DF, check_queries: int = CHECK_QUERIES,
                         seed: int = 0, on_stage: Callable[[str], None] = lambda stage: None
                         ) -> tuple[SemanticIndex, CheckReport]:
    """Build the index from the store, save it to `out`, check it; the report goes into meta.json."""
    index = SemanticIndex.build(feature_bags(kg), min_df=min_df, on_stage=on_stage)
    on_stage(f"self-check on {check_queries} sampled facts")
    report = check(index, kg, queries=check_queries, seed=seed)
    index.meta["check"] = {**asdict(report), "below": report.below[:20], "ok": report.ok}
    index.save(out)
    return index, report

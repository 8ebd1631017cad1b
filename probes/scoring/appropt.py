"""ApprOpt distractors (Ammar Khodja et al. 2025): the n candidate labels a causal LM finds most
plausible after a cloze prompt, by beam search constrained to a token trie of the labels + EOS.
A label's score is log P(" " + label tokens, EOS | prompt), what a `label_paths` request asks.
Here: the searches' API (`appropt`, `appropt_many`, `ApprOptRanker`, which serves
index/distractors.DistractorFinder) and the exact reference (`exhaustive`, `path_logprobs`); the
search itself is in trie_search.py. Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import torch

from .label_trie import LabelPath, LabelTrie, Terminal, TrieCache, prompt_ids  # noqa: F401
from .scorer import Unsupported

SEARCHES_PER_PASS = 16  # searches that share a forward pass unless told (appropt_many, ApprOptRanker)
from .trie_search import ApprOptHit, SearchJob, SearchOutcome, keep_best, run_cached, run_uncached, top_hits

__all__ = ["ApprOptHit", "ApprOptQuery", "ApprOptRanker", "ApprOptResult", "SearchStats", "LabelTrie", "LabelPath",
           "Terminal", "TrieCache", "appropt", "appropt_many", "appropt_search", "appropt_uncached", "exhaustive",
           "path_logprob", "path_logprobs", "prompt_ids"]


@dataclass(frozen=True)
class SearchStats:
    steps: int  # search steps after the prompt (the cached search may serve some without a pass)
    forward_passes: int  # the passes this search took part in (a batched pass serves many searches)
    tokens_forwarded: int  # its own tokens in them, padding excluded
    completed: int  # label completions seen (EOS children of live beams, banned entities excluded)
    visited: frozenset[int]  # trie nodes entered: live beams' nodes and EOS nodes taken
    certified: bool = False  # the hits are provably the exact top n (see trie_search.py)
    width: int = 0  # the beam's width in the last search (n, or wider when exact=True widened it)


@dataclass(frozen=True)
class ApprOptResult:
    hits: tuple[ApprOptHit, ...]
    stats: SearchStats


# -- the search ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApprOptQuery:
    """One search: the n most plausible unbanned entities of `trie` after `prompt`."""

    prompt: str
    trie: LabelTrie
    n: int
    banned: frozenset[str] = frozenset()


def local_model(scorer):
    """The causal HF scorer the search drives: `scorer` itself, or the one a result cache wraps.
    Another backend (an OpenAI-compatible server, a masked LM) is refused: the search feeds the
    model one token per beam on top of its KV cache."""
    from .hf_causal import HFCausalScorer

    inner = scorer
    while not isinstance(inner, HFCausalScorer) and getattr(inner, "inner", None) is not None:
        inner = inner.inner
    if not isinstance(inner, HFCausalScorer):
        raise Unsupported(f"{getattr(scorer, 'identity', scorer)}: ApprOpt's trie beam search needs a local causal "
                          "model (hf:... or a GGUF model)")
    return inner


def _job(scorer, query: ApprOptQuery) -> SearchJob:
    if query.n < 1:
        raise ValueError(f"n must be at least 1, not {query.n}")
    query.trie.check_model(scorer)
    banned = frozenset(query.banned)
    return SearchJob(prompt_ids(scorer, query.prompt), query.trie, query.n, query.n, banned,
                query.trie.blocked(banned))


@torch.inference_mode()
def appropt_many(scorer, queries: Sequence[ApprOptQuery], *, cached: bool = True, exact: bool = False,
                 batch_size: int = SEARCHES_PER_PASS,
                 progress: Callable[[int, int], None] | None = None) -> list[ApprOptResult]:
    """ApprOpt for many prompts. Cached, `batch_size` searches share each forward pass; the
    results are those of searching one prompt at a time (up to float rounding).

    exact=False is ApprOpt as published: a beam of width n, approximate. exact=True widens the
    beam (2n, 4n, ...) of every search whose answer is not certified, until it is: the answer is
    then the exact top n of an exhaustive scoring. `stats.certified` tells either way.
    `progress`: called with (searches done, searches) as searches finish, inside a batch too (a
    widened search counts again: the total grows by it)."""
    scorer = local_model(scorer)
    jobs = [_job(scorer, q) for q in queries]
    results: list[ApprOptResult | None] = [None] * len(jobs)
    todo = list(range(len(jobs)))
    spent: dict[int, tuple[int, int, int, frozenset[int]]] = {}  # passes, tokens, steps, visited so far
    finished, total = 0, len(jobs)
    while todo:
        def done_so_far(searched: int) -> None:
            if progress:
                progress(finished + searched, total)

        outcomes = _run_all(scorer, [jobs[k] for k in todo], cached, batch_size, done_so_far)
        finished += len(todo)
        again = []
        for key, outcome in zip(todo, outcomes):
            job = jobs[key]
            passes, tokens, steps, visited = spent.get(key, (0, 0, 0, frozenset()))
            passes, tokens = passes + job.forward_passes, tokens + job.tokens_forwarded
            steps, visited = steps + outcome.steps, visited | outcome.visited
            if exact and not outcome.certified:
                spent[key] = (passes, tokens, steps, visited)
                job.width *= 2
                job.forward_passes = job.tokens_forwarded = 0
                again.append(key)
                continue
            stats = SearchStats(steps, passes, tokens, outcome.completed, visited, outcome.certified, job.width)
            results[key] = ApprOptResult(outcome.hits, stats)
        todo = again
        total += len(again)
    return results


def _run_all(scorer, jobs: list[SearchJob], cached: bool, batch_size: int,
             searched: Callable[[int], None]) -> list[SearchOutcome]:
    if not cached:
        outcomes = []
        for job in jobs:
            outcomes.append(run_uncached(scorer, job))
            searched(len(outcomes))
        _record_work(scorer, sum(j.forward_passes for j in jobs), sum(j.tokens_forwarded for j in jobs))
        return outcomes
    outcomes = []
    for lo in range(0, len(jobs), max(1, batch_size)):
        found, passes, tokens = run_cached(scorer, jobs[lo:lo + batch_size], lambda k: searched(lo + k))
        _record_work(scorer, passes, tokens)
        outcomes += found
    return outcomes


def appropt_search(scorer, prompt: str, trie: LabelTrie, n: int, *, banned: Iterable[str] = frozenset(),
                   cached: bool = True, exact: bool = False) -> ApprOptResult:
    """One search, with what it cost; `appropt` and `appropt_uncached` return its hits."""
    return appropt_many(scorer, [ApprOptQuery(prompt, trie, n, frozenset(banned))], cached=cached, exact=exact)[0]


def appropt(scorer, prompt: str, trie: LabelTrie, n: int, *, banned: Iterable[str] = frozenset(),
            exact: bool = False) -> list[ApprOptHit]:
    """The n most plausible distinct candidate entities after `prompt` (KV-cached beam search)."""
    return list(appropt_search(scorer, prompt, trie, n, banned=banned, exact=exact).hits)


def appropt_uncached(scorer, prompt: str, trie: LabelTrie, n: int, *,
                     banned: Iterable[str] = frozenset()) -> list[ApprOptHit]:
    """The same search with one full forward pass per beam per step and no cache (the baseline)."""
    return list(appropt_search(scorer, prompt, trie, n, banned=banned, cached=False).hits)


# -- the reference ---------------------------------------------------------------------------


@torch.inference_mode()
def exhaustive(scorer, prompt: str, trie: LabelTrie, n: int, *,
               banned: Iterable[str] = frozenset()) -> list[ApprOptHit]:
    """Every unbanned label scored exactly (one full forward pass of prompt + label + EOS each);
    the top n distinct entities, ranked as the search ranks them."""
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    scorer = local_model(scorer)
    trie.check_model(scorer)
    banned = frozenset(banned)
    ids = prompt_ids(scorer, prompt)
    best: dict[str, ApprOptHit] = {}
    for node in sorted(trie.terminals):
        alive = [t for t in trie.terminals[node] if t.entity not in banned]
        if not alive:
            continue
        path = trie.tokens_to(node)
        logprob = path_logprob(scorer, ids, path)
        for terminal in alive:
            keep_best(best, ApprOptHit(terminal.entity, terminal.name, logprob))
    return list(top_hits(best, n))


def path_logprob(scorer, ids: Sequence[int], path: Sequence[int]) -> float:
    """log P(path | ids) from one full forward pass, log-softmax only where path tokens are predicted."""
    return path_logprobs(scorer, ids, [path])[0]


def path_logprobs(scorer, ids: Sequence[int], paths: Sequence[Sequence[int]]) -> list[float]:
    """log P(path | ids) for every path in one right-padded pass (HFCausalScorer.path_logprobs,
    which serves `label_paths` requests)."""
    return local_model(scorer).path_logprobs(ids, paths)


def _record_work(scorer, passes: int, tokens: int) -> None:
    """The scorer's Work counts everything its model computed, searches included."""
    work = getattr(scorer, "work", None)
    if work is not None:
        work.forward_passes += passes
        work.tokens_forwarded += tokens


# -- the ranker DistractorFinder asks ------------------------------------------------------------


class ApprOptRanker:
    """ApprOpt over a scorer: one label trie per (model, pool), built once and cached (in memory,
    and on disk under $FACTPROBE_CACHE/tries); each fact bans its unfair candidates. Many facts
    are searched together, `batch_size` to a forward pass; `exact` as in appropt_many.

    It is what index/distractors.DistractorFinder(appropt=...) takes for strategy "appropt" (any
    object with this `rank_many` does)."""

    def __init__(self, scorer, cache: TrieCache | None = None, *, exact: bool = False,
                 batch_size: int = SEARCHES_PER_PASS, progress: Callable[[int, int], None] | None = None) -> None:
        self.scorer = local_model(scorer)
        self.cache = cache or TrieCache()
        self.exact, self.batch_size = exact, batch_size
        self.progress = progress  # (searches done, searches): a build of many facts is silent for a minute otherwise

    def rank(self, prompt: str, key: str, candidates: Sequence[tuple[str, Sequence[str]]], n: int,
             banned: frozenset[str]) -> list[ApprOptHit]:
        return self.rank_many([(prompt, key, candidates, banned)], n)[0]

    def rank_many(self, items: Sequence[tuple[str, str, Sequence[tuple[str, Sequence[str]]], frozenset[str]]],
                  n: int) -> list[list[ApprOptHit]]:
        """For each (prompt, pool key, [(entity, names)], banned): the n best hits."""
        queries, where = [], []
        for k, (prompt, key, candidates, banned) in enumerate(items):
            named = {entity: names for entity, names in candidates if names}
            if set(named) - banned:
                trie = self.cache.get(self.scorer, key, named)
                queries.append(ApprOptQuery(prompt, trie, n, frozenset(banned & set(named))))
                where.append(k)
        out: list[list[ApprOptHit]] = [[] for _ in items]
        found = appropt_many(self.scorer, queries, exact=self.exact, batch_size=self.batch_size,
                             progress=self.progress)
        for k, result in zip(where, found):
            out[k] = list(result.hits)
        return out

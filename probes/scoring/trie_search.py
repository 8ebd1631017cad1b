"""ApprOpt's trie beam search, the machinery behind probes/scoring/appropt.py: the search as a
coroutine (`_beam_search`), driven many at a time in lockstep over one KV cache (`_CachedBatch`,
`run_cached`) or with a full forward pass per beam and no cache (`_FullPasses`, `run_uncached`,
the benchmark's baseline), and the ranking of hits (an entity keeps its best name; ties by name,
then entity id). How the search works and why: docs/design/scoring.md, probes/scoring/appropt.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from .hf_cache import cache_of, log_softmax_row, with_cache
from .label_trie import ROOT, LabelTrie


@dataclass(frozen=True)
class ApprOptHit:
    entity: str
    name: str
    logprob: float  # log P(" " + name, EOS | prompt), natural log


_START = None  # what a search yields first: "the prompt's log-probs, please"


@dataclass(frozen=True)
class SearchOutcome:
    """What one search found (its top hits) and what it took (steps, completions, nodes entered)."""

    hits: tuple[ApprOptHit, ...]
    steps: int
    completed: int
    visited: frozenset[int]
    certified: bool


@dataclass(frozen=True)
class _Beam:
    node: int
    score: float


def _beam_search(trie: LabelTrie, n: int, width: int, banned: frozenset[str], blocked: frozenset[int]):
    """The search as a coroutine, so that one driver can run many in lockstep: it yields _START,
    then (parents, tokens, nodes) for each step, is sent the log-prob rows it asked for
    ([1, vocab] after the prompt, [beams, vocab] after a step) and returns an SearchOutcome.

    The beam keeps `width` prefixes (n for ApprOpt as published). The best score among the
    prefixes it left for lack of room bounds every label it never saw, since log-probs only fall
    as tokens are added; when that bound is below the n-th best entity found, the answer is
    provably the exact top n (`certified`)."""
    best: dict[str, ApprOptHit] = {}
    visited = {ROOT}
    completed = step = 0
    left_behind = -math.inf
    if not trie.children[ROOT] or ROOT in blocked:  # nothing to find: ask for no forward pass
        return SearchOutcome((), 0, 0, frozenset(visited), True)
    live = [_Beam(ROOT, 0.0)]
    rows = yield _START
    while True:
        expansions: list[tuple[float, int, int, int]] = []  # score, parent row, token, node
        for row, beam in enumerate(live):
            kids = [(token, node) for token, node in trie.children[beam.node].items() if node not in blocked]
            picked = rows[row, torch.tensor([t for t, _ in kids], device=rows.device)].tolist()
            for (token, node), logprob in zip(kids, picked):
                score = beam.score + logprob
                if token != trie.eos_id:
                    expansions.append((score, row, token, node))
                    continue
                visited.add(node)
                for terminal in trie.terminals[node]:
                    if terminal.entity not in banned:
                        completed += 1
                        keep_best(best, ApprOptHit(terminal.entity, terminal.name, score))
        expansions.sort(key=lambda e: (-e[0], e[1], e[2]))
        if len(expansions) > width:
            left_behind = max(left_behind, expansions[width][0])
        floor = _nth_best(best, n)
        chosen = [e for e in expansions[:width] if e[0] >= floor]
        if not chosen:
            break
        rows = yield [e[1] for e in chosen], [e[2] for e in chosen], [e[3] for e in chosen]
        live = [_Beam(node, score) for score, _, _, node in chosen]
        visited.update(beam.node for beam in live)
        step += 1
    certified = left_behind == -math.inf or left_behind < _nth_best(best, n)
    return SearchOutcome(top_hits(best, n), step, completed, frozenset(visited), certified)


@dataclass
class SearchJob:
    """One search to run: the prompt's ids, the trie and the beam; it counts its own work."""

    ids: list[int]
    trie: LabelTrie
    n: int
    width: int
    banned: frozenset[str]
    blocked: frozenset[int]
    forward_passes: int = 0  # the passes it took part in, and its own (unpadded) tokens
    tokens_forwarded: int = 0

    def search(self):
        return _beam_search(self.trie, self.n, self.width, self.banned, self.blocked)


class _CachedBatch:
    """Many searches over one KV cache whose rows follow their beams.

    The prompts go through the model together once (left-padded). Then each round feeds, for
    every live beam of every search, only what it has not been fed yet: the token it just took
    and, while the node it stands on has a single open child other than EOS, that child's token
    as well. The trie leaves no choice there, so the log-probs the search will ask for at those
    nodes come out of the same pass and are kept with the row (`ahead`), as far as the pass's
    slot budget allows; a round whose beams all stand on nodes already computed needs no pass.
    The searches are unchanged by this: each
    still takes every step and may still drop a beam on the way. Rows hold different numbers of
    tokens, so each pass right-pads its block, and an attention mask with explicit positions
    keeps padding out of every real token's view."""

    def __init__(self, scorer, jobs: dict[int, SearchJob]) -> None:
        self.model, self.device, self.pad_id = scorer.model, scorer.device, scorer.pad_id
        self.jobs = jobs
        self.owner: list[int] = list(jobs)  # row -> job key; a job's rows are contiguous
        self.ahead: list[dict[int, torch.Tensor]] = [{} for _ in jobs]  # row: trie node -> log-probs after it
        self.cache = self.mask = self.next_position = None
        self.slots = 32 if self.device.type == "cpu" else 4096  # token slots a pass may spend on look-ahead
        self.forward_passes = self.tokens_forwarded = 0

    def start(self) -> dict[int, torch.Tensor]:
        prompts = [self.jobs[key].ids for key in self.owner]
        width = max(map(len, prompts))
        inputs = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):
            inputs[row, width - len(ids):] = torch.tensor(ids, dtype=torch.long)
            mask[row, width - len(ids):] = 1
        inputs, mask = inputs.to(self.device), mask.to(self.device)
        positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
        # No cache passed in: the model builds the one its architecture wants (Gemma 3's has
        # sliding-window layers), and later passes extend it.
        out = self.model(input_ids=inputs, attention_mask=mask, position_ids=positions, use_cache=True,
                         logits_to_keep=1)
        self.cache, self.mask, self.next_position = cache_of(out), mask, mask.sum(dim=1)
        self._count({key: len(self.jobs[key].ids) for key in self.owner})
        rows = log_softmax_row(out.logits[:, -1])
        return {key: rows[row:row + 1] for row, key in enumerate(self.owner)}

    def advance(self, requests: dict[int, tuple[list[int], list[int], list[int]]]) -> dict[int, torch.Tensor]:
        first_row: dict[int, int] = {}
        for row, key in enumerate(self.owner):
            first_row.setdefault(key, row)
        index, owner, ahead, feeds, nodes, spans = [], [], [], [], [], {}
        for key, (parents, tokens, new_nodes) in requests.items():
            job = self.jobs[key]
            spans[key] = (len(index), len(index) + len(parents))
            for parent, token, node in zip(parents, tokens, new_nodes):
                row = first_row[key] + parent
                known = self.ahead[row]
                index.append(row)
                owner.append(key)
                ahead.append(known)
                nodes.append(node)
                feeds.append(() if node in known else _chain(job.trie, job.blocked, token, node))
        if index != list(range(len(self.owner))):
            # Each new beam's row is its parent's (a parent with two surviving children is
            # copied twice, a parent with none dropped, and so are finished searches).
            at = torch.tensor(index, device=self.device)
            self.cache.reorder_cache(at)
            self.mask, self.next_position = self.mask[at], self.next_position[at]
        self.owner = owner
        if any(feeds):
            # Every row pays for the block's full width, padded or not. Known tokens beyond the
            # first are worth feeding now only while the block stays small: on a CPU a pass
            # costs about 70 ms plus 2 ms per token slot (SmolLM2, 2 cores), so a wide batch of
            # beams does better one token at a time; on a GPU slots are nearly free.
            width = max(1, min(max(map(len, feeds)), self.slots // len(feeds)))
            self._feed([f[:width] for f in feeds], nodes, ahead)
        self.ahead = ahead
        rows = torch.stack([known[node] for known, node in zip(ahead, nodes)])
        return {key: rows[lo:hi] for key, (lo, hi) in spans.items()}

    def _feed(self, feeds: list[tuple[int, ...]], nodes: list[int], ahead: list[dict]) -> None:
        width = max(len(f) for f in feeds)
        inputs = torch.full((len(feeds), width), self.pad_id, dtype=torch.long)
        block = torch.zeros((len(feeds), width), dtype=torch.long)
        for row, feed in enumerate(feeds):
            inputs[row, :len(feed)] = torch.tensor(feed, dtype=torch.long)
            block[row, :len(feed)] = 1
        inputs, block = inputs.to(self.device), block.to(self.device)
        mask = torch.cat([self.mask, block], dim=1)
        positions = self.next_position[:, None] + torch.arange(width, device=self.device)[None, :]
        out = self.model(input_ids=inputs, attention_mask=mask, position_ids=positions,
                         **with_cache(self.model, self.cache), use_cache=True)
        self.cache, self.mask = cache_of(out), mask
        self.next_position = self.next_position + block.sum(dim=1)
        rows = log_softmax_row(out.logits[block.bool()])  # real positions only, row after row
        at = 0
        fed: dict[int, int] = {}
        for row, (feed, node) in enumerate(zip(feeds, nodes)):
            if not feed:
                continue
            trie = self.jobs[self.owner[row]].trie
            known = ahead[row] = {}  # a fresh map: the parent's may be shared with its siblings
            for j, token in enumerate(feed):
                if j:
                    node = trie.children[node][token]
                known[node] = rows[at + j]
            at += len(feed)
            fed[self.owner[row]] = fed.get(self.owner[row], 0) + len(feed)
        self._count(fed)

    def _count(self, tokens: dict[int, int]) -> None:
        self.forward_passes += 1
        self.tokens_forwarded += sum(tokens.values())
        for key, count in tokens.items():
            self.jobs[key].forward_passes += 1
            self.jobs[key].tokens_forwarded += count


def _chain(trie: LabelTrie, blocked: frozenset[int], token: int, node: int) -> tuple[int, ...]:
    """`token`, then the tokens of single open children below `node`, EOS excluded (its output
    scores nothing)."""
    chain = [token]
    while True:
        open_children = [(t, c) for t, c in trie.children[node].items() if c not in blocked]
        if len(open_children) != 1 or open_children[0][0] == trie.eos_id:
            return tuple(chain)
        token, node = open_children[0]
        chain.append(token)


class _FullPasses:
    """No cache: prompt + prefix through the whole model, for every beam at every step."""

    def __init__(self, scorer, job: SearchJob) -> None:
        self.model, self.device, self.job = scorer.model, scorer.device, job
        self.prefixes: list[tuple[int, ...]] = [()]
        self.forward_passes = self.tokens_forwarded = 0

    def start(self) -> torch.Tensor:
        return self._last_position(())

    def advance(self, parents: Sequence[int], tokens: Sequence[int], nodes: Sequence[int]) -> torch.Tensor:
        self.prefixes = [self.prefixes[p] + (t,) for p, t in zip(parents, tokens)]
        return torch.cat([self._last_position(prefix) for prefix in self.prefixes])

    def _last_position(self, prefix: tuple[int, ...]) -> torch.Tensor:
        ids = [*self.job.ids, *prefix]
        out = self.model(input_ids=torch.tensor([ids], device=self.device), use_cache=False, logits_to_keep=1)
        for counter in (self, self.job):
            counter.forward_passes += 1
            counter.tokens_forwarded += len(ids)
        return log_softmax_row(out.logits[:, -1])


def run_cached(scorer, jobs: list[SearchJob],
               finished: Callable[[int], None] | None = None) -> tuple[list[SearchOutcome], int, int]:
    """Every job's search, in lockstep over one batch; and the passes and tokens of the batch.
    `finished` is told how many of the batch's searches are done each time that number grows
    (searches of longer names run more steps, so they end apart)."""
    outcomes: dict[int, SearchOutcome] = {}
    searches = {}
    for key, job in enumerate(jobs):
        search = job.search()
        try:
            next(search)
            searches[key] = search
        except StopIteration as done:
            outcomes[key] = done.value
    if not searches:
        if finished is not None and outcomes:
            finished(len(outcomes))
        return [outcomes[k] for k in range(len(jobs))], 0, 0
    batch = _CachedBatch(scorer, {key: jobs[key] for key in searches})
    rows = batch.start()
    while searches:
        requests, before = {}, len(outcomes)
        for key, search in list(searches.items()):
            try:
                requests[key] = search.send(rows[key])
            except StopIteration as done:
                outcomes[key] = done.value
                del searches[key]
        if finished is not None and len(outcomes) > before:
            finished(len(outcomes))
        if requests:
            rows = batch.advance(requests)
    return [outcomes[k] for k in range(len(jobs))], batch.forward_passes, batch.tokens_forwarded


def run_uncached(scorer, job: SearchJob) -> SearchOutcome:
    """The job's search with a full forward pass per step and no cache (the baseline)."""
    search = job.search()
    try:
        next(search)
    except StopIteration as done:
        return done.value
    steps = _FullPasses(scorer, job)
    rows = steps.start()
    while True:
        try:
            parents, tokens, nodes = search.send(rows)
        except StopIteration as done:
            return done.value
        rows = steps.advance(parents, tokens, nodes)


# -- ranking ---------------------------------------------------------------------------------


def _rank(hit: ApprOptHit) -> tuple[float, str, str]:
    return (-hit.logprob, hit.name, hit.entity)


def keep_best(best: dict[str, ApprOptHit], hit: ApprOptHit) -> None:
    """Record hit unless its entity already has a better one (an entity keeps its best name)."""
    held = best.get(hit.entity)
    if held is None or _rank(hit) < _rank(held):
        best[hit.entity] = hit


def top_hits(best: dict[str, ApprOptHit], n: int) -> tuple[ApprOptHit, ...]:
    """The n best entities' hits, best first (ties by name, then entity id)."""
    return tuple(sorted(best.values(), key=_rank)[:n])


def _nth_best(best: dict[str, ApprOptHit], n: int) -> float:
    if len(best) < n:
        return -math.inf
    return sorted((h.logprob for h in best.values()), reverse=True)[n - 1]


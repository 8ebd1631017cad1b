"""Batched greedy and sampled decoding for the causal scorer (`decode_batched`, called by
CausalGeneration in hf_generation.py). A row is one sample of one request. Prompts are ordered
(`_ordered`: those sharing a prefix together, else by length) and cut into batches under a row
cap and the memory budget; a batch encodes its prompts' longest common token prefix once, then
each distinct prompt's rest, left-padded, over that prefix's cache, and copies each prompt's
cache out to its samples' rows. Explicit masks and position ids make every row see and number
exactly its own tokens (sliding-window layers by position), so padding changes no row's tokens.
A sampled row draws from its own generator, seeded by its request's seed and its sample index:
it does not depend on its batch. A row that stops leaves the batch. Design notes:
docs/design/scoring.md.
"""

from __future__ import annotations

import hashlib
from typing import Callable, Sequence

import torch
from transformers import DynamicCache

from .device import is_out_of_memory, release_memory
from .hf_cache import cache_of, expanded_cache, reordered_cache, with_cache
from .requests import Generation, GenerateRequest

# What a forward pass costs beyond its tokens, in tokens: a batch of its own runs its prefill and
# every decoding step as passes of its own.
_PASS_TOKENS = 16
# Prompts sharing fewer tokens than this are ordered by length, not by their tokens: a batch's
# padding then costs more than so short a shared prefix saves.
_SHARE_TOKENS = 16
# Kernels that take our 4D masks; under others (flash attention) a batch holds prompts of one length.
_MASKED_KERNELS = ("sdpa", "eager")
_Row = tuple[int, int]  # (request index, sample index)
_Group = list[tuple[tuple[int, ...], list[_Row]]]  # (prompt ids, its rows in this batch) per distinct prompt


def decode_batched(scorer, requests: Sequence[GenerateRequest], eos: set[int],
                   rows_done: Callable[[int], None] | None = None) -> list[Generation]:
    """Greedy and sampled requests (beams 1), answered batch by batch; each request's texts do
    not depend on the others. `rows_done` is told the rows (a request's samples) of each batch
    once they are decoded."""
    prompts: dict[tuple[int, ...], list[_Row]] = {}
    for i, request in enumerate(requests):
        ids = tuple(scorer.encode(request.prompt) or [scorer.start_id])
        prompts.setdefault(ids, []).extend((i, k) for k in range(request.n))
    texts = [[""] * r.n for r in requests]
    reasons = [["length"] * r.n for r in requests]
    shape = _Shape(scorer, requests)
    todo = _batches(_ordered(prompts.items()), scorer.generate_rows or scorer.batch_size, shape)
    while todo:
        group = todo.pop(0)
        try:
            done = _decode(scorer, group, requests, eos, shape)
        except Exception as error:
            if not is_out_of_memory(error):
                raise
            release_memory(scorer.device)
            todo[:0] = _halves(scorer, group)
            continue
        for (i, k), (text, reason) in done.items():
            texts[i][k], reasons[i][k] = text, reason
        if rows_done is not None:
            rows_done(len(done))
    scorer.work.requests += len(requests)
    return [Generation(tuple(t), tuple(r)) for t, r in zip(texts, reasons)]


def _halves(scorer, group: _Group) -> list[_Group]:
    """The group's rows in two batches (a device out of memory); the smaller size is kept."""
    flat = [(ids, row) for ids, rows in group for row in rows]
    if len(flat) == 1:
        from .scorer import ScoringError

        raise ScoringError(f"{scorer.identity}: one generation of a {len(flat[0][0])}-token prompt does not fit in memory")
    half = len(flat) // 2
    scorer.generate_rows = half
    out = []
    for part in (flat[:half], flat[half:]):
        regrouped: dict[tuple[int, ...], list[_Row]] = {}
        for ids, row in part:
            regrouped.setdefault(ids, []).append(row)
        out.append(list(regrouped.items()))
    return out


class _Shape:
    """What a batch costs: its prefill tokens, and its memory estimated from the config."""

    def __init__(self, scorer, requests: Sequence[GenerateRequest]) -> None:
        # The scorer's own sizes, from the config (HFCausalScorer._sizes); the attention scores
        # here carry no per-layer-type mask term.
        self.kv_bytes, self.act_bytes = scorer._kv_bytes, scorer._act_bytes
        self.score_bytes = scorer.model.config.get_text_config().num_attention_heads * 4 * 2
        self.vocab = scorer.vocab_size
        self.budget = scorer.memory_budget
        self.requests = requests
        self.window = scorer._window
        attention = getattr(scorer.model.config, "_attn_implementation", None) or "eager"
        self.masks = attention in _MASKED_KERNELS
        self.additive = scorer._additive_mask

    def prefill(self, group: _Group) -> tuple[int, int]:
        """(shared prefix length, padded width of the rest): each prompt keeps one token of its own,
        whose logits start its decoding."""
        ids = [p for p, _ in group]
        # The prefix all share is the one the first and last in token order share.
        shared = min(_common(min(ids), max(ids)), min(map(len, ids)) - 1)
        return shared, max(map(len, ids)) - shared

    def cost(self, group: _Group) -> int:
        shared, width = self.prefill(group)
        return shared + len(group) * width

    def fits(self, group: _Group) -> bool:
        shared, width = self.prefill(group)
        rows = sum(len(r) for _, r in group)
        longest = shared + width + max(self.requests[i].max_tokens for _, r in group for i, _ in r)
        # Each decoding step copies the cache as it appends (old and new held at once); the logits
        # go through softmax and a float64 cumulative sum for the sampled rows.
        need = (rows * longest * self.kv_bytes * 2 + rows * self.vocab * 4 * 4
                + len(group) * width * (self.act_bytes + (shared + width) * self.score_bytes))
        return need <= self.budget


def _ordered(prompts) -> list[tuple[tuple[int, ...], list[_Row]]]:
    """The order batches take prompts in (in token order, questions of 9 to 22 tokens padded 38%
    of the prefill). In token order, a run of prompts each sharing at least `_SHARE_TOKENS`
    tokens with the one before shares a prefix a batch encodes once: it stays together, and is
    ordered the same way below that prefix (so blocks of demonstrations under one instruction
    stay apart). The prompts in no run follow, shortest first, so a batch pads little."""
    return _arranged(sorted(prompts), 0)


def _arranged(in_order: list, depth: int) -> list:
    """`in_order` (token order, all sharing `depth` tokens) as `_ordered` arranges it."""
    runs: list[list] = [in_order[:1]]
    for before, prompt in zip(in_order, in_order[1:]):
        if _common(before[0], prompt[0]) >= depth + _SHARE_TOKENS:
            runs[-1].append(prompt)
        else:
            runs.append([prompt])
    loose = sorted((r[0] for r in runs if len(r) == 1), key=_by_length)
    # A run's shared prefix is what its ends share: `_SHARE_TOKENS` at least beyond `depth`.
    return [p for r in runs if len(r) > 1 for p in _arranged(r, _common(r[0][0], r[-1][0]))] + loose


def _by_length(prompt: tuple[tuple[int, ...], list[_Row]]) -> tuple[int, tuple[int, ...]]:
    return len(prompt[0]), prompt[0]


def _batches(prompts: list[tuple[tuple[int, ...], list[_Row]]], cap: int, shape: _Shape) -> list[_Group]:
    """Prompts, in `_ordered`'s order, cut into batches of at most `cap` rows that fit in memory. A
    prompt joins the batch unless that costs more prefill tokens than a batch of its own would,
    passes counted (its prefix shared with the batch is short next to the padding it brings),
    or, under kernels that take no mask, unless its length differs."""
    batches: list[_Group] = []
    current: _Group = []
    cap = max(1, cap)
    for ids, rows in prompts:
        alone = len(ids) + _PASS_TOKENS * (2 + max(shape.requests[i].max_tokens for i, _ in rows))
        start = 0
        while start < len(rows):
            mine = bool(current) and current[-1][0] == ids  # some of its rows are in already
            base, have = (current[:-1], current[-1][1]) if mine else (current, [])
            take = rows[start:start + cap - sum(len(r) for _, r in current)]
            if current and not mine and take and (
                    shape.cost(current + [(ids, take[:1])]) > shape.cost(current) + alone
                    or (not shape.masks and len(ids) != len(current[0][0]))):
                take = []
            while len(take) > 1 and not shape.fits(base + [(ids, have + take)]):
                take = take[:len(take) // 2]
            if current and (not take or not shape.fits(base + [(ids, have + take)])):
                batches.append(current)
                current = []
                continue
            current = base + [(ids, have + take)]
            start += len(take)
    if current:
        batches.append(current)
    return batches


def _decode(scorer, group: _Group, requests: Sequence[GenerateRequest], eos: set[int],
            shape: _Shape) -> dict[_Row, tuple[str, str]]:
    """Prefill the batch's prompts and decode all its rows to the end: (text, reason) per row."""
    model, device = scorer.model, scorer.device
    shared, width = shape.prefill(group)
    prompts = [ids for ids, _ in group]
    cache = DynamicCache()  # full layers: the masks, not the cache, apply the sliding window
    if shared:
        model(input_ids=torch.tensor([prompts[0][:shared]], device=device), **with_cache(model, cache),
              use_cache=True, logits_to_keep=1)
        scorer._count(shared, 0)
        cache = expanded_cache(cache, len(group))
    lengths = torch.tensor([len(p) - shared for p in prompts], device=device)
    column = torch.arange(width, device=device)
    pad = (column[None, :] < (width - lengths)[:, None])  # left padding of each prompt's rest
    ids = torch.tensor([[scorer.pad_id] * (width - len(p) + shared) + list(p[shared:]) for p in prompts], device=device)
    positions = (shared + column[None, :] - (width - lengths)[:, None]).clamp(min=shared)
    # Per cache column: its position and whether a row may see it (padding never).
    seen = torch.cat([torch.ones(len(group), shared, dtype=torch.bool, device=device), ~pad], dim=1)
    at = torch.cat([torch.arange(shared, device=device).expand(len(group), -1), positions], dim=1)
    extra = {}
    if shape.masks:
        extra = {"position_ids": positions, "attention_mask": _mask(shape, seen, at, positions, model.dtype)}
    out = model(input_ids=ids, **with_cache(model, cache), use_cache=True, logits_to_keep=1, **extra)
    scorer._count(ids.numel(), int(pad.sum()))
    rows = [row for _, rs in group for row in rs]
    owner = torch.tensor([g for g, (_, rs) in enumerate(group) for _ in rs], device=device)
    cache = cache_of(out)
    if len(group) == 1:
        cache = expanded_cache(cache, len(rows))
    elif len(rows) > len(group):
        cache = reordered_cache(cache, owner)
    logits = out.logits[:, -1].float().index_select(0, owner)
    seen, at = seen.index_select(0, owner), at.index_select(0, owner)
    following = positions[:, -1].index_select(0, owner) + 1
    asks = [requests[i] for i, _ in rows]
    settings = [(r.temperature, r.top_p) for r in asks]
    generators = [None if r.greedy else _generator(r.seed, k) for r, (_, k) in zip(asks, rows)]
    tokens: list[list[int]] = [[] for _ in rows]
    done: dict[_Row, tuple[str, str]] = {}
    live = list(range(len(rows)))
    while True:
        chosen = _next_tokens(logits, [settings[b] for b in live], [generators[b] for b in live]).tolist()
        keep = []
        for j, (b, token) in enumerate(zip(live, chosen)):
            request = asks[b]
            if token in eos:
                done[rows[b]] = (scorer.tokenizer.decode(tokens[b], skip_special_tokens=True), "eos")
                continue
            tokens[b].append(token)
            text = scorer.tokenizer.decode(tokens[b], skip_special_tokens=True)
            cut = first_stop(text, request.stop)
            if cut is not None:
                done[rows[b]] = (text[:cut], "stop")
            elif len(tokens[b]) == request.max_tokens:
                done[rows[b]] = (text, "length")
            else:
                keep.append(j)
        if not keep:
            return done
        if len(keep) < len(live):  # finished rows leave: they would cost every later step
            index = torch.tensor(keep, device=device)
            cache, logits = reordered_cache(cache, index), None
            seen, at, following = seen.index_select(0, index), at.index_select(0, index), following.index_select(0, index)
            live = [live[j] for j in keep]
            chosen = [chosen[j] for j in keep]
        seen = torch.cat([seen, torch.ones(len(live), 1, dtype=torch.bool, device=device)], dim=1)
        at = torch.cat([at, following[:, None]], dim=1)
        extra = {}
        if shape.masks:
            extra = {"position_ids": following[:, None],
                     "attention_mask": _mask(shape, seen, at, following[:, None], model.dtype)}
        out = model(input_ids=torch.tensor(chosen, device=device)[:, None], **with_cache(model, cache), use_cache=True,
                    **extra)
        scorer._count(len(live), 0)
        cache = cache_of(out)
        logits = out.logits[:, -1].float()
        following = following + 1


def _mask(shape: _Shape, seen: torch.Tensor, at: torch.Tensor, queries: torch.Tensor, dtype):
    """[rows, 1, queries, keys] for queries that are the last columns of the cache: each sees the
    columns its row may see, up to itself (and always itself, so no padding row is empty); a
    sliding-window layer only those less than the window before it."""
    keys, width = seen.shape[1], queries.shape[1]
    column = torch.arange(keys, device=seen.device)
    mine = (keys - width + torch.arange(width, device=seen.device))[:, None]
    sees = (seen[:, None, :] & (column[None, None, :] <= mine)) | (column[None, None, :] == mine)
    full = _form(sees, shape.additive, dtype)
    if shape.window is None:
        return full
    near = queries[:, :, None] - at[:, None, :] < shape.window
    return {"full_attention": full, "sliding_attention": _form(sees & near, shape.additive, dtype)}


def _form(sees: torch.Tensor, additive: bool, dtype):
    sees = sees[:, None]
    if not additive:
        return sees
    return torch.zeros(sees.shape, dtype=dtype, device=sees.device).masked_fill(~sees, torch.finfo(dtype).min)


def _next_tokens(logits: torch.Tensor, settings: list[tuple[float, float]],
                 generators: list[torch.Generator | None]) -> torch.Tensor:
    """Each row's next token: the argmax for a greedy row (no generator); for a sampled row, one
    uniform draw from its own generator looked up in the cumulative distribution of its tempered
    (and nucleus-cut) probabilities. The generators live on the CPU, so a seed draws the same
    numbers on any device."""
    chosen = logits.argmax(dim=-1)
    sampled = [j for j, g in enumerate(generators) if g is not None]
    chunk = max(1, (64 << 20) // (logits.shape[-1] * 8))  # float64 sums: Gemma's head is 262k wide
    for start in range(0, len(sampled), chunk):
        part = sampled[start:start + chunk]
        index = torch.tensor(part, device=logits.device)
        temperature = torch.tensor([settings[j][0] for j in part], device=logits.device)
        probs = torch.softmax(logits.index_select(0, index) / temperature[:, None], dim=-1)
        top_p = [settings[j][1] for j in part]
        if min(top_p) < 1:
            # Rows asking no cut get none: a float32 running sum may pass 1 before the tail.
            limit = torch.tensor([p if p < 1 else float("inf") for p in top_p], device=logits.device)
            ordered, order = probs.sort(dim=-1, descending=True)
            ordered = ordered * (ordered.cumsum(dim=-1) - ordered < limit[:, None])
            probs = torch.zeros_like(probs).scatter(-1, order, ordered)
        sums = probs.double().cumsum(dim=-1)
        draws = torch.tensor([torch.rand((), generator=generators[j], dtype=torch.float64).item() for j in part],
                             dtype=torch.float64, device=logits.device)
        # The first token whose running sum passes the draw: never one of probability zero.
        picks = torch.searchsorted(sums, (draws * sums[:, -1])[:, None], right=True).squeeze(-1)
        chosen[index] = picks.clamp(max=logits.shape[-1] - 1)
    return chosen


def _generator(seed: int, sample: int) -> torch.Generator:
    digest = hashlib.blake2b(f"{seed}/{sample}".encode(), digest_size=8).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest, "little"))


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def first_stop(text: str, stops: Sequence[str]) -> int | None:
    """Where the earliest of the stop strings starts in text, or None when none occurs."""
    hits = [text.find(s) for s in stops if s and s in text]
    return min(hits) if hits else None

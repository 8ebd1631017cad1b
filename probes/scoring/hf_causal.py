"""Causal LM backend: every context encoded once, its KV cache shared by all its continuations.

loglikelihood, per distinct context:
  1. one forward pass over the shared prefix (the context's tokens), keeping only the last
     position's logits: they score every continuation's first token;
  2. the continuations' remaining tokens ("tails") run on top of the prefix's KV cache. A tail's
     last token is never fed (its output predicts nothing we score), so a one-token continuation
     costs no forward pass beyond its context.
Two ways to run the tails:
  - packed (default with SDPA or eager attention): all tails of a context side by side in ONE
    row, with a 4D mask that lets each tail token see the prefix and the earlier tokens of its
    own tail only, and position ids that restart after the prefix for every tail. No padding, and
    the prefix's keys are not copied per continuation, which is what dominates on a CPU;
  - expanded (any attention kernel): tails as rows of a batch over the prefix cache expanded to
    the batch (a view until the first layer appends), sorted by length and cut into batches
    that waste at most `max_padding_share` on padding. Padding goes on the right, where causal
    attention never lets a real token see it.
Either way the numbers do not depend on which continuations share a forward pass.

Nested contexts (EIC-LKE, where each context extends the one before): inside
`reusing_prefixes()`, a context is encoded in fixed blocks of `prefix_block` tokens, each block
on top of the keys and values of the blocks before it, and the blocks are kept (by their token
prefix) until the `with` ends; a later context that starts with the same tokens runs only its new
blocks and its last partial one. Block boundaries are token positions, never "where the previous
context ended", so a context's numbers do not depend on what was scored before it. They differ
from a one-pass encoding in the last digits only (other floating-point summation order).

Memory: log-softmax is never taken over a whole batch (Gemma's 262k vocabulary makes that
gigabytes): the prefix keeps one position's logits, and a tail pass is sized so its logits and
cache fit the memory budget. If the device still runs out, the pass is halved and retried, and the
smaller size kept.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Sequence

import torch
from transformers import DynamicCache

from .device import is_out_of_memory, release_memory
from .requests import ContinuationScore, Generation, GenerateRequest, LoglikelihoodRequest
from .scorer import Scorer, ScoringError
from .tokens import Split, split_at_context

_CPU_MEMORY_BUDGET = 3 << 30


@dataclass
class _Member:
    """One continuation of a context group, located in the caller's answer."""

    request: int
    position: int
    tail: tuple[int, ...]  # tokens after the shared prefix
    scored_from: int  # tail[scored_from:] belong to the continuation (earlier ones to the context)


class HFCausalScorer(Scorer):
    def __init__(self, model, tokenizer, *, identity: str, device: torch.device,
                 batch_size: int = 64, memory_budget: int | None = None,
                 max_padding_share: float = 0.10, tail_mode: str = "auto") -> None:
        super().__init__()
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.identity = identity
        self.device = device
        self.batch_size = batch_size  # most tails per forward pass; halves on OOM
        self.memory_budget = memory_budget or _default_budget(device)
        self.max_padding_share = max_padding_share  # of a tail batch's tokens
        self.vocab_size = model.get_output_embeddings().weight.shape[0]
        start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        if start is None:
            raise ScoringError(f"{identity}: the tokenizer has neither a BOS nor an EOS token to start from")
        self.start_id = start
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else start
        self._kv_bytes_per_token: int | None = None
        attention = getattr(model.config, "_attn_implementation", None) or "eager"
        if tail_mode == "auto":
            tail_mode = "packed" if attention in ("sdpa", "eager") else "expanded"
        if tail_mode not in ("packed", "expanded"):
            raise ValueError(f"tail_mode must be packed, expanded or auto, not {tail_mode!r}")
        self.tail_mode = tail_mode
        self._additive_mask = attention == "eager"
        self.prefix_block = 32  # tokens per reusable block inside reusing_prefixes()
        self._blocks: dict[tuple[int, ...], list[tuple[torch.Tensor, torch.Tensor]]] | None = None

    @contextmanager
    def reusing_prefixes(self):
        """Within the `with`, contexts are encoded block by block and blocks already seen are reused
        (see the module docstring); the blocks are dropped at the end."""
        self._blocks = {}
        try:
            yield self
        finally:
            self._blocks = None

    # -- tokenization ------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=True)["input_ids"]

    def split(self, context: str, continuation: str, context_ids: Sequence[int] | None = None) -> Split:
        return split_at_context(self.encode, context, continuation, self.start_id, context_ids)

    # -- loglikelihood -------------------------------------------------------------------------

    @torch.inference_mode()
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[list[ContinuationScore]]:
        results: list[list[ContinuationScore | None]] = [[None] * len(r.continuations) for r in requests]
        groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, request in enumerate(requests):
            for j in range(len(request.continuations)):
                groups[request.context].append((i, j))
        planned = [plan for context, members in groups.items() for plan in self._plan(context, members, requests)]
        # Longest contexts first: if anything runs out of memory, it does so at the start.
        planned.sort(key=lambda plan: -len(plan[0]))
        for prefix, members in planned:
            for member, score in zip(members, self._score_group(prefix, members)):
                results[member.request][member.position] = score
        self.work.requests += len(requests)
        return results  # type: ignore[return-value]

    def _plan(self, context: str, members: list[tuple[int, int]],
              requests: Sequence[LoglikelihoodRequest]) -> list[tuple[tuple[int, ...], list[_Member]]]:
        """Split each continuation at the context and find the prefix the continuations share.

        The context parts are prefixes of one context tokenization, except where a start token
        had to be put in front (a merge at the very first token): such continuations get a
        prefix of their own, told apart by their first token.
        """
        context_ids = self.encode(context)
        by_first: dict[int, list[tuple[tuple[int, int], Split]]] = defaultdict(list)
        for i, j in members:
            split = self.split(context, requests[i].continuations[j], context_ids)
            by_first[split.ids[0]].append(((i, j), split))
        plans = []
        for group in by_first.values():
            shared = min(split.split for _, split in group)
            prefix = group[0][1].ids[:shared]
            planned = [_Member(i, j, split.ids[shared:], split.split - shared) for (i, j), split in group]
            self.work.min_tokens += len(prefix) + sum(len(m.tail) for m in planned)
            plans.append((prefix, planned))
        return plans

    def _score_group(self, prefix: tuple[int, ...], members: list[_Member]) -> list[ContinuationScore]:
        try:
            out = self._encode_prefix(prefix)
        except Exception as error:
            if is_out_of_memory(error):
                release_memory(self.device)
                raise ScoringError(f"{self.identity}: a context of {len(prefix)} tokens does not fit in memory") from error
            raise
        cache = out.past_key_values
        if self._kv_bytes_per_token is None:
            self._kv_bytes_per_token = _cache_bytes(cache) // max(1, len(prefix))
        first = _log_softmax_row(out.logits[0, -1])
        scores: list[ContinuationScore | None] = [None] * len(members)
        if self.tail_mode == "packed":
            batches = self._packs(members, len(prefix))
            run = self._score_packed
        else:
            order = sorted(range(len(members)), key=lambda k: -len(members[k].tail))
            batches = self._batches(order, members, len(prefix))
            run = self._score_tails
        for batch in batches:
            scored = self._halving(run, [members[k] for k in batch], cache, first, len(prefix))
            for k, score in zip(batch, scored):
                scores[k] = score
        self.work.continuations += len(members)
        return scores  # type: ignore[return-value]

    def _encode_prefix(self, prefix: tuple[int, ...]):
        """The prefix's forward output (its last position's logits, its cache), in one pass, or
        inside reusing_prefixes() from the kept blocks plus the ones not seen yet."""
        # A plain cache keeps every layer's keys in full, sliding-window layers included, so
        # packed tails can see the prefix; their masks enforce the window instead.
        if self._blocks is None:
            out = self.model(input_ids=torch.tensor([prefix], device=self.device), past_key_values=DynamicCache(),
                             use_cache=True, logits_to_keep=1)
            self._count(len(prefix), 0)
            return out
        size = self.prefix_block
        whole = (len(prefix) - 1) // size * size  # the last piece keeps 1..size tokens: its logits are needed
        blocks: list[list[tuple[torch.Tensor, torch.Tensor]]] = []
        for start in range(0, whole, size):
            key = prefix[:start + size]
            if key not in self._blocks:
                out = self._forward_on(blocks, prefix[start:start + size])
                # cloned: a view would keep the whole cache of this pass alive
                self._blocks[key] = [(layer.keys[..., start:, :].clone(), layer.values[..., start:, :].clone())
                                     for layer in out.past_key_values.layers]
            blocks.append(self._blocks[key])
        return self._forward_on(blocks, prefix[whole:])

    def _forward_on(self, blocks: list[list[tuple[torch.Tensor, torch.Tensor]]], ids: Sequence[int]):
        """One forward pass of `ids` after the given blocks' keys and values."""
        if blocks:
            layers = zip(*blocks)  # per layer, its (keys, values) in every block
            cache = DynamicCache([(torch.cat([k for k, _ in kv], dim=-2), torch.cat([v for _, v in kv], dim=-2))
                                  for kv in layers])
        else:
            cache = DynamicCache()
        out = self.model(input_ids=torch.tensor([list(ids)], device=self.device), past_key_values=cache,
                         use_cache=True, logits_to_keep=1)
        self._count(len(ids), 0)
        return out

    def _batches(self, order: list[int], members: list[_Member], prefix_len: int):
        """Cut length-sorted tails into batches bounded by count, memory and padding waste."""
        batch: list[int] = []
        width = waste = 0
        for k in order:
            fed = len(members[k].tail) - 1
            if batch:
                new_waste = waste + width - fed
                if (len(batch) >= self._rows_that_fit(width, prefix_len)
                        or new_waste > self.max_padding_share * width * (len(batch) + 1)):
                    yield batch
                    batch, waste = [], 0
                else:
                    batch.append(k)
                    waste = new_waste
                    continue
            batch, width = [k], fed
        if batch:
            yield batch

    def _packs(self, members: list[_Member], prefix_len: int):
        """Cut tails, in order, into packs bounded by count and by the tokens that fit in memory."""
        per_token = self.vocab_size * 4 * 2 + (self._kv_bytes_per_token or 0)
        room = max(1, (self.memory_budget - prefix_len * (self._kv_bytes_per_token or 0)) // per_token)
        pack: list[int] = []
        tokens = 0
        for k, member in enumerate(members):
            fed = len(member.tail) - 1
            if pack and (len(pack) >= self.batch_size or tokens + fed > room):
                yield pack
                pack, tokens = [], 0
            pack.append(k)
            tokens += fed
        if pack:
            yield pack

    def _score_packed(self, members: list[_Member], cache, first: torch.Tensor,
                      prefix_len: int) -> list[ContinuationScore]:
        fed = [m.tail[:-1] for m in members]
        total = sum(len(f) for f in fed)
        if total == 0:
            return [self._finish(m, first, None) for m in members]
        ids = torch.tensor([[t for f in fed for t in f]], device=self.device)
        owner = torch.tensor([k for k, f in enumerate(fed) for _ in f], device=self.device)
        offset = torch.tensor([j for f in fed for j in range(len(f))], device=self.device)
        positions = (prefix_len + offset)[None]
        logits = self.model(input_ids=ids, position_ids=positions, past_key_values=_copied(cache),
                            attention_mask=self._packed_mask(owner, offset, prefix_len), use_cache=True).logits[0]
        logprobs = _log_softmax_row(logits)  # one call for the pack: rows are tail positions
        self._count(total, 0)
        starts = [0]
        for f in fed:
            starts.append(starts[-1] + len(f))
        return [self._finish(m, first, logprobs[starts[k]:starts[k + 1]]) for k, m in enumerate(members)]

    def _packed_mask(self, owner: torch.Tensor, offset: torch.Tensor, prefix_len: int):
        """[1, 1, T, prefix + T]: a tail token sees the whole prefix and its own tail up to itself."""
        own = (owner[:, None] == owner[None, :]) & (offset[None, :] <= offset[:, None])
        sees = torch.cat([torch.ones(len(owner), prefix_len, dtype=torch.bool, device=owner.device), own], dim=1)
        config = self.model.config
        window = getattr(config, "sliding_window", None)
        layer_types = getattr(config, "layer_types", None) or []
        if window and "sliding_attention" in layer_types:
            key_pos = torch.cat([torch.arange(prefix_len, device=owner.device), prefix_len + offset])
            windowed = sees & ((prefix_len + offset)[:, None] - key_pos[None, :] < window)
            return {"full_attention": self._mask_form(sees), "sliding_attention": self._mask_form(windowed)}
        if window and not layer_types and getattr(config, "use_sliding_window", True):
            raise ScoringError(f"{self.identity}: sliding-window attention in every layer; use tail_mode='expanded'")
        return self._mask_form(sees)

    def _mask_form(self, sees: torch.Tensor) -> torch.Tensor:
        if not self._additive_mask:
            return sees[None, None]
        dtype = self.model.dtype
        blocked = torch.zeros(sees.shape, dtype=dtype, device=sees.device)
        return blocked.masked_fill(~sees, torch.finfo(dtype).min)[None, None]

    def _rows_that_fit(self, width: int, prefix_len: int) -> int:
        if width == 0:
            return 1 << 30  # one-token continuations are scored from the prefix alone
        row = width * self.vocab_size * 4 * 2 + (prefix_len + width) * (self._kv_bytes_per_token or 0)
        return max(1, min(self.batch_size, self.memory_budget // row))

    def _score_tails(self, members: list[_Member], cache, first: torch.Tensor,
                     prefix_len: int) -> list[ContinuationScore]:
        width = max(len(m.tail) for m in members) - 1
        if width == 0:
            return [self._finish(m, first, None) for m in members]
        inputs = torch.full((len(members), width), self.pad_id, dtype=torch.long)
        for row, m in enumerate(members):
            inputs[row, : len(m.tail) - 1] = torch.tensor(m.tail[:-1])
        logits = self.model(input_ids=inputs.to(self.device), past_key_values=_expanded(cache, len(members)),
                            use_cache=True).logits
        rows = [_log_softmax_row(logits[row, : len(m.tail) - 1]) for row, m in enumerate(members)]
        self._count(inputs.numel(), inputs.numel() - sum(len(m.tail) - 1 for m in members))
        return [self._finish(m, first, r) for m, r in zip(members, rows)]

    def _halving(self, run, members: list[_Member], *args) -> list[ContinuationScore]:
        """Run a tail pass; if the device runs out of memory, halve it, retry, keep the smaller size."""
        try:
            return run(members, *args)
        except Exception as error:
            if not is_out_of_memory(error) or len(members) == 1:
                raise
        release_memory(self.device)
        half = len(members) // 2
        self.batch_size = max(1, half)
        return self._halving(run, members[:half], *args) + self._halving(run, members[half:], *args)

    def _finish(self, member: _Member, first: torch.Tensor, tail_logprobs: torch.Tensor | None) -> ContinuationScore:
        """Sum the continuation's token log-probs: the first from the prefix's last position, the
        rest from the tail positions before them."""
        total = 0.0
        greedy = True
        for j in range(member.scored_from, len(member.tail)):
            token = member.tail[j]
            row = first if j == 0 else tail_logprobs[j - 1]
            total += float(row[token])
            greedy = greedy and int(row.argmax()) == token
        return ContinuationScore(total, greedy, len(member.tail) - member.scored_from)

    def _count(self, tokens: int, padding: int) -> None:
        self.work.forward_passes += 1
        self.work.tokens_forwarded += tokens
        self.work.padding_tokens += padding

    # -- generation ----------------------------------------------------------------------------

    @torch.inference_mode()
    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        return [self._beam_one(r) if r.beams > 1 else self._generate_one(r) for r in requests]

    def _generate_one(self, request: GenerateRequest) -> Generation:
        """Prefill the prompt once, expand its cache to the n samples, decode token by token."""
        ids = self.encode(request.prompt) or [self.start_id]
        out = self.model(input_ids=torch.tensor([ids], device=self.device), use_cache=True, logits_to_keep=1)
        self._count(len(ids), 0)
        n = request.n
        cache = _expanded(out.past_key_values, n)
        logits = out.logits[:, -1].float().expand(n, -1)
        generator = torch.Generator(device=self.device).manual_seed(request.seed)
        eos = set(eos_ids(self.tokenizer, self.model))
        tokens: list[list[int]] = [[] for _ in range(n)]
        reasons: list[str | None] = [None] * n
        texts = [""] * n
        for _ in range(request.max_tokens):
            chosen = _next_tokens(logits, request, generator)
            for row, token in enumerate(chosen.tolist()):
                if reasons[row] is not None:
                    continue
                if token in eos:
                    reasons[row] = "eos"
                    continue
                tokens[row].append(token)
                texts[row] = self.tokenizer.decode(tokens[row], skip_special_tokens=True)
                cut = _first_stop(texts[row], request.stop)
                if cut is not None:
                    texts[row], reasons[row] = texts[row][:cut], "stop"
            if all(r is not None for r in reasons):
                break
            out = self.model(input_ids=chosen[:, None], past_key_values=cache, use_cache=True)
            self._count(n, 0)
            cache = out.past_key_values
            logits = out.logits[:, -1].float()
        self.work.requests += 1
        return Generation(tuple(texts), tuple(r or "length" for r in reasons))

    def _beam_one(self, request: GenerateRequest) -> Generation:
        """Beam search with `request.beams` beams over summed log-probabilities, no length penalty.

        The prompt is prefilled once; each step runs the live beams as one batch over their KV
        cache, whose rows are reordered to follow the beams' parents. A candidate that picks an
        end-of-sequence token or completes a stop string is finished (the stop string cut off);
        the best `beams` of the others stay live. Since adding a token never raises a score, the
        search ends as soon as `n` finished hypotheses score at least as high as the best live
        beam: nothing left could enter the top n. Live beams left after `max_tokens` finish with
        reason "length". Returns the `n` best, best first (ties: the one finished first).
        """
        width, eos = request.beams, set(eos_ids(self.tokenizer, self.model))
        ids = self.encode(request.prompt) or [self.start_id]
        out = self.model(input_ids=torch.tensor([ids], device=self.device), use_cache=True, logits_to_keep=1)
        self._count(len(ids), 0)
        cache = out.past_key_values
        live: list[tuple[tuple[int, ...], float]] = [((), 0.0)]  # (tokens, summed log-prob) per cache row
        done: list[tuple[float, str, str]] = []  # (score, text, finish reason), in the order found
        logprobs = _log_softmax_row(out.logits[:, -1])
        for step in range(request.max_tokens):
            scores = torch.tensor([s for _, s in live], device=logprobs.device, dtype=torch.float64)[:, None] + logprobs
            # 2 x width candidates leave `width` live ones even if every beam's best token ends it.
            top_scores, top_index = scores.flatten().topk(min(2 * width, scores.numel()))
            parents, chosen, kept = [], [], []
            for score, index in zip(top_scores.tolist(), top_index.tolist()):
                parent, token = divmod(index, logprobs.shape[-1])
                tokens = live[parent][0]
                if token in eos:
                    done.append((score, self.tokenizer.decode(tokens, skip_special_tokens=True), "eos"))
                    continue
                text = self.tokenizer.decode((*tokens, token), skip_special_tokens=True)
                cut = _first_stop(text, request.stop)
                if cut is not None:
                    done.append((score, text[:cut], "stop"))
                    continue
                parents.append(parent)
                chosen.append(token)
                kept.append(((*tokens, token), score))
                if len(kept) == width:
                    break
            live = kept
            if not live or _settled(done, live[0][1], request.n):
                break
            if step + 1 == request.max_tokens:
                done += [(score, self.tokenizer.decode(tokens, skip_special_tokens=True), "length")
                         for tokens, score in live]
                break
            cache = _reordered(cache, torch.tensor(parents, device=self.device))
            out = self.model(input_ids=torch.tensor(chosen, device=self.device)[:, None], past_key_values=cache,
                             use_cache=True)
            self._count(len(chosen), 0)
            cache = out.past_key_values
            logprobs = _log_softmax_row(out.logits[:, -1])
        best = sorted(range(len(done)), key=lambda k: (-done[k][0], k))[:request.n]
        self.work.requests += 1
        return Generation(tuple(done[k][1] for k in best), tuple(done[k][2] for k in best))

    def close(self) -> None:
        self.model = None
        release_memory(self.device)


def _settled(done: list[tuple[float, str, str]], best_live: float, n: int) -> bool:
    """True when n finished hypotheses score at least `best_live`: no live beam can overtake them."""
    return len(done) >= n and sorted((d[0] for d in done), reverse=True)[n - 1] >= best_live


def _reordered(cache, rows: torch.Tensor):
    """A cache whose batch rows are `rows` of the given one (beams follow their parents)."""
    fresh = _copied(cache)
    for layer in fresh.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            layer.keys = layer.keys.index_select(0, rows)
            layer.values = layer.values.index_select(0, rows)
    return fresh


def _next_tokens(logits: torch.Tensor, request: GenerateRequest, generator: torch.Generator) -> torch.Tensor:
    if request.greedy:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits / request.temperature, dim=-1)
    if request.top_p < 1.0:
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        keep = sorted_probs.cumsum(dim=-1) - sorted_probs < request.top_p
        sorted_probs = sorted_probs * keep
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    hits = [text.find(s) for s in stops if s and s in text]
    return min(hits) if hits else None


def eos_ids(tokenizer, model) -> list[int]:
    """Every token that ends a text for this model: the generation config's and the tokenizer's,
    each once, in that order."""
    found = model.generation_config.eos_token_id if model.generation_config is not None else None
    ids = [*(found if isinstance(found, list) else [found]), tokenizer.eos_token_id]
    return list(dict.fromkeys(int(i) for i in ids if i is not None))


def _log_softmax_row(logits: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.float(), dim=-1)


def _expanded(cache, batch: int):
    """A fresh cache whose layers view the prefix's keys/values across `batch` rows, no copy.

    Each forward appends to (and so replaces) a layer's tensors, so the prefix's own cache stays
    untouched and serves the next batch.
    """
    fresh = _copied(cache)
    for layer in fresh.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            layer.keys = layer.keys.expand(batch, *layer.keys.shape[1:])
            layer.values = layer.values.expand(batch, *layer.values.shape[1:])
    return fresh


def _copied(cache):
    """A fresh cache over the prefix's tensors: the next forward appends to the copy only."""
    fresh = copy.copy(cache)
    fresh.layers = [copy.copy(layer) for layer in cache.layers]
    return fresh


def _cache_bytes(cache) -> int:
    total = 0
    for layer in cache.layers:
        for t in (getattr(layer, "keys", None), getattr(layer, "values", None)):
            if t is not None:
                total += t.numel() * t.element_size()
    return total


def _default_budget(device: torch.device) -> int:
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free * 0.5)
    return _CPU_MEMORY_BUDGET

"""Causal LM backend (HFCausalScorer): `loglikelihood` encodes every context once and shares its
KV cache among all its continuations, whose tails run packed in one row or as a batch over the
expanded cache; inside `reusing_prefixes()` nested contexts reuse the blocks already encoded;
`label_paths` scores names as token paths in right-padded passes; `generate` comes from
hf_generation.py. Passes are sized to a memory budget and halved when the device runs out.
The numbers do not depend on which requests share a pass. Design notes: docs/design-notes.md.
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Sequence

import torch
from transformers import DynamicCache

from .device import is_out_of_memory, release_memory
from .hf_cache import _cache_bytes, _copied, _expanded, _log_softmax_row, _reordered  # noqa: F401
from .hf_generation import CausalGeneration, _first_stop, _next_tokens, _settled, eos_ids  # noqa: F401
from .label_trie import label_end_id, label_tokens, prompt_ids
from .requests import (ContinuationScore, Generation, GenerateRequest, LabelPathRequest,  # noqa: F401
                       LabelPathScore, LoglikelihoodRequest)
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


class HFCausalScorer(CausalGeneration, Scorer):
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
        self.label_batch = 32  # label paths per forward pass: names are short, and Gemma's head is 262k wide
        self._blocks: dict[tuple[int, ...], list[tuple[torch.Tensor, torch.Tensor]]] | None = None

    @contextmanager
    def reusing_prefixes(self):
        """Within the `with`, contexts are encoded block by block and blocks already seen are reused
        (see docs/design-notes.md, probes/scoring/hf_causal.py); the blocks are dropped at the end."""
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

    # -- label paths ---------------------------------------------------------------------------

    @torch.inference_mode()
    def label_paths(self, requests: Sequence[LabelPathRequest]) -> list[list[LabelPathScore]]:
        end = label_end_id(self) if any(r.eos for r in requests) else None
        answers = []
        for request in requests:
            ids = prompt_ids(self, request.prompt)
            paths = [(*tokens, end) if request.eos else tokens for tokens in label_tokens(self.tokenizer, request.names)]
            if not all(paths):
                empty = next(n for n, p in zip(request.names, paths) if not p)
                raise ScoringError(f"{self.identity}: the name {empty!r} has no tokens to score")
            logprobs: list[float] = []
            for start in range(0, len(paths), self.label_batch):
                logprobs += self.path_logprobs(ids, paths[start:start + self.label_batch])
            first: dict[tuple[int, ...], int] = {}
            scores = []
            for k, (path, logprob) in enumerate(zip(paths, logprobs)):
                scores.append(LabelPathScore(logprob, len(path), first.get(path)))
                first.setdefault(path, k)
            answers.append(scores)
            self.work.continuations += len(paths)
            self.work.min_tokens += len(ids) + sum(map(len, paths))
        self.work.requests += len(requests)
        return answers

    @torch.inference_mode()
    def path_logprobs(self, ids: Sequence[int], paths: Sequence[Sequence[int]]) -> list[float]:
        """log P(path | ids) for every token path, all in one forward pass (no cache). Shorter paths
        are padded on the right, which a causal model never sees from the positions that are
        scored; the head and the log-softmax run only over the positions that predict path tokens.
        One path runs unmasked: the plain causal pass of the exhaustive reference."""
        longest = max(len(p) for p in paths)
        rows = torch.tensor([[*ids, *p, *[self.pad_id] * (longest - len(p))] for p in paths], device=self.device)
        # No mask when nothing is padded: the single-path reference runs the plain causal kernel.
        mask = None if all(len(p) == longest for p in paths) else torch.tensor(
            [[1] * (len(ids) + len(p)) + [0] * (longest - len(p)) for p in paths], device=self.device)
        logits = self.model(input_ids=rows, attention_mask=mask, use_cache=False, logits_to_keep=longest + 1).logits
        scores = _log_softmax_row(logits[:, :-1])
        self._count(rows.numel(), sum(longest - len(p) for p in paths))
        # Summed in double, as the trie search sums its per-step float32 log-probs in Python floats.
        return [float(scores[k, torch.arange(len(p)), torch.tensor(p, device=scores.device)].double().sum())
                for k, p in enumerate(paths)]

    def close(self) -> None:
        self.model = None
        release_memory(self.device)


def _default_budget(device: torch.device) -> int:
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free * 0.5)
    return _CPU_MEMORY_BUDGET

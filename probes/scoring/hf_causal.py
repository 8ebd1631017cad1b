"""Causal LM backend (HFCausalScorer). `loglikelihood` puts every continuation of a call into one
prefix tree (prefix_tree.py), so a prefix that several contexts share is encoded once, and runs
the tree's pieces many to a forward pass (hf_packing.py): each token sees the cached prefix and
its own ancestors, and only positions that predict a scored token go through the LM head.
Inside `reusing_prefixes()` each context is scored on its own over fixed blocks kept across
calls, so its numbers do not depend on what else is scored. `label_paths` scores names as token
paths in right-padded passes; `generate` comes from hf_generation.py. Passes are sized to a
memory budget and halved when the device runs out. Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from contextlib import contextmanager
from typing import Sequence

import torch
from transformers import DynamicCache

from .device import is_out_of_memory, release_memory
from .hf_cache import cache_of, expanded_cache, log_softmax_row, with_cache
from .hf_generation import CausalGeneration
from .hf_packing import Row, Unit, chain_layout, cut_passes, pack_rows, packed_layout, windowed
from .label_trie import label_end_id, label_tokens, prompt_ids
from .prefix_tree import Node, PrefixTree, distinct_prefixes
from .requests import ContinuationScore, LabelPathRequest, LabelPathScore, LoglikelihoodRequest
from .scorer import Scorer, ScoringError
from .tokens import Split, split_at_context

_CPU_MEMORY_BUDGET = 3 << 30
_Layers = list[tuple[torch.Tensor, torch.Tensor]]  # per layer, (keys, values) of a token prefix


class HFCausalScorer(CausalGeneration, Scorer):
    _planned = 0  # distinct tokens of the loglikelihood call under way (0: none), and those fed
    _fed = 0

    def __init__(self, model, tokenizer, *, identity: str, device: torch.device,
                 batch_size: int = 64, memory_budget: int | None = None,
                 max_padding_share: float = 0.10, tail_mode: str = "auto", prefix_cache_bytes: int = 0) -> None:
        super().__init__()
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.identity = identity
        self.device = device
        self.batch_size = batch_size  # most tree pieces per forward pass; halves on OOM
        self.memory_budget = memory_budget or _default_budget(device)
        # Tokens per pass beyond which a CPU goes no faster (its caches overflow); None: memory alone.
        # 1536: on 2 Zen 4 cores a pass's per-token cost is lowest near 800-1,600 tokens (SmolLM2,
        # Gemma 3); 4096 left its activations out of cache (docs/design/scoring.md).
        self.pass_tokens: int | None = 1536 if device.type == "cpu" else None
        self.max_padding_share = max_padding_share  # of a pass's tokens
        self.vocab_size = model.get_output_embeddings().weight.shape[0]
        start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        if start is None:
            raise ScoringError(f"{identity}: the tokenizer has neither a BOS nor an EOS token to start from")
        self.start_id = start
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else start
        attention = getattr(model.config, "_attn_implementation", None) or "eager"
        config = model.config.get_text_config()
        window = getattr(config, "sliding_window", None)
        layer_types = getattr(config, "layer_types", None) or []
        # Every layer sliding, with no layer types to give them their own mask: packed rows cannot say it.
        every_layer_slides = bool(window and not layer_types and getattr(config, "use_sliding_window", True))
        if tail_mode == "auto":
            tail_mode = "packed" if attention in ("sdpa", "eager") and not every_layer_slides else "expanded"
        if tail_mode == "packed" and every_layer_slides:
            raise ScoringError(f"{identity}: sliding-window attention in every layer; use tail_mode='expanded'")
        if tail_mode not in ("packed", "expanded"):
            raise ValueError(f"tail_mode must be packed, expanded or auto, not {tail_mode!r}")
        self.tail_mode = tail_mode  # packed: tree attention masks; expanded: plain causal chains
        self._additive_mask = attention == "eager"
        # A packed row takes several small pieces up to this many tokens. Its mask is dense, so its
        # attention grows with the square of its width: 256 puts two KDF prompts (~200 tokens) in
        # rows of their own, 5% faster on SmolLM2 than 512 and no slower on short pieces.
        self.row_tokens = 256
        # A shared node runs on its own when that saves this many tokens; else it runs again in
        # each unit under it (a pass of its own, and the split of its subtree, would cost more).
        self.share_min = 64
        self.prefix_block = 32  # tokens per reusable block inside reusing_prefixes()
        self.label_batch = 32  # label paths per forward pass: names are short, and Gemma's head is 262k wide
        self.prefix_cache_bytes = prefix_cache_bytes  # shared prefixes kept across calls; 0: none
        # False: each context on its own, as inside reusing_prefixes() but without the blocks, so
        # its numbers are the same bits whatever else a call holds (at one pass per context).
        self.share_across_requests = True
        self._prefix_cache: OrderedDict[tuple[int, ...], tuple[_Layers, int]] = OrderedDict()
        self._blocks: dict[tuple[int, ...], _Layers] | None = None
        self._sizes(model)

    def _sizes(self, model) -> None:
        """Bytes per token of the KV cache and of one layer's activations, from the config (so a
        pass plan never depends on what ran before)."""
        config = model.config.get_text_config()
        heads = config.num_attention_heads
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
        width = model.dtype.itemsize
        kv_heads = getattr(config, "num_key_value_heads", None) or heads
        self._kv_bytes = config.num_hidden_layers * 2 * kv_heads * head_dim * width
        hidden = config.hidden_size
        self._act_bytes = (getattr(config, "intermediate_size", 4 * hidden) * 3 + hidden * 6) * 4
        window = getattr(config, "sliding_window", None)
        layer_types = getattr(config, "layer_types", None) or []
        self._window = window if window and "sliding_attention" in layer_types else None
        masks = 2 if self._window else 1
        self._score_bytes = heads * 4 * 2 + masks * (width if self._additive_mask else 1)

    def pass_bytes(self, rows: int, width: int, cached: int, kept: int) -> int:
        """What a pass of `rows` x `width` tokens over `cached` ones, `kept` of them per row through
        the LM head, is estimated to take: cache, one layer's attention scores and activations, logits."""
        keys = cached + width
        return rows * (keys * self._kv_bytes + width * keys * self._score_bytes + width * self._act_bytes
                       + max(1, kept) * self.vocab_size * 8)

    @contextmanager
    def reusing_prefixes(self):
        """Within the `with`, each context is scored on its own, encoded block by block, and blocks
        already seen are reused (see docs/design/scoring.md, probes/scoring/hf_causal.py): its numbers
        do not depend on what else is scored. The blocks are dropped at the end."""
        self._blocks = {}
        try:
            yield self
        finally:
            self._blocks = None

    @property
    def _isolated(self) -> bool:
        """Each context scored on its own: its numbers must not depend on the rest of the call."""
        return self._blocks is not None or not self.share_across_requests

    # -- tokenization ------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=True)["input_ids"]

    def split(self, context: str, continuation: str, context_ids: Sequence[int] | None = None) -> Split:
        return split_at_context(self.encode, context, continuation, self.start_id, context_ids)

    # -- loglikelihood -------------------------------------------------------------------------

    @torch.inference_mode()
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[list[ContinuationScore]]:
        slots: list[tuple[int, int, Split]] = []
        groups: dict[tuple[str, int], list[int]] = defaultdict(list)  # a context's slots, by first token
        for i, request in enumerate(requests):
            context_ids = self.encode(request.context)
            for j, continuation in enumerate(request.continuations):
                split = self.split(request.context, continuation, context_ids)
                groups[request.context, split.ids[0]].append(len(slots))
                slots.append((i, j, split))
        for members in groups.values():
            shared = min(slots[s][2].split for s in members)
            self.work.min_tokens += shared + sum(len(slots[s][2].ids) - shared for s in members)
        self._tally = [[0.0, True] for _ in slots]
        # The call's share done, told as tokens fed of the distinct ones its trees hold: the one
        # measure of work that does not depend on how the passes are cut.
        trees = [list(range(len(slots)))] if not self._isolated else list(groups.values())
        self._planned = sum(distinct_prefixes([slots[s][2].ids[:-1] for s in tree]) for tree in trees)
        self._fed = 0
        try:
            if not self._isolated:
                self._score_tree(slots, trees[0], groups.values())
            else:
                for members in trees:
                    self._score_tree(slots, members, [members])
        finally:
            self._planned = 0
        results: list[list[ContinuationScore | None]] = [[None] * len(r.continuations) for r in requests]
        for (i, j, split), (logprob, greedy) in zip(slots, self._tally):
            results[i][j] = ContinuationScore(logprob, greedy, len(split.ids) - split.split)
        self.work.requests += len(requests)
        self.work.continuations += len(slots)
        return results  # type: ignore[return-value]

    def _score_tree(self, slots: list[tuple[int, int, Split]], members: list[int], groups) -> None:
        """Score the member slots from one prefix tree (over their context's blocks inside
        reusing_prefixes()). `groups`: the slots a context-by-context engine would share among."""
        tree = PrefixTree()
        for s in members:
            tree.insert(slots[s][2].ids[:-1])  # a continuation's last token predicts nothing read
        for s in members:
            ids, first = slots[s][2].ids, slots[s][2].split
            for position in range(first - 1, len(ids) - 1):
                tree.mark(ids[:-1], position, ids[position + 1], s)
        distinct = tree.measure()
        self._pieces: dict[int, int] = {}  # _plan's count of the units below a node, by id(node)
        self.work.distinct_tokens += distinct
        alone = sum(distinct_prefixes([slots[s][2].ids[:-1] for s in group]) for group in groups)
        self.work.shared_prefix_tokens += alone - distinct
        if self._blocks is None:
            self._descend(tree.root, None, ())
            return
        prefix = slots[members[0]][2].ids[:min(slots[s][2].split for s in members)]
        cache, whole = self._block_cache(prefix)
        self._descend(tree.cut(prefix, whole), cache, prefix[:whole])

    def _block_cache(self, prefix: Sequence[int]) -> tuple[_Layers | None, int]:
        """The keys and values of the prefix's whole blocks before its last token, from the kept
        blocks plus the ones not seen yet, each encoded on top of those before it."""
        size = self.prefix_block
        whole = (len(prefix) - 1) // size * size  # the last token stays out: its logits are read
        blocks: list[_Layers] = []
        for start in range(0, whole, size):
            key = tuple(prefix[:start + size])
            if key not in self._blocks:
                cache = DynamicCache(_joined(blocks)) if blocks else DynamicCache()
                out = self.model(input_ids=torch.tensor([list(prefix[start:start + size])], device=self.device),
                                 **with_cache(self.model, cache), use_cache=True, logits_to_keep=1)
                self._count(size, 0)
                # cloned: a view would keep the whole cache of this pass alive
                self._blocks[key] = [(layer.keys[..., start:, :].clone(), layer.values[..., start:, :].clone())
                                     for layer in cache_of(out).layers]
            blocks.append(self._blocks[key])
        return (_joined(blocks) if blocks else None), whole

    def _descend(self, node: Node, cache: _Layers | None, path: Sequence[int]) -> None:
        """Score everything below `node`, whose prefix's keys and values are `cache` (None at the
        root). Depth first, one frame per shared node, and a frame whose last pass is done makes
        way for its child (so a chain of nested contexts holds one cache, not one per level)."""
        stack = [[node, cache, tuple(path), None, []]]  # node, cache, path, passes left, shared nodes below
        while stack:
            frame = stack[-1]
            node, cache, path, passes, pending = frame
            if passes is None:
                passes = frame[3] = self._plan(node, path, pending)
            if not pending and passes:
                pending += self._halving(passes.pop(0), cache, node.end)
                continue
            if not pending:
                stack.pop()
                continue
            child, kv, tokens = pending.pop(0)
            if tokens is None:  # from the cross-call cache: kv is the whole prefix's
                joined, child_path = kv
            else:  # kv is the shared node's own: joined only now, one child at a time
                joined = _joined([cache, kv]) if cache is not None else kv
                child_path = path + tokens
                self._remember(child_path, joined)
            if not passes and not pending:
                stack.pop()  # nothing left here: the parent's cache can go
            stack.append([child, joined, child_path, None, []])

    def _plan(self, node: Node, path: tuple[int, ...], pending: list) -> list[list[Row]]:
        """Cut what hangs off `node` into units and the units into passes. A child whose subtree
        fits (and is a chain, or small, or nearly a chain) runs whole. Else, if its run is worth
        sharing, the run runs alone (as much as fits; or comes from the cross-call cache) and the
        subtree later over it; if not, the run goes again into every unit under it."""
        cached = node.end
        chain = self.tail_mode == "expanded"
        budget = self.memory_budget

        def fits(tokens: int, kept: int, rows: int = 1) -> bool:
            return (self.pass_bytes(rows, tokens, cached, kept) <= budget
                    and (self.pass_tokens is None or rows * tokens <= self.pass_tokens))

        def shaped(n: Node, extra: int) -> bool:
            if chain:
                return n.is_chain()
            return n.size + extra <= self.row_tokens or n.size - n.longest <= self.row_tokens // 4

        pieces = self._pieces  # per tree: depends on the node and the row size only

        def count(top: Node) -> int:  # units below `top` if no node below it ran on its own
            order, stack = [], [top]
            while stack:  # no recursion: nested contexts can make a tree thousands of nodes deep
                n = stack.pop()
                if id(n) not in pieces:
                    order.append(n)
                    if n.children and not shaped(n, 0):
                        stack.extend(n.children.values())
            for n in reversed(order):
                below = n.children.values() if n.children and not shaped(n, 0) else ()
                pieces[id(n)] = sum(pieces[id(c)] for c in below) or 1
            return pieces[id(top)]

        units = []
        todo = [(c, ()) for c in reversed(list(node.children.values()))]
        while todo:
            child, prefix = todo.pop()
            hit = None if prefix else self._recall(path, child)
            if hit is not None:
                pending.append(hit)
                continue
            unit = Unit(child, True, prefix)
            extra = unit.tokens - child.size
            if fits(unit.tokens, unit.kept) and shaped(child, extra):
                units.append(unit)
                continue
            shared = count(child)
            if child.children and shared > 1 and len(child.tokens) * (shared - 1) < self.share_min:
                again = tuple((n, False) for n, _ in prefix)
                for k, grandchild in reversed(list(enumerate(child.children.values()))):
                    todo.append((grandchild, (prefix if k == 0 else again) + ((child, k == 0),)))
                continue
            reads = unit.kept - child.kept
            lo, hi = 1, len(child.tokens)  # the longest head of the run that fits
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if fits(extra + mid, reads + sum(o < mid for o in child.keep)):
                    lo = mid
                else:
                    hi = mid - 1
            if lo < len(child.tokens):
                PrefixTree.split(child, lo)
            units.append(Unit(child, False, prefix))
        if not units:
            return []
        rows = pack_rows(units, self.row_tokens, self.batch_size, chain, fits)
        return cut_passes(rows, self.batch_size, self.max_padding_share, chain,
                          lambda n, width, kept: fits(width, kept, n))

    def _halving(self, rows: list[Row], cache: _Layers | None, cached: int) -> list:
        """Run a pass; if the device runs out of memory, halve it, retry, keep the smaller size."""
        try:
            return self._run(rows, cache, cached)
        except Exception as error:
            if not is_out_of_memory(error):
                raise
        release_memory(self.device)
        if len(rows) == 1 and len(rows[0].units) == 1:
            raise ScoringError(f"{self.identity}: {rows[0].tokens} tokens after {cached} do not fit in memory")
        if len(rows) == 1:
            units = rows[0].units
            rows = [Row(), Row()]
            for k, unit in enumerate(units):
                rows[k * 2 >= len(units)].add(unit, self.tail_mode == "expanded")
        half = len(rows) // 2
        self.batch_size = max(1, sum(len(r.units) for r in rows[:half]))
        return self._halving(rows[:half], cache, cached) + self._halving(rows[half:], cache, cached)

    def _run(self, rows: list[Row], cache: _Layers | None, cached: int) -> list[tuple[Node, _Layers, tuple]]:
        """One forward pass over the rows on top of the cache: tally the positions read, and
        return each shared node's keys, values and tokens after the cache, for its subtree."""
        if self.tail_mode == "expanded":
            layout = chain_layout(rows, self.pad_id, self.device)
            extra = {}
        else:
            layout = packed_layout(rows, cached, self.pad_id)
            extra = {"position_ids": layout.positions.to(self.device),
                     "attention_mask": self._masks(layout.sees, layout.positions, cached)}
        past = expanded_cache(DynamicCache(cache), len(rows)) if cache is not None else DynamicCache()
        out = self.model(input_ids=layout.ids.to(self.device), **with_cache(self.model, past), use_cache=True,
                         logits_to_keep=layout.keep, **extra)
        read = self._read(out.logits, layout.kept)
        layers = cache_of(out).layers
        shared = []
        for unit, row, columns in layout.edges:
            at = torch.tensor([cached + c for c in columns], device=self.device)
            shared.append((unit.node, [(layer.keys[row:row + 1].index_select(2, at),
                                        layer.values[row:row + 1].index_select(2, at)) for layer in layers],
                           tuple(unit.run_tokens())))
        # Only now, with nothing left to run out of memory: a halved retry must not count twice.
        for slots, value, greedy in read:
            for s in slots:
                self._tally[s][0] += value
                self._tally[s][1] = self._tally[s][1] and greedy
        self._count(layout.ids.numel(), layout.padding)
        self.work.repeated_tokens += sum(len(n.tokens) for r in rows for u in r.units for n, first in u.prefix
                                         if not first)
        return shared

    def _masks(self, sees: torch.Tensor, positions: torch.Tensor, cached: int):
        """[rows, 1, width, cached + width], per layer type where sliding-window layers need their own."""
        if self._window and int(positions.max()) >= self._window:
            return {"full_attention": self._mask_form(sees),
                    "sliding_attention": self._mask_form(windowed(sees, positions, cached, self._window))}
        mask = self._mask_form(sees)
        return {"full_attention": mask, "sliding_attention": mask} if self._window else mask

    def _mask_form(self, sees: torch.Tensor) -> torch.Tensor:
        sees = sees.to(self.device)[:, None]
        if not self._additive_mask:
            return sees
        dtype = self.model.dtype
        blocked = torch.zeros(sees.shape, dtype=dtype, device=sees.device)
        return blocked.masked_fill(~sees, torch.finfo(dtype).min)

    def _read(self, logits: torch.Tensor, kept: list[tuple[int, int, Node, int]]) -> list:
        """(continuation slots, log-prob, greedy?) for every token read at the kept positions:
        log-softmax over a few rows at a time (Gemma's head is 262k wide)."""
        found = []
        chunk = max(1, (64 << 20) // (self.vocab_size * 4))
        at = logits.device
        for start in range(0, len(kept), chunk):
            part = kept[start:start + chunk]
            rows = logits[torch.tensor([k[0] for k in part], device=at), torch.tensor([k[1] for k in part], device=at)]
            logprobs = log_softmax_row(rows)
            best = logprobs.argmax(dim=-1).tolist()
            where, targets, slots = [], [], []
            for n, (_, _, node, offset) in enumerate(part):
                for target, readers in node.keep[offset].items():
                    where.append(n)
                    targets.append(target)
                    slots.append(readers)
            values = logprobs[torch.tensor(where, device=at), torch.tensor(targets, device=at)].tolist()
            found += [(s, v, best[n] == t) for n, t, s, v in zip(where, targets, slots, values)]
        return found

    # -- the cross-call cache of shared prefixes -------------------------------------------------

    def _remember(self, path: tuple[int, ...], layers: _Layers) -> None:
        if not self.prefix_cache_bytes or self._isolated:
            return
        size = sum(k.numel() * k.element_size() * 2 for k, _ in layers)
        if size > self.prefix_cache_bytes:
            return
        self._prefix_cache[path] = (layers, size)
        self._prefix_cache.move_to_end(path)
        while sum(s for _, s in self._prefix_cache.values()) > self.prefix_cache_bytes:
            self._prefix_cache.popitem(last=False)

    def _recall(self, path: tuple[int, ...], child: Node):
        """A kept prefix that ends inside (or at the end of) child's run: child is cut there and
        comes back with that prefix's keys and values."""
        if not self._prefix_cache or self._isolated:
            return None
        full = path + tuple(child.tokens)
        best = None
        for key in self._prefix_cache:
            if len(path) < len(key) <= len(full) and full[:len(key)] == key and (best is None or len(key) > len(best)):
                best = key
        if best is None:
            return None
        self._prefix_cache.move_to_end(best)
        if len(best) < len(full):
            PrefixTree.split(child, len(best) - len(path))
        self.work.cached_tokens += len(child.tokens)
        return child, (self._prefix_cache[best][0], best), None

    def _count(self, tokens: int, padding: int) -> None:
        self.work.forward_passes += 1
        self.work.tokens_forwarded += tokens
        self.work.padding_tokens += padding
        if self._planned:  # inside loglikelihood
            self._fed += tokens - padding
            self.report_call(self._fed, self._planned)

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
            self.report_call(len(answers), len(requests))
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
        scores = log_softmax_row(logits[:, :-1])
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


def _joined(parts: list[_Layers]) -> _Layers:
    """Per layer, the parts' keys and values one after the other."""
    if len(parts) == 1:
        return parts[0]
    return [(torch.cat([p[n][0] for p in parts], dim=-2), torch.cat([p[n][1] for p in parts], dim=-2))
            for n in range(len(parts[0]))]

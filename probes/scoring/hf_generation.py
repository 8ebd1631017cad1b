"""Text generation for the causal LM backend: `CausalGeneration`, mixed into HFCausalScorer
(hf_causal.py), answers greedy and sampled `generate` requests many at a time (hf_decode.py:
prompts share their common prefix and a batch, each sample draws from its own seeded generator),
and beam requests one at a time by beam search over summed log-probabilities (no length penalty,
stopped early once nothing live can enter the top n). Stop strings are cut off; a text ends at
any of `eos_ids` (tokens.py).
"""

from __future__ import annotations

from typing import Sequence

import torch

from .hf_cache import cache_of, log_softmax_row, reordered_cache, with_cache
from .hf_decode import decode_batched, first_stop
from .requests import Generation, GenerateRequest
from .tokens import eos_ids


class CausalGeneration:
    """`generate` for HFCausalScorer: uses its model, tokenizer, device, start_id, pad_id, encode,
    work, batch_size, memory_budget and _count."""

    generate_rows: int | None = None  # most rows decoded at once; None: the scorer's batch_size

    @torch.inference_mode()
    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        answers: list[Generation | None] = [None] * len(requests)
        # The call's share done counts a beam search as one unit and each sampled text as one.
        units, done = sum(r.n if r.beams == 1 else 1 for r in requests), 0

        def rows_done(rows: int) -> None:
            nonlocal done
            done += rows
            self.report_call(done, units)

        # Beam search stays one request at a time: its beams already fill a batch.
        for k, request in enumerate(requests):
            if request.beams > 1:
                answers[k] = self._beam_one(request)
                rows_done(1)
        plain = [k for k, r in enumerate(requests) if r.beams == 1]
        if plain:
            eos = set(eos_ids(self.tokenizer, self.model))
            for k, answer in zip(plain, decode_batched(self, [requests[k] for k in plain], eos, rows_done)):
                answers[k] = answer
        return answers  # type: ignore[return-value]

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
        cache = cache_of(out)
        live: list[tuple[tuple[int, ...], float]] = [((), 0.0)]  # (tokens, summed log-prob) per cache row
        done: list[tuple[float, str, str]] = []  # (score, text, finish reason), in the order found
        logprobs = log_softmax_row(out.logits[:, -1])
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
                cut = first_stop(text, request.stop)
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
            cache = reordered_cache(cache, torch.tensor(parents, device=self.device))
            out = self.model(input_ids=torch.tensor(chosen, device=self.device)[:, None], **with_cache(self.model, cache),
                             use_cache=True)
            self._count(len(chosen), 0)
            cache = cache_of(out)
            logprobs = log_softmax_row(out.logits[:, -1])
        best = sorted(range(len(done)), key=lambda k: (-done[k][0], k))[:request.n]
        self.work.requests += 1
        return Generation(tuple(done[k][1] for k in best), tuple(done[k][2] for k in best))


def _settled(done: list[tuple[float, str, str]], best_live: float, n: int) -> bool:
    """True when n finished hypotheses score at least `best_live`: no live beam can overtake them."""
    return len(done) >= n and sorted((d[0] for d in done), reverse=True)[n - 1] >= best_live


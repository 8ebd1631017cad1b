"""The slow path the fast engine is checked against: one full forward pass per context +
continuation, no cache, no batching, log-softmax over every position. It shares only the
definition of where the context ends (tokens.split_at_context) with the engine."""

from __future__ import annotations

import torch

from .requests import ContinuationScore, LoglikelihoodRequest
from .tokens import split_at_context


@torch.inference_mode()
def reference_loglikelihood(model, tokenizer, request: LoglikelihoodRequest, device="cpu") -> list[ContinuationScore]:
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=True)["input_ids"]

    scores = []
    for continuation in request.continuations:
        split = split_at_context(encode, request.context, continuation, start)
        ids = torch.tensor([split.ids], device=device)
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
        targets = ids[0, split.split:]
        rows = logprobs[split.split - 1: len(split.ids) - 1]
        picked = rows.gather(1, targets[:, None]).squeeze(1)
        scores.append(ContinuationScore(
            float(picked.sum()), bool((rows.argmax(dim=1) == targets).all()), len(targets)))
    return scores

"""The slow path the fast engine is checked against: one full forward pass per context +
continuation, no cache, no batching, log-softmax over every position. It shares only the
definition of where the context ends (tokens.split_at_context) and of a label path
(label_trie: prompt_tokens, label_tokens, end_of_label) with the engine."""

from __future__ import annotations

import torch

from .label_trie import end_of_label, label_tokens, prompt_tokens
from .requests import ContinuationScore, LabelPathRequest, LabelPathScore, LoglikelihoodRequest
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
        # The whole sequence runs through the model; only the head's output is limited to the
        # positions that predict continuation tokens (Gemma's 262k-entry head on every position
        # of a long context would cost more than the transformer itself).
        kept = len(split.ids) - split.split + 1
        logits = model(input_ids=ids, logits_to_keep=kept).logits[0, :-1]
        rows = torch.log_softmax(logits.float(), dim=-1)
        targets = ids[0, split.split:]
        picked = rows.gather(1, targets[:, None]).squeeze(1)
        scores.append(ContinuationScore(
            float(picked.double().sum()), bool((rows.argmax(dim=1) == targets).all()), len(targets)))
    return scores


@torch.inference_mode()
def reference_label_paths(model, tokenizer, request: LabelPathRequest, device="cpu") -> list[LabelPathScore]:
    """One full forward pass of prompt + path per name, unpadded and unbatched."""
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    ids = prompt_tokens(lambda text: tokenizer(text, add_special_tokens=True)["input_ids"], request.prompt, start)
    end = (end_of_label(tokenizer, model),) if request.eos else ()
    scores, seen = [], {}
    for k, tokens in enumerate(label_tokens(tokenizer, request.names)):
        path = (*tokens, *end)
        row = torch.tensor([[*ids, *path]], device=device)
        rows = torch.log_softmax(model(input_ids=row, logits_to_keep=len(path) + 1).logits[0, :-1].float(), dim=-1)
        picked = rows.gather(1, torch.tensor(path, device=device)[:, None]).squeeze(1)
        scores.append(LabelPathScore(float(picked.double().sum()), len(path), seen.get(path)))
        seen.setdefault(path, k)
    return scores

"""Masked LM backend: the distribution over the vocabulary at the mask (BELIEF on BERT-style models)."""

from __future__ import annotations

from typing import Sequence

import torch

from .device import is_out_of_memory, release_memory
from .requests import FillMaskRequest, MaskCandidate
from .scorer import Scorer, ScoringError


class HFMaskedScorer(Scorer):
    def __init__(self, model, tokenizer, *, identity: str, device: torch.device, batch_size: int = 32) -> None:
        super().__init__()
        if tokenizer.mask_token is None:
            raise ScoringError(f"{identity}: the tokenizer has no mask token, so it is not a masked LM")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.identity = identity
        self.device = device
        self.batch_size = batch_size

    @torch.inference_mode()
    def fill_mask(self, requests: Sequence[FillMaskRequest]) -> list[list[MaskCandidate]]:
        answers: list[list[MaskCandidate]] = []
        start = 0
        while start < len(requests):
            batch = requests[start:start + self.batch_size]
            try:
                answers.extend(self._fill_batch(batch))
            except Exception as error:
                if not is_out_of_memory(error) or len(batch) == 1:
                    raise
                release_memory(self.device)
                self.batch_size = max(1, len(batch) // 2)
                continue
            start += len(batch)
            self.report_call(start, len(requests))
        self.work.requests += len(requests)
        return answers

    def _fill_batch(self, batch: Sequence[FillMaskRequest]) -> list[list[MaskCandidate]]:
        texts = [r.text.replace(FillMaskRequest.PLACEHOLDER, self.tokenizer.mask_token) for r in batch]
        encoded = self.tokenizer(texts, return_tensors="pt", padding=True)
        mask_id = self.tokenizer.mask_token_id
        counts = (encoded["input_ids"] == mask_id).sum(dim=1)
        for text, count in zip(texts, counts.tolist()):
            if count != 1:
                raise ScoringError(f"{self.identity}: {count} mask tokens after tokenizing {text!r}; expected 1")
        logits = self.model(**{k: v.to(self.device) for k, v in encoded.items()}).logits
        rows, cols = (encoded["input_ids"] == mask_id).nonzero(as_tuple=True)
        probs = torch.softmax(logits[rows.to(self.device), cols.to(self.device)].float(), dim=-1)
        self.work.forward_passes += 1
        self.work.tokens_forwarded += encoded["input_ids"].numel()
        answers = []
        for request, dist in zip(batch, probs):
            top = torch.topk(dist, min(request.top_k, dist.shape[-1]))
            answers.append([
                MaskCandidate(self._token_text(i), i, float(p))
                for p, i in zip(top.values.tolist(), top.indices.tolist())
            ])
        return answers

    def _token_text(self, token_id: int) -> str:
        return self.tokenizer.decode([token_id]).strip()

    def close(self) -> None:
        self.model = None
        release_memory(self.device)

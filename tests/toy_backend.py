"""A model backend added in one file: `toy:WORD,WORD,...` is a "model" that knows the listed
words. log P(continuation | context) is 0 for a continuation that is one of its words (spaces
around it aside) and minus one nat per character otherwise, whatever the context; no torch.

Importing this module registers the backend; `FACTPROBE_PLUGINS=toy_backend` (with this folder
on PYTHONPATH) makes other processes see it too (tests/test_model_backends.py)."""

from __future__ import annotations

from typing import Sequence

from factprobe.probes.scoring.backends import Backend, LoadOptions, ModelSpec, SpecError, register
from factprobe.probes.scoring.requests import ContinuationScore, LoglikelihoodRequest
from factprobe.probes.scoring.scorer import Scorer


class ToyScorer(Scorer):
    def __init__(self, words: tuple[str, ...]) -> None:
        super().__init__()
        self.words = words
        self.identity = f"toy:{','.join(words)}"

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[list[ContinuationScore]]:
        self.work.requests += len(requests)
        return [[ContinuationScore(0.0 if c.strip() in self.words else -float(len(c.strip())),
                                   c.strip() in self.words, len(c.split())) for c in r.continuations]
                for r in requests]


class ToyBackend(Backend):
    name = "toy"
    target = "WORDS"
    summary = "a toy model that knows the comma-separated WORDS (tests/toy_backend.py)"

    @classmethod
    def check(cls, spec: ModelSpec) -> None:
        if not all(w.strip() for w in spec.target.split(",")):
            raise SpecError(f"model spec {spec.raw!r}: an empty word among {spec.target!r}")

    @classmethod
    def load(cls, spec: ModelSpec, options: LoadOptions) -> Scorer:
        return ToyScorer(tuple(w.strip() for w in spec.target.split(",")))


register(ToyBackend)

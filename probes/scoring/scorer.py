"""The one interface every model backend implements, after lm-evaluation-harness.

Four questions: how likely is this continuation after this context (`loglikelihood`), how likely
is each of these names as the whole answer after this prompt (`label_paths`: log P(" " + name +
EOS | prompt), the plausibility the distractor measure and the probability baseline use), what
does the model write (`generate`), what does it put in the mask (`fill_mask`). A backend that
cannot answer one raises `Unsupported` with a sentence naming the model and what to use instead.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from .requests import (
    ContinuationScore,
    FillMaskRequest,
    Generation,
    GenerateRequest,
    LabelPathRequest,
    LabelPathScore,
    LoglikelihoodRequest,
    MaskCandidate,
)


class Unsupported(RuntimeError):
    """The backend cannot answer this kind of request."""


class ScoringError(RuntimeError):
    """A backend answered, but its answer cannot be trusted (or it could not answer at all)."""


@dataclass
class Work:
    """Counts of what the backend actually computed, for benchmarks and progress."""

    requests: int = 0
    continuations: int = 0
    forward_passes: int = 0
    tokens_forwarded: int = 0  # every position run through the model, padding included
    padding_tokens: int = 0
    min_tokens: int = 0  # each distinct context once plus every continuation token
    # The prefix tree's tokens: each distinct token prefix of a call once, the least an exact
    # engine that shares every prefix must feed (continuations' last tokens predict nothing read).
    distinct_tokens: int = 0
    shared_prefix_tokens: int = 0  # fed once though several contexts hold them: saved by sharing
    repeated_tokens: int = 0  # fed again: a short shared prefix is repeated rather than run alone
    cached_tokens: int = 0  # shared prefixes served from an earlier call (prefix_cache_bytes)


class Scorer:
    """The base of every backend. No question is required of a backend: each one a backend does not
    override answers `Unsupported` (a causal LM answers loglikelihood, label_paths and generate; a
    masked LM fill_mask; an OpenAI-compatible server generate, and loglikelihood and label_paths
    without EOS where it returns prompt log-probs)."""

    #: Stable name of the model's weights and numerics (dtype), the key of the result cache.
    identity: str = "unknown"
    #: Told the share (0 to 1) of the current call answered so far, as the backend learns it, so
    #: that a bar moves inside one call of many items (set for a while by `reporting`).
    call_progress: Callable[[float], None] | None = None

    def __init__(self) -> None:
        self.work = Work()

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[list[ContinuationScore]]:
        raise Unsupported(f"{self.identity} does not score continuations")

    def label_paths(self, requests: Sequence[LabelPathRequest]) -> list[list[LabelPathScore]]:
        """Per request, per name: log P(" " + name [+ EOS] | prompt) (see LabelPathRequest)."""
        raise Unsupported(f"{self.identity} does not score label paths; use a causal LM (hf:... or a GGUF model)")

    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        raise Unsupported(f"{self.identity} does not generate text")

    def fill_mask(self, requests: Sequence[FillMaskRequest]) -> list[list[MaskCandidate]]:
        raise Unsupported(f"{self.identity} has no mask token; fill_mask needs a masked LM (hf-mlm:...)")

    def report_call(self, done: float, total: float) -> None:
        """A backend's note that `done` of the `total` units of the current call are answered."""
        if self.call_progress is not None and total > 0:
            self.call_progress(min(1.0, done / total))

    def close(self) -> None:
        """Release the model and any connection."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextmanager
def reporting(scorer: Scorer, hook: Callable[[float], None] | None) -> Iterator[Scorer]:
    """`scorer` telling `hook` the share of each call answered, until the block ends."""
    before, scorer.call_progress = getattr(scorer, "call_progress", None), hook
    try:
        yield scorer
    finally:
        scorer.call_progress = before

"""The fast engine against the slow reference path, on both real PyPI models.

Reference: one full forward pass per context + continuation, log-softmax over every position.
Engine: context encoded once, KV cache shared, tails batched with right padding. They must agree
within 1e-4 nats per continuation in fp32, for every batch size, with and without padding.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from factprobe.probes.scoring.reference import reference_loglikelihood
from factprobe.probes.scoring.requests import LoglikelihoodRequest as Req
from factprobe.probes.scoring.scorer import Work
from scoring_models import REAL_MODELS, real_scorer

TOLERANCE = 1e-4

# Long enough to pass Gemma 3's 512-token sliding window, so its windowed layers are exercised.
LONG_CONTEXT = "\n".join(f"Country number {i} has capital city number {i}." for i in range(60)) + "\nFrance"

REQUESTS = [
    Req("The capital of France is", (" Paris", " Berlin", " the city of Lyon", " Paris, on the Seine")),
    Req("The capital of France is ", ("Paris", "Berlin", "the city of Lyon")),  # trailing space
    Req("Zürich liegt in der", (" Schweiz", " Österreich 🇦🇹", " 日本の首都は東京")),  # Unicode
    Req("", ("Hello", "Hello world")),  # nothing before the continuation
    Req("Hel", ("lo", " world")),  # "lo" merges with the context's only token; " world" does not
    Req("Q: Who wrote Faust?\nA:", (" Goethe", " Johann Wolfgang von Goethe", " Schiller", "Goethe")),
]
LONG = Req(LONG_CONTEXT, (" Paris", " Lyon", " Marseille is not the capital"))
MODES = [("packed", 0.0), ("expanded", 0.0), ("expanded", 1.0)]


@pytest.fixture(scope="module", params=REAL_MODELS)
def scorer_and_reference(request):
    scorer = real_scorer(request.param)
    reference = [reference_loglikelihood(scorer.model, scorer.tokenizer, r) for r in REQUESTS]
    return scorer, reference


@contextmanager
def settings(scorer, **values):
    """The real scorers are shared by the whole session: put every setting back afterwards."""
    saved = {name: getattr(scorer, name) for name in values}
    for name, value in values.items():
        setattr(scorer, name, value)
    try:
        yield scorer
    finally:
        for name, value in saved.items():
            setattr(scorer, name, value)


def _compare(got, reference, label, requests=REQUESTS):
    for request, got_scores, ref_scores in zip(requests, got, reference):
        for continuation, g, r in zip(request.continuations, got_scores, ref_scores):
            where = f"{label}: {request.context[-30:]!r} + {continuation!r}"
            assert abs(g.logprob - r.logprob) <= TOLERANCE, f"{where}: {g.logprob} vs {r.logprob}"
            assert g.n_tokens == r.n_tokens, where
            assert g.is_greedy == r.is_greedy, where


@pytest.mark.slow
@pytest.mark.parametrize("tail_mode, padding_share", MODES)
def test_engine_equals_reference_at_every_batch_size(scorer_and_reference, tail_mode, padding_share):
    scorer, reference = scorer_and_reference
    most = max(len(r.continuations) for r in REQUESTS)
    padded = 0
    with settings(scorer, tail_mode=tail_mode, max_padding_share=padding_share, batch_size=1):
        for batch_size in range(1, most + 1):
            scorer.batch_size = batch_size
            scorer.work = Work()
            _compare(scorer.loglikelihood(REQUESTS), reference, f"{tail_mode}, batch {batch_size}, padding {padding_share}")
            padded += scorer.work.padding_tokens
    if padding_share == 1.0:
        assert padded > 0, "the padded run should have padded some batch"
    else:
        assert padded == 0


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["gemma3-270m"])  # the model with a sliding window (SmolLM2 has none)
def test_long_context_past_the_sliding_window(spec):
    """822 tokens: past Gemma 3's 512-token window, so its windowed layers must mask exactly."""
    scorer = real_scorer(spec)
    reference = [reference_loglikelihood(scorer.model, scorer.tokenizer, LONG)]
    assert len(scorer.encode(LONG.context)) > 600
    for tail_mode, padding_share in MODES:
        with settings(scorer, tail_mode=tail_mode, max_padding_share=padding_share):
            _compare(scorer.loglikelihood([LONG]), reference, f"long context, {tail_mode}", [LONG])


@pytest.mark.slow
@pytest.mark.parametrize("tail_mode", ["packed", "expanded"])
def test_results_do_not_depend_on_batch_composition(scorer_and_reference, tail_mode):
    scorer, _ = scorer_and_reference
    with settings(scorer, tail_mode=tail_mode):
        together = scorer.loglikelihood(REQUESTS)
        alone = [scorer.loglikelihood([r])[0] for r in REQUESTS]
        # Split one context's continuations over two requests, interleaved with another context.
        first = REQUESTS[0]
        mixed = scorer.loglikelihood([Req(first.context, first.continuations[:2]), REQUESTS[2],
                                      Req(first.context, first.continuations[2:])])
    # Requests that share a pass (or a prefix) change the float32 rounding of what they share,
    # not the numbers: the same tolerance as against the reference.
    for a, b in zip(together, alone):
        for x, y in zip(a, b):
            assert abs(x.logprob - y.logprob) <= TOLERANCE
    regrouped = mixed[0] + mixed[2]
    for x, y in zip(together[0], regrouped):
        assert abs(x.logprob - y.logprob) <= TOLERANCE


@pytest.mark.slow
def test_context_is_encoded_once_per_distinct_context(scorer_and_reference):
    scorer, _ = scorer_and_reference
    scorer.work = Work()
    request = REQUESTS[4]
    scorer.loglikelihood([request, Req(request.context, (" Heine",))])
    prefix = len(scorer.split(request.context, " Goethe").ids) - 1
    # One pass over the context, then tail passes of a few tokens each: never the context again.
    assert scorer.work.tokens_forwarded < prefix + 20
    assert scorer.work.tokens_forwarded <= scorer.work.min_tokens


def test_split_puts_a_trailing_space_into_the_continuation():
    scorer = real_scorer("smollm2-135m-instruct")
    with_space = scorer.split("The capital of France is ", "Paris")
    without = scorer.split("The capital of France is", " Paris")
    assert with_space == without
    assert scorer.tokenizer.decode(with_space.ids[with_space.split:]) == " Paris"


def test_empty_continuation_is_refused():
    with pytest.raises(ValueError, match="must not be empty"):
        Req("The capital of France is", (" Paris", ""))
    with pytest.raises(TypeError, match="not one string"):
        Req("The capital of France is", " Paris")

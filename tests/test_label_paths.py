"""Label paths, log P(" " + name [+ EOS] | prompt): the Scorer request the distractor measure, the
probability baseline and ApprOpt's exhaustive reference share. The batched engine (right-padded
passes of `label_batch` paths) against the reference (one unpadded pass per name) on both real
models; the result cache; the backends that cannot answer."""

from __future__ import annotations

from dataclasses import replace

import pytest

from factprobe.probes.scoring.appropt import path_logprobs
from factprobe.probes.scoring.cache import CachedScorer, request_key
from factprobe.probes.scoring.label_trie import LabelTrie, label_end_id, prompt_ids
from factprobe.probes.scoring.reference import reference_label_paths
from factprobe.probes.scoring.requests import LabelPathRequest, LabelPathScore
from factprobe.probes.scoring.scorer import Unsupported
from scoring_models import REAL_MODELS, real_scorer

# A padded batch is a pass of another shape than the reference's: fp32 sums round differently
# (seen up to 1.03e-4 on Gemma for a 6-token path; test_appropt.py uses the same bound).
TOLERANCE = 5e-4

REQUESTS = [
    LabelPathRequest("The capital of France is", ("Paris", "Berlin", "City of Light", "Santiago de Compostela",
                                                  "Paris", "  Lyon ", "Zürich 🇨🇭")),
    LabelPathRequest("The capital of France is ", ("Paris", "Paname")),  # the trailing space is dropped
    LabelPathRequest("", ("Hello", "Hello world")),  # nothing before the name: the start token
    LabelPathRequest("Q: Who wrote Faust?\nA:", ("Goethe", "Johann Wolfgang von Goethe"), eos=False),
    LabelPathRequest("The capital of Italy is", ()),
]


@pytest.fixture(scope="module", params=REAL_MODELS)
def scorer(request):
    return real_scorer(request.param)


def test_requests_are_canonical_and_validated():
    request = LabelPathRequest("The capital of France is  ", [" Paris ", "Lyon"])
    assert request.prompt == "The capital of France is" and request.names == ("Paris", "Lyon")
    assert request_key("label_paths", request) == request_key(
        "label_paths", LabelPathRequest("The capital of France is", ("Paris", "Lyon")))
    assert request_key("label_paths", request) != request_key("label_paths", replace(request, eos=False))
    with pytest.raises(TypeError):
        LabelPathRequest("x", "Paris")
    with pytest.raises(ValueError, match="blank"):
        LabelPathRequest("x", ("Paris", "  "))


@pytest.mark.slow
def test_batched_label_paths_equal_one_pass_per_name(scorer):
    references = [reference_label_paths(scorer.model, scorer.tokenizer, request) for request in REQUESTS]
    saved = scorer.label_batch
    try:
        for batch in (3, 32):  # chunks of 3 paths (the last one shorter), one pass per request
            scorer.label_batch = batch
            got = scorer.label_paths(REQUESTS)
            assert len(got) == len(REQUESTS)
            for request, answer, reference in zip(REQUESTS, got, references):
                assert len(answer) == len(request.names)
                for name, g, r in zip(request.names, answer, reference):
                    assert (g.n_tokens, g.same_as) == (r.n_tokens, r.same_as), (batch, name)
                    assert abs(g.logprob - r.logprob) <= TOLERANCE, (batch, request.prompt, name, g, r)
                    assert g.logprob < 0
    finally:
        scorer.label_batch = saved
    first, trailing, empty, no_eos, nothing = got
    assert first[4].same_as == 0 and first[0].same_as is None  # "Paris" twice: one path
    assert first[4].logprob == first[0].logprob
    # The same prompt once its trailing space is gone (a batch of another shape: rounding apart).
    assert abs(trailing[0].logprob - first[0].logprob) <= TOLERANCE
    assert nothing == []
    # EOS adds one token and lowers the score: the name must end there.
    with_eos = scorer.label_paths([replace(REQUESTS[3], eos=True)])[0]
    assert [a.n_tokens + 1 for a in no_eos] == [b.n_tokens for b in with_eos]
    assert all(b.logprob < a.logprob for a, b in zip(no_eos, with_eos))


@pytest.mark.slow
def test_label_paths_are_the_trie_paths_and_do_not_depend_on_other_requests(scorer):
    """The same numbers as the token-level pass the trie search and its exhaustive reference use
    (same paths, same chunks), and a request's answer is the same alone or with others."""
    request = REQUESTS[0]
    trie = LabelTrie.for_scorer(scorer, {str(k): [name] for k, name in enumerate(request.names)})
    by_name = {p.name: (*p.tokens, label_end_id(scorer)) for p in trie.paths}
    paths = [by_name[name] for name in request.names]
    expected = path_logprobs(scorer, prompt_ids(scorer, request.prompt), paths)
    (alone,) = scorer.label_paths([request])
    assert [s.logprob for s in alone] == expected
    assert scorer.label_paths(REQUESTS[1:3] + [request])[2] == alone


def test_the_cache_answers_label_paths_without_the_model(tmp_path):
    scorer = real_scorer("smollm2-135m-instruct")
    plain = scorer.label_paths(REQUESTS)
    cached = CachedScorer(scorer, tmp_path / "c.sqlite")
    before = (scorer.work.forward_passes, scorer.work.tokens_forwarded)
    first = cached.label_paths(REQUESTS)
    assert (scorer.work.forward_passes, scorer.work.tokens_forwarded) != before
    assert cached.computed == len(REQUESTS) and cached.hits == 0
    assert first == plain
    done = (scorer.work.forward_passes, scorer.work.tokens_forwarded, scorer.work.requests)
    again = cached.label_paths(REQUESTS[::-1])
    assert (scorer.work.forward_passes, scorer.work.tokens_forwarded, scorer.work.requests) == done  # no model work
    assert cached.computed == len(REQUESTS) and cached.hits == len(REQUESTS)
    assert again == plain[::-1] and all(isinstance(s, LabelPathScore) for a in again for s in a)
    # A new process (a new wrapper over the same file) reads them back too.
    reopened = CachedScorer(scorer, tmp_path / "c.sqlite")
    assert reopened.label_paths(REQUESTS) == plain and reopened.computed == 0
    assert (scorer.work.forward_passes, scorer.work.tokens_forwarded) == done[:2]
    # Other kinds of request under the same text are other cache entries.
    assert request_key("label_paths", REQUESTS[0]) != request_key("generate", REQUESTS[0])


def test_backends_that_cannot_answer_say_so(tmp_path):
    from factprobe.probes.scoring.openai_api import OpenAIScorer

    server = OpenAIScorer("some-model", base_url="http://127.0.0.1:9/v1")  # never contacted
    with pytest.raises(Unsupported, match="end-of-sequence"):
        server.label_paths([REQUESTS[0]])
    from scoring_models import tiny_bert
    from factprobe.probes.scoring.loader import load_scorer

    masked = load_scorer(f"hf-mlm:{tiny_bert(tmp_path / 'bert')}", device="cpu")
    with pytest.raises(Unsupported, match="label paths"):
        masked.label_paths([REQUESTS[0]])

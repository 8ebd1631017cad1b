"""The OpenAI-compatible backend against a real server on 127.0.0.1: llama-cpp-python's server
(built from source by the test setup) serving the SmolLM2 GGUF from its PyPI wheel."""

from __future__ import annotations


import pytest

from factprobe.probes.scoring.openai_api import OpenAIScorer
from factprobe.probes.scoring.requests import GenerateRequest, LoglikelihoodRequest
from factprobe.probes.scoring.scorer import ScoringError, Unsupported
from conftest import llama_server, needs_llama_cpp
from scoring_models import real_scorer

pytestmark = needs_llama_cpp
KEY = "test-key"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with llama_server(tmp_path_factory.mktemp("llama"), alias="smollm2", key=KEY, logits_all=True) as url:
        yield url


@pytest.fixture
def scorer(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return OpenAIScorer("smollm2")


def test_generation_greedy_sampled_and_stopped(scorer):
    greedy, sampled = scorer.generate([
        GenerateRequest("The capital of France is", max_tokens=8, stop=(".",)),
        GenerateRequest("My favourite animal is the", max_tokens=5, temperature=1.0, n=3, seed=5),
    ])
    assert greedy.texts == (" Paris",) and greedy.finish_reasons == ("stop",)
    # This server answers once whatever `n` says; the backend asks again until it has n samples.
    assert len(sampled.texts) == 3 and all(sampled.texts)
    assert scorer.identity.startswith("openai:smollm2@http://127.0.0.1:")


def test_shifted_prompt_logprobs_are_caught_not_trusted(scorer):
    request = LoglikelihoodRequest("The capital of France is", (" Paris", " Lyon"))
    try:
        scores = scorer.loglikelihood([request])
    except ScoringError as error:
        # llama-cpp-python scores each echoed prompt token with its own position's logits.
        assert "disagree with generation" in str(error) and "' Paris'" in str(error)
        return
    # A server that passes the check must agree with the model run locally (it quantizes its
    # activations, so not to 1e-4).
    local = real_scorer("smollm2-135m-instruct").loglikelihood([request])[0]
    for remote, mine in zip(scores[0], local):
        assert abs(remote.logprob - mine.logprob) < 0.5


def test_echo_answers_are_parsed_at_the_context_boundary(scorer):
    scorer._aligned = True  # look past the alignment check to test the parsing on real answers
    local = real_scorer("smollm2-135m-instruct")
    for context, continuation in [("The capital of France is", " the city of Paris"),
                                  ("The capital of France is ", "Paris"),
                                  ("Zürich liegt in der", " Schweiz")]:
        [[score]] = scorer.loglikelihood([LoglikelihoodRequest(context, (continuation,))])
        [[mine]] = local.loglikelihood([LoglikelihoodRequest(context, (continuation,))])
        assert score.n_tokens == mine.n_tokens
        assert score.logprob < 0


def test_chat_endpoint_generates_but_does_not_score(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    chat = OpenAIScorer("smollm2", chat=True)
    [answer] = chat.generate([GenerateRequest("What is the capital of France? One word.", max_tokens=8)])
    assert "Paris" in answer.texts[0]
    with pytest.raises(Unsupported, match="chat endpoints"):
        chat.loglikelihood([LoglikelihoodRequest("x", ("y",))])


def test_wrong_key_is_an_error(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server)
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    import openai

    with pytest.raises(openai.AuthenticationError):
        OpenAIScorer("smollm2").generate([GenerateRequest("Hi", max_tokens=2)])


def test_missing_configuration_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ScoringError, match="OPENAI_BASE_URL"):
        OpenAIScorer("gpt-4o-mini")

"""Generation, fill-mask, model specs and the GGUF cache, on real and tiny random models."""

from __future__ import annotations

import os

import pytest
import torch

from factprobe.probes.scoring.gguf_cache import COMPLETE, converted_gguf
from factprobe.probes.scoring.loader import load_scorer
from factprobe.probes.scoring.requests import FillMaskRequest, GenerateRequest, LoglikelihoodRequest
from factprobe.probes.scoring.scorer import Unsupported
from factprobe.probes.scoring.specs import SpecError, parse_spec, shortcut_path
from scoring_models import REAL_MODELS, real_scorer, tiny_bert, tiny_llama


# -- generation ------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("spec", REAL_MODELS)
def test_greedy_generation_equals_transformers_generate(spec):
    scorer = real_scorer(spec)
    prompt = "Albert Einstein was born in the year"
    [answer] = scorer.generate([GenerateRequest(prompt, max_tokens=8)])
    ids = torch.tensor([scorer.encode(prompt)])
    expected = scorer.model.generate(ids, max_new_tokens=8, do_sample=False, attention_mask=torch.ones_like(ids))
    text = scorer.tokenizer.decode(expected[0, ids.shape[1]:], skip_special_tokens=True)
    assert answer.texts == (text,)
    assert "1879" in text


@pytest.mark.slow
def test_sampling_is_seeded_and_gives_n_samples():
    scorer = real_scorer("smollm2-135m-instruct")
    request = GenerateRequest("My favourite animal is the", max_tokens=6, temperature=1.0, n=5, seed=7)
    first = scorer.generate([request])[0]
    again = scorer.generate([request])[0]
    other = scorer.generate([GenerateRequest(request.prompt, max_tokens=6, temperature=1.0, n=5, seed=8)])[0]
    assert len(first.texts) == 5 and first == again
    assert first.texts != other.texts
    assert len(set(first.texts)) > 1  # five samples at temperature 1 are not all alike


@pytest.mark.slow
def test_stop_strings_and_length_limit():
    scorer = real_scorer("smollm2-135m-instruct")
    stopped, limited = scorer.generate([
        GenerateRequest("The capital of France is", max_tokens=10, stop=(".",)),
        GenerateRequest("Count: one, two, three,", max_tokens=3),
    ])
    assert stopped.texts == (" Paris",) and stopped.finish_reasons == ("stop",)
    assert limited.finish_reasons == ("length",)
    assert len(scorer.tokenizer(limited.texts[0], add_special_tokens=False).input_ids) <= 3


def test_generation_requests_are_validated():
    with pytest.raises(ValueError, match="greedy"):
        GenerateRequest("x", n=2)
    with pytest.raises(ValueError, match="max_tokens"):
        GenerateRequest("x", max_tokens=0)


# -- masked LM --------------------------------------------------------------------------------

def test_fill_mask_batched_equals_one_by_one(tmp_path):
    scorer = load_scorer(f"hf:{tiny_bert(tmp_path / 'bert')}", device="cpu")
    requests = [FillMaskRequest("the capital of france is [MASK] .", top_k=5),
                FillMaskRequest("[MASK] is a city", top_k=3),
                FillMaskRequest("rome is the capital of [MASK] , a country in the city of lyon", top_k=5)]
    together = scorer.fill_mask(requests)
    alone = [scorer.fill_mask([r])[0] for r in requests]
    for request, a, b in zip(requests, together, alone):
        assert len(a) == request.top_k
        assert [c.token_id for c in a] == [c.token_id for c in b]
        for x, y in zip(a, b):
            assert abs(x.prob - y.prob) < 1e-6
        probs = [c.prob for c in a]
        assert probs == sorted(probs, reverse=True) and sum(probs) <= 1 + 1e-6
    # The distribution is the model's softmax at the mask, checked by hand for the first request.
    encoded = scorer.tokenizer(["the capital of france is [MASK] ."], return_tensors="pt")
    with torch.no_grad():
        logits = scorer.model(**encoded).logits[0]
    position = encoded.input_ids[0].tolist().index(scorer.tokenizer.mask_token_id)
    expected = torch.softmax(logits[position], -1).topk(5)
    assert [c.token_id for c in together[0]] == expected.indices.tolist()
    assert scorer.identity.startswith("hf:") and scorer.identity.endswith("/float32")


def test_fill_mask_needs_exactly_one_mask_and_a_masked_model(tmp_path):
    with pytest.raises(ValueError, match="exactly one"):
        FillMaskRequest("[MASK] and [MASK]")
    with pytest.raises(Unsupported, match="masked LM"):
        real_scorer("smollm2-135m-instruct").fill_mask([FillMaskRequest("a [MASK]")])


# -- specs, loading, the GGUF cache ------------------------------------------------------------

def test_model_specs():
    assert parse_spec("hf:/models/x").kind == "hf"
    assert parse_spec("hf-mlm:bert-base-cased").kind == "hf-mlm"
    assert parse_spec("openai:gpt-4o-mini").target == "gpt-4o-mini"
    assert parse_spec("smollm2-135m-instruct").kind == "gguf"
    for bad in ["nope", "hf:", "torch:model", "gguf:/no/such/file.gguf"]:
        with pytest.raises(SpecError):
            parse_spec(bad)


def test_shortcuts_resolve_to_the_wheels_gguf_files():
    smol = shortcut_path("smollm2-135m-instruct")
    gemma = shortcut_path("gemma3-270m")
    assert smol.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and smol.stat().st_size > 50_000_000
    assert gemma.name == "gemma-3-270m-q4_k_m.gguf" and gemma.stat().st_size > 100_000_000


def test_gguf_conversion_is_cached_and_keyed_by_content(tmp_path):
    source = shortcut_path("smollm2-135m-instruct")
    folder, digest = converted_gguf(source)  # converted earlier in the session, or now
    marker = (folder / COMPLETE).stat().st_mtime_ns
    again, same = converted_gguf(source)
    assert (again, same) == (folder, digest)
    assert (folder / COMPLETE).stat().st_mtime_ns == marker  # not converted a second time
    assert (folder / "model.safetensors").exists() and (folder / "tokenizer.json").exists()
    assert digest[:16] in folder.name
    assert real_scorer("smollm2-135m-instruct").identity == f"gguf:{source.name}@{digest[:12]}/float32"


def test_tiny_causal_model_loads_from_a_folder(tmp_path):
    scorer = load_scorer(f"hf:{tiny_llama(tmp_path / 'tiny')}", device="cpu")
    [[a, b]] = scorer.loglikelihood([LoglikelihoodRequest("The capital of France is", (" Paris", " Rome"))])
    assert a.logprob < 0 and b.logprob < 0 and a.n_tokens == 1
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA"):
            load_scorer(f"hf:{tmp_path / 'tiny'}", device="cuda")


def test_unknown_dtype_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="unknown dtype"):
        load_scorer(f"hf:{tiny_llama(tmp_path / 'tiny')}", device="cpu", dtype="int3")


@pytest.mark.skipif(not os.environ.get("FACTPROBE_TEST_BF16"), reason="bf16 on CPU is slow; set FACTPROBE_TEST_BF16=1")
def test_bf16_stays_close_to_fp32(tmp_path):
    folder = tiny_llama(tmp_path / "tiny")
    request = LoglikelihoodRequest("The capital of France is", (" Paris", " the city of Rome"))
    full = load_scorer(f"hf:{folder}", device="cpu", dtype="float32").loglikelihood([request])[0]
    half = load_scorer(f"hf:{folder}", device="cpu", dtype="bfloat16").loglikelihood([request])[0]
    for a, b in zip(full, half):
        assert abs(a.logprob - b.logprob) < 0.1

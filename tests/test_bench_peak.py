"""bench/peak.py, which bench/peer.py divides by: the parameters a token passes through, counted
by hand on a tiny Llama, the FLOPs floor and the reasons a workload stays far from the peak."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import peak  # noqa: E402


def test_a_tiny_llamas_per_token_parameters_leave_out_the_embedding_and_the_head():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False)
    model = LlamaForCausalLM(config)
    # a layer: q 32x32, k and v 32x16 (2 of 4 heads' width), o 32x32 = 3,072; gate, up 32x64 and
    # down 64x32 = 6,144; two norms of 32 = 64; two layers and the final norm of 32: 18,592
    assert peak.per_token_parameters(model) == 2 * (3072 + 6144 + 64) + 32
    tied = LlamaForCausalLM(LlamaConfig(**{**config.to_dict(), "tie_word_embeddings": True}))
    assert peak.per_token_parameters(tied) == 18_592


def test_the_floor_and_the_share():
    assert peak.model_flops(18_592, 10) == 371_840.0  # a multiply and an add per weight per token
    assert peak.peak_share(4e9, 2.0, 1e10) == 0.2
    assert peak.peak_share(1.0, 0.0, 1e10) is None


def test_why_a_workload_is_far_from_the_peak():
    assert peak.why_far(1_000, 0, 500, "generate").startswith("decoding feeds 2 tokens a pass")
    assert peak.why_far(1_000, 200, 2, "loglikelihood") == "20% of the positions fed are padding"
    assert peak.why_far(1_000, 0, 100, "loglikelihood").startswith("passes of 10 tokens on average")
    assert peak.why_far(10_000, 0, 10, "loglikelihood").startswith("the vocabulary head, attention")


def test_the_matmul_peak_is_a_positive_rate():
    torch.manual_seed(0)
    assert peak.matmul_peak(size=64, repeats=2) > 0

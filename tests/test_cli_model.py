"""`factprobe model ...` as a user runs it, on the real SmolLM2 from its wheel."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from scoring_models import real_scorer


@pytest.fixture(scope="module", autouse=True)
def converted():
    real_scorer("smollm2-135m-instruct")  # the GGUF conversion is cached before the CLI runs


def test_score_json_and_result_cache(tmp_path):
    args = ["model", "score", "smollm2-135m-instruct", "--context", "The capital of France is",
            "--continuation", " Lyon", "--continuation", " Paris", "--json", "--cache", str(tmp_path / "c.sqlite")]
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert [s["continuation"] for s in out["scores"]] == [" Paris", " Lyon"]  # best first
    assert out["scores"][0]["is_greedy"] and out["scores"][0]["logprob"] > out["scores"][1]["logprob"]
    assert out["model"].startswith("gguf:SmolLM2-135M-Instruct.Q4_1.gguf@")
    assert json.loads(run_cli(*args).stdout) == out  # second time from the cache, same numbers


def test_generate_and_errors():
    proc = run_cli("model", "generate", "smollm2-135m-instruct", "--prompt", "The capital of France is",
                   "--max-tokens", "6", "--stop", ".", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["texts"] == [" Paris"]
    bad = run_cli("model", "score", "hf:", "--context", "a", "--continuation", "b")
    assert bad.returncode == 2 and bad.stderr.startswith("error: model spec 'hf:' is not understood")
    mlm = run_cli("model", "fill-mask", "smollm2-135m-instruct", "a [MASK] b")
    assert mlm.returncode == 2 and "fill_mask needs a masked LM" in mlm.stderr
    greedy_n = run_cli("model", "generate", "smollm2-135m-instruct", "--prompt", "x", "--n", "3")
    assert greedy_n.returncode == 2 and "temperature 0" in greedy_n.stderr

"""The distractor paper's baseline measures on SmolLM2, the judge through a real OpenAI-compatible
server (llama-cpp-python serving the same GGUF on 127.0.0.1)."""

from __future__ import annotations

import importlib.util
import json
import math

import pytest

from conftest import llama_server, run_cli
from factprobe.probes import metrics
from factprobe.probes.methods.base import answer_key
from factprobe.probes.runner import evaluate
from scoring_models import real_scorer
from test_eval import capital_graph
from wikidata_builder import write_dump

KEY = "judge-key"
needs_server = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                  reason="llama-cpp-python[server] is not installed (bash setup.sh dev installs it)")


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    with llama_server(tmp_path_factory.mktemp("judge"), alias="judge", key=KEY) as url:
        yield url


@pytest.mark.slow
@needs_server
def test_baselines_with_a_judge(judge, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "c.json", capital_graph())), "--store", str(store),
            "--quiet", check=True)
    probes = tmp_path / "d.jsonl"
    run_cli("probeset", "build", "--kind", "distractor", "--relation", "P36", "--per-relation", "4", "--store",
            str(store), "--out", str(probes), "--quiet", check=True)
    summary = evaluate(real_scorer("smollm2-135m-instruct"), "baselines", probes, tmp_path / "run",
                       options={"samples": 4, "n": 2, "judge_model": "judge", "judge_base_url": judge})
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert summary.items == len(records) == 4
    for r in records:
        assert 0 < r["probability"] < 1 and r["correct"] == (r["probability"] > 0.5)
        assert r["precision_at_n"] in (0.0, 1.0) and isinstance(r["judge"], bool)
        best = max(metrics.rouge_l(answer_key(r["answer"]), answer_key(g)) for g in [r["object_label"]])
        assert r["rouge_l"] == pytest.approx(best)
        assert r["cloze"].endswith(r["subject_label"]) or r["subject_label"] in r["cloze"]
    # the capital of a well-known country: the model's greedy answer is the label itself
    france = next((r for r in records if r["subject_label"] == "France"), None)
    if france is not None:
        assert france["rouge_l"] == 1.0
    for name in ("probability", "precision_at_n", "rouge_l", "judge"):
        assert math.isfinite(summary.aggregate["baselines"][name])

"""The distractor paper's baseline measures on SmolLM2, the judge through a real OpenAI-compatible
server (llama-cpp-python serving the same GGUF on 127.0.0.1)."""

from __future__ import annotations

import importlib.util
import json
import math

import pytest

from conftest import llama_server, run_cli
from factprobe.probes import measures as metrics
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


def paris_by_alias() -> list[dict]:
    """The capitals graph where Paris is labelled "City of Paris" and "Paris" is only an alias: the
    model's answer "Paris" then matches an alias better than the label."""
    entities = capital_graph()
    paris = next(e for e in entities if e["labels"]["en"]["value"] == "Paris")
    paris["labels"]["en"]["value"] = "City of Paris"
    paris["aliases"] = {"en": [{"language": "en", "value": "Paris"}]}
    return entities


@pytest.mark.slow
@needs_server
def test_baselines_with_a_judge(judge, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "c.json", paris_by_alias())), "--store", str(store),
            "--quiet", check=True)
    built = tmp_path / "all.jsonl"
    run_cli("probeset", "build", "--kind", "distractor", "--relation", "P36", "--store", str(store), "--out",
            str(built), "--quiet", check=True)
    # France and the first three other facts (a set without a sidecar names its kind in its items).
    lines = built.read_text().splitlines()
    france = next(line for line in lines if json.loads(line)["subject_label"] == "France")
    probes = tmp_path / "d.jsonl"
    probes.write_text("\n".join([france, *[line for line in lines if line != france][:3]]) + "\n")
    items = {i["id"]: i for i in map(json.loads, probes.read_text().splitlines())}
    summary = evaluate(real_scorer("smollm2-135m-instruct"), "baselines", probes, tmp_path / "run",
                       # The definitions before issue 20 (the label on the first cloze; sampled
                       # answers and the greedy one), which the checks below pin; the paper's
                       # defaults are pinned in test_paper_compare.py.
                       options={"probability": "label", "probability_eos": True, "candidates": "sample",
                                "samples": 4, "n": 2,
                                "judge_model": "judge", "judge_base_url": judge})
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert summary.items == len(records) == 4
    for r in records:
        assert 0 < r["probability"] < 1 and r["correct"] == (r["probability"] > 0.5)
        assert r["precision_at_n"] in (0.0, 1.0) and isinstance(r["judge"], bool)
        # ROUGE-L promises the best over every gold name, aliases included.
        best = max(metrics.rouge_l(answer_key(r["answer"]), answer_key(g)) for g in items[r["id"]]["gold"])
        assert r["rouge_l"] == pytest.approx(best)
        assert r["cloze"].endswith(r["subject_label"]) or r["subject_label"] in r["cloze"]
    # Observed: the model answers "Paris" (it answered "21st-century Paris" when the cloze was
    # continued after a trailing space). The alias scores 1.0 where the label "City of Paris"
    # scores 0.5 (one common word: precision 1, recall 1/3); the record holds the alias's 1.0.
    paris = next(r for r in records if r["subject_label"] == "France")
    assert items[paris["id"]]["gold"] == ["City of Paris", "Paris"] and paris["answer"] == "Paris"
    assert metrics.rouge_l(answer_key(paris["answer"]), answer_key(paris["object_label"])) == pytest.approx(0.5)
    assert paris["rouge_l"] == 1.0
    print("answers:", {r["subject_label"]: (r["answer"], r["rouge_l"]) for r in records})
    for name in ("probability", "precision_at_n", "rouge_l", "judge"):
        assert math.isfinite(summary.aggregate["baselines"][name])

"""run.json records where and when a run ran (factprobe's, Python's and the installed libraries'
versions, the device, started_at, ended_at, runtime_s), and a resume or a shard merge still
knows it for the same run: those fields are never compared. The toy method over a scripted
scorer (tests/toy_method.py) writes real run folders."""

from __future__ import annotations

import json
import platform
import re
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest

import factprobe
from factprobe.probes.building.probeset import write_probeset
from factprobe.probes.evaluation.runner import evaluate
from factprobe.probes.evaluation.shard import Shard
from factprobe.probes.evaluation.shard_merge import merge_shards

pytestmark = pytest.mark.usefixtures("toy_method_registered")  # tests/conftest.py
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


class FakeScorer:
    """Answers every prompt with its item's gold answer (the toy method's one request)."""
    identity = "fake:scorer"

    def fill_mask(self, requests):
        return [[SimpleNamespace(token=r.text.split("=")[-1], token_id=0, prob=0.5)] for r in requests]


@pytest.fixture
def probes(tmp_path) -> Path:
    path = tmp_path / "set.jsonl"
    items = [{"id": f"cloze:Q{k}", "kind": "cloze", "relation": "P36", "prompt": f"[MASK] x={k}", "gold": [str(k)]}
             for k in range(6)]
    write_probeset(path, items, kind="cloze", seed=0, params={}, source={})
    return path


def test_run_json_records_versions_device_and_times(probes, tmp_path):
    out = tmp_path / "run"
    evaluate(FakeScorer(), "toy", probes, out, limit=4)
    run = json.loads((out / "run.json").read_text())
    env = run["environment"]
    assert (env["factprobe"], env["python"], env["device"]) == (factprobe.__version__, platform.python_version(), "cpu")
    assert env["libraries"]["numpy"] == metadata.version("numpy")
    assert set(env["libraries"]) <= {"torch", "transformers", "tokenizers", "accelerate", "gguf", "llama-cpp-python",
                                     "numpy", "scipy", "scikit-learn", "simplemma", "rouge-score", "bert-score",
                                     "openai", "infini-gram"}
    assert STAMP.fullmatch(run["started_at"]) and STAMP.fullmatch(run["ended_at"])
    assert run["started_at"] <= run["ended_at"] and isinstance(run["runtime_s"], float) and run["runtime_s"] >= 0


def test_a_resume_is_the_same_run_and_keeps_the_first_start(probes, tmp_path):
    out = tmp_path / "run"
    evaluate(FakeScorer(), "toy", probes, out, limit=4)
    first = json.loads((out / "run.json").read_text())
    first["environment"]["python"] = "2.7.0"  # another interpreter sat before: no setting
    first["runtime_s"] = 100.0
    (out / "run.json").write_text(json.dumps(first))
    more = evaluate(FakeScorer(), "toy", probes, out)
    assert (more.items, more.new, more.resumed_after) == (6, 2, 4)
    run = json.loads((out / "run.json").read_text())
    assert run["started_at"] == first["started_at"] and run["limit"] is None
    assert run["environment"]["python"] == platform.python_version()
    assert run["runtime_s"] >= 100.0  # both sittings' time


def test_merged_shards_sum_their_runtimes_and_span_their_times(probes, tmp_path):
    folders = []
    for k in range(2):
        folder = tmp_path / f"shard-{k}-of-2"
        evaluate(FakeScorer(), "toy", probes, folder, batch=2, shard=Shard(k, 2))
        run = json.loads((folder / "run.json").read_text())
        run.update(started_at=f"2026-01-0{k + 1}T00:00:00Z", ended_at=f"2026-01-0{k + 1}T01:00:00Z",
                   runtime_s=1.5 + k)
        run["environment"]["device"] = f"cuda:{k}"  # each shard on its own card: still one run
        (folder / "run.json").write_text(json.dumps(run))
        folders.append(folder)
    merged = merge_shards(folders, tmp_path / "whole")
    assert merged.items == 6
    run = json.loads((tmp_path / "whole" / "run.json").read_text())
    assert (run["started_at"], run["ended_at"], run["runtime_s"], run["environment"]["device"]) == (
        "2026-01-01T00:00:00Z", "2026-01-02T01:00:00Z", 4.0, "cuda:0")
    assert "shard" not in run
    assert merge_shards(folders, tmp_path / "whole").items == 6  # merging again into it: the same run

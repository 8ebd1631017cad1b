"""The shipped Chinese sample (kg/data/build_sample_zh.py, issue 28): rebuilt byte for byte, and its
planted documents are the counts `frequency annotate` finds, fact by fact, with KDF's one Chinese
name per entity; docs/evaluating.md's Chinese KDF sequence starts from these two files."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from conftest import run_cli

DATA = Path(__file__).resolve().parents[1] / "kg" / "data"


def _builder():
    spec = importlib.util.spec_from_file_location("build_sample_zh", DATA / "build_sample_zh.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_zh_sample_rebuilds_byte_for_byte(tmp_path):
    assert _builder().build(tmp_path) == (85, 2483)
    for name in ("sample_zh_wikidata.json", "sample_zh_corpus.jsonl"):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def test_annotate_counts_the_planted_documents(tmp_path):
    builder = _builder()
    store, index, out = tmp_path / "zh.sqlite", tmp_path / "zh-freq.sqlite", tmp_path / "counts.jsonl"
    run_cli("ingest", "wikidata", str(DATA / "sample_zh_wikidata.json"), "--store", str(store), "--languages", "zh",
            "--quiet", check=True)
    run_cli("corpus", "index", str(DATA / "sample_zh_corpus.jsonl"), "--store", str(store), "--index", str(index),
            "--languages", "zh", "--names", "label", "--quiet", check=True)
    run_cli("frequency", "annotate", "--relation", "P36", "--relation", "P37", "--relation", "P30", "--out", str(out),
            "--store", str(store), "--index", str(index), check=True)
    name = {e["id"]: e["labels"].get("zh", {}).get("value") for e in builder.entities()}
    found = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        found[(row["relation"], name[row["subject"]], name[row["object"]])] = row["documents"]
    planted = {(relation, head, tail): builder.COUNTS[rank] if rank < len(builder.COUNTS) else 0
               for relation, pairs in builder.facts().items() for rank, (head, tail) in enumerate(pairs)}
    assert len(planted) == 88 and found == planted
    assert planted[("P36", "英国", "伦敦")] == 115 and planted[("P30", "俄罗斯", "亚洲")] == 33

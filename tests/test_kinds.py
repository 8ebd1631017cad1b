"""Probe-set kinds declared once (probes/kinds/, probes/declare.py): the CLI, the pipeline and the
service offer the same options, derived from the declarations; a new kind is one file
(tests/toy_kind.py) that all three then build; and a build is the same bytes on any day, its
truth date coming from the graph."""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from wikidata_builder import item, write_dump

HERE = Path(__file__).resolve().parent
PLUGIN_ENV = {"FACTPROBE_PLUGINS": "toy_kind",
              "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}

# Every option of `probeset build` besides --kind/--out/--store/--quiet/--overwrite/--json, written out by
# hand: a name added, dropped or renamed in one place only fails here.
SELECTION = ["relations", "facts", "per_relation", "per_bucket", "buckets", "corpus", "annotators", "at", "truth",
             "popularity_bins", "seed", "languages"]
KIND_OPTIONS = ["parquet", "templates", "manual_only", "aliases_per_subject", "cloze_unit", "pair_facts", "single_token",
                "choices", "demo_fraction", "allow_fewer_choices", "trex_mc_filter", "exclude_objects", "shots",
                "kdf_demonstrations", "kdf_options", "kdf_question", "class_candidates", "type_dates",
                "strategies", "n", "semantic", "model", "distractor_types", "untyped_pool", "appropt_object"]
# Paths on the server's disk: over HTTP only those its operator allowed (test_service_allowed.py).
LOCAL = {"facts", "templates", "semantic"}


def test_the_cli_the_pipeline_and_the_service_offer_the_same_options():
    import click

    from factprobe.cli.build_options import pipeline_keys
    from factprobe.cli.probeset_cmds import build
    from factprobe.cli.service.jobs import probeset_request_model

    ctx = click.Context(build)
    fixed = {"kind", "out_path", "store", "quiet", "overwrite", "as_json", build.get_help_option(ctx).name}
    cli = [p.name for p in build.get_params(ctx) if p.name not in fixed]
    assert cli == SELECTION + KIND_OPTIONS
    assert list(pipeline_keys()) == SELECTION + KIND_OPTIONS
    service = [name for name in probeset_request_model().model_fields if name != "kind"]
    assert service == SELECTION + KIND_OPTIONS
    from factprobe.cli.service.checks import checked_options

    assert {k for k, exposure in checked_options()["probeset"].items() if exposure == "local"} == LOCAL


def test_the_service_model_carries_the_declared_bounds_and_help():
    from factprobe.cli.service.jobs import probeset_request_model

    schema = probeset_request_model().model_json_schema()["properties"]
    choices = schema["choices"]["anyOf"][0]
    assert (choices["minimum"], choices["maximum"]) == (2, 100)  # the declared minimum; HTTP's cap
    assert schema["choices"]["description"] == "icl-mc: choices per item.  [default: 100]"
    assert schema["cloze_unit"]["anyOf"][0]["enum"] == ["pair", "fact"]
    assert schema["relations"]["anyOf"][0]["maxItems"] == 50
    assert schema["kind"]["enum"] == ["cloze", "icl-mc", "kdf", "distractor", "belief-icl"]


@pytest.fixture(scope="module")
def dated_store(tmp_path_factory):
    """Capitals whose records carry Wikidata's `modified` (the latest 2024-03-05); Oldcap was
    Landa's capital until 2025-06-30: true at the graph's date, ended by the day this runs."""
    base = tmp_path_factory.mktemp("dated")
    entities = [item("Q6256", "country"), item("Q515", "city")]
    for k, (country, capital) in enumerate([("Avia", "Avicap"), ("Belta", "Belcap"), ("Corra", "Corcap")]):
        entities += [item(f"Q{9100 + k}", country, (), {"P31": ["Q6256"], "P36": [f"Q{9200 + k}"]}),
                     item(f"Q{9200 + k}", capital, (), {"P31": ["Q515"]})]
    entities += [item("Q9110", "Landa", (), {"P31": ["Q6256"], "P36": [("Q9210", "1950-01-01", "2025-06-30"),
                                                                        ("Q9211", "2025-07-01", None)]}),
                 item("Q9210", "Oldcap", (), {"P31": ["Q515"]}), item("Q9211", "Newcap", (), {"P31": ["Q515"]})]
    for k, entity in enumerate(entities):
        entity["modified"] = ["2023-11-02T08:00:00Z", "2024-03-05T17:45:12Z", "2022-01-01T00:00:00Z"][k % 3]
    dump = write_dump(base / "dated.json", entities)
    store = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(dump), "--store", str(store), "--quiet", check=True)
    return store


def test_a_build_is_the_same_bytes_on_any_day(dated_store, tmp_path, monkeypatch):
    from factprobe.kg.graph import KnowledgeGraph
    from factprobe.probes.building.build import build_probeset, build_request

    with KnowledgeGraph(dated_store) as kg:
        assert kg.as_of() == "2024-03-05"  # the latest `modified` of the dump
    request = build_request("cloze", {"relations": ["P36"]})
    first = build_probeset(dated_store, tmp_path / "a.jsonl", request)
    assert first.params["selection"]["at"] == "2024-03-05"
    assert first.source["truth_date"] == {"at": "2024-03-05", "from": "the graph's latest entity revision"}
    items = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    # Oldcap's term ended after the graph's date: at the graph's date it is still the capital
    assert {i["subject_label"]: i["gold"] for i in items}["Landa"] == ["Oldcap"]

    class Later(datetime.date):
        @classmethod
        def today(cls):
            return cls(2031, 6, 1)

    monkeypatch.setattr(datetime, "date", Later)
    monkeypatch.setattr(time, "time", lambda: 1_938_000_000.0)  # 2031
    build_probeset(dated_store, tmp_path / "b.jsonl", request)
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()
    assert (tmp_path / "b.meta.json").read_bytes() == (tmp_path / "a.meta.json").read_bytes()


@pytest.fixture
def toy_kind_unloaded():
    """FACTPROBE_PLUGINS loads tests/toy_kind.py into the process the commands run in, this one
    (cli_runner.run_cli): it is let go afterwards, so the next test sees the built-in kinds only."""
    from factprobe.probes.kinds import unregister

    assert "toy_kind" not in sys.modules
    yield
    unregister("toy-qa")
    sys.modules.pop("toy_kind", None)


def test_a_new_kind_is_one_file_and_the_cli_the_pipeline_and_the_service_build_it(dated_store, tmp_path,
                                                                                   monkeypatch, toy_kind_unloaded):
    """tests/toy_kind.py, named by FACTPROBE_PLUGINS: `probeset build` takes its kind and its own
    options, a pipeline config builds it, the service's job (another process) builds it."""
    out = tmp_path / "cli.jsonl"
    proc = run_cli("probeset", "build", "--kind", "toy-qa", "--store", str(dated_store), "--out", str(out),
                   "--relation", "P36", "--toy-prefix", "Quiz:", "--toy-limit", "2", env=PLUGIN_ENV)
    assert proc.returncode == 0, proc.stderr
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    capitals = {"Avia": "Avicap", "Belta": "Belcap", "Corra": "Corcap", "Landa": "Oldcap"}
    assert len(items) == 2  # --toy-limit
    assert all((i["question"], i["answer"]) == (f"Quiz: what is the P36 of {i['subject_label']}?",
                                                 capitals[i["subject_label"]]) for i in items)
    helped = run_cli("probeset", "build", "--help", env=PLUGIN_ENV)
    assert "--toy-prefix TEXT" in helped.stdout and "toy-qa: text before each question." in helped.stdout
    refused = run_cli("probeset", "build", "--kind", "toy-qa", "--store", str(dated_store), "--out", str(out),
                      "--choices", "4", env=PLUGIN_ENV)
    assert refused.returncode == 2
    assert "error: option 'choices' is for icl-mc probe sets, not toy-qa" in refused.stderr

    config = tmp_path / "toy.yaml"
    config.write_text(json.dumps({"name": "toy", "out": str(tmp_path / "run"), "graph": {"sources": [
        {"format": "wikidata", "path": str(dated_store.parent / "dated.json")}]},
        "probesets": {"quiz": {"kind": "toy-qa", "relations": ["P36"], "toy_limit": 1}},
        "models": [], "evaluations": [], "report": False}), encoding="utf-8")
    ran = run_cli("run", str(config), "--quiet", env=PLUGIN_ENV)
    assert ran.returncode == 0, ran.stderr
    assert "--kind toy-qa" in ran.stdout and "--toy-limit 1" in ran.stdout
    quiz = [json.loads(line) for line in (tmp_path / "run" / "probesets" / "quiz.jsonl").read_text().splitlines()]
    assert len(quiz) == 1 and quiz[0]["question"] == f"Q: what is the P36 of {quiz[0]['subject_label']}?"

    from test_service import TOKEN, serving

    for key, value in {**PLUGIN_ENV, "FACTPROBE_TOKEN": TOKEN}.items():  # the server inherits this environment
        monkeypatch.setenv(key, value)
    with serving(["--store", str(dated_store), "--data", str(tmp_path / "data")], tmp_path / "serve.log") as client:
        status, body = client.post("/jobs/probeset", {"kind": "toy-qa", "relations": ["P36"], "toy_prefix": "Hi"})
        assert status == 202, body
        job = client.wait(body["job_id"], 60)
        assert job["status"] == "done", job
        assert job["params"]["options"] == {"parquet": False, "toy_prefix": "Hi", "toy_limit": None}
        status, page = client.get(f"/jobs/{body['job_id']}/result")
        assert page["total"] == 4 and all(i["question"].startswith("Hi what is the P36 of ") for i in page["items"])
        status, body = client.post("/jobs/probeset", {"kind": "toy-qa", "toy_limit": 0})
        assert status == 422

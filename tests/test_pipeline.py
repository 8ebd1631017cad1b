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
  mc: {kind: icl-mc, relations: [P36], choices: 5, demo_fraction: 0.5, per_relation: 12, trex_mc_filter: report}
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
    _tiny_inputs(tmp_path)
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


def _tiny_inputs(folder) -> None:
    write_dump(folder / "capitals.json", capital_graph())
    docs = [{"id": f"d{k}", "title": "", "text": f"{a} and {b}"} for k, (a, b) in
            enumerate([("France", "Paris")] * 3 + [("Japan", "Tokyo")] * 12 + [("Italy", "Rome")])]
    (folder / "news.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))


# What `factprobe run tiny.yaml` printed for each step when every step was a `factprobe` subprocess.
COMMANDS = [
    "ingest wikidata capitals.json --store out/graph.sqlite",
    "corpus index news.jsonl --format jsonl --store out/graph.sqlite --index out/news.index.sqlite --count-facts P36",
    "frequency annotate --relation P36 --to-store --corpus news --store out/graph.sqlite "
    "--index out/news.index.sqlite --out out/frequency-P36.jsonl",
    "distractors build --store out/graph.sqlite --out out/semantic-index",
    "probeset build --kind icl-mc --store out/graph.sqlite --out out/probesets/mc.jsonl --seed 1 --relation P36 "
    "--choices 5 --demo-fraction 0.5 --per-relation 12 --trex-mc-filter report",
    "probeset build --kind kdf --store out/graph.sqlite --out out/probesets/kdf.jsonl --seed 1 --relation P36 "
    "--shots 2 --kdf-demonstrations same-relation --corpus news",
    "probeset build --kind distractor --store out/graph.sqlite --out out/probesets/d.jsonl --seed 1 --relation P36 "
    "--per-relation 2 --strategy random --strategy temp+sem --n 2 --semantic out/semantic-index",
    "eval --model {model} --method ic-lke --probes out/probesets/mc.jsonl --out out/runs/{safe}--ic-lke--mc --seed 1 "
    "--option 'separator=: ' --option examples=4",
    "eval --model {model} --method kdf --probes out/probesets/kdf.jsonl --out out/runs/{safe}--kdf--kdf --seed 1 "
    "--limit 4",
    "eval --model {model} --method distractor --probes out/probesets/d.jsonl --out out/runs/{safe}--distractor--d "
    "--seed 1 --option clozes=1",
    "report out/runs/{safe}--ic-lke--mc out/runs/{safe}--kdf--kdf out/runs/{safe}--distractor--d --out out/report "
    "--title 'factprobe: tiny'",
]


@pytest.mark.slow
def test_the_pipeline_runs_in_process_and_prints_each_command(tmp_path, monkeypatch):
    """No step starts a `factprobe` subprocess any more; each still prints the command a user
    could type, the same as before, and a rerun resumes with nothing left to do."""
    import shlex
    import subprocess

    from click.testing import CliRunner

    from factprobe.cli.main import main
    from factprobe.cli.pipeline import _safe
    from scoring_models import tiny_llama

    model = f"hf:{tiny_llama(tmp_path / 'tiny-llama')}"  # random and small: fast; its numbers do not matter
    _tiny_inputs(tmp_path)
    (tmp_path / "tiny.yaml").write_text(CONFIG.replace("models: [smollm2-135m-instruct]", f"models: ['{model}']"))
    monkeypatch.chdir(tmp_path)

    def refuse(*args, **kwargs):
        raise AssertionError(f"the pipeline started a subprocess: {args}")

    for name in ("run", "Popen", "call", "check_call", "check_output"):
        monkeypatch.setattr(subprocess, name, refuse)
    result = CliRunner().invoke(main, ["run", "tiny.yaml", "--quiet"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    printed = [line.removeprefix("  $ factprobe ") for line in result.stdout.splitlines()
               if line.startswith("  $ factprobe ")]
    assert printed == [c.format(model=shlex.quote(model), safe=shlex.quote(_safe(model))) for c in COMMANDS]
    assert "16 documents added" in result.stdout and "Headline numbers:" in result.stdout
    assert (tmp_path / "out" / "report" / "report.html").is_file()
    again = CliRunner().invoke(main, ["run", "tiny.yaml", "--quiet"])
    assert again.exit_code == 0 and again.stdout.count("(0 new)") == 3
    assert "already ingested" in again.stderr


@pytest.mark.parametrize("change, message", [
    ("report: true\n", "unknown keys colour"),
    ("  - {method: kdf, probeset: kdf, limit: 4}\n", "evaluations[1]: `probeset` must name one of: mc, kdf, d"),
    ("  mc: {kind: icl-mc,", "probesets.mc: `kind` must be one of"),
    ("twice", "kdf--kdf appear more than once; give one a `name`"),
    ("models", "evaluations[2].models: a list of some of the top-level models (smollm2-135m-instruct)"),
])
def test_config_mistakes_name_their_field(tmp_path, change, message):
    broken = {
        "report: true\n": CONFIG.replace("report: true\n", "report: true\ncolour: blue\n"),
        "  - {method: kdf, probeset: kdf, limit: 4}\n": CONFIG.replace("probeset: kdf, limit", "probeset: kd, limit"),
        "  mc: {kind: icl-mc,": CONFIG.replace("mc: {kind: icl-mc,", "mc: {kind: quiz,"),
        "twice": CONFIG.replace("  - {method: kdf, probeset: kdf, limit: 4}\n",
                                "  - {method: kdf, probeset: kdf, limit: 4}\n  - {method: kdf, probeset: kdf}\n"),
        "models": CONFIG.replace("options: {clozes: 1}}", "options: {clozes: 1}, models: [gemma3-270m]}"),
    }[change]
    (tmp_path / "bad.yaml").write_text(broken)
    proc = run_cli("run", str(tmp_path / "bad.yaml"))
    assert proc.returncode == 2 and message in proc.stderr and "bad.yaml" in proc.stderr


def test_the_pipeline_corpus_takes_corpus_index_naming_options(tmp_path, capsys):
    """`corpus:` takes `corpus index`'s naming options (KDF counts one name: `names: label`); the
    index records them and the printed command carries them. Unknown keys and values are named."""
    from factprobe.cli.pipeline import Runner
    from factprobe.cli.pipeline_config import ConfigError, load_pipeline
    from factprobe.index.embedded import EmbeddedIndex

    _tiny_inputs(tmp_path)
    config = CONFIG.replace("  relations: [P36]\n", "  relations: [P36]\n  names: label\n  exclude_aliases: [Rome]\n", 1)
    (tmp_path / "tiny.yaml").write_text(config)
    runner = Runner(load_pipeline(tmp_path / "tiny.yaml"), quiet=True)
    runner.graph()
    assert runner.corpus() == "news"
    printed = capsys.readouterr().out
    assert "--count-facts P36 --names label --exclude-alias Rome\n" in printed
    index = EmbeddedIndex(tmp_path / "out" / "news.index.sqlite")
    assert index.settings()["names"] == "label" and index.settings()["excluded"] == ["rome"]  # normalized
    for bad, message in (("  names: every\n", "corpus.names: all"), ("  langs: [zh]\n", "unknown keys langs"),
                         ("  languages: zh\n", "corpus.languages: a list of strings")):
        (tmp_path / "bad.yaml").write_text(CONFIG.replace("  relations: [P36]\n", "  relations: [P36]\n" + bad, 1))
        with pytest.raises(ConfigError, match=message):
            load_pipeline(tmp_path / "bad.yaml")


def test_a_pipeline_names_a_bad_model_before_any_step_runs(tmp_path):
    (tmp_path / "bad.yaml").write_text(CONFIG.replace("models: [smollm2-135m-instruct]",
                                                      f"models: [smollm2-135m-instruct, 'hf:{tmp_path}/nowhere']"))
    from factprobe.cli.pipeline_config import ConfigError, load_pipeline

    with pytest.raises(ConfigError, match=r"bad.yaml: models\[1\]: model spec 'hf:.*nowhere'"):
        load_pipeline(tmp_path / "bad.yaml")
    assert not (tmp_path / "out").exists()


def test_a_probe_set_path_option_is_read_relative_to_the_pipeline_file(tmp_path, monkeypatch):
    """`facts:` and `templates:` name files beside the pipeline file, as its other paths do, wherever
    `factprobe run` is started from; other options pass through as written."""
    from factprobe.cli.pipeline import resolve_local_paths
    from factprobe.cli.pipeline_config import load_pipeline

    _tiny_inputs(tmp_path)
    (tmp_path / "tiny.yaml").write_text(CONFIG)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    pipeline = load_pipeline(tmp_path / "tiny.yaml")
    assert resolve_local_paths(pipeline, "facts", "lists/judged.jsonl") == str(tmp_path / "lists" / "judged.jsonl")
    assert resolve_local_paths(pipeline, "templates", ["t1", "/abs/t2"]) == [str(tmp_path / "t1"), "/abs/t2"]
    assert resolve_local_paths(pipeline, "per_relation", 20) == 20
    assert resolve_local_paths(pipeline, "facts", None) is None

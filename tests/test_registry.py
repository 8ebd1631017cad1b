"""The method registry is the one list of methods, and probes/building/probeset.py the one list of probe-set
kinds: a method declared in one file (tests/toy_method.py) runs through `factprobe eval`, and the
CLI, runner, aggregator, pipeline and service read the declarations."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import typing
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from conftest import run_cli_process
from factprobe.probes.document import Section
from factprobe.probes.methods import METHODS, Method, register, registered, unregister
from factprobe.probes.kinds import KINDS

HERE = Path(__file__).parent
BUILT_IN = ("ic-lke", "eic-lke", "kdf", "belief", "belief-icl", "distractor", "baselines")

ITEMS = [
    {"id": "toy:demo", "kind": "cloze", "split": "demo", "relation": "P36", "prompt": "the capital of rome is [MASK] .",
     "gold": ["Italy"]},
    {"id": "toy:1", "kind": "cloze", "split": "test", "fact": "Q142|P36|Q90", "relation": "P36",
     "subject_label": "France", "object_label": "Paris", "bucket": "[1,10)",
     "prompt": "the capital of france is [MASK] .", "gold": ["Paris"]},
    {"id": "toy:2", "kind": "cloze", "split": "test", "fact": "Q183|P36|Q64", "relation": "P36",
     "subject_label": "Germany", "object_label": "Berlin", "bucket": "0",
     "prompt": "the capital of germany is [MASK] .", "gold": ["Berlin"]},
    {"id": "toy:3", "kind": "cloze", "split": "test", "fact": "Q38|P17|Q38", "relation": "P17",
     "subject_label": "Rome", "object_label": "Italy", "bucket": "0",
     "prompt": "rome is a city in [MASK] .", "gold": ["Italy"]},
]


def write_items(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from scoring_models import tiny_bert

    return tiny_bert(tmp_path_factory.mktemp("registry") / "bert")


@pytest.fixture
def toy():
    """The toy method registered in this process, removed afterwards (the registry is global)."""
    held = sys.modules.pop("toy_method", None)
    import toy_method

    yield toy_method.ToyMethod
    unregister("toy")
    sys.modules.pop("toy_method", None)
    if held is not None:
        sys.modules["toy_method"] = held


def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_method_in_one_file_runs_through_factprobe_eval(bert, tmp_path):
    """A subprocess `factprobe eval` sees the method FACTPROBE_PLUGINS names: run.json,
    items.jsonl and aggregate.json as for any built-in method, the method's own measures included."""
    from factprobe.probes.scoring.loader import load_scorer
    from factprobe.probes.scoring.requests import FillMaskRequest

    probes = write_items(tmp_path / "toy.jsonl", ITEMS)
    out = tmp_path / "run"
    env = {"FACTPROBE_PLUGINS": "toy_method",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    help_text = run_cli_process("eval", "--help", env=env)
    assert "toy (cloze sets): toy: a masked LM's top-1 answer" in " ".join(help_text.stdout.split())
    proc = run_cli_process("eval", "--model", f"hf-mlm:{bert}", "--method", "toy", "--probes", str(probes), "--out", str(out),
                   "--batch", "2", "--json", "--quiet", env=env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)

    run = json.loads((out / "run.json").read_text())
    assert run["method"] == "toy" and run["kind"] == "cloze" and run["options"] == {"top_k": 1}
    # no sidecar: the items say their kind; the hash is always the bytes read (issue 31)
    assert run["probes"] == "toy.jsonl" and run["probes_sha256"] == hashlib.sha256(probes.read_bytes()).hexdigest()

    records = _records(out)
    assert [r["id"] for r in records] == ["toy:1", "toy:2", "toy:3"]  # the demo item is not a test item
    scorer = load_scorer(f"hf-mlm:{bert}")
    tops = scorer.fill_mask([FillMaskRequest(i["prompt"], top_k=1) for i in ITEMS[1:]])
    for record, item, top in zip(records, ITEMS[1:], tops):
        assert record["prediction"] == top[0].token
        assert record["confidence"] == pytest.approx(top[0].prob)
        assert record["correct"] == (top[0].token == item["gold"][0].lower())
        assert record["relation"] == item["relation"] and record["bucket"] == item["bucket"]

    aggregate = json.loads((out / "aggregate.json").read_text())
    assert aggregate == {k: v for k, v in result.items() if k not in ("out", "new", "resumed_after", "rejected")}
    assert aggregate["method"] == "toy" and aggregate["items"] == 3 and aggregate["rejected_records"] == 0
    assert aggregate["accuracy"] == pytest.approx(sum(r["correct"] for r in records) / 3)
    assert set(aggregate["by_relation"]) == {"P36", "P17"} and set(aggregate["by_bucket"]) == {"[1,10)", "0"}
    assert aggregate["toy"] == {"mean_confidence": pytest.approx(sum(r["confidence"] for r in records) / 3),
                                "top_k": 1}

    without = run_cli_process("eval", "--model", f"hf-mlm:{bert}", "--method", "toy", "--probes", str(probes),
                      "--out", str(tmp_path / "other"))
    assert without.returncode == 2 and "'toy' is not one of" in without.stderr  # not registered there


def test_a_method_registered_in_process_is_a_cli_choice(toy, bert, tmp_path):
    from factprobe.cli.main import main

    probes = write_items(tmp_path / "toy.jsonl", ITEMS)
    result = CliRunner().invoke(main, ["eval", "--model", f"hf-mlm:{bert}", "--method", "toy", "--probes", str(probes),
                                       "--out", str(tmp_path / "run"), "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "run" / "aggregate.json").read_text())["toy"]["top_k"] == 1
    assert len(_records(tmp_path / "run")) == 3


class _StubScorer:
    identity = "stub"

    def fill_mask(self, requests):
        return [[SimpleNamespace(token="paris", prob=0.5)] for _ in requests]


def test_the_runner_skips_an_item_missing_a_field_the_method_reads_naming_it(toy, tmp_path):
    from factprobe.probes.evaluation.runner import evaluate

    broken = dict(ITEMS[2])
    del broken["prompt"]
    probes = write_items(tmp_path / "toy.jsonl", [ITEMS[0], ITEMS[1], broken, ITEMS[3]])
    summary = evaluate(_StubScorer(), "toy", probes, tmp_path / "run")
    assert summary.rejected == [f"{probes}:3: missing prompt"]
    assert [r["id"] for r in _records(tmp_path / "run")] == ["toy:1", "toy:3"]
    assert summary.aggregate["accuracy"] == 0.5 and summary.aggregate["rejected_records"] == 1
    with pytest.raises(ValueError, match="toy reads cloze probe sets; kdf.jsonl is kdf"):
        evaluate(_StubScorer(), "toy", write_items(tmp_path / "kdf.jsonl", [{**ITEMS[1], "kind": "kdf"}]),
                 tmp_path / "kdf")


def test_the_pipeline_headline_and_the_report_show_what_the_method_declares(toy, tmp_path):
    """The toy method's own `headline` and report section (tests/toy_method.py): the pipeline's
    closing line and the report's "Method measures" show them, one table over both toy runs."""
    from factprobe.cli.pipeline import headline_lines
    from factprobe.probes.report import build_document, load_runs, to_markdown
    from factprobe.probes.evaluation.runner import evaluate

    probes = write_items(tmp_path / "toy.jsonl", ITEMS)
    evaluate(_StubScorer(), "toy", probes, tmp_path / "one")
    evaluate(_StubScorer(), "toy", probes, tmp_path / "two", options={"top_k": 2})
    # the stub answers "paris" with 0.5 everywhere: toy:1 right, toy:2 and toy:3 wrong
    assert headline_lines([(tmp_path / "one", probes), (tmp_path / "missing", probes)]) == [
        # buckets by lower edge, 0 first (issue 48.5), not as aggregate.json's keys sort as text
        "one (3 items): accuracy 0.333 [0.061, 0.792, 3 items: too few to read] | by bucket "
        "0 0.00 [0.00, 0.66, 2 items: too few to read], [1,10) 1.00 [0.21, 1.00, 1 items: too few to read] "
        "| mean confidence 0.500 (top_k 1)"]
    markdown = to_markdown(build_document(load_runs([tmp_path / "one", tmp_path / "two"]), "t"))
    assert ("## Method measures\n\n### Toy: mean confidence\n\n| Run | Mean confidence | top_k |\n|---|---|---|\n"
            "| R1 | 0.5000 | 1 |\n| R2 | 0.5000 | 2 |\n\n## Accuracy by frequency bucket") in markdown


def test_every_registered_method_declares_what_the_others_read():
    methods = registered()
    assert tuple(methods)[:len(BUILT_IN)] == BUILT_IN
    for name, cls in methods.items():
        assert cls.name == name and issubclass(cls, Method)
        assert cls.summary.strip() and "\n" not in cls.summary
        assert cls.kinds and set(cls.kinds) <= set(KINDS)
        assert cls.reads and all(isinstance(field, str) for field in cls.reads)
        assert callable(cls.aggregate_extra) and callable(cls.headline)
        assert all(isinstance(section, Section) for section in cls.report_sections)


def test_eval_help_lists_every_methods_summary():
    from factprobe.cli.main import main

    result = CliRunner().invoke(main, ["eval", "--help"], terminal_width=10_000, max_content_width=10_000)
    assert result.exit_code == 0, result.output
    for name, cls in registered().items():
        assert f"{name} ({'/'.join(cls.kinds)} sets): {cls.summary}" in result.output


def test_register_checks_the_declarations(toy):
    class NoSummary(Method):
        name, kinds, reads = "bad", ("cloze",), ("prompt",)

    class UnknownKind(Method):
        name, summary, kinds, reads = "bad", "one line", ("mystery",), ("prompt",)

    class TakenName(Method):
        name, summary, kinds, reads = "toy", "one line", ("cloze",), ("prompt",)

    class SectionsInAList(Method):
        name, summary, kinds, reads = "bad", "one line", ("cloze",), ("prompt",)
        report_sections = [toy.report_sections[0]]

    with pytest.raises(ValueError, match="summary"):
        register(NoSummary)
    with pytest.raises(ValueError, match="probe-set kinds"):
        register(UnknownKind)
    with pytest.raises(ValueError, match="registered already"):
        register(TakenName)
    with pytest.raises(ValueError, match="`report_sections` must be a tuple of probes.document.Section"):
        register(SectionsInAList)
    assert register(toy) is toy  # the same class again: nothing changes
    with pytest.raises(TypeError):
        register(dict)
    assert "bad" not in METHODS and METHODS["toy"] is toy


def test_probe_set_kinds_have_one_home():
    from factprobe.cli.service import jobs as service_jobs
    from factprobe.cli.probeset_cmds import probeset_group

    kind_option = next(p for p in probeset_group.commands["build"].params if p.name == "kind")
    assert tuple(kind_option.type.choices) == tuple(KINDS) == ("cloze", "icl-mc", "kdf", "distractor", "belief-icl")
    assert typing.get_args(service_jobs.ProbesetRequest.model_fields["kind"].annotation) == tuple(KINDS)
    assert typing.get_args(service_jobs.EvalRequest.model_fields["method"].annotation) == tuple(registered())


def test_the_pipeline_config_reads_the_registry(tmp_path):
    from factprobe.cli.pipeline_config import ConfigError, load_pipeline

    config = tmp_path / "p.yaml"
    base = ("graph: {sources: [{format: wikidata, path: g.json}]}\nprobesets: {mc: {kind: icl-mc}}\n"
            "models: [smollm2-135m-instruct]\n")
    config.write_text(base + "evaluations: [{method: ic-lke, probeset: mc}]\n")
    assert load_pipeline(config).evaluations[0]["method"] == "ic-lke"
    config.write_text(base + "evaluations: [{method: kdf, probeset: mc}]\n")
    with pytest.raises(ConfigError, match="method kdf reads kdf probe sets; mc is icl-mc"):
        load_pipeline(config)
    config.write_text(base + "evaluations: [{method: toy, probeset: mc}]\n")
    with pytest.raises(ConfigError, match="`method` must be one of"):
        load_pipeline(config)

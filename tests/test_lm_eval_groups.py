"""An exported task's per-relation and per-bucket groups (probes/formats/lm_eval_groups.py): the
group YAMLs in harness's own format, and harness's numbers per group on a KDF set built from the
shipped sample graph and corpus, run by SmolLM2 on both sides: each relation's and each bucket's
acc is factprobe's accuracy for the same items, and each group's acc the overall accuracy."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from factprobe.cli.main import main
from factprobe.probes.formats.export_lm_eval import export_lm_eval

DATA = Path(__file__).resolve().parent.parent / "kg" / "data"


def cli(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def kdf_set(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("groups")
    store, index = base / "g.sqlite", base / "news.index.sqlite"
    cli("ingest", "wikidata", DATA / "sample_wikidata.json", "--store", store, "--quiet")
    cli("corpus", "index", DATA / "sample_corpus.jsonl", "--format", "jsonl", "--store", store, "--index", index,
        "--count-facts", "P36", "--count-facts", "P30", "--quiet")
    cli("frequency", "annotate", "--relation", "P36", "--relation", "P30", "--to-store", "--corpus", "sample_corpus",
        "--store", store, "--index", index, "--out", base / "freq.jsonl", "--quiet")
    cli("probeset", "build", "--store", store, "--out", base / "kdf.jsonl", "--quiet", "--kind", "kdf",
        "--relation", "P36", "--relation", "P30", "--per-relation", "6", "--shots", "2", "--corpus", "sample_corpus")
    return base / "kdf.jsonl"


def read(folder: Path, name: str):
    return yaml.safe_load((folder / name).read_text().replace("!function", ""))


def test_the_groups_are_harness_group_yamls_over_subtasks_of_the_task(kdf_set, tmp_path):
    items = [json.loads(line) for line in open(kdf_set)]
    assert sorted({(i["relation"], i["bucket"]) for i in items}) == [
        ("P30", "[1,10)"), ("P30", "[10,100)"), ("P30", "[100,inf)"), ("P36", "0"), ("P36", "[10,100)"),
        ("P36", "[100,inf)")]
    task = export_lm_eval("kdf", kdf_set, tmp_path / "t", name="k")
    assert task.groups == ("k_by_relation", "k_by_bucket", "k_breakdowns")
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == [
        "k.jsonl", "k.yaml", "k_breakdowns.yaml", "k_bucket_0.yaml", "k_bucket_100_inf.yaml", "k_bucket_10_100.yaml",
        "k_bucket_1_10.yaml", "k_by_bucket.yaml", "k_by_relation.yaml", "k_relation_P30.yaml", "k_relation_P36.yaml",
        "utils.py"]
    metric = [{"metric": "acc", "aggregation": "mean", "weight_by_size": True}]
    assert read(tmp_path / "t", "k_by_relation.yaml") == {
        "group": "k_by_relation", "group_alias": "k by relation", "task": ["k_relation_P30", "k_relation_P36"],
        "aggregate_metric_list": metric, "metadata": {"version": 1.0}}
    assert read(tmp_path / "t", "k_by_bucket.yaml")["task"] == [  # by lower edge, not as text
        "k_bucket_0", "k_bucket_1_10", "k_bucket_10_100", "k_bucket_100_inf"]
    assert read(tmp_path / "t", "k_breakdowns.yaml") == {
        "group": "k_breakdowns", "task": ["k_by_relation", "k_by_bucket"], "aggregate_metric_list": metric,
        "metadata": {"version": 1.0}}
    assert read(tmp_path / "t", "k_relation_P36.yaml") == {
        "include": "k.yaml", "task": "k_relation_P36", "task_alias": "P36 capital",
        "process_docs": "utils.relation_P36"}
    assert read(tmp_path / "t", "k_bucket_10_100.yaml")["task_alias"] == "[10,100)"
    utils = (tmp_path / "t" / "utils.py").read_text()
    assert "relation_P36 = _keep('relation', 'P36')\n" in utils and "bucket_10_100 = _keep('bucket', '[10,100)')\n" in utils
    # a second export of fewer relations leaves no subtask of the first behind
    export_lm_eval("kdf", kdf_set, tmp_path / "t", name="k", limit=1)
    names = sorted(p.name for p in (tmp_path / "t").glob("k_*.yaml"))  # one item: one relation, one bucket
    assert [n for n in names if n.startswith(("k_by_", "k_breakdowns"))] == [
        "k_breakdowns.yaml", "k_by_bucket.yaml", "k_by_relation.yaml"]
    assert len([n for n in names if n.startswith("k_relation_")]) == 1
    assert len([n for n in names if n.startswith("k_bucket_")]) == 1


def test_a_set_without_buckets_has_no_bucket_group(tmp_path):
    rows = [{"id": f"m{k}", "kind": "icl-mc", "relation": rel, "prompt": "Q:", "choices": ["a", "b"], "answer_index": 0}
            for k, rel in enumerate(["P2", "P10", "P2"])]
    probes = tmp_path / "mc.jsonl"
    probes.write_text("".join(json.dumps(r) + "\n" for r in rows))
    task = export_lm_eval("mc", probes, tmp_path / "t", name="m")
    assert task.groups == ("m_by_relation",)
    assert read(tmp_path / "t", "m_by_relation.yaml")["task"] == ["m_relation_P2", "m_relation_P10"]


@pytest.mark.slow
def test_harness_per_group_acc_is_factprobes_per_relation_and_per_bucket_accuracy(kdf_set, tmp_path):
    import torch
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from factprobe.probes.evaluation.runner import evaluate
    from scoring_models import real_scorer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as tests/test_lm_eval_export.py: two threads wait for each other here
    try:
        scorer = real_scorer("smollm2-135m-instruct")
        summary = evaluate(scorer, "kdf", kdf_set, tmp_path / "run")
        export_lm_eval("kdf", kdf_set, tmp_path / "t", name="k")
        lm = HFLM(pretrained=scorer.model, tokenizer=scorer.tokenizer, batch_size=16, device="cpu")
        with contextlib.chdir(tmp_path):
            result = simple_evaluate(model=lm, tasks=["k_breakdowns"], bootstrap_iters=0,
                                     task_manager=TaskManager(include_path=str(tmp_path / "t"), include_defaults=False))
    finally:
        torch.set_num_threads(threads)
    acc = {name: row["acc,none"] for name, row in result["results"].items()}
    ours = summary.aggregate
    assert {r: acc[f"k_relation_{r}"] for r in ("P30", "P36")} == {
        r: ours["by_relation"][r]["accuracy"] for r in ("P30", "P36")}
    slugs = {"0": "0", "[1,10)": "1_10", "[10,100)": "10_100", "[100,inf)": "100_inf"}
    assert {b: acc[f"k_bucket_{s}"] for b, s in slugs.items()} == {b: ours["by_bucket"][b]["accuracy"] for b in slugs}
    # by size: each group's acc is the mean over all 12 items
    correct = sum(json.loads(line)["correct"] for line in open(tmp_path / "run" / "items.jsonl"))
    for group in ("k_by_relation", "k_by_bucket", "k_breakdowns"):
        assert acc[group] == pytest.approx(correct / 12) == pytest.approx(ours["accuracy"])
    assert {name: n["original"] for name, n in result["n-samples"].items()} == {
        "k_relation_P30": 6, "k_relation_P36": 6, "k_bucket_0": 1, "k_bucket_1_10": 2, "k_bucket_10_100": 6,
        "k_bucket_100_inf": 3}


def test_the_command_names_the_groups(kdf_set, tmp_path):
    result = cli("export", "lm-eval", "--probes", kdf_set, "--method", "kdf", "--out", tmp_path / "t", "--name", "k")
    assert result.output.splitlines()[-1] == "groups (acc per relation / bucket and over all): k_by_relation, k_by_bucket, k_breakdowns"
    data = json.loads(cli("export", "lm-eval", "--probes", kdf_set, "--method", "kdf", "--out", tmp_path / "t",
                          "--name", "k", "--json").output)
    assert data["groups"] == ["k_by_relation", "k_by_bucket", "k_breakdowns"] and len(data["files"]) == 3 + 6 + 3

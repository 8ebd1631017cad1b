"""A run is tied to the bytes it read, and every user error is one line with exit code 2, told
before any model loads (issue 31, items 3 and 5). The commands run in-process (click's runner);
the model given to the commands that must fail before a load is a decoy folder whose load would
fail with another message, so each exact line also proves that no load was tried."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from factprobe.cli.main import main
from factprobe.probes.building.probeset import write_probeset
from factprobe.probes.evaluation.runner import evaluate, plan_eval

TEST_ITEMS = 10


pytestmark = pytest.mark.usefixtures("toy_method_registered")  # tests/conftest.py


class FakeScorer:
    """Answers every prompt with its item's first gold answer (the toy method's one request)."""
    identity = "fake:scorer"

    def fill_mask(self, requests):
        return [[SimpleNamespace(token=r.text.split("=")[-1], token_id=0, prob=0.5)] for r in requests]


def _items() -> list[dict]:
    return [{"id": f"cloze:Q{k}", "kind": "cloze", "relation": "P36", "prompt": f"[MASK] x={k}", "gold": [str(k)]}
            for k in range(TEST_ITEMS)]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cli(*args: str):
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    base = tmp_path_factory.mktemp("identity")
    probes = base / "set.jsonl"
    write_probeset(probes, _items(), kind="cloze", seed=0, params={}, source={})
    decoy = base / "decoy"  # passes the spec check; loading it fails ("cannot load it")
    decoy.mkdir()
    (decoy / "config.json").write_text("{}")
    (decoy / "model.safetensors").write_bytes(b"")
    (base / "file.bin").write_bytes(b"not a model")
    (base / "empty").mkdir()
    return SimpleNamespace(base=base, probes=probes, decoy=f"hf:{decoy}")


def test_run_json_holds_the_files_hash_and_limit_and_a_larger_limit_continues(files, tmp_path):
    out = tmp_path / "run"
    first = evaluate(FakeScorer(), "toy", files.probes, out, limit=8)
    held = json.loads((out / "run.json").read_text())
    assert (first.items, first.new, held["limit"], held["probes_sha256"]) == (8, 8, 8, _sha(files.probes))
    more = evaluate(FakeScorer(), "toy", files.probes, out)
    assert (more.items, more.new, more.resumed_after, more.aggregate["items"]) == (10, 2, 8, 10)
    again = json.loads((out / "run.json").read_text())
    volatile = ("environment", "started_at", "ended_at", "runtime_s")  # of the sittings, not the run
    assert {k: v for k, v in again.items() if k not in volatile} == \
        {**{k: v for k, v in held.items() if k not in volatile and k != "stratify"}, "limit": None}  # no limit: no sample
    assert again["started_at"] == held["started_at"] and again["runtime_s"] >= held["runtime_s"]


def test_a_smaller_limit_than_the_folder_holds_is_refused_and_restart_starts_over(files, tmp_path):
    out = tmp_path / "run"
    evaluate(FakeScorer(), "toy", files.probes, out, limit=8)
    with pytest.raises(ValueError) as refused:
        plan_eval("toy", files.probes, out, limit=2)
    assert str(refused.value) == (f"{out} holds 8 items, 6 of them beyond --limit 2: rerun with --limit 8 or more, "
                                  "use another --out, or --restart to start over")
    again = evaluate(FakeScorer(), "toy", files.probes, out, limit=2, restart=True)
    assert (again.items, again.new, again.aggregate["items"]) == (2, 2, 2)
    assert len((out / "items.jsonl").read_text().splitlines()) == 2
    assert json.loads((out / "run.json").read_text())["limit"] == 2


def test_an_edited_probe_set_is_named_by_both_hashes(files, tmp_path):
    probes = tmp_path / "set.jsonl"
    write_probeset(probes, _items(), kind="cloze", seed=0, params={}, source={})
    built = _sha(probes)
    out = tmp_path / "run"
    evaluate(FakeScorer(), "toy", probes, out, limit=3)
    probes.write_text(probes.read_text().replace("x=1", "x=one"))  # an item edited, the sidecar not
    edited = _sha(probes)
    with pytest.raises(ValueError) as refused:
        plan_eval("toy", probes, out, limit=3)
    assert str(refused.value) == (f"{out} holds a run of set.jsonl whose bytes hashed to sha256 {built}; set.jsonl "
                                  f"now hashes to {edited}: the probe set changed since. Use another --out, or "
                                  "--restart to start over")
    fresh = evaluate(FakeScorer(), "toy", probes, tmp_path / "other", limit=3)
    assert fresh.warnings == [f"{probes}: the probe set was edited after its build (its sidecar says sha256 "
                              f"{built}, the file's bytes hash to {edited}); the run records the file's"]
    assert json.loads((tmp_path / "other" / "run.json").read_text())["probes_sha256"] == edited
    # the command says the same, before loading the (decoy) model
    code, err = _cli("eval", "--model", files.decoy, "--method", "toy", "--probes", str(probes), "--out", str(out),
                     "--limit", "3")
    assert (code, err) == (2, f"error: {refused.value}\n")


def _eval_args(files, model: str, method: str = "toy", *extra: str) -> list[str]:
    return ["eval", "--model", model, "--method", method, "--probes", str(files.probes),
            "--out", str(files.base / "never"), *extra]


# The model spec is checked first, then the method against the set's kind, then the options.
USER_ERRORS = [
    ("hf:/nonexistent/path", "toy", (), "model spec 'hf:/nonexistent/path': no such model folder /nonexistent/path"),
    ("hf:/nonexistent/path", "kdf", (), "model spec 'hf:/nonexistent/path': no such model folder /nonexistent/path"),
    ("hf:{base}/file.bin", "toy", (),
     "model spec 'hf:{base}/file.bin': {base}/file.bin is a file, not a model folder (hf: takes a folder with "
     "config.json)"),
    ("hf:{base}/empty", "toy", (), "model spec 'hf:{base}/empty': {base}/empty is not a model folder (no config.json)"),
    ("gguf:{base}/file.bin", "toy", (),
     "model spec 'gguf:{base}/file.bin': {base}/file.bin is not a GGUF file (it does not begin with GGUF)"),
    ("nope:model", "toy", (), "model spec 'nope:model' is not understood; use hf:PATH_OR_NAME, hf-mlm:PATH_OR_NAME, "
     "gguf:FILE, openai:MODEL, openai-chat:MODEL or one of smollm2-135m-instruct, gemma3-270m"),
    ("decoy", "kdf", (), "method kdf reads kdf probe sets; set.jsonl is cloze"),
    ("decoy", "toy", ("--option", "top_k=two"), "method toy: option top_k: 'two' is not an int"),
    ("decoy", "toy", ("--option", "top_k=0"), "method toy: option top_k: 0 is below its minimum 1"),
    ("decoy", "toy", ("--option", "top"), "--option 'top': write KEY=VALUE"),
    ("decoy", "toy", ("--option", "shots=3"), "method toy has no option shots (it takes top_k)"),
]


@pytest.mark.parametrize("model, method, extra, line", USER_ERRORS)
def test_user_errors_are_one_line_before_the_model_loads(files, model, method, extra, line):
    model = files.decoy if model == "decoy" else model.format(base=files.base)
    code, err = _cli(*_eval_args(files, model, method, *extra))
    assert (code, err) == (2, f"error: {line.format(base=files.base)}\n")
    assert not (files.base / "never").exists()


def test_an_unknown_method_is_clicks_usage_error(files):
    code, err = _cli(*_eval_args(files, files.decoy, "nope"))
    assert code == 2 and err.splitlines()[-1].startswith("Error: Invalid value for '--method': 'nope' is not one of")


def test_a_model_that_passes_the_checks_but_cannot_load_is_one_line(files):
    code, err = _cli(*_eval_args(files, files.decoy))
    stage, *rest = err.splitlines()  # the load announced (issue 48), then its failure in one line
    assert code == 2 and stage == f"loading model {files.decoy} ..." and len(rest) == 1
    assert rest[0].startswith(f"error: model spec '{files.decoy}': cannot load it: ")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from conftest import run_cli
    from test_eval import capital_graph
    from wikidata_builder import write_dump

    base = tmp_path_factory.mktemp("build")
    run_cli("ingest", "wikidata", str(write_dump(base / "capitals.json", capital_graph())), "--store",
            str(base / "g.sqlite"), "--quiet", check=True)
    return base / "g.sqlite"


# The test graph's P36 is far below T-REx-MC's 500 facts and 100 objects: kept, the filter only reported.
SMALL = ("--trex-mc-filter", "report")


def _build(store: Path, out: Path, *extra: str):
    return _cli("probeset", "build", "--relation", "P36", "--store", str(store), "--out", str(out), "--quiet", *extra)


def test_a_build_refuses_to_replace_a_different_probe_set_unless_asked(store, tmp_path):
    out = tmp_path / "set.jsonl"
    assert _build(store, out, "--kind", "icl-mc", *SMALL, "--choices", "10") == (0, "")
    built = out.read_bytes()
    assert _build(store, out, "--kind", "icl-mc", *SMALL, "--choices", "10") == (0, "")  # the same request: the same bytes
    assert out.read_bytes() == built
    again = "pass --overwrite to replace it, or another --out\n"
    assert _build(store, out, "--kind", "cloze") == (
        2, f"error: {out} holds a probe set of kind icl-mc, this build is of kind cloze: {again}")
    assert _build(store, out, "--kind", "icl-mc", *SMALL, "--choices", "5") == (
        2, f"error: {out} was built with other options (choices 10 -> 5): {again}")
    out.write_bytes(built.replace(b"Paris", b"Pariss", 1))
    edited = hashlib.sha256(out.read_bytes()).hexdigest()
    assert _build(store, out, "--kind", "icl-mc", *SMALL, "--choices", "10") == (
        2, f"error: {out} was edited after its build (its bytes hash to sha256 {edited}, its sidecar says "
           f"{hashlib.sha256(built).hexdigest()}): {again}")
    plain = tmp_path / "mine.jsonl"
    plain.write_text('{"my": "data"}\n')
    assert _build(store, plain, "--kind", "icl-mc", *SMALL) == (
        2, f"error: {plain} exists and is not a factprobe probe set (no mine.meta.json beside it): {again}")
    assert plain.read_text() == '{"my": "data"}\n'
    assert _build(store, out, "--kind", "cloze", "--overwrite") == (0, "")
    assert json.loads(out.with_name("set.meta.json").read_text())["kind"] == "cloze"


def test_the_same_request_over_a_changed_graph_is_refused_by_its_items(store, tmp_path):
    import shutil

    from conftest import run_cli
    from wikidata_builder import item, write_dump

    grown = tmp_path / "g.sqlite"
    shutil.copy(store, grown)
    out = tmp_path / "set.jsonl"
    assert _build(grown, out, "--kind", "icl-mc", *SMALL, "--choices", "10") == (0, "")
    built = hashlib.sha256(out.read_bytes()).hexdigest()
    more = [item("Q1999", "Iceland", claims={"P31": ["Q6256"], "P36": ["Q2999"]}),
            item("Q2999", "Reykjavik", claims={"P31": ["Q5119"], "P17": ["Q1999"]})]
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "more.json", more)), "--store", str(grown), "--quiet",
            check=True)
    code, err = _build(grown, out, "--kind", "icl-mc", *SMALL, "--choices", "10")
    assert code == 2 and err.startswith(f"error: {out} holds other items (sha256 {built}) than this build makes from "
                                        "the same request (sha256 ")
    assert err.endswith("; has the graph changed?): pass --overwrite to replace it, or another --out\n")
    assert hashlib.sha256(out.read_bytes()).hexdigest() == built

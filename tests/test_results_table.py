"""`factprobe results` and factprobe.results.load: the tidy table over real run folders (the
sample job's, tests/fixtures/sample_job.tar.xz) and over an aggregate written by hand whose
every shape (a summary of draws, a group, NAME_by_X, accuracy_at_k, a null, a list) has its
expected rows spelled out below."""

from __future__ import annotations

import csv
import io
import json
import tarfile
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from factprobe.probes.report.loading import load_run
from factprobe.probes.report.tidy import COLUMNS, ResultRow, results_table

KDF = "smollm2-135m-instruct--kdf--kdf"
MODEL = "gguf:SmolLM2-135M-Instruct.Q4_1.gguf@b179c9523d0e/float32"


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("sample")
    with tarfile.open(FIXTURES / "sample_job.tar.xz") as archive:
        archive.extractall(target, filter="data")
    return target


def kdf_rows() -> list[dict]:
    """The KDF run's rows, numbers copied from its aggregate.json; labels from its probe set."""
    def row(relation, label, bucket, value, low, high, n):
        return {"run": KDF, "model": MODEL, "method": "kdf", "probe_set": "kdf.jsonl", "relation": relation,
                "relation_label": label, "bucket": bucket, "measure": "accuracy", "value": value, "low": low,
                "high": high, "n": n, "interval": "wilson"}
    return [row(None, None, None, 0.2604166666666667, 0.18305899970298767, 0.35621055281214864, 96),
            row("P30", "continent", None, 0.25, 0.1325240091850904, 0.4210655899424448, 32),
            row("P36", "capital", None, 0.28125, 0.15564580497742764, 0.45374509425916565, 32),
            row("P37", "official language", None, 0.25, 0.1325240091850904, 0.4210655899424448, 32),
            row(None, None, "[100,inf)", 0.375, 0.21159367559548778, 0.5729003755732572, 24),
            row(None, None, "[10,100)", 0.375, 0.21159367559548778, 0.5729003755732572, 24),
            row(None, None, "[1,10)", 0.20833333333333334, 0.09244825352851857, 0.40470453253188665, 24),
            row(None, None, "0", 0.08333333333333333, 0.02315881529704332, 0.2584880219321068, 24)]


def test_a_real_kdf_run_gives_its_aggregates_numbers_row_by_row(sample):
    result = run_cli("results", str(sample / "runs" / KDF), "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == kdf_rows()


def test_csv_reads_back_to_the_same_rows(sample):
    result = run_cli("results", str(sample / "runs" / KDF))
    assert result.returncode == 0, result.stderr
    read = list(csv.DictReader(io.StringIO(result.stdout)))
    assert list(read[0]) == list(COLUMNS)
    for got, want in zip(read, kdf_rows(), strict=True):
        assert got == {k: "" if v is None else str(v) for k, v in want.items()}
        assert float(got["value"]) == want["value"]  # written as Python writes a float: exactly


def test_parquet_keeps_types_and_reads_back_the_same_rows(sample, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "results.parquet"
    result = run_cli("results", str(sample / "runs" / KDF), "--format", "parquet", "--out", str(out))
    assert result.returncode == 0, result.stderr
    table = pq.read_table(out)
    assert [(f.name, str(f.type)) for f in table.schema] == [
        *((c, "string") for c in COLUMNS[:8]), ("value", "double"), ("low", "double"), ("high", "double"),
        ("n", "int64"), ("interval", "string")]
    assert table.to_pylist() == kdf_rows()
    again = run_cli("results", str(sample / "runs" / KDF), "--format", "parquet", "--out", str(out))
    assert again.returncode == 0, again.stderr  # its own output is replaced unasked
    other = tmp_path / "notes.txt"
    other.write_text("mine\n")
    refused = run_cli("results", str(sample / "runs" / KDF), "--out", str(other))
    assert refused.returncode == 2 and other.read_text() == "mine\n"
    assert "not a csv table factprobe results wrote" in refused.stderr


def test_parquet_needs_an_out_file_and_a_bad_folder_is_named(sample, tmp_path):
    result = run_cli("results", str(sample / "runs" / KDF), "--format", "parquet")
    assert result.returncode == 2 and "--format parquet writes a binary file: name it with --out FILE" in result.stderr
    missing = run_cli("results", str(tmp_path / "nope"))
    assert missing.returncode == 2 and f"{tmp_path / 'nope'}: no such run folder" in missing.stderr


def test_load_gives_a_typed_frame_over_a_folder_of_runs(sample):
    pytest.importorskip("pandas")
    import factprobe.results

    frame = factprobe.results.load(sample / "runs")
    # 103 rows: BELIEF-ICL's pooled accuracy and its P30, P36 and "none" breakdowns give none
    assert frame.shape == (103, 16)
    assert list(frame.columns) == [*COLUMNS, "setting", "strategy", "k"]
    assert {c: str(t) for c, t in frame.dtypes.items()} == {
        **{c: "string" for c in (*COLUMNS, "setting", "strategy", "k")}, "value": "float64", "low": "float64",
        "high": "float64", "n": "Int64"}
    kdf = frame[frame.run == KDF]
    assert kdf["value"].tolist() == [r["value"] for r in kdf_rows()]
    assert kdf["relation_label"].tolist()[1:4] == ["continent", "capital", "official language"]
    assert sorted(frame.run.unique()) == sorted(p.name for p in (sample / "runs").iterdir())
    # the distractor run: Min@n per strategy, overall and per relation and bucket (12 rows)
    distractor = frame[(frame.run == "smollm2-135m-instruct--distractor--distractors") & (frame.measure == "min_at_n")]
    assert distractor[["strategy", "relation", "bucket"]].fillna("-").values.tolist() == [
        ["random", "-", "-"], ["random", "P36", "-"], ["random", "-", "none"],
        ["temp+sem", "-", "-"], ["temp+sem", "P36", "-"], ["temp+sem", "-", "none"]]


def test_every_shape_an_aggregate_holds_has_its_rows(tmp_path):
    folder = tmp_path / "belief-run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"model": "hf:m", "method": "belief", "probes": "p.jsonl"}))
    (folder / "items.jsonl").write_text('{"id": "a"}\n')
    wilson = {"value": 0.5, "low": 0.25, "high": 0.75, "n": 4, "method": "wilson", "few": True}
    (folder / "aggregate.json").write_text(json.dumps({
        "method": "belief", "items": 4, "accuracy": 0.5, "accuracy_interval": wilson, "scored": 4,
        "by_relation": {"P36": {"accuracy": 1.0, "correct": 2, "total": 2}},
        "acc_at_1": {"mean": 0.4, "sd": 0.1, "draws": 10}, "acc_at_1_interval": {**wilson, "method": "bootstrap"},
        "consistency": None, "coverage": {"average": 0.5, "oracle": 1.0},
        "bias_level_by_relation": {"P36": 0.125}, "reliability": [{"confidence": 0.5, "accuracy": 0.5, "count": 4}],
        "accuracy_at_k": {"0.5": {"accuracy": 0.75, "items": 3}},
        "belief": {"one_word_ratio": 0.25}, "definitions": {"acc_draws": 10}, "rejected_records": 0}))
    rows = results_table([load_run(folder)], {"P36": "capital"})

    def row(measure, value, *, relation=None, low=None, high=None, n=4, how=None, breakdown=()):
        return ResultRow("belief-run", "hf:m", "belief", "p.jsonl", relation, "capital" if relation else None, None,
                         measure, value, low, high, n, how, breakdown)
    assert rows == [row("accuracy", 0.5, low=0.25, high=0.75, how="wilson"),
                    row("accuracy", 1.0, relation="P36", n=2),
                    row("acc_at_1", 0.4, low=0.25, high=0.75, how="bootstrap"),
                    row("coverage.average", 0.5), row("coverage.oracle", 1.0),
                    row("bias_level", 0.125, relation="P36"),
                    row("accuracy_at_k", 0.75, n=3, breakdown=(("k", "0.5"),)),
                    row("one_word_ratio", 0.25)]


def write_aggregate(folder: Path, method: str, aggregate: dict, options: dict | None = None) -> Path:
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"model": "hf:m", "method": method, "probes": "p.jsonl",
                                                 "options": options or {}}))
    (folder / "items.jsonl").write_text('{"id": "a"}\n')
    (folder / "aggregate.json").write_text(json.dumps({"method": method, **aggregate}))
    return folder


def test_a_belief_icl_run_gives_its_settings_never_their_pool(tmp_path):
    # The pooled 0.5 (zero-shot 0.25 and x-template 0.75 averaged) is no paper's number: no row.
    folder = write_aggregate(tmp_path / "icl", "belief-icl", {
        "items": 4, "accuracy": 0.5, "by_relation": {"P36": {"accuracy": 0.5, "total": 4}},
        "by_bucket": {"0": {"accuracy": 0.5, "total": 4}},
        "by_setting": {"zero-shot": {"items": 4, "accuracy": 0.25, "acc_at_1": {"mean": 0.25},
                                     "by_relation": {"P36": {"accuracy": 0.25, "total": 4}}},
                       "x-template": {"items": 4, "accuracy": 0.75, "acc_at_1": {"mean": 0.5}}}})
    rows = [(r.measure, r.value, r.relation, dict(r.breakdown)) for r in results_table([load_run(folder)])]
    assert rows == [("accuracy", 0.25, None, {"setting": "zero-shot"}), ("acc_at_1", 0.25, None, {"setting": "zero-shot"}),
                    ("accuracy", 0.25, "P36", {"setting": "zero-shot"}),
                    ("accuracy", 0.75, None, {"setting": "x-template"}), ("acc_at_1", 0.5, None, {"setting": "x-template"})]


def test_a_baselines_runs_accuracy_is_named_for_its_threshold(tmp_path):
    folder = write_aggregate(tmp_path / "base", "baselines", {
        "items": 4, "accuracy": 0.5, "by_relation": {"P36": {"accuracy": 0.25, "total": 4}},
        "baselines": {"probability": 0.375}}, options={"threshold": 0.3})
    rows = [(r.measure, r.value, r.relation) for r in results_table([load_run(folder)])]
    assert rows == [("accuracy (Probability > 0.3)", 0.5, None), ("accuracy (Probability > 0.3)", 0.25, "P36"),
                    ("probability", 0.375, None)]

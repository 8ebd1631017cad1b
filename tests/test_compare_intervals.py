"""`factprobe compare`'s intervals (probes/report/comparison.py): each difference B - A with a
paired bootstrap interval over the items both runs scored, checked against the same resampling
written here in numpy; correlations of per-relation accuracies with n and a Fisher-z interval,
and n/a under five relations instead of a perfect 1.0000 over two points."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from factprobe.cli.main import main


def write_run(folder: Path, model: str, rows: list[tuple[str, str, str, bool]]) -> Path:
    """A run folder as eval writes it, of (id, relation, bucket, correct) rows."""
    folder.mkdir(parents=True)
    records = [{"id": i, "fact": f"f-{i}", "relation": rel, "bucket": bucket, "correct": c}
               for i, rel, bucket, c in rows]
    (folder / "run.json").write_text(json.dumps({"model": model, "method": "ic-lke", "options": {}, "seed": 0,
                                                 "probes": "p.jsonl", "probes_sha256": "ab" * 32, "kind": "icl-mc"}))
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))

    def by(key: int) -> dict:
        out: dict[str, dict] = {}
        for row in rows:
            entry = out.setdefault(row[key], {"correct": 0, "total": 0})
            entry["correct"] += int(row[3])
            entry["total"] += 1
        return {k: {**v, "accuracy": v["correct"] / v["total"]} for k, v in out.items()}

    (folder / "aggregate.json").write_text(json.dumps({
        "method": "ic-lke", "items": len(rows), "scored": len(rows), "accuracy": sum(r[3] for r in rows) / len(rows),
        "by_relation": by(1), "by_bucket": by(2)}))
    return folder


IDS = [f"i{k}" for k in range(10)]
RELATIONS = ["P36"] * 6 + ["P30"] * 4
BUCKETS = ["0", "[1,10)"] * 5
A = [1, 1, 0, 1, 0, 0, 1, 0, 0, 1]
B = [1, 0, 1, 1, 1, 1, 1, 1, 0, 1]


def numpy_interval(a: list[int], b: list[int], seed: int = 0, draws: int = 1000) -> tuple[float, float]:
    """The paired bootstrap by hand: `draws` rows of item indices from numpy's generator (as
    scipy.stats.bootstrap draws them), B's mean less A's per row, the 2.5% and 97.5% quantiles."""
    x, y = np.array(a, float), np.array(b, float)
    picks = np.random.default_rng(seed).integers(0, len(x), (draws, len(x)))
    low, high = np.quantile(y[picks].mean(axis=1) - x[picks].mean(axis=1), [0.025, 0.975])
    return float(low), float(high)


@pytest.fixture
def pair(tmp_path):
    return (write_run(tmp_path / "a", "hf:a", list(zip(IDS, RELATIONS, BUCKETS, map(bool, A)))),
            write_run(tmp_path / "b", "hf:b", list(zip(IDS, RELATIONS, BUCKETS, map(bool, B)))))


def compare_json(a, b):
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_differences_carry_a_paired_bootstrap_interval(pair):
    data = compare_json(*pair)
    overall = data["accuracy"]
    assert overall["difference"] == pytest.approx(0.8 - 0.5)
    interval = overall["difference_interval"]
    assert (interval["n"], interval["resamples"], interval["seed"], interval["method"]) == (10, 1000, 0,
                                                                                           "paired bootstrap")
    assert (interval["low"], interval["high"]) == pytest.approx(numpy_interval(A, B), abs=1e-12)
    # each relation's and bucket's items resampled on their own
    for table, labels, name in (("by_relation", RELATIONS, "P36"), ("by_relation", RELATIONS, "P30"),
                                ("by_bucket", BUCKETS, "0"), ("by_bucket", BUCKETS, "[1,10)")):
        keep = [k for k, label in enumerate(labels) if label == name]
        row = data[table][name]
        assert row["difference"] == pytest.approx(sum(B[k] for k in keep) / len(keep) - sum(A[k] for k in keep) / len(keep))
        got = (row["difference_interval"]["low"], row["difference_interval"]["high"])
        assert got == pytest.approx(numpy_interval([A[k] for k in keep], [B[k] for k in keep]), abs=1e-12)
        assert row["difference_interval"]["n"] == len(keep)


def test_text_prints_each_difference_with_its_interval(pair):
    result = CliRunner().invoke(main, ["compare", *map(str, pair)])
    assert result.exit_code == 0, result.output
    low, high = numpy_interval(A, B)
    assert f"+0.3000 [{low:+.4f}, {high:+.4f}]" in result.output
    assert "[95%]: a paired bootstrap over the items both runs scored (1000 resamples, seed 0)" in result.output


def test_a_correlation_over_fewer_than_five_relations_is_not_a_number(pair):
    data = compare_json(*pair)
    assert data["correlations"]["relations"] == 2
    assert data["correlations"]["pearson"] == {"value": None, "low": None, "high": None, "n": 2,
                                               "note": "n/a (fewer than 5 relations)"}
    assert data["correlations"]["kendall_tau"]["note"] == "n/a (fewer than 5 relations)"
    text = CliRunner().invoke(main, ["compare", *map(str, pair)]).output
    assert ("per-relation accuracy over n = 2 relations (95% interval by Fisher's z): Pearson n/a (fewer than 5 "
            "relations)  Kendall tau-b n/a (fewer than 5 relations)") in text
    assert "1.0000" not in text.split("per-relation accuracy")[1]


def test_a_correlation_over_six_relations_has_a_fisher_interval(tmp_path):
    # six relations of two items each; per-relation accuracies A = (1, .5, 0, 1, .5, 0), B = (1, 1, 0, .5, .5, 0)
    a_hits = [1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0]
    b_hits = [1, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0]
    ids = [f"j{k}" for k in range(12)]
    relations = [f"P{k // 2 + 1}" for k in range(12)]
    a = write_run(tmp_path / "a", "hf:a", [(i, r, "0", bool(c)) for i, r, c in zip(ids, relations, a_hits)])
    b = write_run(tmp_path / "b", "hf:b", [(i, r, "0", bool(c)) for i, r, c in zip(ids, relations, b_hits)])
    pearson = compare_json(a, b)["correlations"]["pearson"]
    x, y = [1, .5, 0, 1, .5, 0], [1, 1, 0, .5, .5, 0]
    r = float(np.corrcoef(x, y)[0, 1])
    assert r == pytest.approx(0.75)  # by hand: sum dx dy = 0.75, sum dx^2 = sum dy^2 = 1
    half = 1.959963984540054 / math.sqrt(6 - 3)
    assert (pearson["value"], pearson["n"]) == (pytest.approx(r), 6)
    assert (pearson["low"], pearson["high"]) == pytest.approx((math.tanh(math.atanh(r) - half),
                                                               math.tanh(math.atanh(r) + half)))


def test_the_seed_chooses_the_resamples(pair):
    result = CliRunner().invoke(main, ["compare", *map(str, pair), "--json", "--seed", "7"])
    interval = json.loads(result.output)["accuracy"]["difference_interval"]
    assert interval["seed"] == 7
    assert (interval["low"], interval["high"]) == pytest.approx(numpy_interval(A, B, seed=7), abs=1e-12)

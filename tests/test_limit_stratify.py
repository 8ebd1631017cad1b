"""`--limit N --stratify relation|bucket|none` (issue 48 item 4): a seeded sample that keeps each
stratum's share of the set, at least one item each while N allows, nested (the sample of N
inside that of N + k, so a larger --limit continues a run), or the first N in file order."""

from __future__ import annotations

import json

import pytest

from factprobe.probes.evaluation.runner import plan_eval
from factprobe.probes.evaluation.sample import Sample, quotas, sample_items, stratum_sequence


def _items() -> list[dict]:
    # 10 items of P36, 5 of P17, 1 of P19, written relation by relation as a build writes them
    relations = ["P36"] * 10 + ["P17"] * 5 + ["P19"]
    buckets = ["0", "[1,10)", "[10,100)", "[100,inf)"] * 4
    return [{"id": f"i{k}", "kind": "icl-mc", "relation": r, "bucket": b, "prompt": f"q{k}", "choices": ["a", "b"],
             "answer_index": 0} for k, (r, b) in enumerate(zip(relations, buckets))]


def test_quotas_are_proportional_with_one_per_stratum():
    # 8 of (10, 5, 1): the shares 5, 2.5, 0.5, the lone P19 item kept: 5, 2, 1
    assert quotas([10, 5, 1], 8) == [5, 2, 1]
    assert quotas([10, 5, 1], 3) == [1, 1, 1]
    assert quotas([10, 5, 1], 2) == [1, 1, 0]  # fewer than the strata: the largest ones
    assert quotas([10, 5, 1], 16) == [10, 5, 1]
    assert quotas([4, 4], 5) == [3, 2]  # a tie to the earlier stratum
    assert stratum_sequence([10, 5, 1], 6) == [0, 1, 2, 0, 0, 1]


def test_relation_sample_exact_membership_and_proportions():
    items = _items()
    chosen = sample_items(items, Sample(8, "relation", seed=0))
    relations = [i["relation"] for i in chosen]
    assert (relations.count("P36"), relations.count("P17"), relations.count("P19")) == (5, 2, 1)
    assert [i["id"] for i in chosen] == [i["id"] for i in items if i in chosen]  # file order kept
    # P36 (i0-i9) gives 5, P17 (i10-i14) 2, P19 its one, each drawn by the seed
    assert [i["id"] for i in chosen] == ["i1", "i3", "i4", "i7", "i9", "i11", "i13", "i15"]
    assert sample_items(items, Sample(8, "relation", seed=0)) == chosen  # the same seed, the same sample
    assert sample_items(items, Sample(8, "relation", seed=1)) != chosen


def test_bucket_sample_and_file_order():
    items = _items()
    chosen = sample_items(items, Sample(8, "bucket", seed=0))
    assert sorted(i["bucket"] for i in chosen) == ["0", "0", "[1,10)", "[1,10)", "[10,100)", "[10,100)",
                                                   "[100,inf)", "[100,inf)"]
    assert [i["id"] for i in sample_items(items, Sample(3, "none"))] == ["i0", "i1", "i2"]
    assert sample_items(items, Sample(None)) == items


@pytest.mark.parametrize("stratify", ["relation", "bucket", "none"])
def test_a_larger_limit_holds_the_smaller_sample(stratify):
    items = _items()
    for n in range(1, 16):
        small = {i["id"] for i in sample_items(items, Sample(n, stratify, 3))}
        large = {i["id"] for i in sample_items(items, Sample(n + 1, stratify, 3))}
        assert len(small) == n and small < large


def test_bad_stratify_is_refused():
    with pytest.raises(ValueError, match="stratify 'object': one of relation, bucket, none"):
        Sample(5, "object")


def test_plan_eval_selects_the_sample_and_records_it(tmp_path):
    probes = tmp_path / "set.jsonl"
    probes.write_text("".join(json.dumps(i) + "\n" for i in _items()))
    plan = plan_eval("mc", probes, tmp_path / "run", limit=8, seed=0)
    assert [i["id"] for i in plan.test] == ["i1", "i3", "i4", "i7", "i9", "i11", "i13", "i15"]
    assert plan.config["stratify"] == "relation" and plan.config["limit"] == 8
    first = plan_eval("mc", probes, tmp_path / "run", limit=8, stratify="none")
    assert [i["id"] for i in first.test] == [f"i{k}" for k in range(8)]
    assert "stratify" not in plan_eval("mc", probes, tmp_path / "run").config  # no limit: every item


def test_eval_help_names_stratify():
    from click.testing import CliRunner

    from factprobe.cli.main import main

    result = CliRunner().invoke(main, ["eval", "--help"])
    assert "--stratify [relation|bucket|none]" in result.output and "[default: relation]" in result.output

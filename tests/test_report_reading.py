"""Issue 19.4: a report a person can read. Short model aliases in labels (the runs table is the
legend), 95% intervals in the tables, the reliability bins' intervals, IC-LKE's per-position
curve, and the HTML page carrying its plots. Every expected string is worked out by hand here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from factprobe.probes.measures.uncertainty import mean_estimate
from factprobe.probes.report import write_report
from factprobe.probes.report.comparison import position_curve
from factprobe.probes.report.loading import load_runs, model_alias
from test_reports import table_rows


@pytest.mark.parametrize("identity, alias", [
    ("gguf:SmolLM2-135M-Instruct.Q4_1.gguf@b179c9523d0e/float32", "SmolLM2-135M-Instruct"),
    ("gguf:gemma-3-270m-q4_k_m.gguf@a5fd3b62230a/float32", "gemma-3-270m"),
    ("hf:HuggingFaceTB/SmolLM2-360M@main/bfloat16", "SmolLM2-360M"),
    ("hf:/tmp/models/tiny-llama/float32", "tiny-llama"),
    ("openai:gpt-4o-mini", "gpt-4o-mini"),
    ("Llama-3.1-8B-IQ3_XS.gguf", "Llama-3.1-8B"),
    ("?", "?"),
])
def test_model_alias(identity, alias):
    assert model_alias(identity) == alias


def _run(folder: Path, model: str, aggregate: dict, items: list[dict], method: str = "ic-lke") -> Path:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"model": model, "method": method, "options": {}, "probes": "p.jsonl"}))
    (folder / "aggregate.json").write_text(json.dumps({"method": method, "items": len(items), **aggregate}))
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    return folder


def test_two_models_with_one_alias_keep_their_identities(tmp_path):
    a = _run(tmp_path / "a", "gguf:X-1B.Q4_1.gguf@aa/float32", {}, [{"id": "i", "correct": True}])
    b = _run(tmp_path / "b", "gguf:X-1B.Q8_0.gguf@bb/float32", {}, [{"id": "i", "correct": True}])
    c = _run(tmp_path / "c", "gguf:Y-2B.Q8_0.gguf@cc/float32", {}, [{"id": "i", "correct": True}])
    assert [r.label for r in load_runs([a, b, c])] == [
        "R1: gguf:X-1B.Q4_1.gguf@aa/float32 / ic-lke", "R2: gguf:X-1B.Q8_0.gguf@bb/float32 / ic-lke", "R3: Y-2B / ic-lke"]


def test_mean_estimate_by_hand():
    # [1, 2, 3, 4]: mean 2.5, sample SD sqrt(5/3) = 1.290994, SE = SD / 2 = 0.645497
    e = mean_estimate([1, 2, 3, 4])
    assert (e.value, e.n, e.method) == (2.5, 4, "normal")
    assert e.se == pytest.approx(0.6454972244, abs=1e-9)
    assert (e.low, e.high) == pytest.approx((2.5 - 1.959963985 * 0.6454972244, 2.5 + 1.959963985 * 0.6454972244))
    one = mean_estimate([-3.0])
    assert one.value == -3.0 and math.isnan(one.se) and math.isnan(one.low)
    with pytest.raises(ValueError):
        mean_estimate([])


@pytest.fixture(scope="module")
def readable(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("readable")
    wilson_2_of_9 = {"value": 2 / 9, "se": 0.1386, "low": 0.06322510711784673, "high": 0.5474110308930111, "n": 9,
                     "method": "wilson", "few": True}
    iclke = {"accuracy": 0.5, "accuracy_interval": {"low": 0.2, "high": 0.8, "few": True},
             "by_bucket": {"[1,10)": {"accuracy": 2 / 9, "correct": 2, "total": 9, "interval": wilson_2_of_9}},
             "accuracy_at_k": {"0.5": {"accuracy": 0.75, "items": 40,
                                       "interval": {"low": 0.5981, "high": 0.8577, "few": False}}}}
    # positions: item 1 [-1, -2], item 2 [-3, -4], item 3 [-2] (a shorter prompt):
    # position 1 = mean(-1, -3, -2) = -2, SD 1, SE 1/sqrt(3) = 0.57735 -> -2 -+ 1.13161 = [-3.13, -0.87]
    # position 2 = mean(-2, -4) = -3, SD sqrt(2), SE 1 -> -3 -+ 1.95996 = [-4.96, -1.04]
    items = [{"id": "a", "correct": True, "position_logprobs": [-1.0, -2.0]},
             {"id": "b", "correct": False, "position_logprobs": [-3.0, -4.0]},
             {"id": "c", "correct": True, "position_logprobs": [-2.0]}]
    run = _run(base / "iclke", "gguf:SmolLM2-135M-Instruct.Q4_1.gguf@b179c9523d0e/float32", iclke, items)
    # BELIEF (its measures table is its method's section, so the run says belief): 3 of 4 answers
    # right in the 0.9 bin: Wilson(3, 4) = [0.3006, 0.9544]
    belief = {"acc_at_1": {"mean": 0.6, "sd": 0.05}, "acc_at_1_interval": {"low": 0.41, "high": 0.79, "few": False},
              "consistency": 0.4, "consistency_interval": {"low": 0.3, "high": 0.5, "few": False},
              "overconfidence": 0.1, "overconfidence_interval": {"low": -0.02, "high": 0.21, "few": False},
              "reliability": [{"confidence": 0.9, "accuracy": 0.75, "count": 4}]}
    other = _run(base / "belief", "gguf:gemma-3-270m-q4_k_m.gguf@a5fd3b62230a/float32", belief,
                 [{"id": "x", "correct": True}], method="belief")
    out = base / "report"
    write_report(load_runs([run, other]), out, "Readable")
    return out


def test_labels_are_short_and_the_runs_table_is_their_legend(readable):
    markdown = (readable / "report.md").read_text()
    rows = table_rows(markdown, "| Run | Label |")
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("R1", "SmolLM2-135M-Instruct / ic-lke", "gguf:SmolLM2-135M-Instruct.Q4_1.gguf@b179c9523d0e/float32"),
        ("R2", "gemma-3-270m / belief", "gguf:gemma-3-270m-q4_k_m.gguf@a5fd3b62230a/float32")]
    assert rows[0][7] == "Accuracy 0.5000 [0.20–0.80 few]"


def test_tables_carry_intervals(readable):
    markdown = (readable / "report.md").read_text()
    # R2 has no bucket breakdown: no column of dashes for it (issue 45)
    assert table_rows(markdown, "| Bucket |") == [["[1,10)", "0.2222 (2/9) [0.06–0.55 few]"]]
    assert table_rows(markdown, "| Run | K |") == [["R1", "0.5", "0.7500", "0.60–0.86", "40"]]
    # an aggregate without the draws' extremes has no range to print (issue 45.7)
    assert table_rows(markdown, "| Run | Acc@1") == [["R2", "0.6000 ± 0.0500 (range n/a) [0.41–0.79]", "0.4000 [0.30–0.50]",
                                                    "0.1000 [-0.02–0.21]"]]
    assert table_rows(markdown, "| Run | Bin |") == [["R2", "1", "0.9000", "0.7500", "0.30–0.95 few", "4"]]


def test_position_curve(readable):
    run = load_runs([readable.parent / "iclke"])[0]
    curve = position_curve(run)
    assert [(p.position, p.estimate.value, p.estimate.n) for p in curve] == [(1, -2.0, 3), (2, -3.0, 2)]
    assert curve[0].estimate.se == pytest.approx(1 / math.sqrt(3))
    rows = table_rows((readable / "report.md").read_text(), "| Run | Position |")
    assert rows == [["R1", "1", "-2.0000", "-3.13–-0.87 few", "3"], ["R1", "2", "-3.0000", "-4.96–-1.04 few", "2"]]
    assert (readable / "positions.png").read_bytes()[:4] == b"\x89PNG"
    assert 'title="positions.png"' in (readable / "report.html").read_text()

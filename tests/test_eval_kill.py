"""`factprobe eval` killed with SIGKILL part way through a real model's run, then rerun: it computes
only the missing items and ends with the records an uninterrupted run writes."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from cli_runner import kill_when
from conftest import run_cli
from test_eval import CAPITALS

SPEC = "smollm2-135m-instruct"
TEST = 12  # test items; the 6 subjects after them are the demonstration pool
DEMOS = 6


def _probe_set(path: Path) -> Path:
    """An icl-mc probe set written out by hand: 12 test capitals with 20 choices, 6 demonstrations."""
    capitals = [capital for _, capital in CAPITALS]
    lines = []
    for k, (country, capital) in enumerate(CAPITALS[:TEST + DEMOS]):
        item = {"id": f"icl-mc:Q{1000 + k}", "kind": "icl-mc", "relation": "P36", "subject_label": country,
                "object_label": capital, "split": "test" if k < TEST else "demo"}
        if k < TEST:
            others = [c for c in capitals if c != capital]
            others = (others[k:] + others[:k])[:19]
            choices = others[:k] + [capital] + others[k:]  # the gold answer moves around
            item.update(choices=choices, answer_index=choices.index(capital))
        lines.append(json.dumps(item))
    path.write_text("\n".join(lines) + "\n")
    return path


def _args(probes: Path, out: Path) -> list[str]:
    return ["eval", "--model", SPEC, "--method", "ic-lke", "--probes", str(probes), "--out", str(out),
            "--option", "separator=: ", "--option", "examples=4", "--batch", "1", "--json", "--quiet"]


def _complete_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _kill_after(args: list[str], items: Path, *, at_least: int, timeout: float = 300) -> int:
    """Start `factprobe ARGS`, SIGKILL it once `items` holds `at_least` complete lines, and return
    how many complete lines it left (asserting the kill came before the end)."""
    proc = kill_when(args, lambda _: _complete_lines(items) >= at_least, timeout=timeout)
    assert proc.returncode == -signal.SIGKILL, "eval ended (or timed out) before it could be killed"
    written = _complete_lines(items)
    assert at_least <= written < TEST, f"the kill landed after {written} of {TEST} items; the test needs it midway"
    return written


def _by_id(folder: Path) -> dict[str, dict]:
    records = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in records}
    assert len(by_id) == len(records), "an item was written twice"
    return by_id


@pytest.mark.slow
def test_sigkilled_eval_resumes_with_the_uninterrupted_records(tmp_path):
    probes = _probe_set(tmp_path / "mc.jsonl")
    clean = run_cli(*_args(probes, tmp_path / "clean"), check=True)
    assert json.loads(clean.stdout)["new"] == TEST

    killed = tmp_path / "killed"
    written = _kill_after(_args(probes, killed), killed / "items.jsonl", at_least=2)
    print(f"killed after {written} of {TEST} items")  # shown with -s
    rerun = json.loads(run_cli(*_args(probes, killed), check=True).stdout)
    assert rerun["resumed_after"] == written and rerun["new"] == TEST - written
    resumed, expected = _by_id(killed), _by_id(tmp_path / "clean")
    assert len(resumed) == TEST and resumed == expected  # exactly, floats included
    assert (json.loads((killed / "aggregate.json").read_text())
            == json.loads((tmp_path / "clean" / "aggregate.json").read_text()))

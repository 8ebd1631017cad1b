"""docs/python.md's "From Python" block runs as written, with a tiny random model in place of SmolLM2
(its numbers do not matter, the files do), and what it writes is what the commands it names
write, byte for byte: the block calls the functions the commands call."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from factprobe.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
MARK = "<!-- python-api -->"
MODEL = '"smollm2-135m-instruct"'
PAGE = ROOT / "docs" / "python.md"


def page_block() -> str:
    """The code of the ```python fence right after the marker in docs/python.md."""
    after = PAGE.read_text(encoding="utf-8").split(MARK, 1)[1]
    assert after.startswith("\n```python\n"), "the marker must sit right above the ```python fence"
    return after.removeprefix("\n```python\n").split("\n```\n", 1)[0] + "\n"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    from scoring_models import tiny_llama

    return f"hf:{tiny_llama(tmp_path_factory.mktemp('llama') / 'llama')}"


@pytest.fixture(scope="module")
def ran(tmp_path_factory, tiny):
    """The block run in an empty folder: (its runs/python folder, what it printed, its names)."""
    code = page_block()
    assert code.count(MODEL) == 1
    folder = tmp_path_factory.mktemp("readme")
    printed = io.StringIO()
    names: dict = {"__name__": "readme_python_api"}
    here = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code.replace(MODEL, repr(tiny)), "docs/python.md (From Python)", "exec"), names)
    finally:
        os.chdir(here)
    return folder / "runs" / "python", printed.getvalue().splitlines(), names


def test_the_block_prints_what_its_comments_say(ran):
    _, printed, _ = ran
    assert printed[:3] == ["459 records, 0 rejected", "['Q64']", "114 items"]
    assert printed[3].startswith("68 items, accuracy ")
    assert len(printed) == 4


def test_the_aggregate_covers_every_test_item(ran):
    work, printed, names = ran
    aggregate = json.loads((work / "iclke" / "aggregate.json").read_text(encoding="utf-8"))
    records = [json.loads(line) for line in (work / "iclke" / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert aggregate == names["result"]
    assert aggregate["items"] == len(records) == 68
    assert names["summary"].items == 68 and names["summary"].new == 68
    assert aggregate["accuracy"] == sum(r["correct"] for r in records) / 68
    assert printed[3] == f"68 items, accuracy {aggregate['accuracy']:.3f}"
    assert aggregate["by_relation"]["P36"]["total"] + aggregate["by_relation"]["P1376"]["total"] == 68


def test_the_commands_write_the_same_files(ran, tiny, tmp_path):
    work, _, _ = ran
    sample = ROOT / "kg" / "data" / "sample_wikidata.json"
    store, probes, out = tmp_path / "graph.sqlite", tmp_path / "capitals-mc.jsonl", tmp_path / "iclke"
    commands = [
        ["ingest", "wikidata", str(sample), "--store", str(store), "--languages", "en,de,fr", "--quiet"],
        ["probeset", "build", "--kind", "icl-mc", "--relation", "P36", "--relation", "P1376", "--per-relation", "60",
         "--choices", "20", "--demo-fraction", "0.4", "--trex-mc-filter", "report", "--store", str(store),
         "--out", str(probes), "--quiet"],
        ["eval", "--model", tiny, "--method", "ic-lke", "--probes", str(probes), "--out", str(out),
         "--option", "separator=: ", "--option", "examples=10", "--quiet"],
    ]
    for args in commands:
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (args, result.output)
    for name in ("capitals-mc.jsonl", "capitals-mc.meta.json", "iclke/items.jsonl", "iclke/aggregate.json"):
        assert (tmp_path / name).read_bytes() == (work / name).read_bytes(), name
    # run.json: the same settings; where and when each sitting ran (run_files.VOLATILE) is its own
    from factprobe.probes.evaluation.run_files import settings

    made, documented = (json.loads((folder / "iclke" / "run.json").read_text()) for folder in (tmp_path, work))
    assert settings(made) == settings(documented) and made["environment"] == documented["environment"]

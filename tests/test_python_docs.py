"""docs/python.md's frequency, distractors and results blocks, run as written: each in a folder
holding what the page's first block leaves in runs/python (the sample graph, `factprobe sample`'s;
the IC-LKE run and its probe set, the sample job's: tests/fixtures/sample_job.tar.xz), and what
each prints equal to its `# ->` comments, line by line. The first block runs in
tests/test_python_api.py."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli

PAGE = Path(__file__).resolve().parents[1] / "docs" / "python.md"
RUN = "smollm2-135m-instruct--ic-lke--capitals-mc"


def block(mark: str) -> str:
    after = PAGE.read_text(encoding="utf-8").split(f"<!-- {mark} -->", 1)[1]
    assert after.startswith("\n```python\n"), f"the {mark} marker must sit right above the ```python fence"
    return after.removeprefix("\n```python\n").split("\n```\n", 1)[0] + "\n"


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("python-docs")
    run_cli("sample", "--out", str(base / "runs" / "python"), "--quiet", check=True)
    with tarfile.open(FIXTURES / "sample_job.tar.xz") as archive:
        archive.extractall(base / "job", filter="data")
    shutil.copytree(base / "job" / "runs" / RUN, base / "runs" / "python" / "iclke")
    shutil.copy(base / "job" / "probesets" / "capitals-mc.jsonl", base / "runs" / "python")
    return base


@pytest.mark.parametrize("mark", ["python-frequency", "python-distractors", "python-results"])
def test_the_block_prints_what_its_comments_say(work, mark):
    if mark == "python-results":
        pytest.importorskip("pandas")
    code = block(mark)
    expected = [m.group(1) for m in re.finditer(r"# -> (.*)$", code, flags=re.MULTILINE)]
    assert expected, f"{mark}: no `# ->` comment to check"
    printed = io.StringIO()
    here = os.getcwd()
    os.chdir(work)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"docs/python.md:{mark}", "exec"), {"__name__": f"docs_{mark}"})
    finally:
        os.chdir(here)
    assert printed.getvalue().splitlines() == expected

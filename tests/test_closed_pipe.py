"""A reader that stops early (`factprobe kg facts ... | head`) closes factprobe's stdout: the
command ends quietly, with the shell's status for a closed pipe (141) and nothing on stderr, not
click's exit code 1 (issue 37 item 7). Real processes and a real shell pipe: the broken pipe is
the operating system's."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import factprobe_cmd, run_cli

SAMPLE = Path(__file__).resolve().parents[1] / "kg" / "data" / "sample_wikidata.json"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pipe") / "graph.sqlite"
    run_cli("ingest", "wikidata", str(SAMPLE), "--store", str(path), check=True)
    return path


def _piped(args: list[str], reader: str, err: Path) -> int:
    """`factprobe ARGS 2>ERR | READER` in bash; factprobe's own exit status."""
    line = f"{shlex.join([*factprobe_cmd(), *args])} 2>{shlex.quote(str(err))} | {reader} >/dev/null"
    return subprocess.run(["bash", "-c", line + '; exit "${PIPESTATUS[0]}"'], timeout=120).returncode


def test_a_listing_cut_short_by_head_ends_quietly(store, tmp_path):
    # 1,000-odd P31 facts as JSON lines, about 200 kB: more than a pipe holds, so factprobe is
    # still writing when head has its 10 bytes and leaves
    listing = ["kg", "facts", "--relation", "P31", "--json", "--store", str(store)]
    assert len(run_cli(*listing, check=True).stdout) > 150_000
    err = tmp_path / "stderr.txt"
    assert _piped(listing, "head -c 10", err) == 141
    assert err.read_text() == ""


def test_help_into_a_reader_already_gone_ends_quietly(tmp_path):
    # help is printed while click parses the arguments, before any command runs
    err = tmp_path / "stderr.txt"
    assert _piped(["kg", "facts", "--help"], "head -c 0", err) == 141
    assert err.read_text() == ""

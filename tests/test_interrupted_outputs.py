"""Interruption and disk (issue 44 H): a report killed midway is rerun, not refused; a probe-set
build on a full disk ends in one line naming the file, keeps nothing of it and keeps the earlier
set; `run --restart` removes only the files a pipeline wrote, and names the others it keeps."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from pathlib import Path

import pytest

from cli_runner import kill_when
from conftest import factprobe_cmd, run_cli
from factprobe.kg.outputs import LOCK_NAME
from factprobe.probes.report.write import UNFINISHED
from test_distractors import graph_entities
from test_reports import write_run
from wikidata_builder import write_dump

# -- report killed midway ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    base = tmp_path_factory.mktemp("runs")
    return [write_run(base / name, model=f"hf:model-{name}", method="ic-lke", correct=correct)
            for name, correct in (("a", [True, True, False, True, False, False]),
                                  ("b", [True, False, True, True, True, False]))]


def report_args(runs: list[Path], out: Path) -> list[str]:
    return ["report", *map(str, runs), "--out", str(out), "--title", "Capitals"]


def test_a_report_killed_with_sigkill_midway_is_written_by_the_rerun(runs, tmp_path):
    out = tmp_path / "report"
    # killed once the first plot is drawn, the page not yet written
    proc = kill_when(report_args(runs, out), lambda _: (out / "accuracy_by_bucket.png").exists(), poll=0.002)
    assert proc.returncode == -signal.SIGKILL, "the report ended before it could be killed"
    assert not (out / "report.md").exists(), "the kill landed after the report was written; the test needs it midway"
    assert (out / "report.html").read_text(encoding="utf-8") == UNFINISHED  # the marker, from the first byte
    again = run_cli(*report_args(runs, out))
    assert again.returncode == 0, again.stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<h1>Capitals</h1>" in page and "not finished" not in page
    assert {"report.md", "items.html", "accuracy_by_bucket.png"} <= set(os.listdir(out))
    assert not [name for name in os.listdir(out) if name.endswith(".partial") or name == LOCK_NAME]


# What a kill leaves at each stage of a report: the lock and the marker's temporary (killed before
# the marker's rename), the marker alone, the marker and a torn plot with another one's temporary.
STAGES = {
    "before the marker": {LOCK_NAME: "pid 99999\n", "report.html.99999-0badc0de.partial": "<!DOCTYPE"},
    "the marker": {"report.html": UNFINISHED},
    "a torn plot": {LOCK_NAME: "", "report.html": UNFINISHED, "accuracy_by_bucket.png": "\x89PNG\r\n",
                    "items.html.99999-0badc0de.partial": "<!DOCTYPE html><html"},
}


@pytest.mark.parametrize("stage", STAGES)
def test_what_a_killed_report_leaves_is_written_over_by_the_rerun(runs, tmp_path, stage):
    out = tmp_path / "report"
    out.mkdir()
    for name, text in STAGES[stage].items():
        (out / name).write_text(text, encoding="utf-8")
    again = run_cli(*report_args(runs, out))
    assert again.returncode == 0, again.stderr
    assert "<h1>Capitals</h1>" in (out / "report.html").read_text(encoding="utf-8")
    assert (out / "accuracy_by_bucket.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert not [name for name in os.listdir(out) if name.endswith(".partial") or name == LOCK_NAME]


def test_a_folder_of_other_files_is_still_refused_as_no_report(runs, tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.html").write_text("<html>my own page</html>", encoding="utf-8")
    refused = run_cli(*report_args(runs, out))
    assert refused.returncode == 2
    assert refused.stderr == (f"error: {out} holds files that are not a factprobe report (no report.html it wrote) "
                              "(report.html): pass --overwrite to replace it, or another --out\n")
    assert (out / "report.html").read_text(encoding="utf-8") == "<html>my own page</html>"


# -- a full disk during probeset build ----------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("graph")
    dump = write_dump(base / "hand.json", graph_entities())
    path = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(dump), "--store", str(path), "--quiet", check=True)
    return path


def build_args(store: Path, out: Path, *extra: str) -> list[str]:
    return ["probeset", "build", "--kind", "cloze", "--store", str(store), "--out", str(out), "--quiet", *extra]


# A limit above what reading the store writes (SQLite's 32 KiB -shm), below the probe set's size (80 KB).
LIMIT = 40_960


def build_with_file_size_limit(args: list[str], limit: int = LIMIT) -> subprocess.CompletedProcess:
    """`factprobe ARGS` where no file may grow past `limit` bytes (ulimit -f): a write past it fails
    with EFBIG, as one on a full disk fails with ENOSPC (Python ignores SIGXFSZ, so the write fails
    rather than the process)."""
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([*factprobe_cmd(), *args], capture_output=True, text=True, timeout=300, preexec_fn=limited)


def test_a_full_disk_during_build_is_one_line_naming_the_file_and_the_earlier_set_stays(store, tmp_path):
    out = tmp_path / "cloze.jsonl"
    run_cli(*build_args(store, out, "--seed", "1"), check=True)
    earlier = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    assert sorted(earlier) == ["cloze.jsonl", "cloze.meta.json"] and len(earlier["cloze.jsonl"]) > LIMIT
    full = build_with_file_size_limit(build_args(store, out, "--seed", "2", "--overwrite"))
    assert (full.returncode, full.stdout) == (3, "")
    assert full.stderr == f"error: {out}: cannot write (File too large); nothing of it kept\n"
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == earlier  # no .partial left


def test_a_full_disk_during_a_first_build_leaves_nothing(store, tmp_path):
    out = tmp_path / "sets" / "cloze.jsonl"
    full = build_with_file_size_limit(build_args(store, out))
    assert (full.returncode, full.stderr) == (3, f"error: {out}: cannot write (File too large); nothing of it kept\n")
    assert os.listdir(tmp_path) == []  # not even the folder made for it


# -- run --restart removes only what a pipeline wrote --------------------------------------------------


def test_run_restart_removes_only_the_files_a_pipeline_wrote_and_names_the_others(tmp_path):
    dump = write_dump(tmp_path / "hand.json", graph_entities())
    config = tmp_path / "p.yaml"
    config.write_text(f"graph:\n  sources: [{{format: wikidata, path: {dump}}}]\n"
                      "probesets: {c: {kind: cloze}}\nmodels: []\nevaluations: []\nreport: false\n")
    out = tmp_path / "out"
    run_cli("run", str(config), "--out", str(out), "--quiet", check=True)
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    # (SQLite's -wal and -shm beside the store stay after a read-only connection in WAL mode)
    assert [name for name in written if not name.endswith(("-wal", "-shm"))] == \
        ["graph.sqlite", "probesets/c.jsonl", "probesets/c.meta.json"]
    # what a user put inside, and what an earlier pipeline wrote that this config no longer names
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("the link's target\n")
    users = {"notes.txt": "my notes\n", "probesets/mine.jsonl": '{"id": "x"}\n', "runs/old/mine.csv": "a,b\n",
             "report/draft.md": "# draft\n"}
    for name, text in users.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    (out / "link").symlink_to(elsewhere)
    old_run = write_run(out / "runs" / "older", model="hf:m", method="ic-lke", correct=[True] * 6)
    (out / "report" / "report.html").write_text(UNFINISHED)
    (out / "probesets" / "c.jsonl.4242-0badc0de.partial").write_text("{")

    proc = run_cli("run", str(config), "--out", str(out), "--quiet", "--restart")
    assert proc.returncode == 0, proc.stderr
    kept = [out / "link", out / "notes.txt", out / "probesets" / "mine.jsonl", out / "report" / "draft.md",
            out / "runs" / "old" / "mine.csv"]
    lines = proc.stdout.splitlines()
    removed = len(written) + 3 + 2  # the older run's 3 files, the unfinished report page, a temporary
    assert lines[0] == f"--restart: removing the {removed} file(s) a pipeline wrote in {out}"
    assert lines[1] == f"--restart: kept 5 file(s) factprobe did not write: {', '.join(map(str, kept))}"
    assert {name: (out / name).read_text() for name in users} == users
    assert (out / "link").is_symlink() and elsewhere.read_text() == "the link's target\n"
    assert not old_run.exists() and not (out / "report" / "report.html").exists()
    now = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and not p.is_symlink())
    assert now == sorted([*written, *users])  # the pipeline's files written again beside the kept ones


def test_a_second_run_or_restart_is_refused_while_a_pipeline_writes_its_folder(tmp_path):
    from test_one_writer import busy, kill, start_holder

    config = tmp_path / "p.yaml"
    config.write_text("graph:\n  sources: []\nprobesets: {}\nmodels: []\nevaluations: []\nreport: false\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "graph.sqlite").write_bytes(b"")  # a pipeline's folder (an empty store), held by another pipeline
    holder = start_holder(out, "folder", "--out")
    try:
        refused = run_cli("run", str(config), "--out", str(out), "--quiet", "--restart")
        assert (refused.returncode, refused.stdout, refused.stderr) == (2, "", busy(out, holder.pid))
        assert sorted(os.listdir(out)) == [LOCK_NAME, "graph.sqlite"]  # --restart removed nothing
    finally:
        kill(holder)

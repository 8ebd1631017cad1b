"""One writer per output (issue 44 D, acceptance 3): a second `eval`, `probeset build`, `report` or
`ingest` into the output another factprobe process writes is refused in one line naming the
output and that process's pid; the lock is the kernel's (flock), so a `kill -9` of its holder
leaves no lock behind; temporaries are unique per writer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runner import kill_when
from conftest import factprobe_cmd, run_cli
from factprobe.kg.output_lock import OutputBusy, hold_output, lock_path
from factprobe.kg.outputs import LOCK_NAME, replacing, staging, temp_name
from test_distractors import graph_entities
from test_eval import CAPITALS
from test_reports import write_run
from wikidata_builder import write_dump

SPEC = "smollm2-135m-instruct"
TEST_ITEMS = 32  # the case: two evals into one --out wrote 64 records of these 32 ids


def busy(output, pid: int, flag: str = "--out") -> str:
    return (f"error: {output}: another factprobe process (pid {pid}) writes it: wait until it ends, "
            f"or choose another {flag}\n")


def capital_probes(path: Path) -> Path:
    """An icl-mc set by hand: 32 test items of 4 choices (the capitals, cycled), 4 demonstrations."""
    capitals = [capital for _, capital in CAPITALS]

    def item(k: int) -> dict:
        country, capital = CAPITALS[k % len(CAPITALS)]
        base = {"id": f"icl-mc:Q{1000 + k}", "kind": "icl-mc", "relation": "P36", "subject_label": country,
                "object_label": capital}
        if k >= TEST_ITEMS:
            return {**base, "split": "demo"}
        choices = [c for c in capitals if c != capital][k % 20:k % 20 + 3]
        choices.insert(k % 4, capital)  # the gold answer moves around
        return {**base, "split": "test", "choices": choices, "answer_index": k % 4}

    path.write_text("".join(json.dumps(item(k)) + "\n" for k in range(TEST_ITEMS + 4)))
    return path


def eval_args(probes: Path, out: Path) -> list[str]:
    return ["eval", "--model", SPEC, "--method", "ic-lke", "--probes", str(probes), "--out", str(out),
            "--option", "separator=: ", "--option", "examples=2", "--batch", "4", "--quiet"]


def record_ids(folder: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (folder / "items.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_two_evals_into_one_folder_at_once_one_is_refused_and_every_item_is_written_once(tmp_path):
    probes, out = capital_probes(tmp_path / "capitals.jsonl"), tmp_path / "run"
    both = [subprocess.Popen([*factprobe_cmd(), *eval_args(probes, out)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    ended = [(proc, *proc.communicate(timeout=600)) for proc in both]
    codes = sorted(proc.returncode for proc, _, _ in ended)
    assert codes == [0, 2], [(p.returncode, err[-2000:]) for p, _, err in ended]
    (winner, _, _), = [e for e in ended if e[0].returncode == 0]
    (_, refused_out, refused_err), = [e for e in ended if e[0].returncode == 2]
    assert refused_err == busy(out, winner.pid) and refused_out == ""
    ids = record_ids(out)
    assert len(ids) == TEST_ITEMS and len(set(ids)) == TEST_ITEMS  # each id once, not 64 records of 32
    assert json.loads((out / "aggregate.json").read_text())["items"] == TEST_ITEMS
    assert sorted(os.listdir(out)) == ["aggregate.json", "items.jsonl", "run.json"]  # the lock went with its writer


@pytest.mark.slow
def test_an_eval_killed_with_sigkill_leaves_no_lock_stuck(tmp_path):
    probes, out = capital_probes(tmp_path / "capitals.jsonl"), tmp_path / "run"
    lock = out / LOCK_NAME
    proc = kill_when(eval_args(probes, out), lambda p: lock.is_file() and lock.read_text() == f"pid {p.pid}\n")
    assert proc.returncode == -signal.SIGKILL
    assert lock.read_text() == f"pid {proc.pid}\n"  # the file stays; the kernel let go of its lock
    again = run_cli(*eval_args(probes, out))
    assert again.returncode == 0, again.stderr
    ids = record_ids(out)
    assert len(ids) == TEST_ITEMS == len(set(ids))
    assert not lock.exists()


# -- build, report, ingest: a real process holds the output, then is killed ------------------------

HOLDER = """
import sys, time
from factprobe.kg.output_lock import hold_output
with hold_output(sys.argv[1], folder=sys.argv[2] == "folder", flag=sys.argv[3]):
    print("held", flush=True)
    time.sleep(600)
"""


def start_holder(output: Path, kind: str, flag: str) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(output), kind, flag], stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout.readline() == "held\n"
    return holder


def kill(holder: subprocess.Popen) -> None:
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert holder.returncode == -signal.SIGKILL


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    return write_dump(tmp_path_factory.mktemp("dump") / "hand.json", graph_entities())


@pytest.fixture(scope="module")
def store(dump, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("store") / "g.sqlite"
    run_cli("ingest", "wikidata", str(dump), "--store", str(path), "--quiet", check=True)
    return path


def test_a_second_probeset_build_is_refused_while_one_writes_and_proceeds_after_its_kill(store, tmp_path):
    out = tmp_path / "cloze.jsonl"
    args = ["probeset", "build", "--kind", "cloze", "--store", str(store), "--out", str(out), "--quiet"]
    run_cli(*args, check=True)
    before = out.read_bytes(), (tmp_path / "cloze.meta.json").read_bytes()
    holder = start_holder(out, "file", "--out")
    try:
        refused = run_cli(*args)
        assert (refused.returncode, refused.stderr, refused.stdout) == (2, busy(out, holder.pid), "")
        assert (out.read_bytes(), (tmp_path / "cloze.meta.json").read_bytes()) == before
    finally:
        kill(holder)
    assert lock_path(out, folder=False).read_text() == f"pid {holder.pid}\n"  # left by the kill, not locked
    again = run_cli(*args)
    assert again.returncode == 0, again.stderr
    assert (out.read_bytes(), (tmp_path / "cloze.meta.json").read_bytes()) == before
    assert sorted(os.listdir(tmp_path)) == ["cloze.jsonl", "cloze.meta.json"]


def test_a_second_report_is_refused_while_one_writes_and_proceeds_after_its_kill(tmp_path):
    run = write_run(tmp_path / "runs" / "a", model="hf:model-a", method="ic-lke", correct=[True, False] * 3)
    out = tmp_path / "report"
    holder = start_holder(out, "folder", "--out")
    try:
        refused = run_cli("report", str(run), "--out", str(out))
        assert (refused.returncode, refused.stderr, refused.stdout) == (2, busy(out, holder.pid), "")
        assert os.listdir(out) == [LOCK_NAME]
    finally:
        kill(holder)
    again = run_cli("report", str(run), "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert {"report.md", "report.html", "items.html"} <= set(os.listdir(out)) and LOCK_NAME not in os.listdir(out)


def test_a_second_ingest_into_one_store_is_refused_while_one_writes_and_proceeds_after_its_kill(dump, tmp_path):
    store = tmp_path / "g.sqlite"
    holder = start_holder(store, "file", "--store")
    try:
        refused = run_cli("ingest", "wikidata", str(dump), "--store", str(store), "--quiet")
        assert (refused.returncode, refused.stderr, refused.stdout) == (2, busy(store, holder.pid, "--store"), "")
        assert not store.exists()
    finally:
        kill(holder)
    again = run_cli("ingest", "wikidata", str(dump), "--store", str(store), "--quiet")
    assert again.returncode == 0, again.stderr
    assert sorted(os.listdir(tmp_path)) == ["g.sqlite"]


def test_two_real_ingests_into_one_store_at_once_one_is_refused(dump, tmp_path):
    from test_resume import write_dump as write_big_dump

    big = tmp_path / "big.json"
    write_big_dump(big, n=3000)  # long enough to still hold the store when the other starts
    store = tmp_path / "g.sqlite"
    args = [*factprobe_cmd(), "ingest", "wikidata", str(big), "--store", str(store), "--quiet"]
    both = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    ended = [(proc, *proc.communicate(timeout=300)) for proc in both]
    assert sorted(p.returncode for p, _, _ in ended) == [0, 2], [(p.returncode, e[-2000:]) for p, _, e in ended]
    (winner, _, _), = [e for e in ended if e[0].returncode == 0]
    (_, _, refused_err), = [e for e in ended if e[0].returncode == 2]
    assert refused_err == busy(store, winner.pid, "--store")


# -- the lock and the temporaries themselves -------------------------------------------------------


def test_a_refused_writer_leaves_no_folder_it_made_for_the_lock(tmp_path):
    out = tmp_path / "new" / "run"
    with hold_output(out, folder=True):
        assert (out / LOCK_NAME).read_text() == f"pid {os.getpid()}\n"
        with hold_output(out, folder=True):  # re-entrant in one process (the pipeline and its steps)
            pass
        assert (out / LOCK_NAME).is_file()
    assert os.listdir(tmp_path) == []


def test_the_lock_is_refused_to_another_process_and_named(tmp_path):
    out = tmp_path / "run"
    holder = start_holder(out, "folder", "--out")
    try:
        with pytest.raises(OutputBusy) as refused:
            with hold_output(out, folder=True):
                pass
        assert str(refused.value) == busy(out, holder.pid).removeprefix("error: ").rstrip("\n")
    finally:
        kill(holder)
    with hold_output(out, folder=True):
        assert (out / LOCK_NAME).read_text() == f"pid {os.getpid()}\n"


def test_temporaries_are_unique_per_writer_and_a_killed_writers_are_removed_under_the_lock(tmp_path):
    target = tmp_path / "set.jsonl"
    names = {temp_name(target).name for _ in range(50)}
    assert len(names) == 50 and all(n.startswith(f"set.jsonl.{os.getpid()}-") for n in names)
    with staging() as first, staging() as second:  # two writers of one name at once: two temporaries
        a, b = first.open(target), second.open(target)
        a.write(b"first\n")
        b.write(b"second\n")
        assert len([n for n in os.listdir(tmp_path) if n.endswith(".partial")]) == 2
    assert target.read_bytes() == b"first\n"  # the inner (second) renamed first, then the outer over it
    stale = [tmp_path / "set.jsonl.12345-0badc0de.partial", tmp_path / "set.meta.json.12345-0badc0de.partial",
             tmp_path / "set.jsonl.partial"]
    for path in stale:
        path.write_text("a killed build's\n")
    other = tmp_path / "notes.txt.12345-0badc0de.partial"  # another output's: not this lock's to remove
    other.write_text("kept\n")
    with hold_output(target, folder=False, beside=["set.meta.json"]):
        assert not any(path.exists() for path in stale) and other.exists()
    with replacing(target) as stream:
        stream.write(b"third\n")
    assert target.read_bytes() == b"third\n"
    assert sorted(os.listdir(tmp_path)) == ["notes.txt.12345-0badc0de.partial", "set.jsonl"]

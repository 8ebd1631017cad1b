"""One evaluation over many processes (issue 31, item 6): `eval --shard K/N` then `factprobe merge`
writes run.json, items.jsonl and aggregate.json byte for byte as the unsharded `eval` does, for
KDF (one record per fact) and BELIEF-ICL (a fact's templates are several records its measures
group), also where a fact straddles two shards; the merge refuses shards of different runs, a
missing, doubled or unfinished shard; a shard resumes in its folder; and under torchrun (2 CPU
processes) rank 0 merges what the single process writes. A tiny random Llama with a 300-token
byte-level BPE trained here keeps it cheap."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import run_cli
from factprobe.cli.main import main
from factprobe.probes.evaluation.shard import Launch, Shard, launched, local_device
from factprobe.probes.evaluation.shard_merge import MergeError, merge_shards

FILES = ("run.json", "items.jsonl", "aggregate.json")
COUNTRIES = [("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Egypt", "Cairo"), ("Peru", "Lima"),
             ("Kenya", "Nairobi"), ("Norway", "Oslo"), ("Spain", "Madrid"), ("Chile", "Santiago"), ("Cuba", "Havana")]
TEMPLATES = ["The capital of [X] is [Y].", "[X]'s capital is [Y].", "[Y] is the capital of [X]."]


def tiny_causal(folder: Path) -> Path:
    """A 2-layer random Llama whose tokenizer is a byte-level BPE of 300 tokens trained here."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from scoring_models import save_tiny_llama

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    text = " ".join(f"{c} {k}" for c, k in COUNTRIES) + " ".join(TEMPLATES) + " Q: A: Answer: capital"
    bpe.train_from_iterator([text], trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    end = "<|endoftext|>"
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token=end, eos_token=end, pad_token=end)
    return save_tiny_llama(tokenizer, folder, max_positions=1024)


def kdf_items() -> list[dict]:
    """One KDF question per country (10 facts, one record each), one demonstration each."""
    items = []
    for k, (country, capital) in enumerate(COUNTRIES):
        wrong = [c for _, c in COUNTRIES if c != capital][k % 6:k % 6 + 3]
        options = sorted([capital, *wrong])
        demo_country, demo_capital = COUNTRIES[(k + 1) % len(COUNTRIES)]
        items.append({"id": f"kdf:F{k}", "kind": "kdf", "split": "test", "fact": f"F{k}", "relation": "P36",
                      "subject_label": country, "object_label": capital, "language": "en",
                      "question": f"What is the capital of {country}?", "options": options,
                      "answer": "ABCD"[options.index(capital)],
                      "demonstrations": [{"question": f"What is the capital of {demo_country}?",
                                          "options": [demo_capital, "Oslo", "Rome", "Lima"], "answer": "A"}]})
    return items


def belief_icl_items() -> list[dict]:
    """Four facts asked by three templates each: 12 records, Acc@1 and Consist group them by fact."""
    items = []
    for k, (country, capital) in enumerate(COUNTRIES[:4]):
        demo_country, demo_capital = COUNTRIES[k + 5]
        for t, template in enumerate(TEMPLATES):
            items.append({"id": f"belief-icl:F{k}:{t}", "kind": "belief-icl", "split": "test", "fact": f"F{k}",
                          "relation": "P36", "subject_label": country, "object_label": capital, "gold": [capital],
                          "template": template, "template_id": t, "prompt": template.replace("[X]", country),
                          "demonstrations": {"zero-shot": [], "x-relation": [
                              {"template": TEMPLATES[(t + 1) % 3], "subject_label": demo_country,
                               "object_label": demo_capital}]}})
    return items


# KDF in 2 shards; BELIEF-ICL in 3, so that a fact's templates straddle two shards.
SPLITS = {"kdf": 2, "belief-icl": 3}
METHODS = {
    "kdf": (kdf_items, ["--option", "frame=qa"]),
    "belief-icl": (belief_icl_items, ["--option", "samples=2", "--option", "max_tokens=2", "--option",
                                      'settings=["zero-shot", "x-relation"]']),
}


def cli(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def _eval(ws: dict, method: str, out: Path, *extra: str):
    return cli("eval", "--model", f"hf:{ws['model']}", "--method", method, "--probes", ws[method], "--out", out,
               "--batch", "2", "--device", "cpu", "--quiet", *METHODS[method][1], *extra)


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    base = tmp_path_factory.mktemp("shard")
    ws = {"base": base, "model": tiny_causal(base / "llama")}
    for method, (items, _) in METHODS.items():
        path = base / f"{method}.jsonl"
        path.write_text("".join(json.dumps(i) + "\n" for i in items()), encoding="utf-8")
        ws[method] = path
        whole = base / method / "whole"
        result = _eval(ws, method, whole)
        assert result.exit_code == 0, result.output
        n = SPLITS[method]
        for k in range(n):
            result = _eval(ws, method, base / method / f"split{n}", "--shard", f"{k}/{n}")
            assert result.exit_code == 0, result.output
    return ws


# Where and when a sitting ran (run.json's environment and times) differ between any two runs.
VOLATILE = ("environment", "started_at", "ended_at", "runtime_s")


def _files(folder: Path) -> dict[str, bytes]:
    """The run's files byte for byte, run.json without its sitting fields (its bytes otherwise)."""
    files = {name: (folder / name).read_bytes() for name in FILES}
    if "run.json" in files:
        held = json.loads(files["run.json"])
        assert all(k in held for k in VOLATILE), f"{folder}/run.json lacks a sitting field"
        files["run.json"] = json.dumps({k: v for k, v in held.items() if k not in VOLATILE}, indent=1,
                                       sort_keys=True).encode() + b"\n"
    return files


def _ids(folder: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (folder / "items.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("method, n", sorted(SPLITS.items()))
def test_merged_shards_are_the_unsharded_run_byte_for_byte(ws, method, n):
    split, whole = ws["base"] / method / f"split{n}", ws["base"] / method / "whole"
    shards = [split / f"shard-{k}-of-{n}" for k in range(n)]
    # 5 and 6 batches of 2: shard K takes batches K*B//N .. (K+1)*B//N
    assert [len(_ids(s)) for s in shards] == {"kdf": [4, 6], "belief-icl": [4, 4, 4]}[method]
    result = cli("merge", *shards, "--out", split, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["items"] == len(_ids(whole)) and json.loads(result.output)["shards"] == n
    assert _files(split) == _files(whole)
    run = json.loads((shards[1] / "run.json").read_text())
    assert run["shard"] == {"index": 1, "count": n, "batch": 2, "items": len(_ids(shards[1]))}
    if method == "belief-icl" and n == 3:  # fact F1's three templates: one in shard 0, two in shard 1
        assert [i.split(":")[1] for i in _ids(shards[0])] == ["F0"] * 3 + ["F1"]
        assert _ids(shards[1])[:2] == ["belief-icl:F1:1", "belief-icl:F1:2"]
        by_shard = json.loads((shards[0] / "aggregate.json").read_text())  # a shard's own: its records only
        assert by_shard["items"] == 4 and by_shard["by_setting"] != json.loads(
            (whole / "aggregate.json").read_text())["by_setting"]


def test_merge_refuses_what_is_not_one_whole_run(ws, tmp_path):
    split = ws["base"] / "belief-icl" / "split3"
    s0, s1, s2 = (split / f"shard-{k}-of-3" for k in range(3))

    def refused(*folders, out=tmp_path / "m") -> str:
        result = cli("merge", *folders, "--out", out)
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        return result.output.strip()

    assert refused(s0, s2) == "error: shard(s) 1 of 3 missing (given: 0, 2)"
    assert refused(s0, s1, s1, s2) == f"error: shard 1/3 is given twice: {s1} and {s1}"
    four = tmp_path / "four"
    shutil.copytree(s2, four)
    run = json.loads((four / "run.json").read_text())
    (four / "run.json").write_text(json.dumps({**run, "shard": {**run["shard"], "count": 4}}))
    assert refused(s0, s1, four) == (f"error: {s0} and {four} are not shards of one run: they differ in "
                                     "shard count (shard count: 3 vs 4)")
    assert refused(s0, s1, s2, out=s1) == f"error: --out {s1} is one of the shard folders: merge into the run's own folder"
    whole = ws["base"] / "belief-icl" / "whole"
    assert refused(whole) == f"error: {whole}: not a shard (run.json has no `shard`; `eval --shard K/N` writes one)"
    edited = tmp_path / "edited"
    shutil.copytree(s2, edited)
    run = json.loads((edited / "run.json").read_text())
    (edited / "run.json").write_text(json.dumps({**run, "probes_sha256": "0" * 64}))
    assert refused(s0, s1, edited).startswith(f"error: {s0} and {edited} are not shards of one run: they differ in "
                                              f"probes_sha256 (probes_sha256: \"{run['probes_sha256'][:55]}")
    torn = tmp_path / "torn"
    shutil.copytree(s2, torn)
    text = (torn / "items.jsonl").read_text()
    (torn / "items.jsonl").write_text(text[:-30])
    assert refused(s0, s1, torn) == (f"error: {torn}: shard 2/3 is unfinished (3 of 4 items, or no aggregate.json "
                                     "yet): rerun its eval to finish it")


def _rewrite_run(folder: Path, **changes) -> None:
    run = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**run, **changes}))


def _swap_for_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


# A shard folder broken by hand, and the line that names it (F: the broken folder).
BROKEN_SHARDS = {
    "no run.json": (lambda f: (f / "run.json").unlink(), "{F}: no run.json: not an eval results folder"),
    "run.json a list": (lambda f: (f / "run.json").write_text("[1, 2]"),
                        "{F}/run.json: not a run.json eval wrote (not a JSON object)"),
    "run.json not UTF-8": (lambda f: (f / "run.json").write_bytes(b"\xff\xfe"),
                           "{F}/run.json: unreadable ('utf-8' codec can't decode byte 0xff in position 0: invalid "
                           "start byte)"),
    "run.json a folder": (lambda f: _swap_for_folder(f / "run.json"),
                          "{F}/run.json: unreadable ([Errno 21] Is a directory: '{F}/run.json')"),
    "shard without numbers": (lambda f: _rewrite_run(f, shard={}),
                              "{F}/run.json: its `shard` has no whole number index, count, batch, items: not one "
                              "eval wrote"),
    "no method": (lambda f: _rewrite_run(f, method=None),
                  "{F}/run.json: method: missing (every run folder eval writes has it)"),
    "options a list": (lambda f: _rewrite_run(f, options=[]), "{F}/run.json: options: a list, not an object"),
    "garbage record": (lambda f: (f / "items.jsonl").write_bytes(
        b"garbage\n" + b"".join((f / "items.jsonl").read_bytes().splitlines(keepends=True)[1:])),
        "{F}/items.jsonl:1: not a record eval wrote (a JSON object with a text id)"),
    "record not UTF-8": (lambda f: (f / "items.jsonl").write_bytes(
        (f / "items.jsonl").read_bytes().replace(b"belief-icl:", b"\xff", 1)),
        "{F}/items.jsonl:1: not a record eval wrote (a JSON object with a text id)"),
    "aggregate a list": (lambda f: (f / "aggregate.json").write_text("[1]"),
                         "{F}: shard 2/3 is unfinished (4 of 4 items, or no aggregate.json yet): rerun its eval to "
                         "finish it"),
    "a file": (lambda f: (shutil.rmtree(f), f.write_text("not a folder")),
               "{F}: not a folder (a shard is the folder `eval --shard K/N` wrote)"),
    "gone": (lambda f: shutil.rmtree(f), "{F}: no such folder (a shard is the folder `eval --shard K/N` wrote)"),
}


@pytest.mark.parametrize("broken", sorted(BROKEN_SHARDS))
def test_a_hand_broken_shard_folder_is_one_line(ws, tmp_path, broken):
    split = ws["base"] / "belief-icl" / "split3"
    s0, s1 = (split / f"shard-{k}-of-3" for k in range(2))
    bad = tmp_path / "s2"
    shutil.copytree(split / "shard-2-of-3", bad)
    breaker, message = BROKEN_SHARDS[broken]
    breaker(bad)
    result = cli("merge", s0, s1, bad, "--out", tmp_path / "m")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert result.output == f"error: {message.format(F=bad)}\n"
    assert not (tmp_path / "m").exists()


def test_a_merge_out_that_cannot_be_a_results_folder_is_one_line(ws, tmp_path):
    shards = [ws["base"] / "kdf" / "split2" / f"shard-{k}-of-2" for k in range(2)]
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    result = cli("merge", *shards, "--out", a_file / "run")
    assert result.exit_code == 2 and result.output == f"error: {a_file / 'run'} cannot be a results folder: {a_file} is a file\n"
    garbled = tmp_path / "garbled"
    garbled.mkdir()
    (garbled / "run.json").write_text("garbage")
    with pytest.raises(MergeError) as refused:  # the command's --out guard (cli/outputs.py) refuses it first
        merge_shards(shards, garbled)
    assert str(refused.value) == f"{garbled / 'run.json'}: unreadable (Expecting value: line 1 column 1 (char 0))"
    assert (garbled / "run.json").read_text() == "garbage"


def test_a_merge_out_that_is_a_file_is_one_line_naming_it(tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    result = run_cli("merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(a_file))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"error: {a_file} is a file; this output is a folder: name a folder\n"
    assert a_file.read_text() == "x"


def test_a_shard_resumes_in_its_folder_and_keeps_its_items(ws, tmp_path):
    split = ws["base"] / "kdf" / "split2"
    out = tmp_path / "run"
    shutil.copytree(split / "shard-1-of-2", out / "shard-1-of-2")
    items = out / "shard-1-of-2" / "items.jsonl"
    lines = items.read_text().splitlines(keepends=True)
    # killed while writing its third batch: the torn record is cut, and the batch redone whole
    items.write_text("".join(lines[:4]) + lines[4][:40])
    (out / "shard-1-of-2" / "aggregate.json").unlink()
    result = _eval(ws, "kdf", out, "--shard", "1/2", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.splitlines()[-1])["new"] == 2
    assert _files(out / "shard-1-of-2") == _files(split / "shard-1-of-2")
    other = _eval(ws, "kdf", out, "--shard", "1/2", "--batch", "3")  # another --batch takes other items
    assert other.exit_code == 2 and "other settings (shard)" in other.output


@pytest.mark.parametrize("text, message", [
    ("2/2", "--shard '2/2': K must be 0..N-1 and N at least 1 (K counts from 0, as RANK does)"),
    ("1of2", "--shard '1of2': write K/N, e.g. 0/8 (K counts from 0)"),
    ("0/0", "--shard '0/0': K must be 0..N-1 and N at least 1 (K counts from 0, as RANK does)"),
])
def test_a_bad_shard_is_one_line_before_the_model_loads(tmp_path, text, message):
    probes = tmp_path / "p.jsonl"
    probes.write_text(json.dumps(kdf_items()[0]) + "\n")
    result = cli("eval", "--model", f"hf:{tmp_path}/none", "--method", "kdf", "--probes", probes, "--out",
                 tmp_path / "o", "--shard", text)
    assert result.exit_code == 2 and result.output == f"error: {message}\n"


def test_shards_are_whole_batches_in_order_and_cover_every_item():
    items = [{"id": str(k)} for k in range(11)]
    for n in (1, 2, 3, 4, 7, 12):
        parts = [Shard(k, n).select(items, 2) for k in range(n)]
        assert [i for part in parts for i in part] == items
        assert all(len(part) % 2 == 0 for part in parts[:-1])
    assert [len(Shard(k, 4).select(items, 2)) for k in range(4)] == [2, 4, 2, 3]
    assert Shard.parse(" 3/8 ") == Shard(3, 8) and Shard(3, 8).name == "shard-3-of-8"


def test_the_launcher_environment_gives_rank_world_and_device():
    assert launched({}) is None and launched({"RANK": "0", "WORLD_SIZE": "1"}) is None
    launch = launched({"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1"})
    assert launch == Launch(5, 8, 1) and launch.shard == Shard(5, 8)
    with pytest.raises(ValueError, match="RANK=8 is not a rank of WORLD_SIZE=8"):
        launched({"RANK": "8", "WORLD_SIZE": "8"})
    with pytest.raises(ValueError, match="must be whole numbers"):
        launched({"RANK": "x", "WORLD_SIZE": "8"})
    assert local_device("auto", launch, cuda_available=True) == "cuda:1"
    assert local_device("cuda", launch, cuda_available=True) == "cuda:1"
    assert local_device("auto", launch, cuda_available=False) == "cpu"
    assert local_device("cuda:3", launch, cuda_available=True) == "cuda:3"  # named exactly: kept
    assert local_device("auto", None, cuda_available=True) == "auto"


@pytest.mark.slow  # two processes that each import torch and transformers
def test_torchrun_two_cpu_processes_merge_to_the_single_process_run(ws, tmp_path):
    out = tmp_path / "torchrun"
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         "-m", "factprobe.cli.main", "eval", "--model", f"hf:{ws['model']}", "--method", "kdf", "--probes",
         str(ws["kdf"]), "--out", str(out), "--batch", "2", "--quiet", "--json", *METHODS["kdf"][1]],
        capture_output=True, text=True, timeout=240, env={**env, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [len(_ids(out / f"shard-{k}-of-2")) for k in range(2)] == [4, 6]
    assert _files(out) == _files(ws["base"] / "kdf" / "whole")
    (summary,) = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert summary["out"] == str(out) and summary["items"] == 10  # rank 0 reports the merged run

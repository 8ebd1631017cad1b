"""`factprobe eval` and `factprobe model` on bad input (issue 35, items 6 and 8): a probe set with a
repeated item id, a device torch does not know, an API model without its environment, a results
folder that is not one, a result cache that is not one. Each is one line `error: ...` and exit 2,
no traceback, and (but for the cut-short GGUF file) before any model loads: the model named is a
hub name, which would be fetched from the network, so a check that came too late would fail with
another message."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from factprobe.cli.main import main
from factprobe.probes.evaluation.runner import plan_eval

NO_MODEL = "hf:nobody/no-such-model"  # passes the spec check; loading it would ask the hub


def kdf_item(k: int) -> dict:
    return {"id": f"kdf:F{k}", "kind": "kdf", "split": "test", "fact": f"F{k}", "relation": "P36",
            "subject_label": f"Country {k}", "object_label": "Paris", "language": "en",
            "question": f"What is the capital of Country {k}?", "options": ["Lima", "Oslo", "Paris", "Rome"],
            "answer": "C", "demonstrations": []}


def write_set(path: Path, items: list[dict], prefix: bytes = b"") -> Path:
    path.write_bytes(prefix + "".join(json.dumps(i) + "\n" for i in items).encode("utf-8"))
    return path


def cli(*args, env: dict | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def one_error(result, code: int = 2) -> str:
    """The single line the command printed, checked to be an error with `code` and no traceback."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, Exception), result.exception
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def eval_args(probes: Path, out: Path, *extra) -> list:
    return ["eval", "--model", NO_MODEL, "--method", "kdf", "--probes", probes, "--out", out, "--quiet", *extra]


def test_a_repeated_item_id_is_refused_by_line_before_the_model_loads(tmp_path):
    """6 items, 3 ids: evaluated straight through it used to give 6 records, after a resume 3."""
    probes = write_set(tmp_path / "dup.jsonl", [kdf_item(k % 3) for k in range(6)])
    line = one_error(cli(*eval_args(probes, tmp_path / "run")))
    assert line == (f"error: {probes}:4: item id 'kdf:F0' is also the id of line 1: a probe set's ids must be "
                    "unique (a resume skips the items done by id)")
    assert not (tmp_path / "run").exists()
    # a demonstration counts too: it is an item of the set
    demo = {**kdf_item(1), "split": "demo"}
    probes = write_set(tmp_path / "demo.jsonl", [kdf_item(0), kdf_item(1), demo])
    with pytest.raises(ValueError, match=r"demo.jsonl:3: item id 'kdf:F1' is also the id of line 2: "):
        plan_eval("kdf", probes, tmp_path / "run")


def test_a_bom_is_read_past_and_an_id_that_is_not_text_is_a_rejected_line(tmp_path):
    items = [kdf_item(0), {**kdf_item(1), "id": ""}, {**kdf_item(2), "id": 7}, {**kdf_item(3), "id": None}, kdf_item(4)]
    probes = write_set(tmp_path / "bom.jsonl", items, prefix=b"\xef\xbb\xbf")
    plan = plan_eval("kdf", probes, tmp_path / "run")
    assert [i["id"] for i in plan.test] == ["kdf:F0", "kdf:F4"]
    assert plan.rejected == [f"{probes}:2: not a probe item (its id \"\" is not a text)",
                             f"{probes}:3: not a probe item (its id 7 is not a text)",
                             f"{probes}:4: not a probe item (its id null is not a text)"]
    with open(probes, "rb") as stream:  # the run records the hash of the bytes, BOM included
        assert plan.config["probes_sha256"] == hashlib.file_digest(stream, "sha256").hexdigest()


@pytest.mark.parametrize("device", ["bogus", "meta", "cuda:x"])
def test_a_device_torch_cannot_run_a_model_on_is_one_line(tmp_path, device):
    probes = write_set(tmp_path / "p.jsonl", [kdf_item(0)])
    expected = f"error: device {device!r} is not one a model runs on: use auto, cpu, cuda, cuda:N, mps or xpu"
    assert one_error(cli(*eval_args(probes, tmp_path / "run", "--device", device))) == expected
    assert one_error(cli("model", "score", NO_MODEL, "--device", device, "--context", "a",
                         "--continuation", " b")) == expected


def test_an_api_model_without_its_environment_is_one_line(tmp_path):
    probes = write_set(tmp_path / "p.jsonl", [kdf_item(0)])
    bare = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}
    expected = ("error: model spec 'openai:gpt-4o-mini' needs OPENAI_BASE_URL (a compatible server) or "
                "OPENAI_API_KEY (the hosted API) in the environment")
    result = cli("eval", "--model", "openai:gpt-4o-mini", "--method", "kdf", "--probes", probes,
                 "--out", tmp_path / "run", env=bare)
    assert one_error(result) == expected and not (tmp_path / "run").exists()
    result = cli("model", "generate", "openai:gpt-4o-mini", "--prompt", "Hi", env=bare)
    assert one_error(result) == expected


def test_a_results_folder_that_is_not_one_is_named(tmp_path):
    """A run's folder (its run.json as eval writes it) whose other files are broken by hand; and
    an --out under a file (the command's --out guard, cli/outputs.py, may name that one first)."""
    probes = write_set(tmp_path / "p.jsonl", [kdf_item(0), kdf_item(1)])
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    with pytest.raises(ValueError) as refused:
        plan_eval("kdf", probes, a_file / "run")
    assert str(refused.value) == f"{a_file / 'run'} cannot be a results folder: {a_file} is a file"

    def run_folder(name: str) -> Path:
        out = tmp_path / name
        out.mkdir()
        config = plan_eval("kdf", probes, out).config
        (out / "run.json").write_text(json.dumps({"model": NO_MODEL, **config}, indent=1, sort_keys=True) + "\n")
        return out

    out = run_folder("dirs")
    (out / "items.jsonl").mkdir()
    assert one_error(cli(*eval_args(probes, out))) == \
        f"error: {out / 'items.jsonl'} is not a file: not a results folder eval wrote; use another --out"
    for name, text in (("garbage", b"garbage\n"), ("list", b"[1]\n"), ("badutf", b"\xff\n"),
                       ("noid", b'{"id": ["kdf:F0"]}\n')):
        out = run_folder(name)
        (out / "items.jsonl").write_bytes(text)
        assert one_error(cli(*eval_args(probes, out))) == (
            f"error: {out / 'items.jsonl'}:1: not a record eval wrote (a JSON object with a text id): use another "
            "--out, or --restart to start over")


@pytest.mark.parametrize("sidecar, why", [
    ("[1]", "not a probe-set sidecar factprobe wrote (not a JSON object)"),
    ('{"kind": "kdf"}', "not a probe-set sidecar factprobe wrote (no items, seed, params, source, sha256)"),
    (b"\xff", ":1: not UTF-8 (byte 0xff at column 1)"),
])
def test_a_sidecar_that_is_not_one_is_named(tmp_path, sidecar, why):
    probes = write_set(tmp_path / "p.jsonl", [kdf_item(0)])
    side = tmp_path / "p.meta.json"
    side.write_bytes(sidecar if isinstance(sidecar, bytes) else sidecar.encode())
    where = "" if why.startswith(":") else ": "
    assert one_error(cli(*eval_args(probes, tmp_path / "run"))) == f"error: {side}{where}{why}"


def test_a_probe_set_not_utf8_before_its_kind_is_named(tmp_path):
    probes = tmp_path / "p.jsonl"
    probes.write_bytes(b"\xff\xfe" + json.dumps(kdf_item(0)).encode() + b"\n")
    assert one_error(cli(*eval_args(probes, tmp_path / "run"))) == \
        f"error: {probes}: no sidecar and no item with a `kind` (line 1: not UTF-8 (byte 0xff at column 1)): is it a " \
        "factprobe probe set?"


def test_model_commands_name_a_bad_cache_and_an_empty_continuation_before_loading(tmp_path):
    not_cache = tmp_path / "notes.sqlite"
    not_cache.write_text("these are notes, not a database\n")
    result = cli("model", "score", NO_MODEL, "--context", "a", "--continuation", " b", "--cache", not_cache)
    assert one_error(result) == f"error: --cache {not_cache}: not a result cache (file is not a database)"
    assert not_cache.read_text() == "these are notes, not a database\n"
    result = cli("model", "score", NO_MODEL, "--context", "a", "--continuation", "")
    assert one_error(result) == "error: a continuation must not be empty: there is nothing to score"


def test_a_gguf_file_cut_short_is_one_line(tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(b"GGUF\x03\x00\x00\x00")  # the magic and a version, then nothing
    result = cli("model", "score", f"gguf:{cut}", "--device", "cpu", "--context", "a", "--continuation", " b",
                 env={"FACTPROBE_CACHE": str(tmp_path / "cache")})
    assert one_error(result).startswith(f"error: model spec 'gguf:{cut}': cannot load it: the file is cut short or "
                                        "not a model (")

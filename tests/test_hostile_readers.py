"""Issue 44, items A and I, for every reader of outside files but the ingest: a hostile value
(nesting 100,000 and 5,000 brackets deep, a CSV cell over csv's 131,072 characters, a lone
surrogate, bytes that are not UTF-8, an integer of 5,000 digits) inserted into real rows
(tests/data, tests/fixtures) is one line naming file:line (and the field where a cell), exit 2
or, where the reader rejects row by row, that row rejected and every good row imported as the
clean file imports it. Never a traceback."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import pytest

from cli_runner import run_cli
from test_assess import runs  # noqa: F401  (a fixture: a distractor and a baselines run, judgements)
from test_eval_input import kdf_item, write_set

HERE = Path(__file__).parent
P19 = HERE / "data" / "lama" / "trex" / "P19.jsonl"
PARAREL = HERE / "data" / "lama" / "pararel" / "P36.jsonl"
GOOGLE_RE = HERE / "data" / "lama" / "google_re" / "place_of_birth_test.jsonl"
MYRIADLAMA = HERE / "fixtures" / "probesets" / "myriadlama.jsonl"
TREX_MC_JSONL = HERE / "fixtures" / "probesets" / "trex_mc.jsonl"
TREX_MC_CSV = HERE / "fixtures" / "probesets" / "trex_mc.csv"

DEPTHS = (100_000, 5_000)


def deep(n: int) -> str:
    return "[" * n + "]" * n


def deep_row(n: int) -> bytes:
    return ('{"sub_label": ' + deep(n) + "}").encode()


def with_line(source: Path, folder: Path, line: bytes, at: int) -> Path:
    """A copy of `source` (same name: ParaRel reads its relation from it) with `line` as line `at`."""
    lines = source.read_bytes().splitlines(keepends=True)
    lines.insert(at - 1, line.rstrip(b"\n") + b"\n")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / source.name
    path.write_bytes(b"".join(lines))
    return path


def one_line(proc, code: int) -> str:
    """The one line on stderr, checked: the exit code, no traceback, nothing else."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    return lines[0]


def items_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def imported(fmt: str, source: Path, out: Path, *extra: str):
    proc = run_cli("probeset", "import", "--format", fmt, str(source), "--out", str(out), *extra)
    return proc, (items_of(out) if out.exists() else [])


def clean_import(fmt: str, source: Path, tmp_path: Path) -> list[dict]:
    proc, items = imported(fmt, source, tmp_path / "clean" / "out.jsonl")
    assert proc.returncode in (0, 3), proc.stderr
    assert items
    return items


def rejected_by(fmt: str, source: Path, tmp_path: Path) -> list[str]:
    """The lines the clean file's import rejects (some fixtures hold bad rows of their own)."""
    proc = run_cli("probeset", "import", "--format", fmt, str(source), "--out", str(tmp_path / "again.jsonl"))
    return proc.stderr.splitlines()


IMPORTS = [("lama-trex", P19), ("pararel", PARAREL), ("lama-google-re", GOOGLE_RE), ("myriadlama", MYRIADLAMA),
           ("trex-mc", TREX_MC_JSONL)]


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("fmt, source", IMPORTS, ids=[f for f, _ in IMPORTS])
def test_a_deep_row_costs_its_row_in_every_jsonl_import(tmp_path, fmt, source, depth):
    good, clean_rejects = clean_import(fmt, source, tmp_path), rejected_by(fmt, source, tmp_path)
    hostile = with_line(source, tmp_path / "hostile", deep_row(depth), 2)
    proc, items = imported(fmt, hostile, tmp_path / "out.jsonl")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    rejected = [line for line in proc.stderr.splitlines()]
    assert rejected[0] == f"rejected {hostile}:2: nested over 500 deep"
    assert len(rejected) == 1 + len(clean_rejects)  # the rows the clean file rejects still are, a line later
    assert items == good


@pytest.mark.parametrize("depth", DEPTHS)
def test_probeset_stats_names_a_deep_line(tmp_path, depth):
    hostile = with_line(P19, tmp_path, deep_row(depth), 3)
    assert one_line(run_cli("probeset", "stats", str(hostile)), 2) == f"error: {hostile}:3: nested over 500 deep"


@pytest.mark.parametrize("depth", DEPTHS)
def test_evals_probe_set_read_rejects_a_deep_line_and_keeps_the_rest(tmp_path, depth):
    from factprobe.probes.evaluation.runner import plan_eval

    probes = write_set(tmp_path / "p.jsonl", [kdf_item(0), kdf_item(1)])
    hostile = with_line(probes, tmp_path / "h", deep_row(depth), 2)
    plan = plan_eval("kdf", hostile, tmp_path / "run")
    assert plan.rejected == [f"{hostile}:2: nested over 500 deep"]
    assert [i["id"] for i in plan.test] == ["kdf:F0", "kdf:F1"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_export_rejects_a_deep_line_by_line_and_exports_the_rest(tmp_path, depth):
    probes = write_set(tmp_path / "p.jsonl", [kdf_item(0), kdf_item(1)])
    hostile = with_line(probes, tmp_path / "h", deep_row(depth), 2)
    proc = run_cli("export", "lm-eval", "--probes", str(hostile), "--method", "kdf", "--out", str(tmp_path / "task"))
    assert one_line(proc, 3) == f"rejected {hostile}:2: nested over 500 deep"
    assert proc.stdout.startswith("2 multiple_choice documents -> ")


def a_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"model": "hf:gpt2@main/float32", "method": "kdf", "options": {},
                                                 "probes": "p.jsonl", "seed": 0}))
    (folder / "aggregate.json").write_text(json.dumps({"method": "kdf", "items": 2, "accuracy": 0.5}))
    (folder / "items.jsonl").write_text(json.dumps({"id": "kdf:F0", "correct": True}) + "\n" +
                                        json.dumps({"id": "kdf:F1", "correct": False}) + "\n")
    return folder


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("name", ["items.jsonl", "run.json", "aggregate.json"])
def test_report_and_compare_name_a_deep_line_of_a_run_folder(tmp_path, depth, name):
    run, other = a_run(tmp_path / "run"), a_run(tmp_path / "other")
    if name == "items.jsonl":
        with_line(run / name, run, deep_row(depth), 2)
        want = f"error: {run / name}:2: nested over 500 deep"
    else:
        (run / name).write_text(deep(depth))
        want = f"error: {run / name}: nested over 500 deep"
    assert one_line(run_cli("report", str(run), "--out", str(tmp_path / "report")), 2) == want
    assert one_line(run_cli("compare", str(other), str(run)), 2) == want


@pytest.mark.parametrize("depth", DEPTHS)
def test_assess_names_a_deep_judgement_and_a_deep_probe_set_line(runs, tmp_path, depth):  # noqa: F811
    judgements = with_line(runs["judgements"], tmp_path / "j", deep_row(depth), 2)
    proc = run_cli("assess", str(runs["distractor"]), "--judgements", str(judgements), "--out", str(tmp_path / "a"))
    assert one_line(proc, 2) == f"error: {judgements}:2: nested over 500 deep"
    probes = write_set(tmp_path / "d.jsonl", [kdf_item(0)])
    hostile = with_line(probes, tmp_path / "p", deep_row(depth), 2)
    proc = run_cli("assess", str(runs["distractor"]), "--judgements", str(runs["judgements"]), "--probes",
                   str(hostile), "--out", str(tmp_path / "b"))
    assert one_line(proc, 2) == f"error: {hostile}:2: nested over 500 deep"


def test_a_multiple_choices_cell_5000_brackets_deep_costs_its_row(tmp_path):
    good = clean_import("trex-mc", TREX_MC_CSV, tmp_path)
    rows = list(csv.reader(TREX_MC_CSV.open(newline="")))
    rows.insert(2, ["P36", "Chile", "Santiago", deep(5_000)])
    hostile = tmp_path / "h" / "trex_mc.csv"
    hostile.parent.mkdir()
    with hostile.open("w", newline="") as stream:
        csv.writer(stream).writerows(rows)
    proc, items = imported("trex-mc", hostile, tmp_path / "out.jsonl")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[0] == f"rejected {hostile}:3: Multiple Choices: nested over 500 deep"
    assert items == good


# -- item I: a cell over csv's limit, a lone surrogate, bytes not UTF-8, a 5,000-digit integer ----------

LIMIT = 131_072
OVER = f"over {LIMIT:,} characters (csv's field_size_limit)"
HUGE = "1" * 5_000
TOO_LONG = "a number too long to read (Exceeds the limit (4300 digits) for integer string conversion)"


def write_rows(path: Path, rows: list[list[str]], delimiter: str = ",") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as stream:
        csv.writer(stream, delimiter=delimiter).writerows(rows)
    return path


def with_bytes(path: Path, text: str, raw: bytes) -> Path:
    """`path` with the first `text` in it replaced by the bytes `raw`."""
    data = path.read_bytes()
    assert text.encode() in data
    path.write_bytes(data.replace(text.encode(), raw, 1))
    return path


@pytest.mark.parametrize("cell", ["x" * (LIMIT + 1), deep(100_000)], ids=["long", "deep"])
def test_a_multiple_choices_cell_over_csvs_limit_costs_its_row_and_the_rows_after_it_are_read(tmp_path, cell):
    good = clean_import("trex-mc", TREX_MC_CSV, tmp_path)
    rows = list(csv.reader(TREX_MC_CSV.open(newline="")))
    rows.insert(2, ["P36", "Chile", "Santiago", cell])
    hostile = write_rows(tmp_path / "h" / "trex_mc.csv", rows)
    proc, items = imported("trex-mc", hostile, tmp_path / "out.jsonl")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[0] == f"rejected {hostile}:3: Multiple Choices: {OVER}"
    assert items == good


def test_a_quoted_cell_over_the_limit_across_lines_costs_only_its_record(tmp_path):
    good = clean_import("trex-mc", TREX_MC_CSV, tmp_path)
    rows = list(csv.reader(TREX_MC_CSV.open(newline="")))
    # the cell's lines after the first would read as records of their own if the reader resumed there
    rows.insert(2, ["P36", "x" * (LIMIT + 1) + "\nP36,Chile,Santiago,\"['Santiago']\"\n", "Santiago", "['Santiago']"])
    hostile = write_rows(tmp_path / "h" / "trex_mc.csv", rows)
    proc, items = imported("trex-mc", hostile, tmp_path / "out.jsonl")
    assert proc.stderr.splitlines()[0] == f"rejected {hostile}:3: Subject: {OVER}"
    assert items == good  # no Chile item made of the cell's second line
    assert f"rejected {hostile}:7: Multiple Choices: the Object 'Lima' is not among them" in proc.stderr.splitlines()


def test_a_taxonomy_cell_over_csvs_limit_costs_its_row(tmp_path):
    from test_distfact_import import HEADER, ROWS

    clean = write_rows(tmp_path / "clean" / "taxonomy_hichem.csv", [HEADER, *ROWS])
    args = ("--verbalization", "flawed")
    good = imported("distfact-taxonomy", clean, tmp_path / "clean.jsonl", *args)[1]
    bad = [*ROWS[0][:5], "The capital of France is " + "x" * (LIMIT + 1), *ROWS[0][6:]]
    hostile = write_rows(tmp_path / "h" / "taxonomy_hichem.csv", [HEADER, ROWS[0], bad, *ROWS[1:]])
    proc, items = imported("distfact-taxonomy", hostile, tmp_path / "out.jsonl", *args)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert f"rejected {hostile}:3: verbalization: {OVER}" in proc.stderr.splitlines()
    assert items == good


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sample") / "sample.sqlite"
    run_cli("ingest", "wikidata", HERE.parent / "kg" / "data" / "sample_wikidata.json", "--store", path, "--quiet",
            check=True)
    return path


@pytest.mark.parametrize("delimiter, suffix", [(",", "csv"), ("\t", "tsv")])
def test_a_fact_list_cell_over_csvs_limit_stops_the_build_naming_line_and_column(store, tmp_path, delimiter, suffix):
    listed = write_rows(tmp_path / f"facts.{suffix}", [["subject", "relation", "object"], ["Q142", "P36", "Q90"],
                                                        ["Q183", "P36", "Q" + "6" * (LIMIT + 1)], ["Q38", "P36", "Q220"]],
                        delimiter)
    proc = run_cli("probeset", "build", "--kind", "cloze", "--store", store, "--out", tmp_path / "p.jsonl",
                   "--facts", listed, "--quiet")
    assert one_line(proc, 2) == f"error: {listed}:3: object: {OVER}"
    assert not (tmp_path / "p.jsonl").exists()


def judge(runs, judgements: Path, tmp_path: Path):
    return run_cli("assess", str(runs["distractor"]), "--judgements", str(judgements), "--out", str(tmp_path / "a"))


def test_a_judgement_cell_over_csvs_limit_is_one_line(runs, tmp_path):  # noqa: F811
    path = write_rows(tmp_path / "human.csv", [["fact", "knows"], ["F0", "1"], ["F" * (LIMIT + 1), "0"]])
    assert one_line(judge(runs, path, tmp_path), 2) == f"error: {path}:3: fact: {OVER}"


def test_a_lone_surrogate_in_a_pararel_row_costs_its_row(tmp_path):
    good = clean_import("pararel", PARAREL, tmp_path)
    hostile = with_line(PARAREL, tmp_path / "h", b'{"sub_label": "Cook \\ud800 County", "obj_label": "Chicago"}', 3)
    proc, items = imported("pararel", hostile, tmp_path / "out.jsonl")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[0] == (f"rejected {hostile}:3: a string holds a lone surrogate (an \\ud800-\\udfff "
                                           "escape outside a pair): not text")
    assert items == good


@pytest.mark.parametrize("fmt, source", IMPORTS, ids=[f for f, _ in IMPORTS])
def test_bytes_not_utf8_and_a_5000_digit_integer_cost_their_rows_only(tmp_path, fmt, source):
    good, clean = clean_import(fmt, source, tmp_path), rejected_by(fmt, source, tmp_path)
    hostile = with_line(source, tmp_path / "h", b'{"sub_label": "Cook \xff\xfe County"}', 2)
    with_line(hostile, hostile.parent, ('{"uuid": ' + HUGE + "}").encode(), 4)
    proc, items = imported(fmt, hostile, tmp_path / "out.jsonl")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    rejected = proc.stderr.splitlines()
    assert rejected[0] == f"rejected {hostile}:2: not UTF-8 (byte 0xff at column 21)"
    assert f"rejected {hostile}:4: {TOO_LONG}" in rejected and len(rejected) == 2 + len(clean)
    assert items == good  # the lines after the bad bytes are read


def test_bytes_not_utf8_in_a_csv_row_cost_their_row(tmp_path):
    good = clean_import("trex-mc", TREX_MC_CSV, tmp_path)
    rows = list(csv.reader(TREX_MC_CSV.open(newline="")))
    rows.insert(2, ["P36", "Ch@@le", "Santiago", "['Santiago']"])
    hostile = with_bytes(write_rows(tmp_path / "h" / "trex_mc.csv", rows), "@@", b"\xc3\x28")
    proc, items = imported("trex-mc", hostile, tmp_path / "out.jsonl")
    assert proc.stderr.splitlines()[0] == f"rejected {hostile}:3: Subject: not UTF-8 (byte 0xc3)"
    assert items == good


@pytest.mark.parametrize("name, text, message", [
    ("human.jsonl", b'{"fact": "F0", "knows": 1}\n{"fact": "F1", "knows": \xff}\n',
     ":2: not UTF-8 (byte 0xff at column 25)"),
    ("human.jsonl", b'{"fact": "F0", "knows": 1}\n{"fact": "F1", "knows": ' + HUGE.encode() + b"}\n", f":2: {TOO_LONG}"),
    ("human.jsonl", b'{"fact": "F0", "knows": NaN}\n', ":1: not JSON (NaN is not a JSON number)"),
    ("human.csv", b"fact,knows\nF0,1\nF\xff,0\n", ":3: fact: not UTF-8 (byte 0xff)"),
    ("human.json", b'[[["Q142", "P36", "Q90"], ' + HUGE.encode() + b"]]", f": {TOO_LONG}"),
    ("human.json", b'[[["Q142", "P36", "Q90"], 1.0],\n [["Q183", "P36", "Q64"], \xff]]', ":2: not UTF-8 (byte 0xff at column 27)"),
])
def test_a_judgement_file_with_a_hostile_value_is_one_line(runs, tmp_path, name, text, message):  # noqa: F811
    path = tmp_path / name
    path.write_bytes(text)
    assert one_line(judge(runs, path, tmp_path), 2) == f"error: {path}{message}"


# -- run.json and aggregate.json of the wrong shape -----------------------------------------------------------

RUN = {"model": "hf:gpt2@main/float32", "method": "kdf", "options": {}, "probes": "p.jsonl", "seed": 0,
       "probes_sha256": None, "limit": None, "kind": "kdf"}
INTERVAL = {"value": 0.5, "se": 0.35, "low": 0.09, "high": 0.91, "n": 2, "method": "wilson", "few": True}
AGGREGATE = {"method": "kdf", "items": 2, "accuracy": 0.5, "scored": 2, "accuracy_interval": INTERVAL,
             "by_relation": {"P36": {"accuracy": 0.5, "correct": 1, "total": 2, "interval": INTERVAL}}}
WRONG = {  # (file, the field set so, the line's end)
    "n ten": ("aggregate.json", {"accuracy_interval": {**INTERVAL, "n": "ten"}},
              "accuracy_interval.n: a text ('ten'), not a count (a whole number, 0 or more)"),
    "accuracy a list": ("aggregate.json", {"accuracy": []}, "accuracy: a list, not a number"),
    "items ten": ("aggregate.json", {"items": "ten"}, "items: a text ('ten'), not a count (a whole number, 0 or more)"),
    "no items": ("aggregate.json", {"items": None}, "items: missing (every run folder eval writes has it)"),
    "by_relation a list": ("aggregate.json", {"by_relation": []}, "by_relation: a list, not an object (entries by name)"),
    "an entry a list": ("aggregate.json", {"by_relation": {"P36": [1]}},
                        "by_relation.P36: a list, not an object (an entry)"),
    "a bin's count": ("aggregate.json", {"reliability": [{"confidence": 0.5, "accuracy": 1.0, "count": -1}]},
                      "reliability[0].count: a number (-1), not a count (a whole number, 0 or more)"),
    "model 5": ("run.json", {"model": 5}, "model: a number (5), not a text"),
    "no model": ("run.json", {"model": None}, "model: missing (every run folder eval writes has it)"),
    "options a list": ("run.json", {"options": ["n=3"]}, "options: a list, not an object"),
    "seed a text": ("run.json", {"seed": "0"}, "seed: a text ('0'), not a whole number"),
    "sha256 a number": ("run.json", {"probes_sha256": 5}, "probes_sha256: a number (5), not a text"),
}


def run_folder(folder: Path, run: dict, aggregate: dict) -> Path:
    folder.mkdir(parents=True)
    for name, value in (("run.json", run), ("aggregate.json", aggregate)):
        (folder / name).write_text(json.dumps({k: v for k, v in value.items() if v is not None}))
    (folder / "items.jsonl").write_text(json.dumps({"id": "kdf:F0", "correct": True, "relation": "P36"}) + "\n" +
                                        json.dumps({"id": "kdf:F1", "correct": False, "relation": "P36"}) + "\n")
    return folder


@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_wrongly_typed_run_file_field_is_one_line_in_report_compare_and_assess(runs, tmp_path, case):  # noqa: F811
    name, change, why = WRONG[case]
    good = run_folder(tmp_path / "good", RUN, AGGREGATE)
    bad = run_folder(tmp_path / "bad", {**RUN, **change} if name == "run.json" else RUN,
                     {**AGGREGATE, **change} if name == "aggregate.json" else AGGREGATE)
    want = f"error: {bad / name}: {why}"
    assert one_line(run_cli("report", str(good), str(bad), "--out", str(tmp_path / "report")), 2) == want
    assert not (tmp_path / "report").exists()
    assert one_line(run_cli("compare", str(good), str(bad)), 2) == want
    proc = run_cli("assess", str(runs["distractor"]), str(bad), "--judgements", str(runs["judgements"]),
                   "--out", str(tmp_path / "assess"))
    assert one_line(proc, 2) == want


@pytest.mark.parametrize("case", sorted(k for k, (name, _, _) in WRONG.items() if name == "run.json"))
def test_a_wrongly_typed_shard_run_json_is_one_line_in_merge(tmp_path, case):
    _, change, why = WRONG[case]
    shard = {"index": 0, "count": 1, "batch": 8, "items": 2}
    bad = run_folder(tmp_path / "shard-0-of-1", {**RUN, **change, "shard": shard}, AGGREGATE)
    proc = run_cli("merge", str(bad), "--out", str(tmp_path / "merged"))
    assert one_line(proc, 2) == f"error: {bad / 'run.json'}: {why}"


def test_the_checked_fields_pass_every_run_folder_eval_writes():
    """The checker against run folders real evals wrote (the sample job's), so it refuses no
    honest folder."""
    import tarfile

    from factprobe.probes.evaluation.run_files import check_aggregate_json, check_run_json

    checked = 0
    with tarfile.open(HERE / "fixtures" / "sample_job.tar.xz") as tar:
        for member in tar.getmembers():
            name = Path(member.name).name
            if member.isfile() and name in ("run.json", "aggregate.json"):
                value = json.load(tar.extractfile(member))
                (check_run_json if name == "run.json" else check_aggregate_json)(value, member.name)
                checked += 1
    assert checked >= 2


@pytest.mark.parametrize("depth", DEPTHS)
def test_an_eval_folder_whose_run_json_is_deep_is_one_line_before_the_model_loads(tmp_path, depth):
    from test_eval_input import eval_args

    probes = write_set(tmp_path / "p.jsonl", [kdf_item(0)])
    out = a_run(tmp_path / "run")
    (out / "run.json").write_text(deep(depth))
    proc = run_cli(*eval_args(probes, out))
    # not a run factprobe wrote (it used to be a RecursionError out of the folder's claim)
    assert one_line(proc, 2) == (f"error: {out} holds files that are not a factprobe eval run (it has no run.json) "
                                 "(aggregate.json, items.jsonl, run.json): pass --overwrite to replace it, or another "
                                 "--out")


def test_jsonl_lines_names_every_hostile_line_and_reads_on(tmp_path):
    from factprobe.kg.jsonl import jsonl_lines

    path = tmp_path / "h.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n' + deep(100_000).encode() + b"\n" + deep(5_000).encode() + b"\n"
                     + b'{"a": ' + HUGE.encode() + b'}\n{"a": "\\ud800"}\n{"a": NaN}\n{"a": 2}\n')
    assert [(line.number, line.value, line.error) for line in jsonl_lines(path, finite=True)] == [
        (1, {"a": 1}, None), (2, None, "not UTF-8 (byte 0xff at column 8)"), (3, None, "nested over 500 deep"),
        (4, None, "nested over 500 deep"), (5, None, TOO_LONG),
        (6, None, "a string holds a lone surrogate (an \\ud800-\\udfff escape outside a pair): not text"),
        (7, None, "not JSON (NaN is not a JSON number)"), (8, {"a": 2}, None)]
    unless_finite = [line.value for line in jsonl_lines(path)][6:]  # NaN: what factprobe's own records may hold
    assert math.isnan(unless_finite[0]["a"]) and unless_finite[1] == {"a": 2}

"""Issue 44, acceptance 6, for the readers of outside files but the ingest: generated hostile
values (nesting past 500, up to 100,000 deep; a CSV cell over csv's 131,072 characters; a lone
surrogate escape; bytes that are not UTF-8; integers of over 4,300 digits; NaN and Infinity)
put into a copy of a real row (tests/data, tests/fixtures) and added to the real rows, fed to
`probeset import` (every row format of probes/formats/importers.py), `probeset build --facts` (JSONL,
CSV, TSV), `assess --judgements` (JSONL, CSV) and run folders (`compare`). Each time: the
exit code of the reader's policy (3 with only that row rejected where it rejects row by row,
else 2), exactly one line on stderr naming the file and line (and the field where a cell), no
traceback, and every good row imported as the clean file imports it."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_runner import run_cli
from test_assess import runs  # noqa: F401  (a fixture: a distractor run the judgements are read for)
from test_hostile_readers import GOOGLE_RE, MYRIADLAMA, P19, PARAREL, TREX_MC_CSV, TREX_MC_JSONL, rejected_by

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                           HealthCheck.too_slow])
LIMIT = 131_072
BAD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xa0\xa1", b"\xe2\x28\xa1", b"\xf0\x28\x8c\xbc", b"\xed\xa0\x80",
             b"\xc0\xaf", b"\x80"]
WORD = st.text(alphabet="abcdefghij XYZ", max_size=8)


@st.composite
def hostile_json(draw) -> tuple[bytes, str]:
    """(a JSON value's bytes that no reader may take, the start of the reason it is refused)."""
    kind = draw(st.sampled_from(["depth", "surrogate", "bytes", "digits", "constant"]))
    if kind == "depth":
        n = draw(st.one_of(st.integers(501, 2_000), st.sampled_from([5_000, 100_000])))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"k": ', "}")]))
        return (opener * n + "1" + closer * n).encode(), "nested over 500 deep"
    if kind == "surrogate":
        escape = f"\\u{draw(st.integers(0xD800, 0xDFFF)):04x}"
        return f'"{draw(WORD)}{escape}{draw(WORD)}"'.encode(), "a string holds a lone surrogate"
    if kind == "bytes":
        return b'"' + draw(WORD).encode() + draw(st.sampled_from(BAD_BYTES)) + draw(WORD).encode() + b'"', \
            "not UTF-8 (byte 0x"
    if kind == "digits":
        digits = draw(st.integers(4_301, 9_000))
        return (draw(st.sampled_from(["", "-"])) + "9" * digits).encode(), "a number too long to read (Exceeds the limit"
    return draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])).encode(), "not JSON ("


def hostile_row(row: dict, key: str, value: bytes) -> bytes:
    """The row as one JSON line with `value`'s bytes as its `key`."""
    marker = "\x00hostile\x00"
    return json.dumps({**row, key: marker}).encode().replace(json.dumps(marker).encode(), value) + b"\n"


def clean_lines(fmt: str, source: Path, folder: Path, keep: int = 12) -> list[bytes]:
    """The source's rows the import takes (some fixtures hold bad rows of their own), at most `keep`."""
    prefix = f"rejected {source}:"
    bad = {int(line[len(prefix):].split(":", 1)[0]) for line in rejected_by(fmt, source, folder)
           if line.startswith(prefix)}
    lines = source.read_bytes().splitlines(keepends=True)
    return [line for k, line in enumerate(lines, start=1) if k not in bad and line.strip()][:keep]


def one_line(proc, code: int, notes: tuple[str, ...] = ()) -> str:
    """The one line on stderr besides the `notes` the clean file's run prints too (Google-RE's)."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 + len(notes) and lines[1:] == list(notes), proc.stderr[-3000:]
    return lines[0]


def items_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


IMPORTS = {"lama-trex": P19, "pararel": PARAREL, "lama-google-re": GOOGLE_RE, "myriadlama": MYRIADLAMA,
           "trex-mc": TREX_MC_JSONL}
BASES: dict[str, tuple[list[bytes], list[dict], tuple[str, ...]]] = {}  # format -> (lines, items, notes)


def base(fmt: str) -> tuple[list[bytes], list[dict], tuple[str, ...]]:
    """A clean file of the format's real rows, and what its import makes; once per format."""
    if fmt not in BASES:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            lines = clean_lines(fmt, IMPORTS[fmt], folder)
            path = folder / IMPORTS[fmt].name
            path.write_bytes(b"".join(lines))
            proc = run_cli("probeset", "import", "--format", fmt, str(path), "--out", str(folder / "out.jsonl"))
            assert proc.returncode == 0, proc.stderr
            BASES[fmt] = lines, items_of(folder / "out.jsonl"), tuple(proc.stderr.splitlines())
    return BASES[fmt]


@SETTINGS
@given(fmt=st.sampled_from(sorted(IMPORTS)), value=hostile_json(), data=st.data())
def test_every_jsonl_import_rejects_only_the_hostile_row(fmt, value, data):
    lines, good, notes = base(fmt)
    raw, reason = value
    row = json.loads(lines[data.draw(st.integers(0, len(lines) - 1))])
    key = data.draw(st.sampled_from(sorted(row)))
    at = data.draw(st.integers(0, len(lines)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / IMPORTS[fmt].name  # ParaRel reads its relation from the name
        path.write_bytes(b"".join([*lines[:at], hostile_row(row, key, raw), *lines[at:]]))
        proc = run_cli("probeset", "import", "--format", fmt, str(path), "--out", str(Path(tmp) / "out.jsonl"))
        assert one_line(proc, 3, notes).startswith(f"rejected {path}:{at + 1}: {reason}")
        assert items_of(Path(tmp) / "out.jsonl") == good


def csv_bytes(rows: list[list[str]], delimiter: str = ",") -> bytes:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


@st.composite
def hostile_cell(draw) -> tuple[str, bytes | None, str]:
    """(the cell's text, bytes to put in it after it is written or None, the reason's start)."""
    if draw(st.booleans()):
        return "x" * draw(st.integers(LIMIT + 1, LIMIT + 5_000)), None, f"over {LIMIT:,} characters"
    bad = draw(st.sampled_from(BAD_BYTES))
    return "@@" + draw(WORD), bad, f"not UTF-8 (byte 0x{bad[0]:02x})"


def put_bytes(data: bytes, bad: bytes | None) -> bytes:
    return data if bad is None else data.replace(b"@@", bad, 1)


TREX_MC_ROWS = list(csv.reader(TREX_MC_CSV.open(newline="")))[:3]  # the header, France and Japan: both import


@SETTINGS
@given(cell=hostile_cell(), data=st.data())
def test_the_csv_import_rejects_only_the_row_of_a_hostile_cell(cell, data):
    text, bad, reason = cell
    header, *rows = TREX_MC_ROWS
    column = data.draw(st.integers(0, len(header) - 1))
    row = list(data.draw(st.sampled_from(rows)))
    row[column] = text
    at = data.draw(st.integers(0, len(rows)))
    with tempfile.TemporaryDirectory() as tmp:
        clean, path = Path(tmp) / "clean.csv", Path(tmp) / "trex_mc.csv"
        clean.write_bytes(csv_bytes([header, *rows]))
        path.write_bytes(put_bytes(csv_bytes([header, *rows[:at], row, *rows[at:]]), bad))
        assert run_cli("probeset", "import", "--format", "trex-mc", str(clean), "--out",
                       str(Path(tmp) / "clean.jsonl")).returncode == 0
        proc = run_cli("probeset", "import", "--format", "trex-mc", str(path), "--out", str(Path(tmp) / "out.jsonl"))
        assert one_line(proc, 3).startswith(f"rejected {path}:{at + 2}: {header[column]}: {reason}")
        assert items_of(Path(tmp) / "out.jsonl") == items_of(Path(tmp) / "clean.jsonl")


# -- fact lists, judgements, run folders: one line, exit 2 ------------------------------------------------------

HUMAN_SCORES = Path(__file__).parent / "fixtures" / "distfact" / "human_scores.json"  # DistFact's published rows
TRIPLES = [triple for triple, _ in json.loads(HUMAN_SCORES.read_text())]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sample") / "sample.sqlite"
    run_cli("ingest", "wikidata", Path(__file__).parents[1] / "kg" / "data" / "sample_wikidata.json", "--store",
            path, "--quiet", check=True)
    return path


def build(store: Path, listed: Path, out: Path):
    return run_cli("probeset", "build", "--kind", "cloze", "--store", str(store), "--out", str(out), "--facts",
                   str(listed), "--quiet")


@settings(SETTINGS, max_examples=20)
@given(value=hostile_json(), data=st.data())
def test_a_jsonl_fact_list_with_a_hostile_row_stops_the_build_naming_its_line(store, value, data):
    raw, reason = value
    rows = [dict(zip(("subject", "relation", "object"), t)) for t in TRIPLES]
    key = data.draw(st.sampled_from(["subject", "relation", "object"]))
    at = data.draw(st.integers(0, len(rows)))
    lines = [json.dumps(r).encode() + b"\n" for r in rows]
    hostile = hostile_row(rows[data.draw(st.integers(0, len(rows) - 1))], key, raw)
    with tempfile.TemporaryDirectory() as tmp:
        listed = Path(tmp) / "facts.jsonl"
        listed.write_bytes(b"".join([*lines[:at], hostile, *lines[at:]]))
        line = one_line(build(store, listed, Path(tmp) / "p.jsonl"), 2)
        reason = "not UTF-8 text" if reason.startswith("not UTF-8") else reason  # the list is read whole, as text
        assert line.startswith(f"error: {listed}:{at + 1}: {reason}"), line
        assert not (Path(tmp) / "p.jsonl").exists()


@settings(SETTINGS, max_examples=20)
@given(cell=hostile_cell(), delimiter=st.sampled_from([",", "\t"]), data=st.data())
def test_a_csv_or_tsv_fact_list_with_a_hostile_cell_stops_the_build_naming_line_and_column(store, cell, delimiter,
                                                                                            data):
    text, bad, reason = cell
    header = ["subject", "relation", "object"]
    column = data.draw(st.integers(0, 2))
    row = list(data.draw(st.sampled_from(TRIPLES)))
    row[column] = text
    at = data.draw(st.integers(0, len(TRIPLES)))
    with tempfile.TemporaryDirectory() as tmp:
        listed = Path(tmp) / ("facts.csv" if delimiter == "," else "facts.tsv")
        listed.write_bytes(put_bytes(csv_bytes([header, *TRIPLES[:at], row, *TRIPLES[at:]], delimiter), bad))
        line = one_line(build(store, listed, Path(tmp) / "p.jsonl"), 2)
        want = f"error: {listed}:{at + 2}: " + ("not UTF-8 text" if bad else f"{header[column]}: {reason}")
        assert line.startswith(want), line


FACTS = [f"Q{k}$fact" for k in range(6)]


def assess(runs: dict, judgements: Path, tmp: Path):
    return run_cli("assess", str(runs["distractor"]), "--judgements", str(judgements), "--out", str(tmp / "out"))


@settings(SETTINGS, max_examples=20)
@given(value=hostile_json(), data=st.data())
def test_judgements_with_a_hostile_row_are_one_line_naming_it(runs, value, data):  # noqa: F811
    raw, reason = value
    rows = [{"fact": f, "knows": k / 5} for k, f in enumerate(FACTS)]
    at = data.draw(st.integers(0, len(rows)))
    hostile = hostile_row(rows[0], data.draw(st.sampled_from(["fact", "knows"])), raw)
    lines = [json.dumps(r).encode() + b"\n" for r in rows]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "human.jsonl"
        path.write_bytes(b"".join([*lines[:at], hostile, *lines[at:]]))
        assert one_line(assess(runs, path, Path(tmp)), 2).startswith(f"error: {path}:{at + 1}: {reason}")


@settings(SETTINGS, max_examples=20)
@given(cell=hostile_cell(), data=st.data())
def test_judgements_as_csv_with_a_hostile_cell_are_one_line_naming_line_and_field(runs, cell, data):  # noqa: F811
    text, bad, reason = cell
    rows = [[f, str(k / 5)] for k, f in enumerate(FACTS)]
    at = data.draw(st.integers(0, len(rows)))
    column = data.draw(st.integers(0, 1))
    row = list(rows[0])
    row[column] = text
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "human.csv"
        path.write_bytes(put_bytes(csv_bytes([["fact", "knows"], *rows[:at], row, *rows[at:]]), bad))
        line = one_line(assess(runs, path, Path(tmp)), 2)
        assert line.startswith(f"error: {path}:{at + 2}: {['fact', 'knows'][column]}: {reason}"), line


RECORDS = [{"id": f"kdf:F{k}", "correct": k % 2 == 0, "relation": "P36", "fact": f"F{k}"} for k in range(4)]
RUN = {"model": "hf:gpt2@main/float32", "method": "kdf", "options": {}, "probes": "p.jsonl", "seed": 0}
AGGREGATE = {"method": "kdf", "items": 4, "accuracy": 0.5, "scored": 4}


def run_folder(folder: Path, records: bytes, run: bytes, aggregate: bytes) -> Path:
    folder.mkdir()
    (folder / "items.jsonl").write_bytes(records)
    (folder / "run.json").write_bytes(run)
    (folder / "aggregate.json").write_bytes(aggregate)
    return folder


# NaN and Infinity are left out: factprobe writes them itself (a mean of nothing, a log-probability of -inf)
FOLDER_VALUES = hostile_json().filter(lambda v: not v[1].startswith("not JSON"))


@settings(SETTINGS, max_examples=25)
@given(value=FOLDER_VALUES, name=st.sampled_from(["items.jsonl", "run.json", "aggregate.json"]), data=st.data())
def test_a_run_folder_with_a_hostile_value_is_one_line_naming_the_file(value, name, data):
    raw, reason = value
    lines = [json.dumps(r).encode() + b"\n" for r in RECORDS]
    files = {"items.jsonl": b"".join(lines), "run.json": json.dumps(RUN).encode(),
             "aggregate.json": json.dumps(AGGREGATE).encode()}
    at = data.draw(st.integers(0, len(lines)))
    if name == "items.jsonl":
        record = RECORDS[data.draw(st.integers(0, len(RECORDS) - 1))]
        files[name] = b"".join([*lines[:at], hostile_row(record, data.draw(st.sampled_from(sorted(record))), raw),
                                *lines[at:]])
    else:
        held = RUN if name == "run.json" else AGGREGATE
        files[name] = hostile_row(held, data.draw(st.sampled_from(sorted(held))), raw)
    with tempfile.TemporaryDirectory() as tmp:
        good = run_folder(Path(tmp) / "good", b"".join(lines), json.dumps(RUN).encode(), json.dumps(AGGREGATE).encode())
        bad = run_folder(Path(tmp) / "bad", files["items.jsonl"], files["run.json"], files["aggregate.json"])
        line = one_line(run_cli("compare", str(good), str(bad)), 2)
        where = f"{bad / name}:{at + 1}: " if name == "items.jsonl" else f"{bad / name}"
        assert line.startswith(f"error: {where}") and reason in line, line


PYTHONISH = st.text(alphabet="[](){}'\",-+~1e .:\\nifelsotambdx", max_size=3_000)


@SETTINGS
@given(inner=st.one_of(PYTHONISH, st.integers(100, 60_000).map(lambda n: "(" * n + ")" * n),
                       st.integers(2, 20_000).map(lambda n: "1if 1 else " * n + "1"),
                       st.integers(100, 120_000).map(lambda n: "-" * n + "1")),
       at=st.integers(0, 2))
def test_a_hostile_multiple_choices_cell_costs_its_row_in_one_line(inner, at):
    """The cell is parsed as JSON, else as Python's repr (the published CSV's), never run: no
    text makes a traceback, a warning on stderr or a crash; the row is rejected by its field."""
    header, *rows = TREX_MC_ROWS
    row = ["P36", "Chile", "Santiago", f"[{inner}]"]
    with tempfile.TemporaryDirectory() as tmp:
        clean, path = Path(tmp) / "clean.csv", Path(tmp) / "trex_mc.csv"
        clean.write_bytes(csv_bytes([header, *rows]))
        path.write_bytes(csv_bytes([header, *rows[:at], row, *rows[at:]]))
        assert run_cli("probeset", "import", "--format", "trex-mc", str(clean), "--out",
                       str(Path(tmp) / "clean.jsonl")).returncode == 0
        proc = run_cli("probeset", "import", "--format", "trex-mc", str(path), "--out", str(Path(tmp) / "out.jsonl"))
        assert one_line(proc, 3).startswith(f"rejected {path}:{at + 2}: Multiple Choices: ")
        assert items_of(Path(tmp) / "out.jsonl") == items_of(Path(tmp) / "clean.jsonl")


DOCS = [{"q": "Capital of France?", "options": ["Lyon", "Paris"], "label": 1},
        {"q": "Capital of Peru?", "options": ["Lima", "Cusco"], "label": 0}]
TASK_YAML = """task: t
dataset_path: json
dataset_kwargs:
  data_files:
    test: d.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "{{q}}"
doc_to_choice: "{{options}}"
doc_to_target: label
"""


@SETTINGS
@given(value=hostile_json(), at=st.integers(0, 2), key=st.sampled_from(["q", "options", "label"]))
def test_an_lm_eval_tasks_documents_lose_only_the_hostile_one(value, at, key):
    """--format lm-eval: the task's JSONL documents are rows too (probes/formats/import_lm_eval.py)."""
    raw, reason = value
    lines = [json.dumps(d).encode() + b"\n" for d in DOCS]
    with tempfile.TemporaryDirectory() as tmp:
        made = {}
        for name, docs in (("clean", lines), ("hostile", [*lines[:at], hostile_row(DOCS[0], key, raw), *lines[at:]])):
            task = Path(tmp) / name / "task"
            task.mkdir(parents=True)
            (task / "t.yaml").write_text(TASK_YAML)
            (task / "d.jsonl").write_bytes(b"".join(docs))
            made[name] = run_cli("probeset", "import", "--format", "lm-eval", str(task / "t.yaml"), "--out",
                                 str(Path(tmp) / name / "out.jsonl"))
        assert made["clean"].returncode == 0, made["clean"].stderr
        path = Path(tmp) / "hostile" / "task" / "d.jsonl"
        assert one_line(made["hostile"], 3).startswith(f"rejected {path}:{at + 1}: {reason}")
        clean, hostile = (items_of(Path(tmp) / name / "out.jsonl") for name in ("clean", "hostile"))
        numbered = ("id", "fact", "source_doc")  # a document is numbered by its place, as harness's doc_id is

        def content(items):
            return [{k: v for k, v in i.items() if k not in numbered} for i in items]
        assert content(hostile) == content(clean)

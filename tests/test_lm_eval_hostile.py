"""`probeset import --format lm-eval` on task folders written to attack it (issue 35 item 1): template
injection, `!function` in every field, includes leading out of the folder, to themselves or round,
alias bombs, unknown tags, symlinks and a FIFO, hub paths, fields of the wrong type, documents
missing fields, malformed YAML. Whatever the folder holds: no code runs (each payload would create
a marker file), nothing outside the folder is opened and no code of the folder is executed (an
audit hook records opens and executions while the command runs), and the command ends with one
line and exit 2 (refused) or 3 (documents skipped), never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from factprobe.cli.main import main
from factprobe.probes.formats.export_lm_eval import export_lm_eval

_RECORDED: list[tuple[str, str]] | None = None  # (event, path) while a command runs


def _audit(event: str, args: tuple) -> None:
    if _RECORDED is None:
        return
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _RECORDED.append((event, os.path.realpath(os.fsdecode(args[0]))))
    elif event == "exec" and hasattr(args[0], "co_filename"):
        _RECORDED.append((event, args[0].co_filename))
    elif event in ("os.system", "subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork"):
        _RECORDED.append((event, repr(args)))


sys.addaudithook(_audit)  # audit hooks stay for the process: it records only while _RECORDED is set


def run_import(base: Path, out: str = "x.jsonl") -> tuple[int, str, list[tuple[str, str]]]:
    """(exit code, output, what was opened or run) of importing base/task/t.yaml into base/out."""
    global _RECORDED
    _RECORDED = []
    try:
        result = CliRunner().invoke(main, ["probeset", "import", "--format", "lm-eval", str(base / "task" / "t.yaml"),
                                           "--out", str(base / "out" / out)])
    finally:
        recorded, _RECORDED = _RECORDED, None
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output, recorded


# -- a task folder, and what an attacker puts into it ------------------------------------------------

DOCS = [{"q": "Capital of France?", "options": ["Lyon", "Paris"], "label": 1},
        {"q": "Capital of Peru?", "options": ["Lima", "Cusco"], "label": 0}]
FIELDS = {"task": "t", "dataset_path": "json", "data_files": "d.jsonl", "test_split": "test",
          "output_type": "multiple_choice", "doc_to_text": '"{{q}}"', "doc_to_choice": '"{{options}}"',
          "doc_to_target": "label", "description": '""'}
MARK = "open('{marker}', 'w').write('ran')"
TEMPLATES = [
    "{{{{ cycler.__init__.__globals__.os.popen('touch {marker}').read() }}}}",
    "{{{{ self.__init__.__globals__.__builtins__.open('{marker}', 'w') }}}}",
    "{{{{ ''.__class__.__mro__[1].__subclasses__() }}}}",
    "{{{{ joiner.__init__.__globals__['os'].system('touch {marker}') }}}}",
    "{{{{ namespace.__init__.__globals__ }}}}",
    "{{{{ (q|attr('__class__')).__base__.__subclasses__() }}}}",
    "{{{{ '{{0.__class__.__init__.__globals__}}'.format(cycler) }}}}",
    "{{% include '{outside}/canary.txt' %}}", "{{% import '{outside}/canary.txt' as x %}}",
    "{{% extends 'canary.txt' %}}", "{{{{ lipsum.__globals__ }}}}", "{{{{ 'a' * 10**10 }}}}", "{{{{ 9 ** 999999 }}}}",
    "{{% macro f(s) %}}{{{{ f(s ~ s) }}}}{{% endmacro %}}{{{{ f('ab') }}}}", "{{{{ '%999999999d' % 1 }}}}",
    "{{{{ range(100000)|map('center', 1000000)|join }}}}", "{{{{ q", "{{% for %}}", "{{{{ undefined_field }}}}",
]
SPECS = ["utils.run", "utils.DATA", "{outside}/mod.DATA", "os.system", "mod.DATA", "../outside/mod.DATA"]
INCLUDES = ["{outside}/canary.yaml", "../outside/canary.yaml", "t.yaml", "a.yaml", "link.yaml", "[b.yaml, t.yaml]"]
DATA = ["../outside/data.jsonl", "{outside}/data.jsonl", "link.jsonl", "pipe.jsonl", "hf://datasets/x/y/test.jsonl",
        "https://example.org/d.jsonl", "/dev/zero", ".", "missing.jsonl", "[d.jsonl, ../outside/data.jsonl]"]
BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 8))
TAGS = ["x: !!python/object/apply:os.system ['touch {marker}']", "y: !!python/name:os.system", "z: !foo bar",
        "doc_to_text: !!python/object/new:os.system ['touch {marker}']", "w: !!binary 'a'", "v: ="]
WRONG = [("doc_to_text", "[1, 2]"), ("doc_to_choice", "7"), ("doc_to_target", "[a, b]"), ("target_delimiter", "{a: 1}"),
         ("description", "3"), ("data_files", "{test: 5}"), ("task", "[t]"), ("num_fewshot", "'two'"),
         ("doc_to_choice", "[a, 2]"), ("test_split", "null"), ("output_type", "true")]

hostile = st.one_of(
    st.tuples(st.just("template"), st.sampled_from(["doc_to_text", "doc_to_choice", "doc_to_target", "description"]),
              st.sampled_from(TEMPLATES)),
    st.tuples(st.just("function"), st.sampled_from([*FIELDS, "process_results", "metric"]), st.sampled_from(SPECS)),
    st.tuples(st.just("include"), st.sampled_from(INCLUDES)),
    st.tuples(st.just("data"), st.sampled_from(DATA)),
    st.tuples(st.just("bomb")),
    st.tuples(st.just("tag"), st.sampled_from(TAGS)),
    st.tuples(st.just("wrong"), st.sampled_from(WRONG)),
    st.tuples(st.just("missing"), st.sampled_from(["q", "options", "label"])),
    st.tuples(st.just("garbage"), st.text(max_size=40)),
    st.tuples(st.just("cut"), st.integers(min_value=1, max_value=200)),
)


def write_folder(base: Path, attacks: list[tuple]) -> bool:
    """The task folder base/task attacked; True when it may still import cleanly: every attack
    was undone by a later one, or the data path is the export's own `!function utils.DATA`."""
    outside, task, marker = base / "outside", base / "task", base / "MARKER"
    for folder in (outside, task, base / "out"):
        folder.mkdir()
    fill = {"marker": marker, "outside": outside}
    (outside / "canary.yaml").write_text("doc_to_text: stolen\n")
    (outside / "canary.txt").write_text("secret\n")
    (outside / "data.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    (outside / "mod.py").write_text(MARK.format(**fill) + "\nDATA = 'd.jsonl'\n")
    (task / "mod.py").write_text(MARK.format(**fill) + "\nDATA = 'd.jsonl'\n")
    (task / "utils.py").write_text(MARK.format(**fill) + "\nfrom pathlib import Path\n\ndef run(doc):\n"
                                   "    return ''\n\nDATA = str(Path(__file__).resolve().with_name('d.jsonl'))\n")
    (task / "a.yaml").write_text("include: b.yaml\n")
    (task / "b.yaml").write_text("include: a.yaml\n")
    (task / "link.yaml").symlink_to(outside / "canary.yaml")
    (task / "link.jsonl").symlink_to(outside / "data.jsonl")
    os.mkfifo(task / "pipe.jsonl")
    fields, extra, docs, text = dict(FIELDS), [], [dict(d) for d in DOCS], None
    for attack in attacks:
        kind, *args = attack
        if kind == "template":
            fields[args[0]] = json.dumps(args[1].format(**fill))
        elif kind == "function":
            fields[args[0]] = "!function " + args[1].format(**fill)
        elif kind == "include":
            extra.append("include: " + args[0].format(**fill))
        elif kind == "data":
            fields["data_files"] = args[0].format(**fill)
        elif kind == "bomb":
            extra.append(BOMB)
        elif kind == "tag":
            extra.append(args[0].format(**fill))
        elif kind == "wrong":
            (name, value), = args
            fields[name] = value
        elif kind == "missing":
            docs[1].pop(args[0], None)
        elif kind == "garbage":
            text = args[0]
        elif kind == "cut":
            full = _yaml(fields, extra)
            text = full[:min(args[0], full.index("doc_to_target"))]  # never the whole task
    (task / "d.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (task / "t.yaml").write_text(_yaml(fields, extra) if text is None else text)
    exported = {**FIELDS, "data_files": "!function utils.DATA"}
    return text is None and not extra and docs == DOCS and all(v in (FIELDS.get(k), exported.get(k))
                                                               for k, v in fields.items())


def _yaml(fields: dict, extra: list[str]) -> str:
    lines = [f"{key}: {value}" for key, value in fields.items() if key != "data_files"]
    lines[2:2] = ["dataset_kwargs:", "  data_files:", f"    test: {fields['data_files']}"]
    return "\n".join([*lines, *extra]) + "\n"


def assert_contained(base: Path, code: int, output: str, recorded, may_pass: bool = False) -> None:
    assert not (base / "MARKER").exists(), "a payload ran"
    task, out = str(base / "task"), str(base / "out")
    inside = (task + os.sep, out + os.sep)
    strays = [(event, path) for event, path in recorded if event == "open" and path.startswith(str(base) + os.sep)
              and not path.startswith(inside)]
    assert strays == [], f"opened outside the task folder: {strays}"
    ran = [(event, what) for event, what in recorded if event != "open" and (event != "exec" or str(base) in what)]
    assert ran == [], f"ran: {ran}"
    assert "Traceback" not in output
    lines = output.splitlines()
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("error: "), output
    elif code == 3:
        assert all(line.startswith("rejected ") for line in lines[:-1]) and "rejected" in lines[-1], output
    else:
        assert code == 0 and may_pass, output


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hostile, min_size=1, max_size=3))
def test_a_hostile_task_folder_runs_nothing_reads_nothing_outside_and_ends_in_one_line(attacks):
    with tempfile.TemporaryDirectory() as name:
        base = Path(name).resolve()
        may_pass = write_folder(base, attacks)
        code, output, recorded = run_import(base)
        assert_contained(base, code, output, recorded, may_pass)


# -- each attack once, with the line it ends with ---------------------------------------------------

@pytest.mark.parametrize("attack, code, says", [
    (("template", "doc_to_text", TEMPLATES[0]), 2,
     "t.yaml: doc_to_text: the sandbox refuses it (access to attribute '__init__' of 'type' object is unsafe.)"),
    (("template", "description", TEMPLATES[7]), 2, "t.yaml: description: it includes, imports or extends "),
    (("template", "doc_to_text", "{{{{ q"), 2, "t.yaml: doc_to_text: not a Jinja template (line 1: unexpected end of "),
    (("template", "doc_to_choice", TEMPLATES[11]), 3, "d.jsonl:1: doc_to_choice: the template asks for 10,000,000,0"),
    (("function", "doc_to_text", "utils.run"), 2, "t.yaml:8: doc_to_text is Python code (!function utils.run): "
                                                  "factprobe runs no code from a task"),
    (("function", "data_files", "{outside}/mod.DATA"), 2, "t.yaml:5: dataset_kwargs.data_files.test is Python code"),
    (("function", "data_files", "mod.DATA"), 2, "t.yaml:5: dataset_kwargs.data_files.test is Python code"),
    (("include", "../outside/canary.yaml"), 2, "t.yaml: include: {task}/../outside/canary.yaml lies outside the "
                                               "task folder {task}: nothing outside it is read"),
    (("include", "link.yaml"), 2, "t.yaml: include: {task}/link.yaml lies outside the task folder"),
    (("include", "t.yaml"), 2, "t.yaml: include: t.yaml includes itself (t.yaml -> t.yaml)"),
    (("include", "a.yaml"), 2, "b.yaml: include: a.yaml includes itself (a.yaml -> b.yaml -> a.yaml)"),
    (("data", "../outside/data.jsonl"), 2, "t.yaml: dataset_kwargs.data_files.test: ../outside/data.jsonl lies "
                                           "outside the task folder"),
    (("data", "link.jsonl"), 2, "t.yaml: dataset_kwargs.data_files.test: link.jsonl lies outside the task folder"),
    (("data", "pipe.jsonl"), 2, "t.yaml: dataset_kwargs.data_files.test: {task}/pipe.jsonl is not a regular file"),
    (("data", "hf://datasets/x/y/test.jsonl"), 2, "t.yaml: dataset_kwargs.data_files.test: hf://datasets/x/y/"
                                                  "test.jsonl is on the Hugging Face hub: only local files inside the "
                                                  "task folder import"),
    (("bomb",), 2, "t.yaml:16: its aliases expand past 100,000 nodes, 4,194,304 characters or 64 levels"),
    (("tag", TAGS[0]), 2, "t.yaml:12: unknown tag 'tag:yaml.org,2002:python/object/apply:os.system': only YAML's own "
                          "types and !function"),
    (("tag", TAGS[2]), 2, "t.yaml:12: unknown tag '!foo'"),
    (("wrong", ("doc_to_choice", "[a, 2]")), 2, "t.yaml: doc_to_choice[1]: an int, not text"),
    (("wrong", ("doc_to_target", "[a, b]")), 2, "t.yaml: doc_to_target: a list, not text or a whole number"),
    (("missing", "q"), 3, "d.jsonl:2: doc_to_text: 'q' is undefined"),
    (("cut", 135), 2, "t.yaml:8: not YAML (found unexpected end of stream)"),
])
def test_each_attack_ends_in_its_own_line(tmp_path, attack, code, says):
    base = tmp_path.resolve()
    write_folder(base, [attack])
    got, output, recorded = run_import(base)
    assert_contained(base, got, output, recorded)
    assert got == code and says.format(task=base / "task") in output, output


def test_an_import_reads_no_file_outside_even_to_refuse_it(tmp_path):
    """The include outside is refused by its path: the file is never opened."""
    base = tmp_path.resolve()
    write_folder(base, [("include", "{outside}/canary.yaml")])
    code, output, recorded = run_import(base)
    assert code == 2 and "lies outside the task folder" in output
    assert not [path for _, path in recorded if path.startswith(str(base / "outside"))]


# -- a task factprobe exported: its utils.py is parsed for the data path, never run -------------------

def test_an_exported_task_imports_back_without_running_its_utils(tmp_path):
    base = tmp_path.resolve()
    write_folder(base, [])
    code, output, _ = run_import(base)
    assert code == 0, output
    export_lm_eval("mc", base / "out" / "x.jsonl", base / "exported", name="t")
    utils = base / "exported" / "utils.py"
    assert "DATA = str(Path(__file__).resolve().with_name('t.jsonl'))" in utils.read_text()
    utils.write_text(MARK.format(marker=base / "MARKER") + "\n" + utils.read_text())
    os.rename(base / "task", base / "original")
    os.rename(base / "exported", base / "task")
    code, output, recorded = run_import(base, "back.jsonl")
    assert_contained(base, code, output, recorded, may_pass=True)
    assert code == 0, output
    back = [json.loads(line) for line in open(base / "out" / "back.jsonl")]
    first = [json.loads(line) for line in open(base / "out" / "x.jsonl")]
    assert [(i["prompt"], i["choices"], i["answer_index"]) for i in back] == [
        (i["prompt"], i["choices"], i["answer_index"]) for i in first] == [
        ("Capital of France?", ["Lyon", "Paris"], 1), ("Capital of Peru?", ["Lima", "Cusco"], 0)]


@pytest.mark.parametrize("utils", [
    "DATA = str(Path(__file__).resolve().with_name('../outside/data.jsonl'))",
    "DATA = str(Path(__file__).resolve().with_name('d.jsonl'))\nDATA = '/etc/passwd'",
    "DATA = str(Path(__file__).resolve().parent / 'd.jsonl')",
    "DATA = __import__('os').system('touch {marker}')"])
def test_a_data_function_of_another_shape_is_refused_unrun(tmp_path, utils):
    base = tmp_path.resolve()
    write_folder(base, [("function", "data_files", "utils.DATA")])
    (base / "task" / "utils.py").write_text(MARK.format(marker=base / "MARKER") + "\n"
                                            + utils.format(marker=base / "MARKER") + "\n")
    code, output, recorded = run_import(base)
    assert_contained(base, code, output, recorded)
    assert code == 2 and "t.yaml:5: dataset_kwargs.data_files.test is Python code (!function utils.DATA)" in output

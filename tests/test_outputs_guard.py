"""Issue 35 item 3: every command that writes refuses to replace what it did not write, unless
--overwrite, and never writes through a link or over its own input (kg/outputs.py).

Each writing command is run in-process against four outputs: a foreign file (or a folder
holding one), a factprobe file of another kind, one of the command's own inputs, and a link
pointing outside its folder. Each is refused with exit 2 and one line naming the path, and
nothing there changes; with --overwrite the first two go ahead, the last two stay refused.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from factprobe.cli.main import main

from conftest import factprobe_cmd

FIXTURES = Path(__file__).parent / "fixtures"
DUMP = FIXTURES / "wikidata" / "dump.json"
FOREIGN = b"my own notes, not factprobe's\n"


def cli(*args) -> tuple[int, str, str]:
    if args[0] == "serve":  # a server in its own process: uvicorn in-process outlives the runner's streams
        proc = subprocess.run([*factprobe_cmd(), *map(str, args)], capture_output=True, text=True, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def ok(*args) -> None:
    code, out, err = cli(*args)
    assert code == 0, out + err


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    """Small real inputs of every command, made once: the graph store, a probe set, a corpus and
    its index, counts, a semantic index, KDF items, a run folder, a pipeline file."""
    from test_shard import kdf_items

    base = tmp_path_factory.mktemp("outputs")
    ws = {"base": base, "store": base / "g.sqlite", "cloze": base / "cloze.jsonl", "corpus": base / "corpus.jsonl",
          "index": base / "idx.sqlite", "counts": base / "counts.jsonl", "semantic": base / "sem",
          "kdf": base / "kdf.jsonl", "run": base / "run", "pipeline": base / "p.yaml"}
    ok("ingest", "wikidata", DUMP, "--store", ws["store"], "--quiet")
    ok("probeset", "build", "--kind", "cloze", "--store", ws["store"], "--out", ws["cloze"], "--quiet")
    ws["corpus"].write_text('{"id": "d1", "title": "", "text": "Berlin is the capital of Germany."}\n'
                            '{"id": "d2", "title": "", "text": "Bonn is in Germany."}\n')
    ok("corpus", "index", ws["corpus"], "--store", ws["store"], "--index", ws["index"], "--quiet")
    ok("frequency", "annotate", "--relation", "P36", "--store", ws["store"], "--index", ws["index"], "--out",
       ws["counts"], "--quiet")
    ok("distractors", "build", "--store", ws["store"], "--out", ws["semantic"], "--check", "0", "--quiet")
    ws["kdf"].write_text("".join(json.dumps(item) + "\n" for item in kdf_items()[:2]))
    ws["run"].mkdir()
    (ws["run"] / "run.json").write_text(json.dumps({"model": "hf:m", "method": "kdf", "options": {}, "seed": 0,
                                                    "probes": "kdf.jsonl", "probes_sha256": None, "kind": "kdf"}))
    (ws["run"] / "items.jsonl").write_text('{"id": "a", "relation": "P36", "bucket": null, "correct": 1.0}\n')
    (ws["run"] / "aggregate.json").write_text(json.dumps({"method": "kdf", "items": 1, "accuracy": 1.0,
                                                          "by_relation": {}, "by_bucket": {}}))
    ws["pipeline"].write_text(f"graph:\n  sources: [{{format: wikidata, path: {DUMP}}}]\n"
                              "probesets: {c: {kind: cloze}}\nmodels: []\nevaluations: []\nreport: false\n")
    with socket.socket() as busy:  # a port `serve` cannot listen on: it stops right after its data folder
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        ws["busy"] = busy.getsockname()[1]
        yield ws


@pytest.fixture(scope="module")
def shards(ws) -> dict[str, Path]:
    """A tiny random Llama and the two shards of its KDF run (for eval and merge to go ahead)."""
    from test_shard import tiny_causal

    model = tiny_causal(ws["base"] / "llama")
    for k in range(2):
        ok("eval", "--model", f"hf:{model}", "--method", "kdf", "--probes", ws["kdf"], "--out", ws["base"] / "sharded",
           "--batch", "1", "--device", "cpu", "--quiet", "--shard", f"{k}/2")
    return {"model": f"hf:{model}", "0": ws["base"] / "sharded" / "shard-0-of-2",
            "1": ws["base"] / "sharded" / "shard-1-of-2"}


@dataclass(frozen=True)
class Case:
    """A writing command: `argv(ws, out)` writes to `out`; `own(ws, tmp)` is (argv, input) with
    an input as its output (the input a file, or the folder the refusal names); `link`: in a folder output, a name it writes (a link is planted
    there); `reaches`: with --overwrite it goes past the guard to this error (it needs a server)."""
    name: str
    argv: Callable[[dict, Path], list]
    folder: bool = False
    link: str = ""
    own: Callable[[dict, Path], tuple[list, Path]] | None = None
    reaches: str = ""
    model: bool = False
    foreign: str = "pass --overwrite to replace it"  # what the refusal of a foreign file says


def _sparql(ws, out, rejects=None):
    return ["ingest", "sparql", "--endpoint", "http://127.0.0.1:9/sparql", "--relation", "P36", "--retries", "0",
            "--timeout", "1", "--store", out, "--quiet", *(["--rejects", rejects] if rejects else [])]


def _eval(ws, out):
    model = ws.get("model", "hf:/no/model/needed/before/the/guard")
    return ["eval", "--model", model, "--method", "kdf", "--probes", ws["kdf"], "--out", out, "--batch", "1",
            "--device", "cpu", "--quiet"]


def _own_probes_inside(ws, tmp):
    folder = tmp / "with-probes"
    folder.mkdir()
    shutil.copy(ws["kdf"], folder / "items.jsonl")
    return _eval({**ws, "kdf": folder / "items.jsonl"}, folder), folder / "items.jsonl"


def _own_export(ws, tmp):
    folder = tmp / "task"
    folder.mkdir()
    shutil.copy(ws["kdf"], folder / "mine.jsonl")
    return (["export", "lm-eval", "--probes", folder / "mine.jsonl", "--method", "kdf", "--out", folder, "--name",
             "mine"], folder / "mine.jsonl")


def _assess(ws, out):
    """A baselines run of three facts and judgements of them, written once."""
    run, judgements = ws["base"] / "assess-run", ws["base"] / "human.jsonl"
    if not run.exists():
        run.mkdir()
        (run / "run.json").write_text(json.dumps({"model": "hf:m", "method": "baselines", "options": {"beams": 2},
                                                  "seed": 0, "probes": "d.jsonl", "probes_sha256": None}))
        (run / "items.jsonl").write_text("".join(json.dumps({"id": f, "fact": f, "probability": p}) + "\n"
                                                 for f, p in (("a", 0.1), ("b", 0.5), ("c", 0.2))))
        (run / "aggregate.json").write_text(json.dumps({"method": "baselines", "items": 3}))
        judgements.write_text("".join(json.dumps({"fact": f, "knows": k}) + "\n" for f, k in (("a", 0), ("b", 1), ("c", 1))))
    return ["assess", run, "--judgements", judgements, "--out", out]


def _own_assess(ws, tmp):
    argv = _assess(ws, tmp / "unused")
    return [*argv[:-1], argv[1]], argv[1]


W5M = FIXTURES / "wikidata5m"
CASES = [
    Case("ingest wikidata", lambda ws, out: ["ingest", "wikidata", DUMP, "--store", out, "--quiet"],
         own=lambda ws, tmp: (["ingest", "wikidata", _copy(DUMP, tmp), "--store", tmp / "dump.json"], tmp / "dump.json")),
    Case("ingest rdf", lambda ws, out: ["ingest", "rdf", FIXTURES / "rdf" / "sample.nt", "--store", out, "--quiet"],
         own=lambda ws, tmp: (["ingest", "rdf", _copy(FIXTURES / "rdf" / "sample.nt", tmp), "--store",
                               tmp / "sample.nt"], tmp / "sample.nt")),
    Case("ingest trex", lambda ws, out: ["ingest", "trex", FIXTURES / "trex" / "re-nlg_0-5.json", "--store", out,
                                         "--quiet"],
         own=lambda ws, tmp: (["ingest", "trex", _copy(FIXTURES / "trex" / "re-nlg_0-5.json", tmp), "--store",
                               tmp / "re-nlg_0-5.json"], tmp / "re-nlg_0-5.json")),
    Case("ingest wikidata5m", lambda ws, out: ["ingest", "wikidata5m", "--triples",
                                               W5M / "wikidata5m_transductive_train.txt", "--store", out, "--quiet"],
         own=lambda ws, tmp: (["ingest", "wikidata5m", "--triples", _copy(W5M / "wikidata5m_entity.txt", tmp),
                               "--store", tmp / "wikidata5m_entity.txt"], tmp / "wikidata5m_entity.txt")),
    Case("ingest sparql", _sparql, reaches="http://127.0.0.1:9/sparql",
         own=lambda ws, tmp: (_sparql(ws, _copy(ws["store"], tmp), tmp / "g.sqlite"), tmp / "g.sqlite")),
    Case("corpus index", lambda ws, out: ["corpus", "index", ws["corpus"], "--store", ws["store"], "--index", out,
                                          "--quiet"],
         own=lambda ws, tmp: (["corpus", "index", _copy(ws["corpus"], tmp), "--store", ws["store"], "--index",
                               tmp / "corpus.jsonl"], tmp / "corpus.jsonl")),
    Case("frequency annotate", lambda ws, out: ["frequency", "annotate", "--relation", "P36", "--store", ws["store"],
                                                "--index", ws["index"], "--out", out, "--quiet"],
         own=lambda ws, tmp: (["frequency", "annotate", "--relation", "P36", "--store", ws["store"], "--index",
                               _copy(ws["index"], tmp), "--out", tmp / "idx.sqlite"], tmp / "idx.sqlite")),
    Case("distractors add", lambda ws, out: ["distractors", "add", ws["counts"], "--out", out, "--strategy", "random",
                                             "--n", "1", "--store", ws["store"], "--quiet"],
         own=lambda ws, tmp: (["distractors", "add", _copy(ws["counts"], tmp), "--out", tmp / "counts.jsonl",
                               "--strategy", "random", "--store", ws["store"]], tmp / "counts.jsonl")),
    Case("probeset build", lambda ws, out: ["probeset", "build", "--kind", "cloze", "--store", ws["store"], "--out",
                                            out, "--quiet"],
         own=lambda ws, tmp: (["probeset", "build", "--kind", "cloze", "--store", _copy(ws["store"], tmp), "--out",
                               tmp / "g.sqlite"], tmp / "g.sqlite")),
    Case("probeset import", lambda ws, out: ["probeset", "import", "--format", "lama-trex",
                                             FIXTURES / "probesets" / "lama_P36.jsonl", "--out", out],
         own=lambda ws, tmp: (["probeset", "import", "--format", "lama-trex",
                               _copy(FIXTURES / "probesets" / "lama_P36.jsonl", tmp), "--out", tmp / "lama_P36.jsonl"],
                              tmp / "lama_P36.jsonl")),
    Case("templates paraphrase", lambda ws, out: ["templates", "paraphrase", "--relation", "P36", "--model", "m",
                                                  "--base-url", "http://127.0.0.1:9/v1", "--max-requests", "1",
                                                  "--out", out, "--quiet"],
         folder=True, link="P36.yaml", reaches="cannot reach the OpenAI-compatible server"),
    Case("distractors build", lambda ws, out: ["distractors", "build", "--store", ws["store"], "--out", out,
                                               "--check", "0", "--quiet"], folder=True, link="meta.json"),
    Case("export lm-eval", lambda ws, out: ["export", "lm-eval", "--probes", ws["kdf"], "--method", "kdf", "--out",
                                            out], folder=True, link="utils.py", own=_own_export),
    Case("report", lambda ws, out: ["report", ws["run"], "--out", out], folder=True, link="report.html",
         own=lambda ws, tmp: (["report", _copytree(ws["run"], tmp), "--out", tmp / "run"], tmp / "run")),
    Case("assess", _assess, folder=True, link="assess.json", own=_own_assess),
    Case("sample", lambda ws, out: ["sample", "--out", out, "--quiet"], folder=True, link="graph.sqlite"),
    Case("run", lambda ws, out: ["run", ws["pipeline"], "--out", out, "--quiet"], folder=True, link="graph.sqlite"),
    Case("serve --data", lambda ws, out: ["serve", "--store", ws["store"], "--data", out, "--port", ws["busy"]],
         folder=True, link="jobs.lock", reaches="address already in use",
         own=lambda ws, tmp: (["serve", "--store", Path(shutil.copy(ws["store"], tmp / "jobs.sqlite")), "--data", tmp,
                               "--port", ws["busy"]], tmp / "jobs.sqlite")),
    Case("eval", _eval, folder=True, link="run.json", own=_own_probes_inside, model=True),
    Case("model score --cache", lambda ws, out: ["model", "score", ws.get("model", "hf:/no/model"), "--context", "a",
                                                 "--continuation", " b", "--device", "cpu", "--cache", out],
         model=True, foreign="not a result cache"),
    Case("merge", lambda ws, out: ["merge", ws.get("0", "s0"), ws.get("1", "s1"), "--out", out], folder=True,
         link="items.jsonl", model=True,
         own=lambda ws, tmp: (["merge", ws["0"], ws["1"], "--out", ws["1"]], ws["1"])),
]


def _copy(path: Path, folder: Path) -> Path:
    return Path(shutil.copy(path, folder / path.name))


def _copytree(path: Path, folder: Path) -> Path:
    return Path(shutil.copytree(path, folder / path.name))


def _params(cases):
    return [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.model else []) for c in cases]


def _workspace(request, ws, case: Case) -> dict:
    return {**ws, **request.getfixturevalue("shards")} if case.model else ws


def _snapshot(path: Path) -> dict[str, bytes]:
    """Every file at or under `path` (links as links), by its path relative to `path`."""
    if path.is_symlink() or path.is_file():
        return {".": os.readlink(path).encode() if path.is_symlink() else path.read_bytes()}
    return {str(p.relative_to(path)): (os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
            for p in sorted(path.rglob("*")) if p.is_symlink() or p.is_file()}


def _refused(argv, target: Path, *names: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr naming the path (and each of `names`),
    and nothing at `target` changed."""
    before = _snapshot(target)
    code, out, err = cli(*argv)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert all(name in err for name in names), err
    assert _snapshot(target) == before


def _plant(case: Case, out: Path, data: bytes, name: str = "notes.txt") -> Path:
    """`data` at the output: the file itself, or a file `name` in the output folder."""
    if case.folder:
        out.mkdir()
        (out / name).write_bytes(data)
    else:
        out.write_bytes(data)
    return out


def _goes_ahead(case: Case, argv, out: Path, kept: dict[str, bytes]) -> None:
    code, stdout, err = cli(*argv, "--overwrite")
    if case.reaches:  # past the guard, to the server it names (or, serving, to the port it cannot have)
        assert code in (2, 3) and case.reaches in err and "--overwrite" not in err, err
        return
    assert code in (0, 3), stdout + err  # 3: lama_P36 has a row it rejects
    after = _snapshot(out)
    if case.folder:
        assert {k: after.get(k) for k in kept} == kept  # the files of others stay, ours are added
        assert set(after) > set(kept)
    else:
        assert after != kept


@pytest.mark.parametrize("case", _params(CASES))
def test_a_foreign_output_is_refused_unless_overwrite(request, ws, case, tmp_path):
    ws = _workspace(request, ws, case)
    out = tmp_path / ("out" if case.folder else "out.jsonl")
    _plant(case, out, FOREIGN, "P36.yaml" if case.name == "templates paraphrase" else "notes.txt")
    argv = case.argv(ws, out)
    _refused(argv, out, str(out), case.foreign)
    _goes_ahead(case, argv, out, _snapshot(out))


@pytest.mark.parametrize("case", _params(CASES))
def test_a_factprobe_file_of_another_kind_is_refused_unless_overwrite(request, ws, case, tmp_path):
    ws = _workspace(request, ws, case)
    out = tmp_path / ("out" if case.folder else "out.jsonl")
    # the graph store where a probe set, an index or counts go; a probe set where a store or a folder goes
    other = ws["cloze"] if case.folder or case.name.startswith("ingest") else ws["store"]
    name = "P36.yaml" if case.name == "templates paraphrase" else other.name
    _plant(case, out, other.read_bytes(), name)
    argv = case.argv(ws, out)
    _refused(argv, out, str(out), "pass --overwrite to replace it")
    _goes_ahead(case, argv, out, _snapshot(out))


@pytest.mark.parametrize("case", _params([c for c in CASES if c.own]))
def test_a_commands_own_input_is_never_its_output(request, ws, case, tmp_path):
    argv, held = case.own(_workspace(request, ws, case), tmp_path)
    for extra in ([], ["--overwrite"]):
        _refused([*argv, *extra], held, str(held))


@pytest.mark.parametrize("case", _params(CASES))
def test_a_link_out_of_the_output_folder_is_never_followed(request, ws, case, tmp_path):
    ws = _workspace(request, ws, case)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victim = elsewhere / "victim"
    victim.write_bytes(FOREIGN)
    out = tmp_path / ("out" if case.folder else "out.jsonl")
    if case.folder:
        out.mkdir()
        link = out / case.link
    else:
        link = out
    link.symlink_to(victim)
    for extra in ([], ["--overwrite"]):
        _refused([*case.argv(ws, out), *extra], elsewhere, str(link), "symbolic link")
        assert link.is_symlink()


def test_a_store_claimed_from_another_program_is_not_given_our_tables(tmp_path):
    """A SQLite database of another program at --store is refused, unchanged (an ingest would
    have added factprobe's tables to it); with --overwrite it is replaced by a store."""
    import sqlite3

    theirs = tmp_path / "theirs.sqlite"
    with sqlite3.connect(theirs) as conn:
        conn.execute("CREATE TABLE bookmarks (url TEXT)")
    conn.close()
    _refused(["ingest", "wikidata", DUMP, "--store", theirs, "--quiet"], theirs, "not a factprobe graph store")
    ok("ingest", "wikidata", DUMP, "--store", theirs, "--quiet", "--overwrite")
    code, out, _ = cli("kg", "stats", "--store", theirs, "--json")
    assert code == 0 and json.loads(out)["entities"] == 14


def test_run_restart_deletes_only_a_pipelines_own_folder(ws, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_bytes(FOREIGN)
    argv = ["run", ws["pipeline"], "--out", out, "--quiet", "--restart"]
    _refused(argv, out, str(out), "pass --overwrite to replace it")
    _refused([*argv, "--overwrite"], out, f"--restart deletes {out}")
    ok("run", ws["pipeline"], "--out", tmp_path / "p", "--quiet")
    ok("run", ws["pipeline"], "--out", tmp_path / "p", "--quiet", "--restart")
    config = tmp_path / "p" / "p.yaml"
    shutil.copy(ws["pipeline"], config)
    _refused(["run", config, "--out", tmp_path / "p", "--quiet", "--restart"], tmp_path / "p",
             f"--restart would delete {config}")


# -- hard links: an output written in place is never a file with another name --------------------
#
# Writing by rename leaves another hard link to the old file as it was; writing in place (an
# append, a cut, SQLite) would change it. Each command that writes a file in place is run with a
# hard link planted at that file, to a file of the same kind outside the output folder: refused
# with exit 2, --overwrite or not, and the file outside keeps its bytes.


def _results_cache(path: Path) -> Path:
    """A result cache of `model --cache`'s schema (probes/scoring/cache.py)."""
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE results (model TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, "
                     "value TEXT NOT NULL, PRIMARY KEY (model, kind, key)) WITHOUT ROWID")
    conn.close()
    return path


def _jobs_folder(folder: Path) -> Path:
    """A service's data folder as `serve` leaves it: jobs.sqlite with its jobs table."""
    from factprobe.cli.service.store import JobStore

    folder.mkdir()
    JobStore(folder).close()
    return folder


def _distractors(ws, path: Path) -> Path:
    ok("distractors", "add", ws["counts"], "--out", path, "--strategy", "random", "--n", "1", "--store", ws["store"],
       "--quiet")
    return path


@dataclass(frozen=True)
class InPlace:
    """`victim(ws, elsewhere)`: the outside file, of the output's kind; `setup(ws, tmp)`: the
    output folder or file prepared (None: nothing); `at(out)`: where the link goes; `argv(ws, out)`."""
    name: str
    victim: Callable[[dict, Path], Path]
    at: Callable[[Path], Path]
    argv: Callable[[dict, Path], list]
    setup: Callable[[dict, Path], None] = lambda ws, out: None


def _run_folder(ws, out: Path) -> None:
    out.mkdir()
    shutil.copy(ws["run"] / "run.json", out / "run.json")


IN_PLACE = [
    InPlace("ingest --store", lambda ws, e: _copy(ws["store"], e), lambda out: out / "g.sqlite",
            lambda ws, out: ["ingest", "wikidata", DUMP, "--store", out / "g.sqlite", "--quiet"]),
    InPlace("ingest --rejects", lambda ws, e: _rejects(e), lambda out: out / "r.jsonl",
            lambda ws, out: ["ingest", "wikidata", DUMP, "--store", out / "new.sqlite", "--rejects", out / "r.jsonl",
                             "--quiet"]),
    InPlace("corpus index --index", lambda ws, e: _copy(ws["index"], e), lambda out: out / "idx.sqlite",
            lambda ws, out: ["corpus", "index", ws["corpus"], "--store", ws["store"], "--index", out / "idx.sqlite",
                             "--quiet"]),
    InPlace("frequency annotate --out", lambda ws, e: _copy(ws["counts"], e), lambda out: out / "counts.jsonl",
            lambda ws, out: ["frequency", "annotate", "--relation", "P36", "--store", ws["store"], "--index",
                             ws["index"], "--out", out / "counts.jsonl", "--quiet"]),
    InPlace("distractors add --out", lambda ws, e: _distractors(ws, e / "with.jsonl"), lambda out: out / "with.jsonl",
            lambda ws, out: ["distractors", "add", ws["counts"], "--out", out / "with.jsonl", "--strategy", "random",
                             "--n", "1", "--store", ws["store"], "--quiet"]),
    InPlace("model score --cache", lambda ws, e: _results_cache(e / "cache.sqlite"), lambda out: out / "cache.sqlite",
            lambda ws, out: ["model", "score", "hf:/no/model/needed/before/the/guard", "--context", "a",
                             "--continuation", " b", "--device", "cpu", "--cache", out / "cache.sqlite"]),
    InPlace("eval items.jsonl", lambda ws, e: _copy(ws["run"] / "items.jsonl", e), lambda out: out / "items.jsonl",
            _eval, setup=_run_folder),
    InPlace("run graph.sqlite", lambda ws, e: _copy(ws["store"], e), lambda out: out / "graph.sqlite",
            lambda ws, out: ["run", ws["pipeline"], "--out", out, "--quiet"], setup=lambda ws, out: out.mkdir()),
    InPlace("sample graph.sqlite", lambda ws, e: _copy(ws["store"], e), lambda out: out / "graph.sqlite",
            lambda ws, out: ["sample", "--out", out, "--quiet"], setup=lambda ws, out: out.mkdir()),
    InPlace("serve jobs.lock", lambda ws, e: _write(e / "jobs.lock", b"pid 1\n"), lambda out: out / "jobs.lock",
            lambda ws, out: ["serve", "--store", ws["store"], "--data", out, "--port", ws["busy"]],
            setup=lambda ws, out: _jobs_folder(out)),
    InPlace("serve jobs.sqlite", lambda ws, e: Path(shutil.copy(_jobs_folder(e / "d") / "jobs.sqlite", e / "j.sqlite")),
            lambda out: out / "jobs.sqlite",
            lambda ws, out: ["serve", "--store", ws["store"], "--data", out, "--port", ws["busy"]],
            setup=lambda ws, out: out.mkdir()),
]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _rejects(folder: Path) -> Path:
    return _write(folder / "rejects.jsonl", b'{"file": "dump.json", "line": 3, "reason": "no id"}\n')


@pytest.mark.parametrize("case", IN_PLACE, ids=[c.name for c in IN_PLACE])
def test_a_hard_link_where_a_command_writes_in_place_is_refused(ws, case, tmp_path):
    elsewhere, out = tmp_path / "elsewhere", tmp_path / "out"
    elsewhere.mkdir()
    victim = case.victim(ws, elsewhere)
    case.setup(ws, out)
    out.mkdir(exist_ok=True)
    link = case.at(out)
    os.link(victim, link)
    for extra in ([], ["--overwrite"]):
        _refused([*case.argv(ws, out), *extra], elsewhere, str(link), "hard link")
        assert os.stat(link).st_nlink == 2 and os.path.samefile(link, victim)


def test_every_in_place_open_checks_the_file_it_opened(tmp_path):
    """The opens themselves refuse a hard link before a byte is written or cut (a link planted
    after the claim); a file of one name is appended, updated, emptied and cut as asked."""
    from factprobe.kg.outputs import OutputError, open_append, open_truncate, open_update, truncate

    victim, link = tmp_path / "victim", tmp_path / "out.jsonl"
    victim.write_bytes(b'{"id": "a"}\n{"id": "b"}\n')
    os.link(victim, link)
    opens = {"append": lambda p: open_append(p).close(), "update": lambda p: open_update(p).close(),
             "truncate": lambda p: open_truncate(p).close(), "cut": lambda p: truncate(p, 3)}
    for name, opened in opens.items():
        with pytest.raises(OutputError) as refused:
            opened(link)
        assert str(refused.value) == (f"{link} is a hard link (one file with 2 names): factprobe writes it in place "
                                      "and never into a file linked elsewhere: remove it, or choose another output")
        assert victim.read_bytes() == b'{"id": "a"}\n{"id": "b"}\n', name
    alone = tmp_path / "alone.jsonl"
    alone.write_bytes(b'{"id": "a"}\n{"id": "b')
    truncate(alone, 12)
    with open_append(alone) as stream:
        stream.write('{"id": "c"}\n')
    with open_update(alone) as stream:
        stream.seek(0)
        assert stream.read() == '{"id": "a"}\n{"id": "c"}\n'
    with open_truncate(alone) as stream:
        stream.write("x\n")
    assert alone.read_bytes() == b"x\n"


@pytest.mark.slow
def test_a_killed_eval_resumes_its_items_and_renames_its_summaries(request, ws, tmp_path):
    """A run folder whose items.jsonl ends in a torn record continues it in place (the torn line
    cut, the missing item appended); run.json and aggregate.json, hard-linked elsewhere, are
    written by rename: the folder gets its own, the files elsewhere keep their bytes."""
    model = request.getfixturevalue("shards")["model"]
    out, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    elsewhere.mkdir()
    argv = ["eval", "--model", model, "--method", "kdf", "--probes", ws["kdf"], "--out", out, "--batch", "1",
            "--device", "cpu", "--quiet", "--json"]
    code, stdout, err = cli(*argv, "--limit", "1", "--stratify", "none")
    assert code == 0 and json.loads(stdout)["new"] == 1, err
    first = (out / "items.jsonl").read_bytes()
    with open(out / "items.jsonl", "ab") as items:
        items.write(b'{"id": "kdf:F1", "rel')  # killed mid-write
    held = {}
    for name in ("run.json", "aggregate.json"):
        shutil.move(out / name, elsewhere / name)
        os.link(elsewhere / name, out / name)
        held[name] = (elsewhere / name).read_bytes()
    code, stdout, err = cli(*argv)
    assert code == 0, err
    summary = json.loads(stdout)
    assert (summary["resumed_after"], summary["new"]) == (1, 1)
    lines = (out / "items.jsonl").read_bytes().splitlines(keepends=True)
    assert lines[0] == first and [json.loads(line)["id"] for line in lines] == ["kdf:F0", "kdf:F1"]
    assert {name: (elsewhere / name).read_bytes() for name in held} == held
    assert all(os.stat(out / name).st_nlink == 1 for name in held)
    assert json.loads((out / "run.json").read_text())["limit"] is None
    assert json.loads((out / "aggregate.json").read_text())["items"] == 2

"""The `factprobe` command as a user runs it: exit codes, one-line errors, JSON output."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, dump_tables, run_cli


@pytest.fixture
def store(tmp_path, wikidata_dump):
    path = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(wikidata_dump), "--store", str(path), "--quiet", check=True)
    return path


def test_ingest_json_report(tmp_path, wikidata_dump):
    proc = run_cli("ingest", "wikidata", str(wikidata_dump), "--store", str(tmp_path / "s.sqlite"), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["inputs"][0]["records"] == 14 and out["inputs"][0]["complete"]
    assert out["rejects_file"] is None
    assert "records/s" in proc.stderr  # the progress bar reports a rate


def test_partial_ingest_exit_code_and_rejects_file(tmp_path):
    store = tmp_path / "s.sqlite"
    proc = run_cli("ingest", "wikidata", str(FIXTURES / "wikidata" / "bad.json"), "--store", str(store), "--quiet")
    assert proc.returncode == 3
    assert f"4 rejected record(s) and 1 dropped part(s) of stored records written to {store}.rejects.jsonl" in proc.stderr
    rejects = [json.loads(line) for line in open(f"{store}.rejects.jsonl")]
    assert [(r["line"], r["reason"]) for r in rejects][:2] == [
        (3, rejects[0]["reason"]), (4, "invalid UTF-8")]
    assert {r["file"] for r in rejects} == {str(FIXTURES / "wikidata" / "bad.json")}
    assert [r["line"] for r in rejects] == [3, 4, 5, 7, 6]  # line 6's entity is stored, one statement dropped
    assert (rejects[-1]["record"], rejects[-1]["path"], rejects[-1]["dropped"]) == ("Q11", "claims.P999[0]", True)


@pytest.mark.parametrize("args", [
    ["ingest", "wikidata", "missing.json"],
    ["kg", "stats"],
    ["kg", "entity", "Q1"],
])
def test_errors_are_one_line(tmp_path, args):
    proc = run_cli(*args, "--store", str(tmp_path / "none.sqlite"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.strip() and not l.startswith("\r")]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr


def test_not_a_store_is_one_line(tmp_path):
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_text("this is not sqlite" * 100)
    proc = run_cli("kg", "stats", "--store", str(bogus))
    assert proc.returncode == 2 and proc.stderr.strip().startswith(f"error: {bogus}")
    assert "Traceback" not in proc.stderr


def test_kg_stats_json(store):
    stats = json.loads(run_cli("kg", "stats", "--store", str(store), "--json", check=True).stdout)
    assert (stats["entities"], stats["facts"], stats["deprecated_facts"]) == (14, 25, 1)


def test_kg_entity_readable_and_json(store):
    text = run_cli("kg", "entity", "Q183", "--store", str(store), check=True).stdout
    assert text.splitlines()[0] == "Germany (Q183, item, 10 sitelinks)"
    assert "   was capital (P36)  Bonn (Q586)  [1949 - 1990-10-03]" in text
    assert "       capital (P36)  Berlin (Q64)  [1990-10-03 - now]" in text
    record = json.loads(run_cli("kg", "entity", "q183", "--store", str(store), "--json", check=True).stdout)
    assert record["names"]["en"] == {"label": "Germany", "aliases": ["FRG", "Federal Republic of Germany"]}
    assert [t["id"] for t in record["types"]] == ["Q3624078", "Q6256"]
    assert len(record["facts"]) == 9
    missing = run_cli("kg", "entity", "Q424242", "--store", str(store))
    assert missing.returncode == 1 and "Q424242: not in" in missing.stderr


def test_kg_facts_json_lines(store):
    out = run_cli("kg", "facts", "--relation", "P36", "--store", str(store), "--json", check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["subject"], r["object"], r["object_label"], r["end"]) for r in rows] == [
        ("Q183", "Q64", "Berlin", None), ("Q183", "Q586", "Bonn", "+1990-10-03T00:00:00Z")]
    at = run_cli("kg", "facts", "--relation", "P36", "--at", "1970", "--store", str(store), "--json", check=True)
    assert [json.loads(l)["object"] for l in at.stdout.splitlines()] == ["Q586"]
    current = run_cli("kg", "facts", "--relation", "P36", "--current", "--store", str(store), "--json", check=True)
    assert [json.loads(l)["object"] for l in current.stdout.splitlines()] == ["Q64"]


def test_ingest_takes_languages_and_still_lang(tmp_path, wikidata_dump):
    """--languages, as every other command spells it; --lang (the old spelling) ingests the same
    rows with one warning line."""
    tables, warnings = {}, {}
    for flag in ("--languages", "--lang"):
        store = tmp_path / f"{flag[2:]}.sqlite"
        proc = run_cli("ingest", "wikidata", str(wikidata_dump), "--store", str(store), flag, "en,de", "--quiet",
                       check=True)
        warnings[flag] = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
        tables[flag] = dump_tables(store)
    assert warnings == {"--languages": [], "--lang": ["warning: --lang is deprecated, use --languages"]}
    assert tables["--languages"] == tables["--lang"]
    assert ("languages", '["en", "de"]') in tables["--languages"]["meta"]
    assert {row[1] for row in tables["--languages"]["names"]} == {"en", "de"}


def test_ingest_wikidata5m_takes_documents_and_still_corpus(tmp_path):
    """The Wikidata5M corpus file is --documents (--corpus names a frequency corpus in the store);
    --corpus FILE still works for one release, with one warning line."""
    w5m = FIXTURES / "wikidata5m"
    tables, warnings = {}, {}
    for flag in ("--documents", "--corpus"):
        store = tmp_path / f"{flag[2:]}.sqlite"
        proc = run_cli("ingest", "wikidata5m", "--entity-aliases", str(w5m / "wikidata5m_entity.txt"), flag,
                       str(w5m / "wikidata5m_text.txt"), "--store", str(store), "--quiet")
        assert proc.returncode == 3, proc.stderr  # the fixtures hold bad lines on purpose
        warnings[flag] = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
        tables[flag] = dump_tables(store)
    assert warnings == {"--documents": [], "--corpus": ["warning: --corpus is deprecated, use --documents"]}
    assert tables["--documents"] == tables["--corpus"]
    assert tables["--documents"]["documents"] and all(
        row[0].startswith("wikidata5m:") for row in tables["--documents"]["documents"])
    nothing = run_cli("ingest", "wikidata5m", "--store", str(tmp_path / "none.sqlite"))
    assert nothing.returncode == 2 and "--relation-aliases, --documents" in nothing.stderr


def test_help_explains_every_command():
    for args in (["--help"], ["ingest", "--help"], ["ingest", "wikidata", "--help"], ["kg", "facts", "--help"],
                 ["ingest", "sparql", "--help"], ["sample", "--help"]):
        proc = run_cli(*args, check=True)
        assert "Usage: factprobe" in proc.stdout


def test_main_job_sample(tmp_path):
    """README command 1's job: ingest the shipped sample graph, print statistics and one entity."""
    proc = run_cli("sample", "--out", str(tmp_path / "run"), "--quiet", check=True)
    out = proc.stdout
    assert out.startswith(f"graph {tmp_path / 'run' / 'graph.sqlite'}")
    assert "Germany (Q183, item," in out
    assert "Bonn (Q586)  [1949 - 1990" in out and "Berlin (Q64)" in out
    assert "complete:" in proc.stderr and " 0 rejected" in proc.stderr
    again = run_cli("sample", "--out", str(tmp_path / "run"), "--quiet", check=True)
    assert "already ingested" in again.stderr and again.stdout == out

"""Corpora as researchers already have them (issue 46 item 2): WikiExtractor's default `<doc>`
output, plain or compressed, found by its first line; JSONL corpora keyed otherwise (Pyserini's
`contents`, KILT's `wikipedia_id` and paragraph lists) through --id-field/--title-field/--text-field.
The fixture is tests/fixtures/wikiextractor/wiki_00 (its README says what is broken in it)."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from factprobe.index.corpus_files import JsonFields, ReadReport, corpus_documents

WIKI = FIXTURES / "wikiextractor" / "wiki_00"


def read(path: Path, fmt: str = "jsonl", **kw):
    report = ReadReport()
    return list(corpus_documents(path, fmt, report, **kw)), report


def test_each_doc_element_is_a_document_and_a_broken_one_costs_itself():
    docs, report = read(WIKI, "wikiextractor")
    assert [(d.id, d.title, d.url) for d in docs] == [
        ("3354", "Berlin", "https://en.wikipedia.org/wiki?curid=3354"),
        ("11867", "Germany", "https://en.wikipedia.org/wiki?curid=11867"),
        ("22989", "Paris & its region", "https://en.wikipedia.org/wiki?curid=22989"),
        ("6", "Rome", "https://en.wikipedia.org/wiki?curid=6")]
    # the title's repeat on the text's first line is dropped; the rest as written
    assert docs[0].text == "Berlin is the capital and largest city of Germany.\nIt lies on the Spree."
    assert docs[2].text == "Paris is the capital of France."
    assert [(r.line, r.reason) for r in report.rejects] == [
        (12, "<doc> without an id attribute"), (22, "<doc> not closed before the next <doc>")]
    assert report.documents == 4


def test_found_by_its_first_line_and_read_compressed(tmp_path):
    plain, _ = read(WIKI)  # --format jsonl, the default: the first line says what it is
    for name, pack in (("wiki_00.gz", gzip.compress), ("wiki_00.bz2", bz2.compress)):
        (tmp_path / name).write_bytes(pack(WIKI.read_bytes()))
        assert read(tmp_path / name)[0] == plain
    assert len(plain) == 4


def test_a_doc_never_closed_at_the_end_and_text_outside(tmp_path):
    path = tmp_path / "cut"
    path.write_text('stray line\n<doc id="1" url="u" title="T">\nT\n\nBody.\n', encoding="utf-8")
    docs, report = read(path, "wikiextractor")
    assert docs == [] and [(r.line, r.reason) for r in report.rejects] == [
        (1, "text outside a <doc> element"), (2, "<doc> not closed at the end of the file")]


def test_jsonl_fields_by_name_and_text_as_paragraphs(tmp_path):
    path = tmp_path / "kilt.jsonl"
    rows = [{"wikipedia_id": "3354", "wikipedia_title": "Berlin", "text": ["Berlin\n", "Berlin is in Germany."]},
            {"wikipedia_id": 7, "wikipedia_title": "Bonn", "text": [1, 2]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    docs, report = read(path, fields=JsonFields("wikipedia_id", "wikipedia_title", "text"))
    assert [(d.id, d.title, d.text) for d in docs] == [("3354", "Berlin", "Berlin\n\n\nBerlin is in Germany.")]
    assert [(r.line, r.reason.split(" (")[0]) for r in report.rejects] == [
        (2, "field 'text' is missing or not a string or list of strings")]
    # without the names, the reject says which members the record has and which flags name them
    _, plain = read(path)
    assert plain.rejects[0].reason == ("field 'id' is missing or not a string (the record has text, wikipedia_id, "
                                       "wikipedia_title; --id-field, --title-field and --text-field name others)")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    base = tmp_path_factory.mktemp("formats")
    run_cli("sample", "--out", str(base), "--quiet", check=True)
    return base


def test_corpus_index_counts_a_wikiextractor_file_and_a_pyserini_one_alike(sample):
    store = str(sample / "graph.sqlite")
    counts = {}
    pyserini = sample / "pyserini.jsonl"
    docs, _ = read(WIKI)
    pyserini.write_text("".join(json.dumps({"id": d.id, "contents": f"{d.title}\n{d.text}"}) + "\n" for d in docs),
                        encoding="utf-8")
    for name, path, extra in (("wiki", WIKI, []), ("pyserini", pyserini, ["--text-field", "contents"])):
        index = str(sample / f"{name}.sqlite")
        proc = run_cli("corpus", "index", str(path), *extra, "--store", store, "--index", index, "--json", "--quiet")
        assert proc.returncode == (3 if name == "wiki" else 0), proc.stderr
        assert json.loads(proc.stdout)["added"] == 4

        def count(*args):
            return json.loads(run_cli("frequency", *args, "--index", index, "--json", check=True).stdout)["documents"]

        counts[name] = (count("entity", "Q183"), count("pair", "Q183", "Q64"), count("pair", "Q142", "Q90"))
    assert counts["wiki"] == counts["pyserini"] == (2, 1, 1)
    wiki = run_cli("corpus", "index", str(WIKI), "--store", store, "--index", str(sample / "w2.sqlite"), "--quiet")
    assert f"rejected {WIKI}:12: <doc> without an id attribute" in wiki.stderr

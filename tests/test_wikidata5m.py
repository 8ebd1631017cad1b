"""Wikidata5M source: exact facts, entities, names and corpus documents from the fixture files,
rejects by line, idempotent re-ingest, compressed input, resume after an interruption, and
the CLI."""

from __future__ import annotations

import gzip
import json
import sqlite3

import pytest

from conftest import FIXTURES, dump_tables, run_cli, content_tables
from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.ingest import ingest
from factprobe.kg.model import Entity, Labels, derived_fact_id
from factprobe.kg.sources.wikidata5m import Wikidata5mSource

DIR = FIXTURES / "wikidata5m"
ENTITIES = DIR / "wikidata5m_entity.txt"
RELATIONS = DIR / "wikidata5m_relation.txt"
TRIPLES = DIR / "wikidata5m_transductive_train.txt"
CORPUS = DIR / "wikidata5m_text.txt"


def run(store_path, kind, path, languages=("en",), **kw):
    source_kw = {k: kw.pop(k) for k in ("chunk_bytes", "labels_from") if k in kw}
    with Store(store_path, languages=languages) as store:
        return ingest(store, Wikidata5mSource(kind=kind, languages=languages, **source_kw), path,
                      workers=0, **kw)


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "w5m.sqlite"
    reports = [run(path, "entity-aliases", ENTITIES), run(path, "relation-aliases", RELATIONS),
               run(path, "triples", TRIPLES), run(path, "corpus", CORPUS, labels_from=str(path))]
    assert [(r.records, r.rejected, r.lines_read) for r in reports] == [
        (9, 3, 13), (5, 1, 6), (10, 4, 14), (4, 2, 6)]
    return path


EXPECTED_TRIPLES = {
    ("Q90", "P31", "Q515"), ("Q90", "P17", "Q142"), ("Q142", "P36", "Q90"), ("Q142", "P31", "Q6256"),
    ("Q937", "P31", "Q5"), ("Q937", "P19", "Q3012"), ("Q64", "P17", "Q183"), ("Q183", "P36", "Q64"),
    ("Q515", "P279", "Q486972"),
}


def test_facts_and_types(store):
    with KnowledgeGraph(store) as kg:
        facts = list(kg.facts())
        assert {(f.subject, f.relation, f.object) for f in facts} == EXPECTED_TRIPLES
        assert len(facts) == 9  # the repeated triple on line 14 is the same fact
        for f in facts:
            assert f.id == derived_fact_id("wikidata5m", f.subject, f.relation, f.object)
            assert (f.value_type, f.value, f.rank, f.source, f.end) == ("item", None, 1, "wikidata5m", None)
        assert kg.objects("Q142", "P36") == ["Q90"]
        assert kg.types("Q90") == ["Q515"]
        assert kg.types("Q515") == ["Q486972"]  # P279 of a class
        assert kg.entities_of_type("Q5") == ["Q937"]
        assert kg.relations()[:2] == [("P31", "instance of", 3), ("P17", "country", 2)]


def test_entities_and_names(store):
    with KnowledgeGraph(store) as kg:
        assert kg.entity("Q90") == Entity("Q90", "item", "Paris", None, 0, None)
        assert kg.entity("P36") == Entity("P36", "property", "capital", None, 0, None)
        assert kg.labels("Q90") == Labels("Paris", ("City of Light", "Paris, France", "paris"))
        # a repeated alias is kept once
        assert kg.labels("Q142") == Labels("France", ("French Republic", "france"))
        # an alias equal to the label stays the label
        assert kg.labels("Q515") == Labels("city", ("cities",))
        assert kg.labels("Q3012") == Labels("Ulm", ())
        assert kg.labels("P19") == Labels("place of birth", ("birthplace", "born in"))
        assert kg.search("deutschland") == ["Q183"]
        stats = kg.stats()
        assert (stats.entities, stats.items, stats.properties) == (14, 9, 5)
        assert stats.names == 34  # 23 item names + 11 relation names
        assert kg.entity("Q7") is None and kg.entity("X12") is None
    conn = sqlite3.connect(store)
    assert conn.execute("SELECT DISTINCT lang FROM names").fetchall() == [("en",)]


def test_corpus_documents(store):
    with KnowledgeGraph(store) as kg:
        assert list(kg.documents(source="wikidata5m")) == [
            ("wikidata5m:Q64", "Berlin",
             "Berlin is the capital of Germany.\tA second tab stays inside the text."),
            ("wikidata5m:Q90", "Paris",
             'Paris is the capital and most populous city of France, nicknamed the "City of Light".'),
            ("wikidata5m:Q937", "Albert Einstein",
             "Albert Einstein (14 March 1879 \u2013 18 April 1955) was a German-born theoretical physicist."),
            ("wikidata5m:Q99999", "Q99999", "An entity that has no line in the alias file."),
        ]


def test_corpus_without_labels_is_titled_by_id(tmp_path):
    path = tmp_path / "c.sqlite"
    report = run(path, "corpus", CORPUS)
    assert report.records == 4
    with KnowledgeGraph(path) as kg:
        assert [(d[0], d[1]) for d in kg.documents()] == [
            ("wikidata5m:Q64", "Q64"), ("wikidata5m:Q90", "Q90"), ("wikidata5m:Q937", "Q937"),
            ("wikidata5m:Q99999", "Q99999")]


def test_rejects_name_their_lines(tmp_path):
    path = tmp_path / "r.sqlite"
    assert [(l, r) for l, r, _ in run(path, "entity-aliases", ENTITIES).rejects] == [
        (6, "'X12' is not an entity (Q) id"), (9, "Q7: no names"), (10, "'P31' is not an entity (Q) id")]
    assert [(l, r) for l, r, _ in run(path, "relation-aliases", RELATIONS).rejects] == [
        (4, "'Q5' is not a relation (P) id")]
    report = run(path, "triples", TRIPLES)
    assert [(l, r) for l, r, _ in report.rejects] == [
        (5, "expected 3 tab-separated columns (head, relation, tail), found 2"),
        (8, "relation 'country' is not a P id"),
        (10, "tail 'Q0' is not a Q id"),
        (12, "expected 3 tab-separated columns (head, relation, tail), found 1"),
    ]
    assert report.rejects[3][2] == "Q90 P17 Q142"
    assert [(l, r) for l, r, _ in run(path, "corpus", CORPUS).rejects] == [
        (3, "expected 2 tab-separated columns (entity, text), found 1"),
        (5, "'France' is not an entity (Q) id")]


def test_invalid_utf8_and_bom(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"\xef\xbb\xbfQ1\tP31\tQ2\nQ3\tP31\t\xff\xfe\nQ4\tP31\tQ5\n")
    report = run(tmp_path / "u.sqlite", "triples", path)
    assert report.records == 2 and [(l, r) for l, r, _ in report.rejects] == [(2, "invalid UTF-8")]


def test_names_need_english(tmp_path):
    path = tmp_path / "de.sqlite"
    report = run(path, "entity-aliases", ENTITIES, languages=("de",))
    assert report.records == 9 and report.rejected == 3  # same lines, nothing extra rejected
    with KnowledgeGraph(path) as kg:
        assert kg.stats().names == 0
        assert kg.entity("Q90") == Entity("Q90", "item", None, None, 0, None)


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown Wikidata5M file kind"):
        Wikidata5mSource(kind="qualifiers")


def test_reingest_is_idempotent(store):
    before = content_tables(store)
    with KnowledgeGraph(store) as kg:
        stats = kg.stats()
    assert run(store, "triples", TRIPLES).already_done
    for kind, path in (("entity-aliases", ENTITIES), ("relation-aliases", RELATIONS),
                       ("triples", TRIPLES), ("corpus", CORPUS)):
        extra = {"labels_from": str(store)} if kind == "corpus" else {}
        assert not run(store, kind, path, restart=True, **extra).already_done
    with KnowledgeGraph(store) as kg:
        assert kg.stats() == stats
    assert content_tables(store) == before


def test_gz_gives_the_same_store(tmp_path):
    plain, packed = tmp_path / "p.sqlite", tmp_path / "z.sqlite"
    for kind, path in (("entity-aliases", ENTITIES), ("triples", TRIPLES)):
        gz = tmp_path / (path.name + ".gz")
        gz.write_bytes(gzip.compress(path.read_bytes()))
        a, b = run(plain, kind, path), run(packed, kind, gz)
        assert (a.records, a.rejects) == (b.records, b.rejects)
    assert content_tables(plain) == content_tables(packed)


class Stop(Exception):
    pass


@pytest.mark.parametrize("name", ["triples.txt", "triples.txt.gz"])
def test_interrupted_then_resumed_equals_uninterrupted(tmp_path, name):
    path = tmp_path / name
    data = TRIPLES.read_bytes()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    calls = []

    def progress(records, consumed):
        calls.append(records)
        if len(calls) == 2:
            raise Stop

    interrupted = tmp_path / "i.sqlite"
    with pytest.raises(Stop):
        run(interrupted, "triples", path, chunk_bytes=40, progress=progress)
    conn = sqlite3.connect(interrupted)
    done, complete = conn.execute("SELECT records_done, complete FROM ingests").fetchone()
    conn.close()
    assert 0 < done < 14 and complete == 0

    resumed = run(interrupted, "triples", path, chunk_bytes=40)
    assert resumed.resumed_from == done and resumed.lines_read == 14 and not resumed.truncated
    assert 0 < resumed.records < 10  # only the lines after the checkpoint were parsed again

    clean = tmp_path / "c.sqlite"
    run(clean, "triples", path, chunk_bytes=40)
    assert dump_tables(interrupted) == dump_tables(clean)


def test_cli(tmp_path):
    store = tmp_path / "s.sqlite"
    proc = run_cli("ingest", "wikidata5m", "--triples", str(TRIPLES), "--entity-aliases", str(ENTITIES),
                   "--relation-aliases", str(RELATIONS), "--documents", str(CORPUS),
                   "--store", str(store), "--quiet", "--json")
    assert proc.returncode == 3, proc.stderr
    out = json.loads(proc.stdout)
    assert [(i["source"], i["records"], i["rejected"]) for i in out["inputs"]] == [
        ("wikidata5m-entity-aliases", 9, 3), ("wikidata5m-relation-aliases", 5, 1),
        ("wikidata5m-triples", 10, 4), ("wikidata5m-corpus", 4, 2)]
    rejects = [json.loads(line) for line in open(out["rejects_file"], encoding="utf-8")]
    assert [(r["file"], r["line"]) for r in rejects] == [
        (str(ENTITIES), 6), (str(ENTITIES), 9), (str(ENTITIES), 10), (str(RELATIONS), 4),
        (str(TRIPLES), 5), (str(TRIPLES), 8), (str(TRIPLES), 10), (str(TRIPLES), 12),
        (str(CORPUS), 3), (str(CORPUS), 5)]
    with KnowledgeGraph(store) as kg:
        assert kg.labels("Q90").label == "Paris"
        assert kg.is_fact("Q183", "P36", "Q64")
        assert dict((d[0], d[1]) for d in kg.documents())["wikidata5m:Q90"] == "Paris"

    clean = tmp_path / "clean.sqlite"
    good = tmp_path / "good.txt"
    good.write_text("Q90\tP17\tQ142\n", encoding="utf-8")
    proc = run_cli("ingest", "wikidata5m", "--triples", str(good), "--store", str(clean), "--quiet")
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("ingest", "wikidata5m", "--store", str(clean))
    assert proc.returncode == 2 and "give at least one of" in proc.stderr


def test_alias_files_do_not_blank_richer_entities(tmp_path):
    """Wikidata5M has no descriptions or sitelinks: loading it after a JSON dump keeps them."""
    from factprobe.kg.sources.wikidata_json import WikidataJsonSource

    path = tmp_path / "both.sqlite"
    with Store(path) as st:
        ingest(st, WikidataJsonSource(), FIXTURES / "wikidata" / "dump.json", workers=0)
        ingest(st, Wikidata5mSource(kind="entity-aliases"), FIXTURES / "wikidata5m" / "wikidata5m_entity.txt",
               workers=0)
    with KnowledgeGraph(path) as kg:
        assert kg.entity("Q937") == Entity("Q937", "item", "Albert Einstein", "theoretical physicist", 10, None)
        assert kg.entity("Q90").label == "Paris" and kg.entity("Q90").sitelinks == 0

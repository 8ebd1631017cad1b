"""T-REx source: exact rows from the fixture documents, rejects by document index, idempotent
re-ingest, compressed input, damaged input, resume after an interruption, and the CLI."""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sqlite3

import orjson
import pytest

from conftest import FIXTURES, dump_tables, run_cli, content_tables
from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.ingest import ingest
from factprobe.kg.model import derived_fact_id
from factprobe.kg.sources.trex import TrexSource, normalize_aligner
from factprobe.kg.sources.trex_split import DocumentSplitter

GOOD = FIXTURES / "trex" / "re-nlg_0-5.json"
MALFORMED = FIXTURES / "trex" / "re-nlg_malformed.json"


def fid(s, r, o):
    return derived_fact_id("trex", s, r, o)


def run(store_path, path, source=None, **kw):
    with Store(store_path) as store:
        return ingest(store, source or TrexSource(), path, workers=0, **kw)


@pytest.fixture
def good_store(tmp_path):
    path = tmp_path / "g.sqlite"
    report = run(path, GOOD)
    assert report.complete and report.records == 5 and report.lines_read == 5
    return path


# -- rows ---------------------------------------------------------------------------------

EXPECTED_FACTS = {
    # (subject, relation, object, value_type, value, extra)
    ("Q90", "P17", "Q142", "item", None, None),
    ("Q142", "P36", "Q90", "item", None, None),
    ("Q90", "P206", "Q1471", "item", None, None),
    ("Q142", "P30", "Q46", "item", None, None),
    ("Q142", "P31", "Q6256", "item", None, None),
    ("Q937", "P569", None, "time", "+1879-03-14T00:00:00Z", '{"precision":11}'),
    ("Q937", "P570", None, "time", "+1955-04-18T00:00:00Z", '{"precision":11}'),
    ("Q937", "P19", "Q3012", "item", None, None),
    ("Q980", "P36", "Q1726", "item", None, None),
    ("Q1726", "P131", "Q980", "item", None, None),
    ("Q1726", "P571", None, "time", "+1158-00-00T00:00:00Z", '{"precision":9}'),
    ("Q183", "P36", "Q64", "item", None, None),
    ("Q64", "P17", "Q183", "item", None, None),
}


def test_facts(good_store):
    with KnowledgeGraph(good_store) as kg:
        facts = list(kg.facts())
        got = {(f.subject, f.relation, f.object, f.value_type, f.value, f.extra) for f in facts}
        assert got == EXPECTED_FACTS
        assert len(facts) == 13
        for f in facts:
            assert f.id == fid(f.subject, f.relation, f.object or f.value)
            assert (f.source, f.rank, f.start, f.end, f.point) == ("trex", 1, None, None, None)
        assert kg.objects("Q142", "P36") == ["Q90"]
        assert kg.is_fact("Q937", "P19", "Q3012")
        assert kg.types("Q142") == ["Q6256"]  # from the P31 triple
        stats = kg.stats()
        assert (stats.facts, stats.entity_facts, stats.literal_facts) == (13, 10, 3)
        assert (stats.documents, stats.annotations, stats.types) == (5, 16, 1)
        # T-REx has no labels: surface forms are not names, entities get no rows
        assert (stats.entities, stats.names) == (0, 0)
        assert stats.sources == {"trex": 13}


def test_provenance(good_store):
    with KnowledgeGraph(good_store) as kg:
        # the same fact aligned in two documents, by two aligners
        assert kg.provenance(fid("Q142", "P36", "Q90")) == [("trex", "AllEnt", "Q90"), ("trex", "NoSub", "Q142")]
        # the same fact twice in one document, by two aligners
        assert kg.provenance(fid("Q937", "P19", "Q3012")) == [("trex", "NoSub", "Q937"), ("trex", "SPO", "Q937")]
        assert kg.provenance(fid("Q90", "P206", "Q1471")) == [("trex", "SPO", "Q90")]
        assert kg.provenance(fid("Q1726", "P571", "+1158-00-00T00:00:00Z")) == [("trex", "NoSub", "Q1726")]
        # an aligner outside the paper's three is kept as given
        assert kg.provenance(fid("Q183", "P36", "Q64")) == [("trex", "NosubSPOAligner", "Q64")]
    conn = sqlite3.connect(good_store)
    rows = conn.execute("SELECT annotator, COUNT(*) FROM provenance GROUP BY annotator ORDER BY annotator").fetchall()
    assert rows == [("AllEnt", 3), ("NoSub", 8), ("NosubSPOAligner", 1), ("SPO", 3)]


def test_documents(good_store):
    source_docs = json.loads(GOOD.read_text(encoding="utf-8"))
    with KnowledgeGraph(good_store) as kg:
        docs = list(kg.documents(source="trex"))
    assert [(d[0], d[1]) for d in docs] == [
        ("Q142", "France"), ("Q1726", "Munich"), ("Q64", "Berlin"), ("Q90", "Paris"),
        ("Q937", "Albert Einstein"),
    ]
    texts = {d[0]: d[2] for d in docs}
    assert texts["Q937"] == ("Albert Einstein (14 March 1879 \u2013 18 April 1955) was a German-born "
                             "theoretical physicist. He was born in Ulm.")
    assert texts["Q142"] == ('France, officially the French Republic, is a country in Europe. Its capital '
                             'is Paris, the "City of Light" {sic} [1].')
    assert sorted(texts.values()) == sorted(d["text"] for d in source_docs)


def test_annotations(good_store):
    with KnowledgeGraph(good_store) as kg:
        # the Date_Linker spans are literals, not entity links
        assert kg.annotations("Q937") == [
            ("Q937", 0, 15, "Albert Einstein"), ("Q937", 89, 91, "He"), ("Q3012", 104, 107, "Ulm")]
        assert kg.annotations("Q1726") == [
            ("Q1726", 0, 6, "Munich"), ("Q1726", 16, 23, "M\u00fcnchen"), ("Q980", 66, 73, "Bavaria"),
            ("Q1726", 75, 77, "It")]
        assert kg.annotations("Q64") == [("Q64", 0, 6, "Berlin"), ("Q183", 42, 49, "Germany")]
        text = dict((d[0], d[2]) for d in kg.documents())["Q1726"]
        for entity, start, end, surface in kg.annotations("Q1726"):
            assert text[start:end] == surface  # offsets are characters, not bytes
    conn = sqlite3.connect(good_store)
    assert conn.execute(
        "SELECT entity, annotator FROM annotations WHERE document='Q90' ORDER BY start").fetchall() == [
        ("Q90", "Wikidata_Spotlight_Entity_Linker"), ("Q142", "Wikidata_Spotlight_Entity_Linker"),
        ("Q90", "Simple_Coreference"), ("Q1471", "Wikidata_Spotlight_Entity_Linker")]


def test_aligner_names():
    assert [normalize_aligner(n) for n in (
        "NoSubject-Triple-aligner", "Simple-Aligner", "SPOAligner", "spo-aligner", "NosubSPOAligner",
        None)] == ["NoSub", "AllEnt", "SPO", "SPO", "NosubSPOAligner", ""]


# -- rejects --------------------------------------------------------------------------------


def test_malformed_documents_are_rejects(tmp_path):
    store = tmp_path / "m.sqlite"
    report = run(store, MALFORMED)
    assert (report.records, report.rejected, report.dropped, report.lines_read) == (4, 3, 2, 7)
    assert not report.complete and not report.truncated
    assert [(line, reason) for line, reason, _ in report.rejects] == [
        (2, "document without docid"),
        (5, "malformed JSON (unexpected character, expected ',' or '}': line 1 column 47 (char 46))"),
        (6, "not a JSON object"),
    ]
    assert report.rejects[0][2].startswith('{"title": "Nowhere"')
    assert report.rejects[2][2] == "42"
    # a bad mention or triple costs only itself; its document and the rest of it are stored
    assert [drop[:4] for drop in report.drops] == [
        (3, "Q220", "entities[1]", "boundaries ['23', '28'] are not two integers start <= end"),
        (4, "Q2807", "triples[0].object", "unknown uri form 'http://dbpedia.org/resource/Spain'"),
    ]
    assert report.drops[0][4] == ('{"uri":"http://www.wikidata.org/entity/Q38","boundaries":["23","28"],'
                                  '"surfaceform":"Italy","annotator":"Wikidata_Spotlight_Entity_Linker"}')
    assert report.drops[1][4].startswith('{"subject":{"uri":"http://www.wikidata.org/entity/Q2807"')
    with KnowledgeGraph(store) as kg:
        assert [d[0] for d in kg.documents()] == ["Q220", "Q2807", "Q31", "Q96"]
        assert {(f.subject, f.relation, f.object) for f in kg.facts()} == {
            ("Q31", "P36", "Q239"), ("Q96", "P36", "Q1489")}
        assert kg.stats().annotations == 6
        assert kg.annotations("Q220") == [("Q220", 0, 4, "Rome")]  # Italy's mention is the dropped one
        assert kg.annotations("Q2807") == [("Q2807", 0, 6, "Madrid")]


def test_cut_files(tmp_path):
    data = GOOD.read_bytes()
    docs = json.loads(data)
    # cut inside the third document: two ingest, the third is a reject
    third = data.index(b'{"docid": "http://www.wikidata.org/entity/Q937"')
    cut = tmp_path / "cut.json"
    cut.write_bytes(data[:third + 100])
    report = run(tmp_path / "a.sqlite", cut)
    assert report.records == 2 and [r[0] for r in report.rejects] == [3]
    assert report.rejects[0][1].startswith("malformed JSON")
    # cut right after a document: the unclosed array is reported after the last one
    end_of_second = data.index(b'{"docid": "http://www.wikidata.org/entity/Q937"') - 2
    cut.write_bytes(data[:end_of_second])
    report = run(tmp_path / "b.sqlite", cut)
    assert report.records == 2
    assert report.rejects == [(3, "input ends inside the JSON array (truncated file?)", "")]
    # a damaged gzip tail: what came before is kept, the ingest is marked truncated
    whole = gzip.compress(json.dumps(docs * 40).encode(), mtime=0)
    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(whole[: len(whole) * 2 // 3])
    report = run(tmp_path / "c.sqlite", damaged)
    assert report.truncated and not report.complete
    assert len(report.rejects) == 1 and report.rejects[0][0] == report.lines_read + 1
    assert 0 < report.records == report.lines_read < 200


# -- idempotence, formats ------------------------------------------------------------------


def test_reingest_is_idempotent(tmp_path, good_store):
    before = dump_tables(good_store)
    with KnowledgeGraph(good_store) as kg:
        stats = kg.stats()
    again = run(good_store, GOOD)
    assert again.already_done
    redo = run(good_store, GOOD, restart=True)
    assert redo.records == 5 and redo.complete
    with KnowledgeGraph(good_store) as kg:
        assert kg.stats() == stats
    assert content_tables(good_store) == {k: v for k, v in before.items()
                                          if k not in ("ingests", "input_digests", "rejects", "dropped")}


@pytest.mark.parametrize("variant", ["gz", "bz2", "jsonl", "pretty", "tiny-blocks"])
def test_variants_give_the_same_store(tmp_path, good_store, variant):
    docs = json.loads(GOOD.read_text(encoding="utf-8"))
    source = None
    if variant == "gz":
        path = tmp_path / "docs.json.gz"
        path.write_bytes(gzip.compress(GOOD.read_bytes()))
    elif variant == "bz2":
        import bz2

        path = tmp_path / "docs.json.bz2"
        path.write_bytes(bz2.compress(GOOD.read_bytes()))
    elif variant == "jsonl":
        path = tmp_path / "docs.jsonl"
        path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    elif variant == "pretty":
        path = tmp_path / "docs.json"
        path.write_text(json.dumps(docs, indent=2, ensure_ascii=False), encoding="utf-8")
    else:  # strings, escapes and multi-byte characters cut across 7-byte reads
        path = tmp_path / "docs.json"
        shutil.copy(GOOD, path)
        source = TrexSource(chunk_bytes=7)
    report = run(tmp_path / "v.sqlite", path, source)
    assert report.complete and report.records == 5
    assert content_tables(tmp_path / "v.sqlite") == content_tables(good_store)


def test_splitter_cuts_and_resumes_anywhere():
    rng = random.Random(7)
    alphabet = ['a', '"', '\\', '{', '}', '[', ']', ',', '\u00e9', '\n', ' ', '\u2013']

    def value(depth=0):
        r = rng.random()
        if depth > 2 or r < 0.3:
            return rng.choice([1, None, True, 2.5, "".join(rng.choices(alphabet, k=rng.randint(0, 8)))])
        if r < 0.6:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {"".join(rng.choices(alphabet, k=3)): value(depth + 1) for _ in range(rng.randint(0, 3))}

    for _ in range(60):
        docs = [{"k": value()} if rng.random() < 0.8 else value() for _ in range(rng.randint(0, 6))]
        data = json.dumps(docs, ensure_ascii=rng.random() < 0.5).encode()
        for block in (1, 5, 1 << 20):
            splitter, out = DocumentSplitter(), []
            for i in range(0, len(data), block):
                out += splitter.feed(data[i:i + block])
            out += splitter.feed(b"", final=True)
            assert [orjson.loads(raw) for raw, _ in out] == docs
            for k, (_, code) in enumerate(out):  # resuming after document k gives the rest
                resumed = DocumentSplitter(code >> 1, bool(code & 1))
                rest = resumed.feed(data[code >> 1:]) + resumed.feed(b"", final=True)
                assert [orjson.loads(raw) for raw, _ in rest] == docs[k + 1:]


# -- resume ----------------------------------------------------------------------------------


class Stop(Exception):
    pass


@pytest.mark.parametrize("name", ["docs.json", "docs.json.gz"])
def test_interrupted_then_resumed_equals_uninterrupted(tmp_path, name):
    path = tmp_path / name
    data = GOOD.read_bytes()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    source = TrexSource(chunk_documents=2)  # chunks of 2, 2, 1 documents
    calls = []

    def progress(records, consumed):
        calls.append(records)
        if len(calls) == 2:
            raise Stop

    interrupted = tmp_path / "i.sqlite"
    with pytest.raises(Stop):
        run(interrupted, path, source, progress=progress)
    conn = sqlite3.connect(interrupted)
    assert conn.execute("SELECT records_done, complete FROM ingests").fetchone() == (4, 0)
    assert conn.execute("SELECT COUNT(*) FROM documents").fetchone() == (4,)
    conn.close()

    resumed = run(interrupted, path, source)
    assert (resumed.resumed_from, resumed.records, resumed.lines_read) == (4, 1, 5)
    assert resumed.complete

    clean = tmp_path / "c.sqlite"
    assert run(clean, path, source).records == 5
    assert dump_tables(interrupted) == dump_tables(clean)


# -- CLI -------------------------------------------------------------------------------------


def test_cli(tmp_path):
    store = tmp_path / "s.sqlite"
    proc = run_cli("ingest", "trex", str(GOOD), "--store", str(store), "--quiet", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["inputs"][0]
    assert (report["source"], report["records"], report["rejected"], report["complete"]) == ("trex", 5, 0, True)

    proc = run_cli("ingest", "trex", str(MALFORMED), "--store", str(store), "--quiet")
    assert proc.returncode == 3, proc.stderr
    assert (f"3 rejected record(s) and 2 dropped part(s) of stored records written to {store}.rejects.jsonl"
            in proc.stderr)
    assert ": read to its end, incomplete: 4 records in " in proc.stderr and ", 3 rejected, 2 part(s) dropped" in proc.stderr
    # the line and --json say the same of it (issue 46 item 7: the line said "complete")
    again = run_cli("ingest", "trex", str(MALFORMED), "--store", str(tmp_path / "j.sqlite"), "--quiet", "--json")
    assert again.returncode == 3 and json.loads(again.stdout)["inputs"][0]["complete"] is False
    rejects = [json.loads(line) for line in open(f"{store}.rejects.jsonl", encoding="utf-8")]
    assert [r["line"] for r in rejects] == [2, 5, 6, 3, 4]
    assert [(r.get("record"), r.get("path"), r.get("dropped")) for r in rejects] == [
        (None, None, None), (None, None, None), (None, None, None),
        ("Q220", "entities[1]", True), ("Q2807", "triples[0].object", True)]
    assert {r["file"] for r in rejects} == {str(MALFORMED)}
    with KnowledgeGraph(store) as kg:
        assert kg.stats().documents == 9

"""REBEL's T-REx-style files, on real rows: tests/data/trex/rebel_sample_slice.jsonl is 29 lines of
Babelscape/rebel's data/rebel/sample.jsonl (lines 1-20, 31, 120, 153, 203, 227, 259, 295, 773, 825;
CC BY-NC-SA 4.0). Every document is kept, a mention that names nothing drops alone and is named,
a triple on such a mention drops alone, and dates keep the precision the file states."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from conftest import dump_tables, run_cli
from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.ingest import _parse_packed, _unpack, ingest
from factprobe.kg.sources.trex import TrexSource
from factprobe.kg.sources.trex_values import Literal, Unreadable, date, read_uri, stated_precision

SLICE = Path(__file__).parent / "data" / "trex" / "rebel_sample_slice.jsonl"
XSD = "http://www.w3.org/2001/XMLSchema#"
NO_ENTITY = "names no entity (the linker found none)"


def run(store_path, path, source=None):
    with Store(store_path) as store:
        return ingest(store, source or TrexSource(), path, workers=0)


def slice_docs() -> list[dict]:
    return [json.loads(line) for line in SLICE.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def rebel(tmp_path_factory):
    path = tmp_path_factory.mktemp("rebel") / "s.sqlite"
    return path, run(path, SLICE)


# -- the sample: counts by hand and by an independent count over the file --------------------


def test_every_document_is_kept_and_only_bad_mentions_drop(rebel):
    path, report = rebel
    # by hand: 29 documents, 5 mentions REBEL left unlinked ("None" x4, "" x1), one number the
    # Value_Linker wrote as "++5.64"
    assert (report.records, report.rejected, report.dropped, report.complete) == (29, 0, 6, True)
    assert [d[:4] for d in report.drops] == [
        (3, "30114533", "entities[3]", f"uri 'None' {NO_ENTITY}"),
        (11, "29901213", "entities[6]", f"uri 'None' {NO_ENTITY}"),
        (11, "29901213", "entities[9]", f"uri 'None' {NO_ENTITY}"),
        (21, "29553990", "entities[1]", f"uri 'None' {NO_ENTITY}"),
        (24, "29201829", "entities[4]", f"uri '' {NO_ENTITY}"),
        (29, "29419545", "entities[27]", "unreadable number '++5.64'"),
    ]
    assert report.drops[0][4] == ('{"uri":"None","boundaries":[173,200],'
                                  '"surfaceform":"College of Arts and Science","annotator":"Me"}')
    # independently: mentions whose uri is none of the three forms REBEL writes
    docs = slice_docs()
    forms = re.compile(rf"Q[1-9]\d*|\d{{4}}-\d\d-\d\dT00:00:00Z\^\^{XSD}dateTime|[+-]?\d+(\.\d+)?\^\^{XSD}decimal")
    bad = [(i, doc["docid"], k) for i, doc in enumerate(docs, 1)
           for k, e in enumerate(doc["entities"]) if not forms.fullmatch(e["uri"])]
    assert [(line, record, part) for line, record, part, _, _ in report.drops] == [
        (i, d, f"entities[{k}]") for i, d, k in bad]
    with KnowledgeGraph(path) as kg:
        stats = kg.stats()
        assert [d[0] for d in kg.documents()] == sorted(doc["docid"] for doc in docs)
        assert stats.documents == len(docs) == 29
        linked = sum(bool(re.fullmatch(r"Q\d+", e["uri"])) for doc in docs for e in doc["entities"])
        assert stats.annotations == linked == 262


def test_every_triple_is_kept(rebel):
    path, report = rebel
    docs = slice_docs()
    assert sum(len(d["triples"]) for d in docs) == 70  # in 24 documents; 3 repeat a triple
    # independently: distinct (subject, property, object) and (fact, aligner, document) over the file
    triples = {(t["subject"]["uri"], t["predicate"]["uri"], t["object"]["uri"]) for d in docs for t in d["triples"]}
    aligned = {(t["subject"]["uri"], t["predicate"]["uri"], t["object"]["uri"], t["annotator"], d["docid"])
               for d in docs for t in d["triples"]}
    with KnowledgeGraph(path) as kg:
        stats = kg.stats()
        assert (stats.facts, stats.entity_facts, stats.literal_facts) == (len(triples), 47, 20) == (67, 47, 20)
        assert stats.types == 6  # P31/P279 triples
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM provenance").fetchone()[0] == len(aligned) == 67


# Every date and number triple of the slice, each checked by hand against its mention's text.
LITERALS = [
    # (subject, relation, value type, value, extra, the mention's surfaceform)
    ("Q12060769", "P571", "time", "+1971-00-00T00:00:00Z", '{"precision":9}', "1971"),
    ("Q16149427", "P569", "time", "+1951-10-08T00:00:00Z", '{"precision":11}', "October 8, 1951"),
    ("Q16986392", "P571", "time", "+2012-00-00T00:00:00Z", '{"precision":9}', "2012"),
    ("Q17020724", "P1342", "quantity", "+61", None, "61"),
    ("Q2439297", "P569", "time", "+1600-02-01T00:00:00Z", '{"precision":11}', "1 February 1600"),
    ("Q3308968", "P569", "time", "+1961-07-20T00:00:00Z", '{"precision":11}', "20 July 1961"),
    ("Q3742709", "P569", "time", "+1650-04-15T00:00:00Z", '{"precision":11}', "15 April, 1650"),
    ("Q3742709", "P570", "time", "+1685-12-30T00:00:00Z", '{"precision":11}', "30 December, 1685"),
    ("Q4559696", "P585", "time", "+1913-00-00T00:00:00Z", '{"precision":9}', "1913"),
    ("Q4617363", "P585", "time", "+2010-00-00T00:00:00Z", '{"precision":9}', "2010"),
    ("Q4617924", "P585", "time", "+2010-00-00T00:00:00Z", '{"precision":9}', "2010"),
    ("Q4633183", "P571", "time", "+1937-01-00T00:00:00Z", '{"precision":10}', "January 1937"),
    ("Q4653747", "P585", "time", "+1998-00-00T00:00:00Z", '{"precision":9}', "1998"),
    ("Q4767613", "P569", "time", "+1852-06-13T00:00:00Z", '{"precision":11}', "13June 1852"),
    ("Q4767613", "P570", "time", "+1930-06-16T00:00:00Z", '{"precision":11}', "16June 1930"),
    ("Q605750", "P2047", "quantity", "+3", None, "3"),
    ("Q7400416", "P577", "time", "+1933-00-00T00:00:00Z", '{"precision":9}', "1933"),
    ("Q7529031", "P569", "time", "+1676-00-00T00:00:00Z", '{"precision":9}', "1676"),
    ("Q7529031", "P570", "time", "+1714-12-00T00:00:00Z", '{"precision":10}', "December 1714"),
    ("Q7899167", "P571", "time", "+1920-00-00T00:00:00Z", '{"precision":9}', "1920"),
]


def test_dates_keep_the_precision_the_file_states(rebel):
    path, _ = rebel
    conn = sqlite3.connect(path)
    got = conn.execute("SELECT subject, relation, value_type, value, extra FROM facts "
                       "WHERE value_type != 'item' ORDER BY subject, relation").fetchall()
    assert got == [row[:5] for row in LITERALS]
    # the surfaceforms are the file's: every literal triple of it, and each a year alone is a year
    in_file = sorted({(t["subject"]["uri"], t["predicate"]["uri"], t["object"]["surfaceform"])
                      for d in slice_docs() for t in d["triples"] if "^^" in t["object"]["uri"]})
    assert in_file == sorted((s, r, surface) for s, r, *_, surface in LITERALS)
    for *_, value, extra, surface in LITERALS:
        if re.fullmatch(r"\d{4}", surface) and extra:
            assert value == f"+{surface}-00-00T00:00:00Z" and extra == '{"precision":9}'


# -- what a drop costs ---------------------------------------------------------------------


def test_a_triple_on_a_bad_mention_drops_alone(tmp_path):
    # line 3 of the slice with its date mention made impossible (the triple carries the same
    # copy, as the pipeline writes it) and one predicate that is an item
    doc = slice_docs()[2]
    impossible = f"1913-02-30T00:00:00Z^^{XSD}dateTime"
    doc["entities"][5]["uri"] = doc["triples"][1]["object"]["uri"] = impossible
    doc["triples"][2]["predicate"]["uri"] = "Q5"
    path = tmp_path / "doc.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    report = run(tmp_path / "s.sqlite", path)
    assert (report.records, report.rejected, report.dropped) == (1, 0, 4)
    assert [d[:4] for d in report.drops] == [
        (1, "30114533", "entities[3]", f"uri 'None' {NO_ENTITY}"),
        (1, "30114533", "entities[5]", "no such date '1913-02-30T00:00:00Z'"),
        (1, "30114533", "triples[1].object", "no such date '1913-02-30T00:00:00Z'"),
        (1, "30114533", "triples[2].predicate", "not a property: 'Q5'"),
    ]
    assert report.drops[3][4].startswith('{"subject":{"uri":"Q7425573"')  # the whole triple
    with KnowledgeGraph(tmp_path / "s.sqlite") as kg:
        assert [(f.subject, f.relation, f.object) for f in kg.facts()] == [("Q4559696", "P641", "Q248534")]
        assert kg.stats().annotations == 4


def test_drops_travel_from_the_parsing_workers():
    source = TrexSource()
    chunk = next(iter(source.chunks(SLICE, 0, 0)))
    direct = source.parse(chunk)
    for nan_for_none in (False, True):
        packed = _unpack(_parse_packed(source, chunk, nan_for_none))
        assert packed.dropped == direct.dropped and len(packed.dropped) == 6


def test_resumed_ingest_keeps_the_drops(tmp_path):
    source = TrexSource(chunk_documents=10)

    def stop(records, consumed):
        raise KeyboardInterrupt

    interrupted = tmp_path / "i.sqlite"
    with Store(interrupted) as store, pytest.raises(KeyboardInterrupt):
        ingest(store, source, SLICE, workers=0, progress=stop)
    resumed = run(interrupted, SLICE, source)
    assert (resumed.resumed_from, resumed.records, resumed.dropped) == (10, 19, 6)
    clean = tmp_path / "c.sqlite"
    run(clean, SLICE, source)
    assert dump_tables(interrupted) == dump_tables(clean)


def test_cli_names_each_drop_and_exits_0(tmp_path):
    store = tmp_path / "s.sqlite"
    proc = run_cli("ingest", "trex", str(SLICE), "--store", str(store), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert {k: summary["inputs"][0][k] for k in ("records", "rejected", "dropped", "complete")} == {
        "records": 29, "rejected": 0, "dropped": 6, "complete": True}
    assert summary["rejects_file"] == f"{store}.rejects.jsonl"
    lines = [json.loads(x) for x in Path(f"{store}.rejects.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["file"], r["line"], r["record"], r["path"], r["dropped"]) for r in lines] == [
        (str(SLICE), 3, "30114533", "entities[3]", True), (str(SLICE), 11, "29901213", "entities[6]", True),
        (str(SLICE), 11, "29901213", "entities[9]", True), (str(SLICE), 21, "29553990", "entities[1]", True),
        (str(SLICE), 24, "29201829", "entities[4]", True), (str(SLICE), 29, "29419545", "entities[27]", True)]


# -- the value forms of both pipelines -------------------------------------------------------


@pytest.mark.parametrize("uri, surface, expected", [
    ("Q42", None, "Q42"),
    ("http://www.wikidata.org/entity/Q42", None, "Q42"),
    ("<http://www.wikidata.org/prop/direct/P17>", None, "P17"),
    ("wd:Q42", None, "Q42"),
    # REBEL: every date has day and month, filled with 01; the mention says what was written
    (f"1952-01-01T00:00:00Z^^{XSD}dateTime", "1952", Literal("time", "+1952-00-00T00:00:00Z", '{"precision":9}')),
    (f"1952-01-01T00:00:00Z^^{XSD}dateTime", "January 1952", Literal("time", "+1952-01-00T00:00:00Z", '{"precision":10}')),
    (f"1952-01-01T00:00:00Z^^{XSD}dateTime", "1 January 1952", Literal("time", "+1952-01-01T00:00:00Z", '{"precision":11}')),
    (f"1952-01-01T00:00:00Z^^{XSD}dateTime", None, Literal("time", "+1952-01-01T00:00:00Z", '{"precision":11}')),
    # T-REx: parts not read are 00 or left off; cRocoDiLe's SUTime linker quotes and uses xsd:
    (f"1952-00-00T00:00:00Z^^{XSD}dateTime", "1952", Literal("time", "+1952-00-00T00:00:00Z", '{"precision":9}')),
    (f"1879-03-00T00:00:00Z^^{XSD}dateTime", "14 March 1879", Literal("time", "+1879-03-00T00:00:00Z", '{"precision":10}')),
    (f"950^^<{XSD}dateTime>", None, Literal("time", "+0950-00-00T00:00:00Z", '{"precision":9}')),
    ('"-0044-03-15T00:00:00Z"^^xsd:dateTime', "15 March 44 BC", Literal("time", "-0044-03-15T00:00:00Z", '{"precision":11}')),
    (f"1990^^{XSD}gYear", None, Literal("time", "+1990-00-00T00:00:00Z", '{"precision":9}')),
    (f"+4^^{XSD}decimal", "4", Literal("quantity", "+4")),
    (f"-7.50^^{XSD}decimal", "-7.50", Literal("quantity", "-7.5")),
    (f"+0056^^{XSD}decimal", "0056", Literal("quantity", "+56")),
    (f"00^^{XSD}decimal", "00", Literal("quantity", "+0")),
])
def test_uri_forms(uri, surface, expected):
    assert read_uri(uri, surface) == expected


@pytest.mark.parametrize("uri, reason", [
    ("None", f"uri 'None' {NO_ENTITY}"),
    ("", f"uri '' {NO_ENTITY}"),
    (None, f"uri None {NO_ENTITY}"),
    (42, "uri is not a string: 42"),
    ("http://dbpedia.org/resource/Spain", "unknown uri form 'http://dbpedia.org/resource/Spain'"),
    (f"++5.64^^{XSD}decimal", "unreadable number '++5.64'"),
    ("+4^^http://example.org/metre", "unknown datatype 'http://example.org/metre'"),
    (f"2016-06-31T00:00:00Z^^{XSD}dateTime", "no such date '2016-06-31T00:00:00Z'"),
    (f"1990-00-05T00:00:00Z^^{XSD}dateTime", "no such date '1990-00-05T00:00:00Z'"),
    (f"March 1990^^{XSD}dateTime", "unreadable date 'March 1990'"),
])
def test_unreadable_uris(uri, reason):
    with pytest.raises(Unreadable) as caught:
        read_uri(uri, None)
    assert str(caught.value) == reason


@pytest.mark.parametrize("surface, precision", [
    ("1952", 9), ("2477", 9), ("1990s", 9), ("January 1937", 10), ("marzo de 1990", 10),
    ("October 8, 1951", 11), ("13June 1852", 11), ("10/08/1951", 11), ("5 de marzo de 1990", 11),
    ("1990年", 9), ("1990年3月", 10), ("1990年3月5日", 11), ("", None), (None, None), ("spring", None),
])
def test_what_a_mention_states(surface, precision):
    assert stated_precision(surface) == precision


def test_a_date_is_never_finer_than_its_value():
    assert date("1952-00-00T00:00:00Z", "14 March 1952") == ("+1952-00-00T00:00:00Z", 9)
    assert date("1952-03", "14 March 1952") == ("+1952-03-00T00:00:00Z", 10)
    assert date("1952-03-14", None, typed=10) == ("+1952-03-00T00:00:00Z", 10)

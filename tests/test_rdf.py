"""The RDF source (N-Triples, Turtle) on Wikidata-style fixtures.

tests/fixtures/rdf/sample.ttl is a slice in the layout of Wikidata's Turtle dumps (prefix header,
one blank-line-separated block per subject); sample.nt holds the same triples as N-Triples in a
scrambled order (statement pieces, value nodes and entities interleaved), plus one malformed
line (42), where the .ttl has one malformed block (line 173) carrying the same lost triple.
Every expected value below was worked out by reading those files.
"""

from __future__ import annotations

import gzip
import itertools
import json
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.ingest import ingest
from factprobe.kg.model import DEPRECATED, NORMAL, PREFERRED, derived_fact_id
from factprobe.kg.sources.rdf import RdfSource, turtle_chunks
from factprobe.kg.sources.wikidata_json import WikidataJsonSource

from conftest import FIXTURES, dump_tables, kill_midway, run_cli

RDF = FIXTURES / "rdf"
LANGS = ("en", "de")
NT_BAD_LINE = 42
TTL_BAD_LINE = 173

# (id, subject, relation, object, value_type, value, extra, rank,
#  start_time, start_precision, start_key, end_time, end_precision, end_key,
#  point_time, point_precision, point_key); truthy ids are checked separately.
STATEMENTS = [
    ("Q142$D1B2C3D4-0001", "Q142", "P36", "Q90", "item", None, None, NORMAL,
     None, None, None, None, None, None, None, None, None),
    ("Q142$D1B2C3D4-0002", "Q142", "P36", "Q456", "item", None, None, DEPRECATED,
     None, None, None, None, None, None, None, None, None),
    ("Q183$A1B2C3D4-0001", "Q183", "P31", "Q6256", "item", None, None, NORMAL,
     None, None, None, None, None, None, None, None, None),
    ("Q183$A1B2C3D4-0002", "Q183", "P31", "Q3624078", "item", None, None, NORMAL,
     None, None, None, None, None, None, None, None, None),
    ("Q183$B1B2C3D4-0001", "Q183", "P36", "Q64", "item", None, None, PREFERRED,
     "+1990-10-03T00:00:00Z", 11, 19901003, None, None, None, None, None, None),
    ("Q183$B1B2C3D4-0002", "Q183", "P36", "Q586", "item", None, None, NORMAL,
     "+1949-00-00T00:00:00Z", 9, 19490101, "+1990-10-03T00:00:00Z", 11, 19901003,
     None, None, None),
    ("Q183$C1B2C3D4-0001", "Q183", "P1082", None, "quantity", "+80000000", '{"unit":"1"}', NORMAL,
     None, None, None, None, None, None, "+2011-00-00T00:00:00Z", 9, 20110101),
    # RDF year -0249 is XSD 1.1 (year 0 = 1 BCE): Wikidata's 250 BCE, century precision.
    ("Q90$E1B2C3D4-0001", "Q90", "P571", None, "time", "-0250-00-00T00:00:00Z",
     '{"precision":7,"calendar":"Q1985727"}', NORMAL,
     None, None, None, None, None, None, None, None, None),
]
# Truthy triples with no full statement behind them: (subject, relation, object, type, value, extra)
TRUTHY = [
    ("Q142", "P31", "Q6256", "item", None, None),
    ("Q1726", "P31", "Q515", "item", None, None),
    ("Q183", "P1448", None, "monolingualtext", "Bundesrepublik Deutschland", '{"language":"de"}'),
    ("Q456", "P31", "Q515", "item", None, None),
    ("Q5119", "P279", "Q515", "item", None, None),
    ("Q586", "P31", "Q515", "item", None, None),
    ("Q6256", "P279", "Q7275", "item", None, None),
    ("Q64", "P31", "Q515", "item", None, None),
    ("Q64", "P31", "Q5119", "item", None, None),
    ("Q64", "P625", None, "globecoordinate", "52.516666666,13.383333333",
     '{"latitude":52.516666666,"longitude":13.383333333,"precision":null,"globe":"Q2"}'),
    ("Q90", "P31", "Q515", "item", None, None),
    ("Q90", "P31", "Q5119", "item", None, None),
]
ENTITIES = [
    ("P1082", "property", "population", None, 0, "quantity"),
    ("P31", "property", "instance of", None, 0, "wikibase-item"),
    ("P36", "property", "capital", None, 0, "wikibase-item"),
    ("Q142", "item", "France", None, 340, None),
    ("Q1726", "item", "Munich", None, 0, None),
    ("Q183", "item", "Germany", "country in Central Europe", 350, None),
    ("Q3624078", "item", "sovereign state", None, 0, None),
    ("Q456", "item", "Lyon", None, 0, None),
    ("Q5119", "item", "capital city", None, 0, None),
    ("Q515", "item", "city", None, 0, None),
    ("Q586", "item", "Bonn", "city in North Rhine-Westphalia, Germany", 0, None),
    ("Q6256", "item", "country", None, 0, None),
    ("Q64", "item", "Berlin", "capital and largest city of Germany", 250, None),
    ("Q90", "item", "Paris", None, 0, None),
]  # Q7275 is only an object and has no labels: no entity row.
TYPES = [
    ("Q142", "Q6256", "P31"), ("Q1726", "Q515", "P31"), ("Q183", "Q3624078", "P31"),
    ("Q183", "Q6256", "P31"), ("Q456", "Q515", "P31"), ("Q5119", "Q515", "P279"),
    ("Q586", "Q515", "P31"), ("Q6256", "Q7275", "P279"), ("Q64", "Q5119", "P31"),
    ("Q64", "Q515", "P31"), ("Q90", "Q5119", "P31"), ("Q90", "Q515", "P31"),
]
CONTENT = ("entities", "names", "types", "facts", "staged_parts")


def load(path, store, source=None, **kw):
    source = source or RdfSource(languages=LANGS)
    with Store(store, languages=LANGS) as st:
        return ingest(st, source, path, workers=0, **kw)


def content(store) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(store)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in CONTENT}
    finally:
        conn.close()


def fact_rows(store):
    conn = sqlite3.connect(store)
    try:
        return conn.execute(
            "SELECT id, subject, relation, object, value_type, value, extra, rank, "
            "start_time, start_precision, start_key, end_time, end_precision, end_key, "
            "point_time, point_precision, point_key, source FROM facts ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def nt_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("nt") / "g.sqlite"
    report = load(RDF / "sample.nt", store)
    return store, report


def test_nt_exact_contents(nt_store):
    store, report = nt_store
    assert report.rejected == 1 and not report.truncated and report.lines_read == 169
    [(line, reason, text)] = report.rejects
    assert line == NT_BAD_LINE and reason.startswith("malformed N-Triples")
    assert "Minga" in text

    rows = fact_rows(store)
    assert all(r[-1] == "rdf" for r in rows)
    statements = [r[:-1] for r in rows if "$" in r[0]]
    assert statements == STATEMENTS
    truthy = sorted((r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows if "$" not in r[0])
    assert truthy == sorted(TRUTHY)
    for r in rows:
        if "$" not in r[0]:
            assert r[0].startswith(f"rdf:{r[1]}:{r[2]}:") and r[7] == NORMAL and r[8:17] == (None,) * 9
            if r[3] is not None:
                assert r[0] == derived_fact_id("rdf", r[1], r[2], r[3])

    conn = sqlite3.connect(store)
    assert conn.execute("SELECT * FROM entities ORDER BY id").fetchall() == ENTITIES
    assert conn.execute("SELECT * FROM types ORDER BY entity, type").fetchall() == TYPES
    names = conn.execute("SELECT entity, lang, text, is_alias FROM names ORDER BY 1, 2, 4, 3").fetchall()
    conn.close()
    q183 = [n for n in names if n[0] == "Q183"]
    assert q183 == [("Q183", "de", "Deutschland", 0), ("Q183", "de", "BRD", 1),
                    ("Q183", "en", "Germany", 0), ("Q183", "en", "FRG", 1),
                    ("Q183", "en", "Federal Republic of Germany", 1)]  # no fr: not configured
    assert ("Q1726", "de", "München", 0) in names
    assert not any(n[2] == "Minga" for n in names)  # on the malformed line
    assert len(names) == 35


def test_read_api_on_rdf(nt_store):
    store, _ = nt_store
    with KnowledgeGraph(store) as kg:
        assert kg.objects("Q183", "P36") == ["Q64"]
        assert kg.objects("Q183", "P36", at="1980") == ["Q586"]
        assert kg.temporal_objects("Q183", "P36") == ["Q586"]
        assert kg.objects("Q142", "P36") == ["Q90"]  # Lyon is deprecated
        assert not kg.is_fact("Q142", "P36", "Q456")
        assert kg.types("Q64") == ["Q5119", "Q515"]
        assert kg.labels("Q1726", "de").label == "München"
        assert kg.labels("P36").aliases == ("seat of government",)
        assert kg.entity("Q7275") is None
        stats = kg.stats()
        assert (stats.facts, stats.deprecated_facts, stats.temporal_facts) == (20, 1, 3)
        assert stats.sources == {"rdf": 20}


def test_turtle_same_as_ntriples(nt_store, tmp_path):
    store, _ = nt_store
    report = load(RDF / "sample.ttl", tmp_path / "ttl.sqlite")
    [(line, reason, text)] = report.rejects
    assert line == TTL_BAD_LINE and reason.startswith("malformed Turtle")
    assert text.startswith('wd:Q1726 skos:altLabel "Minga"@de')
    assert content(tmp_path / "ttl.sqlite") == content(store)


@pytest.mark.parametrize("chunk_bytes", [64, 700])
def test_chunking_and_order_do_not_matter(nt_store, tmp_path, chunk_bytes):
    """Statements whose pieces land in different chunks, in any order, assemble alike."""
    store, _ = nt_store
    lines = (RDF / "sample.nt").read_text(encoding="utf-8").splitlines()
    for seed in (1, 2):
        random.Random(seed).shuffle(lines)
        shuffled = tmp_path / f"shuffled{seed}.nt"
        shuffled.write_text("\n".join(lines) + "\n", encoding="utf-8")
        target = tmp_path / f"s{seed}.sqlite"
        report = load(shuffled, target, RdfSource(languages=LANGS, chunk_bytes=chunk_bytes))
        assert report.rejected == 1
        assert content(target) == content(store)
    # Turtle cut into many chunks: each chunk ends at a blank line and carries the prefixes.
    chunks = list(turtle_chunks(RDF / "sample.ttl", chunk_bytes=chunk_bytes))
    assert len(chunks) > 5
    assert all(c.data.endswith(b"\n\n") for c in chunks[:-1])
    assert all(b"@prefix wd:" in c.header for c in chunks[1:])
    target = tmp_path / "ttl.sqlite"
    load(RDF / "sample.ttl", target, RdfSource(languages=LANGS, chunk_bytes=chunk_bytes))
    assert content(target) == content(store)


class _Crash(Exception):
    pass


class CrashingSource(RdfSource):
    """Dies after handing over `after` chunks, like a killed process would (the driver has
    committed what it committed)."""

    def __init__(self, after: int, **kw):
        super().__init__(**kw)
        object.__setattr__(self, "after", after)

    def chunks(self, path, start, position, digest=None):
        for i, chunk in enumerate(super().chunks(path, start, position, digest)):
            if i == self.after:
                raise _Crash()
            yield chunk


@pytest.mark.parametrize("name", ["sample.nt", "sample.ttl"])
def test_resume_after_crash_is_exact(nt_store, tmp_path, name):
    store, _ = nt_store
    target = tmp_path / "g.sqlite"
    small = {"languages": LANGS, "chunk_bytes": 600}
    with pytest.raises(_Crash):
        load(RDF / name, target, CrashingSource(5, **small))
    with Store(target) as st:
        [state] = [st.ingest_state(k) for (k,) in st.conn.execute("SELECT key FROM ingests")]
    assert not state.complete and state.records_done > 0
    report = load(RDF / name, target, RdfSource(**small))
    assert report.resumed_from == state.records_done and report.rejected == 1
    assert content(target) == content(store)


def test_reingest_is_idempotent(tmp_path):
    target = tmp_path / "g.sqlite"
    load(RDF / "sample.nt", target)
    with KnowledgeGraph(target) as kg:
        first = kg.stats()
    before = content(target)
    again = load(RDF / "sample.nt", target)
    assert again.already_done
    redo = load(RDF / "sample.nt", target, restart=True)
    assert redo.records == 130 and redo.rejected == 1  # 128 + the article (line 11) and data node (116) of Q183
    load(RDF / "sample.ttl", target)  # the same graph in the other syntax changes nothing
    with KnowledgeGraph(target) as kg:
        assert kg.stats() == first
    assert content(target) == before


def test_nt_gz(nt_store, tmp_path):
    store, _ = nt_store
    gz = tmp_path / "sample.nt.gz"
    with open(RDF / "sample.nt", "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    report = load(gz, tmp_path / "gz.sqlite")
    assert report.rejects[0][0] == NT_BAD_LINE
    assert content(tmp_path / "gz.sqlite") == content(store)


@pytest.mark.parametrize("json_first", [True, False])
def test_json_and_rdf_statement_is_one_row(tmp_path, json_first):
    """A statement in a Wikidata JSON dump and in RDF (wds:Q183-B1... = Q183$B1...) is one row."""
    target = tmp_path / "g.sqlite"
    json_source = WikidataJsonSource(languages=LANGS)
    steps = [(json_source, RDF / "overlap.json"), (RdfSource(languages=LANGS), RDF / "sample.nt")]
    for source, path in (steps if json_first else steps[::-1]):
        with Store(target, languages=LANGS) as st:
            ingest(st, source, path, workers=0)
    conn = sqlite3.connect(target)
    p36 = conn.execute("SELECT id, object, rank, start_time, start_precision, end_time, source "
                       "FROM facts WHERE subject='Q183' AND relation='P36' ORDER BY id").fetchall()
    total = conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
    entity = conn.execute("SELECT * FROM entities WHERE id='Q183'").fetchone()
    conn.close()
    last = "rdf" if json_first else "wikidata-json"
    assert p36 == [
        ("Q183$B1B2C3D4-0001", "Q64", PREFERRED, "+1990-10-03T00:00:00Z", 11, None, last),
        ("Q183$B1B2C3D4-0002", "Q586", NORMAL, "+1949-00-00T00:00:00Z", 9, "+1990-10-03T00:00:00Z", last),
    ]
    assert total == 20  # the RDF graph's 20 facts; the JSON statements are all among them
    # Entity rows merge field by field whatever the order: the larger sitelink count stays.
    assert entity == ("Q183", "item", "Germany", "country in Central Europe", 350, None)


def test_truthy_twin_of_a_json_statement_is_dropped(tmp_path):
    target = tmp_path / "g.sqlite"
    truthy = tmp_path / "truthy.nt"
    truthy.write_text(
        "<http://www.wikidata.org/entity/Q183> <http://www.wikidata.org/prop/direct/P36> "
        "<http://www.wikidata.org/entity/Q64> .\n"
        "<http://www.wikidata.org/entity/Q183> <http://www.wikidata.org/prop/direct/P47> "
        "<http://www.wikidata.org/entity/Q142> .\n", encoding="utf-8")
    with Store(target, languages=LANGS) as st:
        ingest(st, WikidataJsonSource(languages=LANGS), RDF / "overlap.json", workers=0)
        ingest(st, RdfSource(languages=LANGS), truthy, workers=0)
    with KnowledgeGraph(target) as kg:
        assert [f.id for f in kg.facts(subject="Q183", relation="P36")] == [
            "Q183$B1B2C3D4-0001", "Q183$B1B2C3D4-0002"]
        assert [f.id for f in kg.facts(subject="Q183", relation="P47")] == [
            derived_fact_id("rdf", "Q183", "P47", "Q142")]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_two_links_of_two_properties_to_one_statement_are_one_fact(tmp_path, order):
    """The RDF twin of one statement id in two places: a statement node linked by p:P36 and
    p:P31. Its fact is the one its ps: value says (P36), in whatever order the triples come."""
    e, s = "<http://www.wikidata.org/entity/", "<http://www.wikidata.org/entity/statement/"
    lines = [f"{e}Q64> <http://www.wikidata.org/prop/P36> {s}Q64-X> .",
             f"{e}Q64> <http://www.wikidata.org/prop/P31> {s}Q64-X> .",
             f"{s}Q64-X> <http://www.wikidata.org/prop/statement/P36> {e}Q1> ."]
    path = tmp_path / "twice.nt"
    path.write_text("".join(lines[k] + "\n" for k in order), encoding="utf-8")
    report = load(path, tmp_path / "g.sqlite", RdfSource(languages=LANGS, chunk_bytes=64))
    assert (report.rejects, report.drops) == ([], [])
    assert [r[:5] for r in fact_rows(tmp_path / "g.sqlite")] == [("Q64$X", "Q64", "P36", "Q1", "item")]


def test_format_from_option_and_unknown_extension(tmp_path):
    odd = tmp_path / "graph.data"
    shutil.copy(RDF / "sample.ttl", odd)
    report = load(odd, tmp_path / "a.sqlite", RdfSource(languages=LANGS, format="ttl"))
    assert report.rejects[0][0] == TTL_BAD_LINE
    from factprobe.kg.readers import InputError

    with pytest.raises(InputError, match="--format"):
        load(odd, tmp_path / "b.sqlite")


def test_cli_ingest_rdf(nt_store, tmp_path):
    store, _ = nt_store
    target = tmp_path / "cli.sqlite"
    proc = run_cli("ingest", "rdf", str(RDF / "sample.nt"), "--store", str(target),
                   "--languages", "en,de", "--quiet", "--json")
    assert proc.returncode == 3, proc.stderr  # done, with one rejected line
    out = json.loads(proc.stdout)
    [entry] = out["inputs"]
    assert entry["records"] == 130 and entry["rejected"] == 1
    rejects = [json.loads(line) for line in Path(out["rejects_file"]).read_text().splitlines()]
    assert [(r["line"], r["file"]) for r in rejects] == [(NT_BAD_LINE, str(RDF / "sample.nt"))]
    assert content(target) == content(store)
    facts = run_cli("kg", "facts", "--relation", "P36", "--subject", "Q183", "--store", str(target),
                    "--json", check=True)
    assert [json.loads(line)["id"] for line in facts.stdout.splitlines()] == [
        "Q183$B1B2C3D4-0001", "Q183$B1B2C3D4-0002"]


def _scrambled_nt(path: Path, entities: int) -> int:
    """Statements with qualifiers and shared value nodes, lines shuffled so every statement's
    pieces are spread over the file. Returns the number of lines."""
    wd = "http://www.wikidata.org/"
    lines = []
    for i in range(1, entities + 1):
        e = f"<{wd}entity/Q{i}>"
        lines.append(f'{e} <http://www.w3.org/2000/01/rdf-schema#label> "Entity {i}"@en .')
        for k in range(2):
            st = f"<{wd}entity/statement/Q{i}-{k}-C0FFEE>"
            o = f"<{wd}entity/Q{1 + (i * 7 + k) % entities}>"
            lines += [
                f"{e} <{wd}prop/direct/P150> {o} .",
                f"{e} <{wd}prop/P150> {st} .",
                f"{st} <{wd}prop/statement/P150> {o} .",
                f"{st} <http://wikiba.se/ontology#rank> <http://wikiba.se/ontology#"
                f"{'Preferred' if k else 'Normal'}Rank> .",
                f'{st} <{wd}prop/qualifier/P580> "19{i % 90 + 10}-01-01T00:00:00Z"'
                f"^^<http://www.w3.org/2001/XMLSchema#dateTime> .",
                f"{st} <{wd}prop/qualifier/value/P580> <{wd}value/n{i % 90 + 10}> .",
            ]
    for y in range(10, 100):
        lines.append(f'<{wd}value/n{y}> <http://wikiba.se/ontology#timeValue> "19{y}-01-01T00:00:00Z"'
                     f"^^<http://www.w3.org/2001/XMLSchema#dateTime> .")
        lines.append(f'<{wd}value/n{y}> <http://wikiba.se/ontology#timePrecision> '
                     f'"{9 + y % 3}"^^<http://www.w3.org/2001/XMLSchema#integer> .')
    random.Random(7).shuffle(lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


@pytest.mark.slow
def test_sigkill_then_rerun_equals_uninterrupted(tmp_path):
    nt = tmp_path / "big.nt"
    total = _scrambled_nt(nt, 1500)
    killed, clean = tmp_path / "killed.sqlite", tmp_path / "clean.sqlite"
    args = ["ingest", "rdf", str(nt), "--chunk-size", "32768", "--workers", "0", "--quiet"]
    done_at_kill = kill_midway(args, killed, after=total // 10)
    assert done_at_kill < total

    resumed = run_cli(*args, "--store", str(killed), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["inputs"][0]["resumed_from"] == done_at_kill
    run_cli(*args, "--store", str(clean), check=True)
    assert dump_tables(killed) == dump_tables(clean)
    with KnowledgeGraph(clean) as kg:
        assert kg.stats().facts == 3000  # every truthy triple has its statement
        [fact] = [f for f in kg.facts(subject="Q8", relation="P150") if f.rank == PREFERRED]
        assert (fact.start.time, fact.start.precision) == ("+1918-00-00T00:00:00Z", 9)  # node n18: precision 9

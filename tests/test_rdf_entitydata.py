"""The RDF reader reads an entity as the Wikidata JSON reader reads it (issue 37 item 2).

tests/data/rdf/Q42.json.gz and Q42.ttl.gz are Wikidata's Special:EntityData/Q42.json and .ttl of
one revision (2441354823, 2025-12-12; source and licence in tests/data/README.md): Q42's only
label is `mul`, it has 129 sitelinks, and one statement GUID starts with F and digits
(`Q42-F9192141-ED87-...`). Both are ingested and the stores compared table by table. What one
format cannot carry is excluded by name below, nothing else:
- the Turtle also describes the 461 properties and items Q42's statements name (labels,
  descriptions, datatypes: Special:EntityData's default flavour); the JSON holds Q42 alone, so
  only Q42's rows are compared, and the others are checked to be labels only;
- `revisions` is the JSON reader's record of which revision it holds (kg/revisions.py); the RDF
  reader keeps none, and the test checks the two files are the same revision instead;
- RDF's xsd:dateTime cannot say `00` for a month or day: Wikidata writes a year-precision date
  as 1983-01-01 there, so the JSON's `+1983-01-01T00:00:00Z` at precision 9 (one qualifier) reads
  as `+1983-00-00T00:00:00Z` from RDF, the form of Q42's other year-precision dates; the time
  text is compared at its precision (its key, precision and every other column as they are).
tests/fixtures/rdf/other_wikibase.ttl is a Wikibase whose concept URI is not `<server>/entity/`.
"""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from pathlib import Path

import pytest
from rdflib import Graph

from factprobe.kg import Store
from factprobe.kg.ingest import ingest
from factprobe.kg.sources.rdf import RdfSource, statement_id
from factprobe.kg.sources.wikidata_json import WikidataJsonSource

from conftest import FIXTURES, run_cli

DATA = Path(__file__).parent / "data" / "rdf"
LANGS = ("en", "de")
GHOST = "Q42$F9192141-ED87-49B0-AA50-EB0553C091CE"  # wds:Q42-F9192141-ED87-... (P11249, an external id)
YEAR_AS_DAY = "Q42$4A5D5EDF-5E67-4014-855A-429C0A798A49"  # P166 Inkpot Award, P585 +1983-01-01 at precision 9
OTHER = FIXTURES / "rdf" / "other_wikibase.ttl"
OTHER_PREFIX = "https://kb.example.org/id/"


def rows(store, sql, *args) -> list[tuple]:
    conn = sqlite3.connect(store)
    try:
        return sorted(conn.execute(sql, args).fetchall(), key=repr)
    finally:
        conn.close()


def ingest_q42(tmp: Path, keep_external_ids: bool) -> tuple[Path, Path]:
    """The JSON as served goes in as the dump line it is in latest-all.json (one entity a line)."""
    served = json.loads(gzip.decompress((DATA / "Q42.json.gz").read_bytes()))
    [entity] = served["entities"].values()
    dump = tmp / "Q42.json"
    dump.write_text("[\n" + json.dumps(entity, ensure_ascii=False) + "\n]\n", encoding="utf-8")
    stores = tmp / "json.sqlite", tmp / "rdf.sqlite"
    sources = (WikidataJsonSource(languages=LANGS, keep_external_ids=keep_external_ids),
               RdfSource(languages=LANGS, keep_external_ids=keep_external_ids))
    for store, source, path in zip(stores, sources, (dump, DATA / "Q42.ttl.gz")):
        with Store(store, languages=LANGS) as st:
            report = ingest(st, source, path, workers=0)
        assert report.rejected == 0, report.rejects
    return stores


@pytest.fixture(scope="module")
def q42(tmp_path_factory):
    return ingest_q42(tmp_path_factory.mktemp("q42"), keep_external_ids=False)


@pytest.fixture(scope="module")
def q42_with_ids(tmp_path_factory):
    return ingest_q42(tmp_path_factory.mktemp("q42ids"), keep_external_ids=True)


def test_the_two_files_are_one_revision():
    entity = json.loads(gzip.decompress((DATA / "Q42.json.gz").read_bytes()))["entities"]["Q42"]
    ttl = gzip.decompress((DATA / "Q42.ttl.gz").read_bytes()).decode("utf-8")
    assert (entity["lastrevid"], entity["modified"]) == (2441354823, "2025-12-12T17:50:31Z")
    assert 'schema:version "2441354823"^^xsd:integer' in ttl
    assert 'schema:dateModified "2025-12-12T17:50:31Z"^^xsd:dateTime' in ttl
    assert "mul" in entity["labels"] and not {"en", "de"} & (set(entity["labels"]) | set(entity["aliases"]))
    assert len(entity["sitelinks"]) == 129


def test_q42_entity_and_names_are_the_json_readers(q42):
    json_store, rdf_store = q42
    row = ("Q42", "item", "Douglas Adams", "British science fiction writer and humorist (1952–2001)", 129, None)
    for store in q42:
        assert rows(store, "SELECT * FROM entities WHERE id='Q42'") == [row]
    # The only label and aliases are `mul`: they are Q42's names in every asked language.
    names = [(lang, text, alias) for lang in ("de", "en") for text, alias in (
        ("Douglas Adams", 0), ("Douglas N. Adams", 1), ("Douglas Noel Adams", 1), ("Douglas Noël Adams", 1))]
    for store in q42:
        assert rows(store, "SELECT lang, text, is_alias FROM names WHERE entity='Q42'") == sorted(names, key=repr)
    assert rows(json_store, "SELECT * FROM types") == rows(rdf_store, "SELECT * FROM types") == [("Q42", "Q5", "P31")]
    assert (rows(json_store, "SELECT * FROM meta WHERE key='as_of'")
            == rows(rdf_store, "SELECT * FROM meta WHERE key='as_of'") == [("as_of", "2025-12-12")])


_TIME = re.compile(r"^([+-]\d+)-(\d\d)-(\d\d)(T.*)$")


def at_precision(fact: tuple) -> tuple:
    """A fact row with each time text's month and day zeroed below its precision (see the
    docstring); every other column as it is."""
    out = list(fact)
    for text, precision in ((8, 9), (11, 12), (14, 15)):
        if out[text] is not None:
            year, month, day, rest = _TIME.match(out[text]).groups()
            month = "00" if out[precision] <= 9 else month
            day = "00" if out[precision] <= 10 else day
            out[text] = f"{year}-{month}-{day}{rest}"
    return tuple(out)


def compare_facts(stores) -> list[tuple]:
    json_store, rdf_store = stores
    columns = "id, subject, relation, object, value_type, value, extra, rank, start_time, start_precision, " \
              "start_key, end_time, end_precision, end_key, point_time, point_precision, point_key"
    from_json = rows(json_store, f"SELECT {columns} FROM facts")
    from_rdf = rows(rdf_store, f"SELECT {columns} FROM facts")
    assert {f[0] for f in set(from_json) ^ set(from_rdf)} <= {YEAR_AS_DAY}
    assert [at_precision(f) for f in from_json] == [at_precision(f) for f in from_rdf]
    assert {source for (source,) in rows(rdf_store, "SELECT DISTINCT source FROM facts")} == {"rdf"}
    return from_rdf


def test_q42_statements_and_qualifiers_are_the_json_readers(q42):
    facts = compare_facts(q42)
    assert len(facts) == 78  # the non-external-id statements of Q42, every one from its full statement
    assert all(f[0].upper().startswith("Q42$") and f[1] == "Q42" for f in facts)
    [award] = [f for f in facts if f[0] == YEAR_AS_DAY]
    assert award[14:] == ("+1983-00-00T00:00:00Z", 9, 19830101)
    assert sum(f[8] is not None or f[11] is not None or f[14] is not None for f in facts) == 16  # with P580/P582/P585


def test_q42_external_ids_kept_alike_and_the_f_guid_is_q42s(q42_with_ids):
    facts = compare_facts(q42_with_ids)
    assert len(facts) == 332  # wikibase:statements "332" in the Turtle
    [ghost] = [f for f in facts if f[0] == GHOST]
    assert ghost[1:6] == ("Q42", "P11249", None, "string", "14651562")
    json_store, rdf_store = q42_with_ids
    assert rows(rdf_store, "SELECT id FROM entities WHERE id LIKE 'Q42-%'") == []


def test_the_turtles_other_entities_are_labels_only(q42):
    json_store, rdf_store = q42
    assert rows(json_store, "SELECT id FROM entities") == [("Q42",)]
    others = rows(rdf_store, "SELECT kind, COUNT(*), SUM(sitelinks) FROM entities WHERE id != 'Q42' GROUP BY kind")
    assert others == [("item", 128, 0), ("property", 333, 0)]
    assert rows(rdf_store, "SELECT DISTINCT subject FROM facts") == [("Q42",)]
    assert rows(rdf_store, "SELECT COUNT(*) FROM revisions") == [(0,)]


@pytest.mark.parametrize(("local", "expected"), [
    ("Q42-F9192141-ED87-49B0-AA50-EB0553C091CE", ("Q42$F9192141-ED87-49B0-AA50-EB0553C091CE", "Q42")),
    ("q42-BB4B67FE-FECA-4469-9DEE-3E8F03AC9F1D", ("q42$BB4B67FE-FECA-4469-9DEE-3E8F03AC9F1D", "Q42")),
    ("P31-S1234567-89AB-4CDE-8F01-23456789ABCD", ("P31$S1234567-89AB-4CDE-8F01-23456789ABCD", "P31")),
    ("L7-F1234567-89AB-4CDE-8F01-23456789ABCD", ("L7$F1234567-89AB-4CDE-8F01-23456789ABCD", "L7")),
    ("L7-F2-0D9F2B4C-1C0E-4C5D-9A8B-7E6F5D4C3B2A", ("L7-F2$0D9F2B4C-1C0E-4C5D-9A8B-7E6F5D4C3B2A", "L7-F2")),
    ("L7-S3-abc", ("L7-S3$abc", "L7-S3")),
    ("Q5-F9-abc", ("Q5$F9-abc", "Q5")),
])
def test_a_statement_guid_of_any_shape_belongs_to_its_entity(local, expected):
    assert statement_id(local) == expected


# -- another Wikibase ---------------------------------------------------------------------------

OTHER_ENTITIES = [
    ("P1", "property", "notable work", None, 0, "wikibase-item"),
    ("P2", "property", "ORCID iD", None, 0, "external-id"),
    ("P3", "property", "date of birth", None, 0, "time"),
    ("Q1", "item", "Ada Lovelace", "mathematician", 2, None),  # the data node's count
    ("Q2", "item", "Analytical Engine", None, 1, None),  # no count declared: its one article
]
OTHER_NAMES = [
    ("P1", "en", "notable work", 0), ("P2", "en", "ORCID iD", 0), ("P3", "en", "date of birth", 0),
    ("Q1", "de", "Ada King", 0), ("Q1", "de", "Augusta Ada King", 1),
    ("Q1", "en", "Ada Lovelace", 0), ("Q1", "en", "Augusta Ada King", 1),
    ("Q2", "de", "Analytical Engine", 0), ("Q2", "en", "Analytical Engine", 0),
]
OTHER_FACTS = [  # the external id (P2) skipped, as the JSON reader skips it
    ("Q1$0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D", "Q1", "P3", None, "time", "+1815-12-10T00:00:00Z",
     '{"precision":11,"calendar":"Q1985727"}', 1),
    ("Q1$F1234567-89AB-4CDE-8F01-23456789ABCD", "Q1", "P1", "Q2", "item", None, None, 1),
]


def other_content(store) -> tuple:
    return (rows(store, "SELECT * FROM entities"), rows(store, "SELECT * FROM names"),
            rows(store, "SELECT id, subject, relation, object, value_type, value, extra, rank FROM facts"),
            rows(store, "SELECT * FROM meta WHERE key='as_of'"))


def test_another_wikibase_reads_with_its_entity_prefix(tmp_path):
    nt = tmp_path / "other.nt"  # N-Triples carry no prefixes: the option names the Wikibase's
    nt.write_text(Graph().parse(OTHER, format="turtle").serialize(format="nt"), encoding="utf-8")
    silent = run_cli("ingest", "rdf", str(nt), "--store", str(tmp_path / "silent.sqlite"), "--quiet")
    assert silent.returncode == 2
    assert f"{nt}: nothing read from it" in silent.stderr and "--entity-prefix" in silent.stderr

    run_cli("ingest", "rdf", str(nt), "--entity-prefix", OTHER_PREFIX, "--store", str(tmp_path / "nt.sqlite"),
            "--languages", "en,de", "--quiet", check=True)
    expected = (OTHER_ENTITIES, OTHER_NAMES, OTHER_FACTS, [("as_of", "2024-05-01")])
    assert other_content(tmp_path / "nt.sqlite") == expected
    # A Turtle file's `@prefix wd:` names it without the option.
    run_cli("ingest", "rdf", str(OTHER), "--store", str(tmp_path / "ttl.sqlite"), "--languages", "en,de",
            "--quiet", check=True)
    assert other_content(tmp_path / "ttl.sqlite") == expected


def test_external_ids_kept_when_asked(tmp_path):
    run_cli("ingest", "rdf", str(OTHER), "--keep-external-ids", "--store", str(tmp_path / "g.sqlite"),
            "--languages", "en", "--quiet", check=True)
    assert rows(tmp_path / "g.sqlite", "SELECT id, relation, value FROM facts WHERE relation='P2'") == [
        ("Q1$5B7C1D2E-0F3A-4B5C-9D6E-7F8091A2B3C4", "P2", "0000-0001-2103-6420")]


def test_a_property_read_after_its_statements_still_drops_them(tmp_path):
    """Order does not matter: the external-id property's datatype last, in its own chunk."""
    blocks = OTHER.read_text(encoding="utf-8").rstrip("\n").split("\n\n")
    [p2] = [b for b in blocks if b.startswith("wd:P2 ")]
    moved = tmp_path / "moved.ttl"
    moved.write_text("\n\n".join([b for b in blocks if b is not p2] + [p2]) + "\n", encoding="utf-8")
    with Store(tmp_path / "g.sqlite", languages=LANGS) as st:
        ingest(st, RdfSource(languages=LANGS, chunk_bytes=512), moved, workers=0)
    assert other_content(tmp_path / "g.sqlite")[2] == OTHER_FACTS


@pytest.mark.parametrize(("command", "content"), [
    (("ingest", "wikidata"), "[\n]\n"),
    (("ingest", "rdf"), "@prefix wd: <http://www.wikidata.org/entity/> .\n"),
])
def test_an_input_that_yields_nothing_says_so(tmp_path, command, content):
    path = tmp_path / ("empty.json" if command[1] == "wikidata" else "empty.ttl")
    path.write_text(content, encoding="utf-8")
    proc = run_cli(*command, str(path), "--store", str(tmp_path / "g.sqlite"), "--quiet")
    assert proc.returncode == 2
    assert f"error: {path}: nothing read from it" in proc.stderr

"""Records from strangers: a statement id belongs to its record's entity, a duplicate key is a
named reject (a JSON parser would silently keep the last value), and a byte order mark at the
start of a dump is not a record. Real-shaped records: those of tests/fixtures/wikidata/dump.json.
"""

from __future__ import annotations

import bz2
import copy
import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import Graph

from factprobe.cli.main import main
from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.ingest import ingest
from factprobe.kg.readers import BOM, json_record
from factprobe.kg.sources.rdf import RdfSource, turtle_chunks
from factprobe.kg.sources.trex import TrexSource
from factprobe.kg.sources.wikidata_json import WikidataJsonSource

from conftest import FIXTURES, content_tables

DUMP = FIXTURES / "wikidata" / "dump.json"
Q42_TTL = Path(__file__).parent / "data" / "rdf" / "Q42.ttl.gz"  # Special:EntityData/Q42.ttl
Q42_TRIPLES_READ = 4581  # of its 16,556 triples, those the RDF reader takes anything from
RECORDS = {e["id"]: e for e in (json.loads(x.strip().rstrip(",")) for x in DUMP.open() if x.strip() not in ("[", "]", ""))}


def write(path: Path, records: list[dict | str]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    return path


def cli(dump: Path, store: Path):
    result = CliRunner().invoke(main, ["ingest", "wikidata", str(dump), "--store", str(store), "--quiet",
                                       "--workers", "0"])
    rejects = Path(f"{store}.rejects.jsonl")
    return result, [json.loads(x) for x in rejects.read_text().splitlines()] if rejects.exists() else []


def statement_ids(store: Path, subject: str, relation: str) -> list[tuple[str, str]]:
    with Store(store) as st:
        return st.conn.execute("SELECT id, object FROM facts WHERE subject=? AND relation=? ORDER BY id",
                               (subject, relation)).fetchall()


# -- a statement id belongs to its record's entity ------------------------------------------------

def test_another_entitys_statement_id_is_a_named_reject_and_takes_nothing_over(tmp_path):
    """The issue's case: Q183's Bonn statement (Q183$B2, capital P36 = Q586) appears on Q64."""
    berlin = copy.deepcopy(RECORDS["Q64"])
    berlin["claims"]["P36"] = [copy.deepcopy(RECORDS["Q183"]["claims"]["P36"][1])]
    berlin["lastrevid"] = 2  # a newer record of Berlin, read after Germany's
    dump = write(tmp_path / "dump.json", [*RECORDS.values(), berlin])
    result, rejects = cli(dump, tmp_path / "s.sqlite")
    assert result.exit_code == 0 and "Traceback" not in result.output  # the statement is dropped, Berlin stored
    line = len(RECORDS) + 2
    assert [{k: v for k, v in r.items() if k != "excerpt"} for r in rejects] == [
        {"file": str(dump), "line": line, "record": "Q64", "path": "claims.P36[0]", "dropped": True,
         "reason": "id: statement id 'Q183$B2' names 'Q183', not Q64"}]
    assert rejects[0]["excerpt"].startswith('{"mainsnak":{"snaktype":"value","property":"P36"')
    assert statement_ids(tmp_path / "s.sqlite", "Q183", "P36") == [("Q183$B1", "Q64"), ("Q183$B2", "Q586")]
    assert statement_ids(tmp_path / "s.sqlite", "Q64", "P36") == []
    assert statement_ids(tmp_path / "s.sqlite", "Q64", "P17") == [("Q64$A2", "Q183")]  # the rest of the record


def test_statement_ids_are_checked_as_wikidata_writes_them(tmp_path):
    germany = copy.deepcopy(RECORDS["Q183"])
    germany["claims"]["P36"][0]["id"] = "q183$B1"  # lower case: occurs in real dumps
    germany["claims"]["P36"][1]["id"] = "Q1830$B2"  # another entity whose id starts alike
    germany["claims"]["P31"][0]["id"] = "A1"  # no entity at all
    lexeme = {"type": "lexeme", "id": "L7", "lastrevid": 3, "claims": {"P5185": [
        {"mainsnak": {"snaktype": "value", "property": "P5185", "datatype": "wikibase-item",
                      "datavalue": {"type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q1084"}}},
         "type": "statement", "id": statement, "rank": "normal"} for statement in ("L7$X1", "L7-F1$X2", "L8-F1$X3")]}}
    dump = write(tmp_path / "dump.json", [germany, lexeme])
    with Store(tmp_path / "s.sqlite") as st:
        report = ingest(st, WikidataJsonSource(), dump, workers=0)
    assert report.rejects == [] and sorted(d[:4] for d in report.drops) == [
        (2, "Q183", "claims.P31[0]", "id: statement id 'A1' names no entity, not Q183"),
        (2, "Q183", "claims.P36[1]", "id: statement id 'Q1830$B2' names 'Q1830', not Q183"),
        (3, "L7", "claims.P5185[2]", "id: statement id 'L8-F1$X3' names 'L8-F1', not L7")]
    assert statement_ids(tmp_path / "s.sqlite", "Q183", "P36") == [("q183$B1", "Q64")]
    assert statement_ids(tmp_path / "s.sqlite", "L7", "P5185") == [("L7$X1", "Q1084"), ("L7-F1$X2", "Q1084")]


# -- duplicate keys ---------------------------------------------------------------------------------

def test_a_record_with_a_key_twice_is_rejected_naming_the_key(tmp_path):
    germany = json.dumps(RECORDS["Q183"])
    twice_id = germany.replace('"id": "Q183"', '"id": "Q183", "id": "Q64"', 1)
    berlin = json.dumps(RECORDS["Q64"]).replace('"value": "Berlin"', '"value": "Berlin", "value": "Bonn"', 1)
    others = [r for q, r in RECORDS.items() if q not in ("Q183", "Q64")]
    dump = write(tmp_path / "dump.json", [twice_id, *others, berlin])
    result, rejects = cli(dump, tmp_path / "s.sqlite")
    assert result.exit_code == 3 and "Traceback" not in result.output
    assert [(r["line"], r["reason"]) for r in rejects] == [
        (2, 'duplicate key "id" in the record'), (len(RECORDS) + 1, 'duplicate key "value" in labels.en')]
    with KnowledgeGraph(tmp_path / "s.sqlite") as kg:
        assert kg.entity("Q183") is None and kg.entity("Q64") is None
        assert kg.entity("Q586").label == "Bonn"


def _json(value, dup: bool, escape: bool) -> str:
    """`value` written as JSON; an object is a list of (key, value) pairs, so it may hold a key
    twice; `escape` writes colons inside strings as \\u003a."""
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        return "{" + ", ".join(f"{_json(k, dup, escape)}:{_json(v, dup, escape)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_json(v, dup, escape) for v in value) + "]"
    text = json.dumps(value, ensure_ascii=False)
    return text.replace(":", "\\u003a") if escape and isinstance(value, str) else text


keys = st.sampled_from(["id", "a", "a:b", 'q"', "\\", "value", ":"])
scalars = st.one_of(st.integers(-5, 5), st.sampled_from(["x", "a:b", "::", 'say "hi": ok', "\\\":"]), st.none())
objects = st.recursive(
    st.lists(st.tuples(keys, scalars), min_size=1, max_size=4),
    lambda inner: st.lists(st.tuples(keys, st.one_of(scalars, inner, st.lists(inner, max_size=2))), min_size=1, max_size=4),
    max_leaves=12)


def _has_duplicate(value) -> bool:
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        names = [k for k, _ in value]
        return len(set(names)) != len(names) or any(_has_duplicate(v) for _, v in value)
    if isinstance(value, list):
        return any(_has_duplicate(v) for v in value)
    return False


@settings(max_examples=300, deadline=None)
@given(record=objects, escape=st.booleans())
def test_duplicate_keys_are_found_wherever_they_are(record, escape):
    """The bulk path's cheap check never lets a duplicate through, however strings are written."""
    value, reason = json_record(_json(record, True, escape).encode())
    if _has_duplicate(record):
        assert value is None and reason.startswith("duplicate key ")
    else:
        assert reason is None and isinstance(value, dict)


# -- a byte order mark starts some files ------------------------------------------------------------

@pytest.mark.parametrize("suffix,opener", [("", open), (".gz", gzip.open), (".bz2", bz2.open)])
def test_a_byte_order_mark_at_the_start_of_a_dump_is_not_a_record(tmp_path, suffix, opener):
    marked = tmp_path / f"marked.json{suffix}"
    with opener(marked, "wb") as f:
        f.write(BOM + DUMP.read_bytes())
    assert cli(DUMP, tmp_path / "plain.sqlite")[0].exit_code == 0
    result, rejects = cli(marked, tmp_path / "marked.sqlite")
    assert (result.exit_code, rejects) == (0, [])
    assert content_tables(tmp_path / "marked.sqlite") == content_tables(tmp_path / "plain.sqlite")


def test_a_byte_order_mark_before_a_record_line_is_skipped(tmp_path):
    """A dump without the bracket line (one record a line) starts with its first record."""
    lines = [json.dumps(r) for r in RECORDS.values()]
    dump = tmp_path / "lines.json"
    dump.write_bytes(BOM + "\n".join(lines).encode() + b"\n")
    with Store(tmp_path / "s.sqlite") as st:
        report = ingest(st, WikidataJsonSource(), dump, workers=0)
    assert (report.records, report.rejects) == (len(RECORDS), [])


def test_a_byte_order_mark_at_the_start_of_a_trex_file_is_not_a_document(tmp_path):
    source = FIXTURES / "trex" / "re-nlg_0-5.json"
    marked = tmp_path / "marked.json"
    marked.write_bytes(BOM + source.read_bytes())
    reports = []
    for name, path in (("plain", source), ("marked", marked)):
        with Store(tmp_path / f"{name}.sqlite") as st:
            reports.append(ingest(st, TrexSource(), path, workers=0))
    assert [(r.records, r.rejects) for r in reports] == [(5, []), (5, [])]
    assert content_tables(tmp_path / "marked.sqlite") == content_tables(tmp_path / "plain.sqlite")


def q42_turtle(wd_first: bool) -> bytes:
    """Q42's Turtle as served; or with its `wd:` directive first (other tools write the prefixes
    in other orders), so that the first directive is one the later blocks use."""
    text = gzip.decompress(Q42_TTL.read_bytes())
    if wd_first:
        wd = b"@prefix wd: <http://www.wikidata.org/entity/> .\n"
        text = wd + text.replace(wd, b"", 1)
    return text


def rdf_stores(tmp_path: Path, name: str, text: bytes, chunk_bytes: int) -> list:
    """The reports of `text` read with and without a byte order mark before it."""
    reports = []
    for kind, data in (("plain", text), ("marked", BOM + text)):
        path = tmp_path / kind / name
        path.parent.mkdir()
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        with Store(tmp_path / f"{kind}.sqlite", languages=("en", "de")) as st:
            reports.append(ingest(st, RdfSource(languages=("en", "de"), chunk_bytes=chunk_bytes), path, workers=0))
    return reports


@pytest.mark.parametrize("wd_first", [False, True])
def test_a_byte_order_mark_before_turtle_is_read_past(tmp_path, wd_first):
    text = q42_turtle(wd_first)
    reports = rdf_stores(tmp_path, "Q42.ttl.gz", text, chunk_bytes=4096)
    assert [(r.records, r.rejects, r.drops) for r in reports] == [(Q42_TRIPLES_READ, [], [])] * 2
    assert content_tables(tmp_path / "marked.sqlite") == content_tables(tmp_path / "plain.sqlite")
    # The mark is no part of the first block, and every chunk carries the first directive
    # too; offsets still count the file's bytes (a resumed read starts where it stopped).
    chunks = [list(turtle_chunks(tmp_path / kind / "Q42.ttl.gz", chunk_bytes=4096)) for kind in ("plain", "marked")]
    assert [(c.first, c.count, c.data, c.header, c.position + len(BOM)) for c in chunks[0]] == [
        (c.first, c.count, c.data, c.header, c.position) for c in chunks[1]]
    third = chunks[1][2]  # and a read resumed after a chunk goes on as the whole read did
    assert list(turtle_chunks(tmp_path / "marked" / "Q42.ttl.gz", start_line=third.first + third.count - 1,
                              start_position=third.position, chunk_bytes=4096)) == chunks[1][3:]


def test_a_byte_order_mark_before_n_triples_is_read_past(tmp_path):
    """Q42's Turtle as N-Triples, one triple a line."""
    text = Graph().parse(data=q42_turtle(False).decode(), format="turtle").serialize(format="nt").encode()
    reports = rdf_stores(tmp_path, "Q42.nt", text, chunk_bytes=4096)
    assert [(r.records, r.rejects, r.drops) for r in reports] == [(Q42_TRIPLES_READ, [], [])] * 2
    assert content_tables(tmp_path / "marked.sqlite") == content_tables(tmp_path / "plain.sqlite")

"""Issue 44 acceptance 6, the ingest's readers: generated hostile values (nesting, size, lone
surrogates, bytes that are not UTF-8, huge numbers, NaN and Infinity) put into one real record
of a dump, an N-Triples file and a T-REx file. Whatever the value and wherever it stands, the
ingest exits 0 or 3 (3 exactly when a record is rejected, as cli/ingest_cmds.py does), never
with a traceback; every reject or drop is one line naming the file and the hostile record's
line (a T-REx document's index); and every good record is stored as a clean ingest stores it.

Real records: tests/fixtures/wikidata/dump.json's entities, Q42's triples from
tests/data/rdf/Q42.ttl.gz, tests/fixtures/trex/re-nlg_0-5.json's documents.
"""

from __future__ import annotations

import copy
import gzip
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_hostile_ingest import Q42_TTL, TREX, entities, ingest, stored, write_dump

CAP = 16 << 10  # --max-record-bytes: above every good line used here (the longest is 5,034 bytes)
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
HOLE = "@@HOSTILE@@"

# (kind, the value as JSON text or literal text). Each kind says whether a JSON reader must
# reject it: orjson reads 20-digit integers (as floats), nothing deeper than 1,024 levels.
hostile = st.one_of(
    st.sampled_from([255, 1_025, 5_000, 100_000]).map(lambda d: ("deep", b"[" * d + b"]" * d)),
    st.sampled_from([CAP + 1, 50_000, 200_000]).map(lambda n: ("size", b'"' + b"a" * n + b'"')),
    st.sampled_from([b"\\ud800", b"\\udfff", b"x\\udbffy"]).map(lambda s: ("surrogate", b'"a' + s + b'b"')),
    st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\xc3", b"\x80abc"]).map(lambda s: ("utf8", b'"a' + s + b'b"')),
    st.sampled_from([20, 400, 5_000]).map(lambda n: ("integer", b"1" + b"0" * n)),
    st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e999"]).map(lambda s: ("nan", s)),
)
MUST_REJECT_JSON = {"deep", "size", "surrogate", "utf8", "nan"}  # and integers of 400 digits or more


def check(result, rejects: list[dict], path: Path, line: int) -> None:
    """Exit 0 or 3 as the rejects say, no traceback, each reject one line naming path:line."""
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == (3 if any(not r.get("dropped") for r in rejects) else 0), result.stderr[-2000:]
    for r in rejects:
        assert (r["file"], r["line"]) == (str(path), line) and "\n" not in r["reason"], r


def without(tables: dict[str, list[tuple]], name: str) -> dict[str, list[tuple]]:
    """The tables less every row that mentions the hostile record's id."""
    return {k: [r for r in rows if not any(isinstance(v, str) and name in v for v in r)] for k, rows in tables.items()}


# -- the Wikidata JSON dump -------------------------------------------------------------------

DUMP_PLACES = ("labels.en.value", "descriptions.en.value", "claims.P17.0.mainsnak.datavalue.value", "sitelinks",
               "claims.P17.0.rank", "x")


@pytest.fixture(scope="module")
def clean_dump(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dump")
    lines = [json.dumps(e, ensure_ascii=False) for e in entities(20)]
    result, rejects = ingest("wikidata", write_dump(folder / "d.json", lines), folder / "s.sqlite",
                             "--max-record-bytes", str(CAP))
    assert (result.returncode, rejects) == (0, [])
    return lines, stored(folder / "s.sqlite")


def hostile_entity(place: str, value: bytes) -> bytes:
    """Berlin's real record as entity Q1, with `value` at `place`."""
    record = copy.deepcopy(next(e for e in entities(14) if e["labels"]["en"]["value"] == "Berlin"))
    record["id"] = "Q1"
    for statements in record["claims"].values():
        for s in statements:
            s["id"] = "Q1" + s["id"][s["id"].index("$"):]
    *parents, last = place.split(".")
    node = record
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[last] = HOLE
    return json.dumps(record, ensure_ascii=False).encode().replace(json.dumps(HOLE).encode(), value)


@SETTINGS
@given(value=hostile, place=st.sampled_from(DUMP_PLACES), at=st.integers(0, 20))
def test_a_hostile_value_in_a_dump_record_costs_that_record_at_most(clean_dump, value, place, at):
    lines, clean = clean_dump
    kind, raw = value
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "dump.json"
        good = [x.encode() for x in lines]
        dump.write_bytes(b"[\n" + b",\n".join(good[:at] + [hostile_entity(place, raw)] + good[at:]) + b"\n]\n")
        result, rejects = ingest("wikidata", dump, Path(tmp) / "s.sqlite", "--max-record-bytes", str(CAP))
        check(result, rejects, dump, at + 2)
        if kind in MUST_REJECT_JSON or (kind == "integer" and len(raw) > 400):
            assert [r for r in rejects if not r.get("dropped")], (kind, rejects)
        assert without(stored(Path(tmp) / "s.sqlite"), "Q1") == without(clean, "Q1")


# -- N-Triples --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def clean_ntriples(tmp_path_factory):
    from rdflib import Graph

    folder = tmp_path_factory.mktemp("nt")
    text = gzip.decompress(Q42_TTL.read_bytes()).decode("utf-8")
    lines = sorted(Graph().parse(data=text, format="turtle").serialize(format="nt").splitlines())[:600]
    path = folder / "q42.nt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result, rejects = ingest("rdf", path, folder / "s.sqlite", "--max-record-bytes", str(CAP))
    assert (result.returncode, rejects) == (0, [])
    return [x.encode() for x in lines], stored(folder / "s.sqlite")


def hostile_triple(kind: str, raw: bytes, typed: bool) -> bytes:
    """A triple about Q1 whose literal is the hostile value: a label, or a population (typed)."""
    text = raw[1:-1] if raw.startswith(b'"') else raw
    if typed:
        return (b"<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P1082> \""
                + text + b'"^^<http://www.w3.org/2001/XMLSchema#decimal> .')
    return b'<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> "' + text + b'"@en .'


@SETTINGS
@given(value=hostile, typed=st.booleans(), at=st.integers(0, 600))
def test_a_hostile_value_in_an_n_triples_literal_costs_that_triple_at_most(clean_ntriples, value, typed, at):
    lines, clean = clean_ntriples
    kind, raw = value
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "q.nt"
        path.write_bytes(b"\n".join(lines[:at] + [hostile_triple(kind, raw, typed)] + lines[at:]) + b"\n")
        result, rejects = ingest("rdf", path, Path(tmp) / "s.sqlite", "--max-record-bytes", str(CAP))
        check(result, rejects, path, at + 1)
        if kind in ("surrogate", "utf8", "size"):  # what no store can hold, or the cap
            assert rejects, (kind, raw[:40])
        assert without(stored(Path(tmp) / "s.sqlite"), "Q1") == without(clean, "Q1")


# -- T-REx ------------------------------------------------------------------------------------

TREX_PLACES = ("text", "title", "entities.0.boundaries.0", "entities.0.uri", "triples.0.object.surfaceform",
               "triples.0.predicate.boundaries")


@pytest.fixture(scope="module")
def clean_trex(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trex")
    docs = json.loads(TREX.read_text(encoding="utf-8"))
    path = folder / "docs.json"
    path.write_text(json.dumps(docs), encoding="utf-8")
    result, rejects = ingest("trex", path, folder / "s.sqlite", "--max-record-bytes", str(CAP))
    assert (result.returncode, rejects) == (0, [])
    return docs, stored(folder / "s.sqlite")


@SETTINGS
@given(value=hostile, place=st.sampled_from(TREX_PLACES), at=st.integers(0, 6))
def test_a_hostile_value_in_a_trex_document_costs_that_document_at_most(clean_trex, value, place, at):
    docs, clean = clean_trex
    kind, raw = value
    doc = copy.deepcopy(docs[0])
    doc["docid"] = "http://www.wikidata.org/entity/Q1"
    *parents, last = place.split(".")
    node = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(last) if isinstance(node, list) else last] = HOLE
    bad = json.dumps(doc).encode().replace(json.dumps(HOLE).encode(), raw)
    texts = [json.dumps(d).encode() for d in docs]
    at = min(at, len(texts))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "docs.json"
        path.write_bytes(b"[" + b",\n".join(texts[:at] + [bad] + texts[at:]) + b"]")
        result, rejects = ingest("trex", path, Path(tmp) / "s.sqlite", "--max-record-bytes", str(CAP))
        check(result, rejects, path, at + 1)  # T-REx names a document by its index, from 1
        if kind in MUST_REJECT_JSON or (kind == "integer" and len(raw) > 400):
            assert [r for r in rejects if not r.get("dropped")], (kind, rejects)
        assert without(stored(Path(tmp) / "s.sqlite"), "Q1") == without(clean, "Q1")


# A document: a string full of escapes and quotes, or brackets inside strings, of varied size.
documents = st.lists(st.one_of(
    st.integers(1, 300).map(lambda n: {"docid": "d", "text": 'a\\"b\\' * n}),
    st.integers(1, 60).map(lambda n: {"docid": "d", "x": [[{"q": ']}"[{'}]] * n}),
    st.just({"docid": "d", "t": "x"})), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(docs=documents, cap=st.sampled_from([100, 500, 3000]), in_array=st.booleans(),
       blocks=st.lists(st.integers(1, 700), min_size=1, max_size=5))
def test_the_trex_splitter_lets_go_of_the_same_documents_however_the_blocks_fall(docs, cap, in_array, blocks):
    """Every document over the cap, and only those, comes out as a TooLong of its first bytes;
    the others whole; and a resume from any document's position reads the same rest."""
    from factprobe.kg.sources.trex_split import DocumentSplitter, TooLong

    texts = [json.dumps(d).encode() for d in docs]
    data = b"[" + b",\n".join(texts) + b"]" if in_array else b"\n".join(texts)

    def split(splitter, data):
        out, i, k = [], 0, 0
        while i < len(data):
            size = blocks[k % len(blocks)]
            out += splitter.feed(data[i:i + size])
            i, k = i + size, k + 1
        return out + splitter.feed(b"", final=True)

    def seen(out):  # a TooLong holds the first bytes read before the cap was passed: 160 at most
        return [("too long",) if isinstance(r, TooLong) else r for r, _ in out]

    out = split(DocumentSplitter(cap=cap), data)
    assert seen(out) == [("too long",) if len(t) > cap else t for t in texts]
    for (r, _), t in zip(out, texts):
        assert not isinstance(r, TooLong) or (t.startswith(r) and len(r) >= min(160, cap))
    for j, (_, code) in enumerate(out):
        assert seen(split(DocumentSplitter(code >> 1, bool(code & 1), cap=cap), data[code >> 1:])) == seen(out[j + 1:])

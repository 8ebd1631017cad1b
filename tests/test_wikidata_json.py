"""The Wikidata JSON dump source and the read API, on a hand-written dump slice.

Every expected value below was worked out by reading tests/fixtures/wikidata/dump.json.
"""

from __future__ import annotations

import bz2
import gzip
import json
import shutil
from pathlib import Path

import pytest

from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.ingest import ingest
from factprobe.kg.model import DEPRECATED, PREFERRED
from factprobe.kg.readers import InputError
from factprobe.kg.sources.wikidata_json import WikidataJsonSource

from conftest import FIXTURES, content_tables, dump_tables


def load(path: Path, store: Path, languages=("en",), **kw):
    source = WikidataJsonSource(languages=languages, **kw)
    with Store(store, languages=languages) as st:
        report = ingest(st, source, path, workers=0)
    return report, KnowledgeGraph(store)


@pytest.fixture
def kg(tmp_path, wikidata_dump):
    report, graph = load(wikidata_dump, tmp_path / "g.sqlite")
    assert report.complete and report.records == 14 and report.rejected == 0
    yield graph
    graph.close()


def test_stats_exact(kg):
    s = kg.stats()
    assert (s.entities, s.items, s.properties) == (14, 12, 2)
    assert s.facts == 25  # 26 statements, the external-id one skipped on purpose
    assert (s.entity_facts, s.literal_facts) == (16, 9)
    assert s.temporal_facts == 6
    assert s.deprecated_facts == 1
    assert s.relations == 14
    assert s.types == 8
    assert s.names == 22
    assert s.sources == {"wikidata-json": 25}


def test_entity_labels_aliases_and_mul_fallback(kg):
    e = kg.entity("Q183")
    assert (e.id, e.kind, e.label, e.description, e.sitelinks, e.datatype) == (
        "Q183", "item", "Germany", "country in Central Europe", 10, None)
    # The alias equal to the label is not repeated as an alias.
    assert kg.labels("Q183").label == "Germany"
    assert kg.labels("Q183").aliases == ("FRG", "Federal Republic of Germany")
    # Q30 has only a "mul" label: it holds for English too.
    assert kg.entity("Q30").label == "United States"
    assert kg.labels("Q30").all() == ("United States", "USA", "United States of America")
    p = kg.entity("P36")
    assert (p.kind, p.label, p.datatype) == ("property", "capital", "wikibase-item")
    assert kg.entity("Q999") is None


def test_types_direct_p31_and_p279_for_classes(kg):
    assert kg.types("Q183") == ["Q3624078", "Q6256"]
    assert kg.types("Q5119") == ["Q515"]  # a class: its P279
    assert kg.types("Q515") == []  # no closure
    assert kg.entities_of_type("Q3624078") == ["Q183", "Q30"]
    assert kg.entities_of_type("Q515") == ["Q5119", "Q586"]


def test_objects_current_and_at_date(kg):
    assert kg.objects("Q183", "P36") == ["Q64"]
    assert kg.objects("Q183", "P36", at="1980") == ["Q586"]
    assert kg.objects("Q183", "P36", at="1949-06-01") == ["Q586"]
    assert kg.objects("Q183", "P36", at="1948") == []
    assert kg.objects("Q183", "P36", at="1990-10-03") == ["Q586", "Q64"]  # the handover day
    assert kg.objects("Q183", "P36", at="1990-10-04") == ["Q64"]
    # End at year precision covers the whole year.
    assert kg.objects("Q937", "P27", at="1896-12-31") == ["Q183"]
    assert kg.objects("Q937", "P27", at="1897-01-01") == []
    assert kg.objects("Q937", "P27") == ["Q30"]


def test_temporal_objects_and_is_fact(kg):
    assert kg.temporal_objects("Q183", "P36") == ["Q586"]
    assert kg.temporal_objects("Q937", "P27") == ["Q183"]
    assert kg.temporal_objects("Q183", "P36", at="1980") == []
    assert kg.is_fact("Q183", "P36", "Q64")
    assert not kg.is_fact("Q183", "P36", "Q586")
    assert kg.is_fact("Q183", "P36", "Q586", at="1970")


def test_deprecated_is_kept_but_never_true(kg):
    assert kg.objects("Q937", "P106") == ["Q169470"]
    assert not kg.is_fact("Q937", "P106", "Q36180")
    facts = {f.id: f for f in kg.facts(subject="Q937", include_deprecated=True)}
    assert facts["Q937$C2"].rank == DEPRECATED and facts["Q937$C2"].object == "Q36180"
    assert "Q937$C2" not in {f.id for f in kg.facts(subject="Q937")}


def test_literal_values_and_no_values(kg):
    facts = {f.id: f for f in kg.facts(subject="Q183")}
    pop = facts["Q183$C2"]
    assert (pop.value_type, pop.value, pop.rank) == ("quantity", "+83200000", PREFERRED)
    assert json.loads(pop.extra) == {"unit": "1", "lowerBound": "+83100000", "upperBound": "+83300000"}
    assert (pop.point.time, pop.point.precision) == ("+2023-00-00T00:00:00Z", 9)
    name = facts["Q183$D1"]
    assert (name.value_type, name.value, json.loads(name.extra)) == (
        "monolingualtext", "Bundesrepublik Deutschland", {"language": "de"})
    where = facts["Q183$E1"]
    assert (where.value_type, where.value) == ("globecoordinate", "51.0,10.0")
    assert json.loads(where.extra) == {"latitude": 51.0, "longitude": 10.0, "precision": 0.1, "globe": "Q2"}
    assert (facts["Q183$G1"].value_type, facts["Q183$G1"].value) == ("string", "DE")
    assert "Q183$F1" not in facts  # external id
    bonn = facts["Q183$B2"]
    assert (bonn.start.time, bonn.start.precision, bonn.end.time, bonn.end.precision) == (
        "+1949-00-00T00:00:00Z", 9, "+1990-10-03T00:00:00Z", 11)
    person = {f.id: f for f in kg.facts(subject="Q937")}
    born = person["Q937$B1"]
    assert (born.value_type, born.value, json.loads(born.extra)) == (
        "time", "+1879-03-14T00:00:00Z", {"precision": 11, "calendar": "Q1985727"})
    assert (person["Q937$D1"].value_type, person["Q937$D1"].object) == ("somevalue", None)
    assert (person["Q937$D2"].value_type, person["Q937$D2"].object) == ("novalue", None)
    assert not person["Q937$D1"].is_true
    assert kg.objects("Q937", "P40") == []


def test_relations_and_search(kg):
    assert kg.relations() == [
        ("P31", None, 6), ("P17", None, 2), ("P27", None, 2), ("P279", None, 2),
        ("P36", "capital", 2), ("P106", None, 1),
    ]
    assert kg.search("CAPITAL") == ["Q5119", "P36"]
    assert kg.search("Einstein") == ["Q937"]
    assert [f.object for f in kg.facts(relation="P36")] == ["Q64", "Q586"]


def test_language_selection(tmp_path, wikidata_dump):
    _, kg = load(wikidata_dump, tmp_path / "de.sqlite", languages=("de", "en"))
    assert kg.languages == ("de", "en")
    assert kg.entity("Q183").label == "Deutschland"
    assert kg.labels("Q183", "de").all() == ("Deutschland", "BRD", "Bundesrepublik Deutschland")
    assert kg.labels("Q183", "en").label == "Germany"
    assert kg.entity("Q5").label == "human"  # no German label: falls back to the next language
    assert kg.stats().names == 22 + 7


def test_keep_external_ids(tmp_path, wikidata_dump):
    _, kg = load(wikidata_dump, tmp_path / "x.sqlite", keep_external_ids=True)
    viaf = [f for f in kg.facts(subject="Q183", relation="P214")]
    assert [(f.value_type, f.value) for f in viaf] == [("string", "154938290")]
    assert kg.stats().facts == 26


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".bz2", bz2.open)])
def test_compressed_dumps_give_identical_stores(tmp_path, wikidata_dump, suffix, opener):
    packed = tmp_path / f"dump.json{suffix}"
    with opener(packed, "wb") as f:
        f.write(wikidata_dump.read_bytes())
    load(wikidata_dump, tmp_path / "plain.sqlite")[1].close()
    load(packed, tmp_path / "packed.sqlite")[1].close()
    plain, other = dump_tables(tmp_path / "plain.sqlite"), dump_tables(tmp_path / "packed.sqlite")
    for table in plain:
        if table not in ("ingests", "input_digests"):  # what identifies each input differs
            assert plain[table] == other[table], table


def test_ingesting_twice_changes_nothing(tmp_path, wikidata_dump):
    store = tmp_path / "twice.sqlite"
    load(wikidata_dump, store)[1].close()
    before = dump_tables(store)
    report, kg = load(wikidata_dump, store)
    assert report.already_done
    kg.close()
    with Store(store) as st:  # forced full re-ingest: upserts, same rows
        ingest(st, WikidataJsonSource(), wikidata_dump, workers=0, restart=True)
    assert dump_tables(store) == before
    # The same content under another name is the same input.
    moved = tmp_path / "renamed.json"
    shutil.copy(wikidata_dump, moved)
    report, kg = load(moved, store)
    assert report.already_done
    kg.close()


def test_bad_lines_are_counted_skipped_and_located(tmp_path):
    report, kg = load(FIXTURES / "wikidata" / "bad.json", tmp_path / "bad.sqlite")
    assert report.records == 3 and not report.complete and not report.truncated
    reasons = {line: reason for line, reason, _ in report.rejects}
    assert sorted(reasons) == [3, 4, 5, 7]
    assert reasons[3].startswith("malformed JSON")
    assert reasons[4] == "invalid UTF-8"
    assert reasons[5] == "entity without id"
    assert reasons[7] == "not a JSON object"
    # a statement whose value cannot be read is dropped alone: its entity is stored
    assert [d[:4] for d in report.drops] == [
        (6, "Q11", "claims.P999[0]", "mainsnak.datavalue.type: unknown datavalue type 'tabular-blob'")]
    # Good entities before and after the bad lines are in, and so is the good part of line 6.
    assert [kg.entity(q).label for q in ("Q515", "Q586", "Q11")] == ["city", "Bonn", "odd value"]
    assert kg.objects("Q11", "P31") == ["Q5"]
    assert list(kg.facts(relation="P999")) == []


# bz2 decompresses in whole blocks (100 kB at level 1): data before the damaged block survives.
@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open),
                                           (".bz2", lambda p, m: bz2.open(p, m, compresslevel=1))])
def test_truncated_compressed_dump_keeps_what_was_read(tmp_path, suffix, opener):
    # Enough distinct entities that the compressed stream is long and the cut lands mid-way.
    lines = [json.dumps({"type": "item", "id": f"Q{i}", "labels": {"en": {"language": "en", "value": f"entity {i} {i * 7919 % 10007}"}}, "claims": {}})
             for i in range(1, 3001)]
    full = ("[\n" + ",\n".join(lines) + "\n]\n").encode()
    packed = tmp_path / f"cut.json{suffix}"
    with opener(packed, "wb") as f:
        f.write(full)
    data = packed.read_bytes()
    packed.write_bytes(data[: len(data) // 2])
    report, kg = load(packed, tmp_path / "cut.sqlite")
    assert report.truncated and not report.complete
    got = kg.stats().entities
    assert 0 < got < 3000
    # Everything before the damage is in, in order: Q1..Q<got>.
    assert kg.entity(f"Q{got}") is not None and kg.entity(f"Q{got + 1}") is None
    (line, reason, text), *rest = [r for r in report.rejects if r[1] == "truncated input"]
    assert line >= got + 1 and "truncated or corrupt compressed data" in text


def test_missing_input_is_one_clear_error(tmp_path):
    with Store(tmp_path / "s.sqlite") as st, pytest.raises(InputError, match=r"nope\.json: no such file"):
        ingest(st, WikidataJsonSource(), tmp_path / "nope.json")


# -- a newer record of an entity replaces the older one (kg/revisions.py) ---------------------

def _records(path: Path) -> list[dict]:
    return [json.loads(x.strip().rstrip(",")) for x in path.open() if x.strip() not in ("[", "]", "")]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("[\n" + ",\n".join(json.dumps(e) for e in records) + "\n]\n", encoding="utf-8")
    return path


def _newer(records: list[dict]) -> list[dict]:
    """The fixture a revision later: Q183 renamed, an alias and a fact removed; Q64's type changed."""
    out = json.loads(json.dumps(records))
    by_id = {e["id"]: e for e in out}
    germany, berlin = by_id["Q183"], by_id["Q64"]
    germany["labels"]["en"]["value"] = "Federal Republic"
    germany["aliases"]["en"] = [{"language": "en", "value": "Federal Republic of Germany"}]
    del germany["claims"]["P1813"]  # the fact Q183$G1
    berlin["claims"]["P31"][0]["mainsnak"]["datavalue"]["value"].update({"numeric-id": 515, "id": "Q515"})
    for e in (germany, berlin):
        e["lastrevid"], e["modified"] = 2, "2026-02-01T00:00:00Z"
    return out


@pytest.fixture
def versions(tmp_path, wikidata_dump):
    v1 = _records(wikidata_dump)
    v2_store = tmp_path / "v2.sqlite"
    v2 = _write(tmp_path / "v2.json", _newer(v1))
    with Store(v2_store) as st:
        ingest(st, WikidataJsonSource(), v2, workers=0)
    return wikidata_dump, v2, content_tables(v2_store)


def test_a_newer_dump_brings_the_store_to_its_state(tmp_path, versions):
    v1, v2, v2_alone = versions
    store = tmp_path / "s.sqlite"
    with Store(store) as st:
        ingest(st, WikidataJsonSource(), v1, workers=0)
        st.write_fact_frequencies("wiki", (1, 10), [("Q183$G1", 3, "1-10"), ("Q183$B1", 5, "1-10")])
        report = ingest(st, WikidataJsonSource(), v2, workers=0)
    assert report.older_ignored == 0 and report.records == 14
    after = content_tables(store)
    # The count of the removed fact goes with it; the kept fact keeps its count.
    assert after.pop("fact_frequencies") == [("Q183$B1", "wiki", 5, "1-10", "1,10")]
    assert after == {t: rows for t, rows in v2_alone.items() if t != "fact_frequencies"}
    with KnowledgeGraph(store) as kg:
        assert kg.search("Germany") == [] and kg.search("FRG") == []
        assert kg.search("Federal Republic") == ["Q183"]
        assert kg.types("Q64") == ["Q515"] and kg.entities_of_type("Q5119") == []
        assert [f.id for f in kg.facts(subject="Q183", relation="P1813")] == []
        assert kg.as_of() == "2026-02-01"


def test_an_older_record_read_later_is_ignored_and_counted(tmp_path, versions):
    v1, v2, v2_alone = versions
    store = tmp_path / "s.sqlite"
    with Store(store) as st:
        ingest(st, WikidataJsonSource(), v2, workers=0)
        report = ingest(st, WikidataJsonSource(), v1, workers=0)
    # Q183 and Q64 are older in v1; the other twelve have the same revision: the later read wins.
    assert report.older_ignored == 2 and report.records == 14
    assert content_tables(store) == v2_alone


@pytest.mark.parametrize("chunk_bytes", [4096, 1 << 20])  # the two records in two chunks, and in one
def test_two_records_of_an_entity_in_one_dump(tmp_path, versions, chunk_bytes):
    v1, v2, v2_alone = versions
    old, new = _records(v1), _records(v2)
    # Q183: the newer record first, then the older; Q64: the older first, then the newer.
    both = _write(tmp_path / "both.json", new[:1] + old + new[1:])
    store = tmp_path / "s.sqlite"
    with Store(store) as st:
        report = ingest(st, WikidataJsonSource(chunk_bytes=chunk_bytes), both, workers=0)
    assert report.older_ignored == 1 and report.rejected == 0
    assert content_tables(store) == v2_alone
    # Equal revisions: the record read later wins.
    same = _write(tmp_path / "same.json", [*old, {**old[0], "labels": {"en": {"language": "en", "value": "Later"}}}])
    with Store(tmp_path / "t.sqlite") as st:
        report = ingest(st, WikidataJsonSource(chunk_bytes=chunk_bytes), same, workers=0)
    assert report.older_ignored == 0
    with KnowledgeGraph(tmp_path / "t.sqlite") as kg:
        assert kg.entity("Q183").label == "Later" and kg.labels("Q183").all() == ("Later", "FRG", "Federal Republic of Germany", "Germany")


def test_a_newer_dump_filtered_by_relations_brings_the_store_to_its_state(tmp_path, versions):
    """`--relations` copies through a staging store (kg/restrict.py): a newer record replaces the
    store's for the relations read, an older one is left out and counted; another filter's facts
    of the same entity stay."""
    from factprobe.kg.restrict import ingest_relations

    v1, v2, _ = versions
    relations = frozenset({"P1813", "P31"})

    def filtered(path, *dumps):
        with Store(path) as st:
            return [ingest_relations(st, WikidataJsonSource(), d, relations, workers=0) for d in dumps]

    filtered(tmp_path / "f2.sqlite", v2)
    v2_alone = content_tables(tmp_path / "f2.sqlite")
    filtered(tmp_path / "f12.sqlite", v1, v2)
    both = content_tables(tmp_path / "f12.sqlite")
    # The one difference: Q5119 (capital), Q64's class in v1 and no longer needed in v2, stays
    # (nothing is collected, kg/restrict.py), with its rows as v1 had them.
    q5119 = {t: [r for r in rows if r and r[0] == "Q5119"] for t, rows in both.items()}
    assert {t: len(r) for t, r in q5119.items() if r} == {"entities": 1, "names": 2, "types": 1, "revisions": 1}
    assert {t: [r for r in rows if not (r and r[0] == "Q5119")] for t, rows in both.items()} == v2_alone
    with KnowledgeGraph(tmp_path / "f12.sqlite") as kg:
        assert kg.search("Germany") == [] and kg.search("Federal Republic") == ["Q183"]
        assert [f.id for f in kg.facts(subject="Q183", relation="P1813")] == [] and kg.types("Q64") == ["Q515"]
    [older] = filtered(tmp_path / "f2.sqlite", v1)
    assert older.older_ignored == 2 and content_tables(tmp_path / "f2.sqlite") == v2_alone
    # P36 read by another filter stays when P1813 and P31 are read again from the newer dump
    with Store(tmp_path / "mixed.sqlite") as st:
        ingest_relations(st, WikidataJsonSource(), v1, frozenset({"P36"}), workers=0)
        before = {f for f in content_tables(tmp_path / "mixed.sqlite")["facts"] if f[2] == "P36"}
        ingest_relations(st, WikidataJsonSource(), v2, relations, workers=0)
    assert before and before <= set(content_tables(tmp_path / "mixed.sqlite")["facts"])

"""The JSON a user gets for one entity or a few (Special:EntityData, the wbgetentities API:
`{"entities": {"Q8646": {...}}}`) ingests as the same records do as dump lines (issue 37 item 3),
served on one line or saved pretty-printed; a reject names the line the entity's member starts on.

Real files (tests/data/wikidata_json/): Q106975887.json, Wikidata's Special:EntityData JSON of
one item as served; wbgetentities-labels.json, a wbgetentities answer (props=labels) for two
entities, pretty-printed, with the others of that answer left out.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.ingest import ingest
from factprobe.kg.sources.wikidata_json import WikidataJsonSource

from conftest import content_tables

DATA = Path(__file__).parent / "data" / "wikidata_json"
ENTITY_DATA = DATA / "Q106975887.json"
WBGETENTITIES = DATA / "wbgetentities-labels.json"


def load(path: Path, store: Path):
    with Store(store) as st:
        return ingest(st, WikidataJsonSource(), path, workers=0)


def as_dump(path: Path, records: list[dict]) -> Path:
    path.write_text("[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in records) + "\n]\n", encoding="utf-8")
    return path


def members(path: Path) -> list[dict]:
    return list(json.loads(path.read_text(encoding="utf-8"))["entities"].values())


def test_entity_data_as_served_ingests_as_its_dump_line(tmp_path):
    report = load(ENTITY_DATA, tmp_path / "e.sqlite")
    assert (report.records, report.rejects, report.drops, report.complete) == (1, [], [], True)
    dump = load(as_dump(tmp_path / "dump.json", members(ENTITY_DATA)), tmp_path / "d.sqlite")
    assert dump.records == 1
    assert content_tables(tmp_path / "e.sqlite") == content_tables(tmp_path / "d.sqlite")
    with KnowledgeGraph(tmp_path / "e.sqlite") as kg:
        e = kg.entity("Q106975887")
        assert (e.label, e.description, e.sitelinks) == ("Marinette Yetna", "member of parliament in Cameroon", 3)
        assert kg.objects("Q106975887", "P31") == ["Q5"]
        assert kg.stats().facts == 15


def test_a_pretty_printed_wbgetentities_answer_of_two_entities(tmp_path):
    report = load(WBGETENTITIES, tmp_path / "w.sqlite")
    assert (report.records, report.rejects, report.lines_read) == (2, [], 26)
    load(as_dump(tmp_path / "dump.json", members(WBGETENTITIES)), tmp_path / "d.sqlite")
    assert content_tables(tmp_path / "w.sqlite") == content_tables(tmp_path / "d.sqlite")
    with KnowledgeGraph(tmp_path / "w.sqlite") as kg:
        assert (kg.entity("Q6607").label, kg.entity("Q6607").kind) == ("guitar", "item")
        p = kg.entity("P172")
        assert (p.label, p.kind, p.datatype) == ("ethnic group", "property", "wikibase-item")


def test_compressed_and_compact_forms_give_the_same_store(tmp_path):
    load(WBGETENTITIES, tmp_path / "pretty.sqlite")
    packed = tmp_path / "w.json.gz"
    packed.write_bytes(gzip.compress(WBGETENTITIES.read_bytes()))
    compact = tmp_path / "w.json"
    compact.write_text(json.dumps(json.loads(WBGETENTITIES.read_text(encoding="utf-8"))), encoding="utf-8")
    for path in (packed, compact):
        report = load(path, tmp_path / f"{path.name}.sqlite")
        assert (report.records, report.rejects) == (2, [])
        assert content_tables(tmp_path / f"{path.name}.sqlite") == content_tables(tmp_path / "pretty.sqlite")


def test_a_bad_entity_in_a_pretty_file_is_rejected_by_the_line_it_starts_on(tmp_path):
    text = WBGETENTITIES.read_text(encoding="utf-8")
    assert text.splitlines()[12] == '        "P172": {'
    broken = tmp_path / "w.json"
    broken.write_text(text.replace('"id": "P172"', '"id": 172'), encoding="utf-8")
    report = load(broken, tmp_path / "w.sqlite")
    assert report.records == 1 and [r[:2] for r in report.rejects] == [(13, "entity without id")]
    with KnowledgeGraph(tmp_path / "w.sqlite") as kg:
        assert kg.entity("Q6607").label == "guitar" and kg.entity("P172") is None


def test_responses_one_per_line_and_an_id_the_service_lacks(tmp_path):
    """EntityData answers collected one per line, and wbgetentities' answer for a missing id."""
    guitar, ethnic_group = members(WBGETENTITIES)
    lines = [json.dumps({"entities": {"Q6607": guitar}}),
             json.dumps({"entities": {"P172": ethnic_group, "Q4294967295": {"id": "Q4294967295", "missing": ""}},
                         "success": 1})]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = load(path, tmp_path / "a.sqlite")
    assert report.records == 2
    assert [r[:2] for r in report.rejects] == [(2, "Q4294967295: missing (no such entity where it was fetched)")]
    with KnowledgeGraph(tmp_path / "a.sqlite") as kg:
        assert [kg.entity(q).label for q in ("Q6607", "P172")] == ["guitar", "ethnic group"]


def test_a_pretty_object_without_entities_is_read_as_lines(tmp_path):
    """Not EntityData: each line is read (and rejected) as a dump line would be, nothing lost silently."""
    path = tmp_path / "other.json"
    path.write_text('{\n  "query": {\n    "search": []\n  }\n}\n', encoding="utf-8")
    report = load(path, tmp_path / "o.sqlite")
    assert report.records == 0 and [r[0] for r in report.rejects] == [1, 2, 3, 4, 5]


def test_one_pretty_printed_entity_without_the_entities_wrapper(tmp_path):
    """An entity record saved on its own, pretty-printed (wikibase-sdk's simplify-free output,
    `jq '.entities.Q42'`): one record, the store its dump line gives, at any indentation. Where
    the reader took it for lines, every line of Q42's 19,530 was a reject of its own (issue 46
    item 7). Q42 is the real EntityData of tests/data/rdf/Q42.json.gz."""
    q42 = json.loads(gzip.decompress((Path(__file__).parent / "data" / "rdf" / "Q42.json.gz").read_bytes()))
    record = q42["entities"]["Q42"]
    load(as_dump(tmp_path / "dump.json", [record]), tmp_path / "d.sqlite")
    for name, indent in (("two", 2), ("tab", "\t")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(record, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
        report = load(path, tmp_path / f"{name}.sqlite")
        assert (report.records, report.rejects, report.complete) == (1, [], True)
        assert report.lines_read == len(path.read_text(encoding="utf-8").splitlines())
        assert content_tables(tmp_path / f"{name}.sqlite") == content_tables(tmp_path / "d.sqlite")
    with KnowledgeGraph(tmp_path / "two.sqlite") as kg:
        assert kg.entity("Q42").label == "Douglas Adams" and "Q5" in kg.objects("Q42", "P31")

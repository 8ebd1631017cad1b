"""Format checks for the shipped sample knowledge graph (kg/data/sample_wikidata.json).

Only the standard library and pytest: the file must be a well-formed, closed,
reproducible Wikidata JSON dump on its own, whatever the package does with it.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DATA_DIR = Path(__file__).resolve().parent.parent / "kg" / "data"
SAMPLE = DATA_DIR / "sample_wikidata.json"
BUILDER = DATA_DIR / "build_sample.py"

DATATYPES = {"wikibase-item", "time", "quantity", "globe-coordinate", "monolingualtext", "string",
             "external-id"}
VALUE_TYPES = {"wikibase-item": "wikibase-entityid", "time": "time", "quantity": "quantity",
               "globe-coordinate": "globecoordinate", "monolingualtext": "monolingualtext",
               "string": "string", "external-id": "string"}


@pytest.fixture(scope="module")
def raw_lines() -> list[str]:
    text = SAMPLE.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return text[:-1].split("\n")


@pytest.fixture(scope="module")
def entities(raw_lines) -> list[dict]:
    return [json.loads(line[:-1] if line.endswith(",") else line) for line in raw_lines[1:-1]]


@pytest.fixture(scope="module")
def by_id(entities) -> dict[str, dict]:
    return {e["id"]: e for e in entities}


def statements(entity: dict):
    for pid, stmts in entity.get("claims", {}).items():
        for stmt in stmts:
            yield pid, stmt


def all_snaks(stmt: dict):
    yield "main", stmt["mainsnak"]
    for snaks in stmt.get("qualifiers", {}).values():
        for snak in snaks:
            yield "qualifier", snak
    for ref in stmt.get("references", []):
        for snaks in ref["snaks"].values():
            for snak in snaks:
                yield "reference", snak


def item_value(snak: dict) -> str | None:
    if snak["snaktype"] != "value" or snak["datavalue"]["type"] != "wikibase-entityid":
        return None
    return snak["datavalue"]["value"]["id"]


def test_dump_layout(raw_lines):
    assert raw_lines[0] == "["
    assert raw_lines[-1] == "]"
    body = raw_lines[1:-1]
    assert body, "no entities"
    for line in body[:-1]:
        assert line.endswith(","), line[:80]
    assert not body[-1].endswith(",")
    for line in body:
        assert line.startswith("{") and line.rstrip(",").endswith("}")


def test_every_line_parses_and_ids_unique(entities):
    ids = [e["id"] for e in entities]
    assert len(ids) == len(set(ids))
    assert len(entities) >= 300
    for e in entities:
        assert e["type"] in ("item", "property")
        prefix = "Q" if e["type"] == "item" else "P"
        assert e["id"].startswith(prefix) and e["id"][1:].isdigit()


def test_entity_shapes(entities):
    statement_ids = set()
    for e in entities:
        assert e["labels"]["en"]["value"], e["id"]
        assert e["labels"]["en"]["language"] == "en"
        assert e["descriptions"]["en"]["value"], e["id"]
        assert isinstance(e["aliases"], dict)
        for lang, aliases in e["aliases"].items():
            assert all(a["language"] == lang and a["value"] for a in aliases)
        assert e["modified"] and isinstance(e["lastrevid"], int)
        if e["type"] == "property":
            assert e["datatype"] in DATATYPES
            assert "sitelinks" not in e
        else:
            assert e["ns"] == 0 and e["title"] == e["id"]
            assert 1 <= len(e["sitelinks"]) <= 30
            for site, link in e["sitelinks"].items():
                assert link["site"] == site and link["title"] and link["badges"] == []
        for pid, stmt in statements(e):
            assert stmt["type"] == "statement"
            assert stmt["rank"] in ("preferred", "normal", "deprecated")
            assert stmt["id"].startswith(e["id"] + "$")
            assert stmt["id"] not in statement_ids
            statement_ids.add(stmt["id"])
            assert stmt["mainsnak"]["property"] == pid
            if "qualifiers" in stmt:
                assert stmt["qualifiers-order"] == list(stmt["qualifiers"])
                for snaks in stmt["qualifiers"].values():
                    for snak in snaks:
                        assert len(snak["hash"]) == 40
            for ref in stmt.get("references", []):
                assert len(ref["hash"]) == 40
                assert ref["snaks-order"] == list(ref["snaks"])


def test_datatypes_match_properties(by_id):
    for e in by_id.values():
        for pid, stmt in statements(e):
            for _, snak in all_snaks(stmt):
                prop = by_id[snak["property"]]
                assert snak["datatype"] == prop["datatype"], (e["id"], snak["property"])
                if snak["snaktype"] == "value":
                    assert snak["datavalue"]["type"] == VALUE_TYPES[prop["datatype"]]
                else:
                    assert snak["snaktype"] in ("somevalue", "novalue")
                    assert "datavalue" not in snak
                if snak["snaktype"] == "value" and prop["datatype"] == "time":
                    v = snak["datavalue"]["value"]
                    assert v["precision"] in (9, 10, 11)
                    assert v["calendarmodel"].startswith("http://www.wikidata.org/entity/Q")
                    if v["precision"] == 9:
                        assert v["time"][6:11] == "00-00"


def test_closed_world(by_id):
    missing = set()
    for e in by_id.values():
        for pid, stmt in statements(e):
            if pid not in by_id:
                missing.add(pid)
            for _, snak in all_snaks(stmt):
                if snak["property"] not in by_id:
                    missing.add(snak["property"])
                target = item_value(snak)
                if target and target not in by_id:
                    missing.add(target)
    assert not missing, sorted(missing)


def test_former_capitals(by_id):
    countries = [e for e in by_id.values()
                 if any(item_value(s["mainsnak"]) == "Q6256" for s in e["claims"].get("P31", []))]
    assert len(countries) >= 50
    with_former = [c["id"] for c in countries
                   if any("P582" in s.get("qualifiers", {}) for s in c["claims"].get("P36", []))]
    assert len(with_former) >= 10, with_former
    bonn = [s for s in by_id["Q183"]["claims"]["P36"] if item_value(s["mainsnak"]) == "Q586"]
    assert bonn and bonn[0]["qualifiers"]["P582"][0]["datavalue"]["value"]["time"] == "+1990-10-03T00:00:00Z"


def test_edge_cases_present(by_id):
    ranks, snaktypes, external = set(), set(), 0
    references = 0
    for e in by_id.values():
        for pid, stmt in statements(e):
            ranks.add(stmt["rank"])
            snaktypes.add(stmt["mainsnak"]["snaktype"])
            references += bool(stmt.get("references"))
            external += stmt["mainsnak"]["datatype"] == "external-id"
    assert {"preferred", "normal", "deprecated"} <= ranks
    assert {"value", "somevalue", "novalue"} <= snaktypes
    assert references >= 1 and external >= 1
    german = [e for e in by_id.values() if "de" in e["labels"]]
    french = [e for e in by_id.values() if "fr" in e["labels"]]
    assert len(german) >= 20 and len(french) >= 20


def test_builder_is_deterministic(tmp_path):
    out = tmp_path / "again.json"
    subprocess.run([sys.executable, str(BUILDER), "--out", str(out)], check=True, capture_output=True)
    assert out.read_bytes() == SAMPLE.read_bytes()

"""A value the Wikidata JSON reader cannot read costs only the smallest unit that holds it: a
validity qualifier (P580/P582/P585) only itself, a statement's main value the statement; the
entity and everything else in it is stored, and the unit is named in the rejects file (entity,
path, file, line) as dropped, counted apart from rejected records (issue 37 item 1).

Records: the real ones of tests/data/wikidata_json/latest-all-slice.json (Wikidata's own JSON of
Q106975887 and Q513, in a dump's layout) and the hand-written, real-shaped ones of
kg/data/sample_wikidata.json. The "unit removed" transformation below is written on the JSON
record, from Wikidata's format, without the reader: a qualifier snak or a reference leaves its
list, a statement its property's list.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factprobe.kg import Store
from factprobe.kg.ingest import ingest
from factprobe.kg.sources.wikidata_json import WikidataJsonSource

from conftest import content_tables, run_cli

DATA = Path(__file__).parent / "data" / "wikidata_json"
SAMPLE = Path(__file__).resolve().parent.parent / "kg" / "data" / "sample_wikidata.json"


def dump_records(path: Path) -> list[dict]:
    return [json.loads(x.strip().rstrip(",")) for x in path.open(encoding="utf-8") if x.strip() not in ("[", "]", "")]


REAL = dump_records(DATA / "latest-all-slice.json")
RECORDS = REAL + dump_records(SAMPLE)
VALIDITY = ("P580", "P582", "P585")  # the qualifiers the reader stores (a fact's time columns)

IMPOSSIBLE_DATE = {"type": "time", "value": {"time": "+2016-06-31T00:00:00Z", "timezone": 0, "before": 0, "after": 0,
                                             "precision": 11, "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}}
MALFORMED_QUANTITY = {"type": "quantity", "value": {"amount": "about 12", "unit": "1"}}


def write_dump(path: Path, records: list[dict]) -> Path:
    path.write_text("[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in records) + "\n]\n", encoding="utf-8")
    return path


# -- where a value can be made unreadable, and the unit that holds it --------------------------

def sites(e: dict) -> list[tuple]:
    """Every snak of a record that holds a value: (property, statement, where, ...) with where
    "main", ("qualifier", Q, k) or ("reference", r, S, k)."""
    out = []
    for prop, statements in e.get("claims", {}).items():
        for i, s in enumerate(statements):
            if "datavalue" in s["mainsnak"]:
                out.append((prop, i, "main"))
            for q, snaks in s.get("qualifiers", {}).items():
                out += [(prop, i, "qualifier", q, k) for k, snak in enumerate(snaks) if "datavalue" in snak]
            for r, ref in enumerate(s.get("references", [])):
                for p, snaks in ref["snaks"].items():
                    out += [(prop, i, "reference", r, p, k) for k, snak in enumerate(snaks) if "datavalue" in snak]
    return out


def snak_at(e: dict, site: tuple) -> dict:
    prop, i, where, *rest = site
    st_ = e["claims"][prop][i]
    if where == "main":
        return st_["mainsnak"]
    if where == "qualifier":
        return st_["qualifiers"][rest[0]][rest[1]]
    return st_["references"][rest[0]]["snaks"][rest[1]][rest[2]]


def unit_removed(e: dict, site: tuple) -> dict:
    """The record without the unit that holds the site: the statement (a main value), the
    qualifier snak, or the whole reference."""
    e = copy.deepcopy(e)
    prop, i, where, *rest = site
    if where == "main":
        del e["claims"][prop][i]
    elif where == "qualifier":
        del e["claims"][prop][i]["qualifiers"][rest[0]][rest[1]]
    else:
        del e["claims"][prop][i]["references"][rest[0]]
    return e


def is_read(e: dict, site: tuple) -> bool:
    """Whether the reader reads the value at all: main values but external ids' (skipped unread
    by default), and the validity qualifiers. References and other qualifiers are never stored."""
    prop, i, where, *rest = site
    if where == "main":
        return e["claims"][prop][i]["mainsnak"].get("datatype") != "external-id"
    return where == "qualifier" and rest[0] in VALIDITY


def unit_path(site: tuple) -> str:
    prop, i, where, *rest = site
    if where == "main":
        return f"claims.{prop}[{i}]"
    return f"claims.{prop}[{i}].qualifiers.{rest[0]}[{rest[1]}]"


def broken(snak: dict, how: str) -> None:
    if how == "date":
        snak["datavalue"] = copy.deepcopy(IMPOSSIBLE_DATE)
    elif how == "quantity":
        snak["datavalue"] = copy.deepcopy(MALFORMED_QUANTITY)
    else:  # a value of the wrong JSON shape for its type (an array where an object or a string stands)
        snak["datavalue"]["value"] = [snak["datavalue"]["value"]]


def load(path: Path, store: Path):
    with Store(store) as st_:
        return ingest(st_, WikidataJsonSource(), path, workers=0)


@st.composite
def injections(draw):
    e = draw(st.sampled_from([r for r in RECORDS if sites(r)]))
    site = draw(st.sampled_from(sites(e)))
    how = draw(st.sampled_from(("date", "quantity", "shape")))
    return e, site, how


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=injections())
def test_an_unreadable_value_costs_only_its_unit(tmp_path_factory, case):
    e, site, how = case
    folder = tmp_path_factory.mktemp("unit")
    bad = copy.deepcopy(e)
    broken(snak_at(bad, site), how)
    report = load(write_dump(folder / "bad.json", [bad]), folder / "bad.sqlite")
    clean = load(write_dump(folder / "clean.json", [unit_removed(e, site)]), folder / "clean.sqlite")
    assert clean.rejects == clean.drops == [] and report.records == 1 and report.rejects == []
    assert content_tables(folder / "bad.sqlite") == content_tables(folder / "clean.sqlite")
    if not is_read(e, site):
        assert report.drops == []
        return
    assert [d[:3] for d in report.drops] == [(2, e["id"], unit_path(site))], report.drops
    assert (report.rejected, report.dropped, report.complete) == (0, 1, True)


# -- the case by hand: one impossible qualifier date in a real entity ------------------

Q513 = REAL[1]
# Mount Everest's visitors in 2016 (P1174, 641), dated by one P585 qualifier: given the date
# Modena's population carries in the dump.
VISITORS_2016 = Q513["claims"]["P1174"][4]
QUALIFIER_HASH = VISITORS_2016["qualifiers"]["P585"][0]["hash"]


def test_the_real_record_is_what_the_case_says():
    assert (Q513["id"], VISITORS_2016["mainsnak"]["datavalue"]["value"]["amount"]) == ("Q513", "+641")
    assert [s["datavalue"]["value"]["time"] for s in VISITORS_2016["qualifiers"]["P585"]] == ["+2016-00-00T00:00:00Z"]


def test_an_impossible_qualifier_date_costs_that_qualifier_only(tmp_path):
    bad = copy.deepcopy(Q513)
    bad["claims"]["P1174"][4]["qualifiers"]["P585"][0]["datavalue"]["value"]["time"] = "+2016-06-31T00:00:00Z"
    dump = write_dump(tmp_path / "dump.json", [REAL[0], bad])
    store = tmp_path / "s.sqlite"
    result = run_cli("ingest", "wikidata", str(dump), "--store", str(store), "--workers", "0")
    # a drop does not make the ingest partial: the record is stored and the drop named
    assert result.returncode == 0, result.stderr
    assert ": complete: 2 records in " in result.stderr and ", 0 rejected, 1 part(s) dropped" in result.stderr
    rejects = [json.loads(x) for x in Path(f"{store}.rejects.jsonl").read_text().splitlines()]
    assert rejects == [{
        "file": str(dump), "line": 3, "record": "Q513", "path": "claims.P1174[4].qualifiers.P585[0]",
        "reason": "datavalue.value.time: no such date: '+2016-06-31T00:00:00Z'", "dropped": True,
        "excerpt": '{"snaktype":"value","property":"P585","hash":"' + QUALIFIER_HASH + '","datavalue":{"value":'
                   '{"time":"+2016-06-31T00:00:00Z","timezone":0,"befor...'}]
    with Store(store) as st_:
        count = st_.conn.execute
        # Q513's 149 statements less its 48 external ids are all stored, the 2016 one included
        assert count("SELECT COUNT(*) FROM facts WHERE subject='Q513'").fetchone()[0] == 101
        assert count("SELECT COUNT(*) FROM facts WHERE subject='Q106975887'").fetchone()[0] == 15
        # 17 statements carry a validity qualifier; the 2016 one has lost its only one
        assert count("SELECT COUNT(*) FROM facts WHERE subject='Q513' AND (start_time IS NOT NULL OR end_time "
                     "IS NOT NULL OR point_time IS NOT NULL)").fetchone()[0] == 16
        assert count("SELECT value, point_time FROM facts WHERE id=?", (VISITORS_2016["id"],)).fetchone() == ("+641", None)
        assert count("SELECT label FROM entities WHERE id='Q513'").fetchone()[0] == "Mount Everest"


# -- a statement id twice in one record --------------------------------------------------------

@pytest.mark.parametrize(("first", "second"), [(("P31", 0), ("P31", 1)), (("P17", 0), ("P138", 1))])
def test_a_statement_id_used_twice_costs_the_later_statement(tmp_path, first, second):
    """Wikidata gives every statement an id of its own, the key of its fact: a record holding
    one twice is malformed. The later statement would replace the first; it is dropped, named."""
    bad = copy.deepcopy(Q513)
    sid = bad["claims"][first[0]][first[1]]["id"]
    bad["claims"][second[0]][second[1]]["id"] = sid
    dump = write_dump(tmp_path / "bad.json", [REAL[0], bad])
    store = tmp_path / "bad.sqlite"
    result = run_cli("ingest", "wikidata", str(dump), "--store", str(store), "--workers", "0")
    assert result.returncode == 0, result.stderr
    assert ", 0 rejected, 1 part(s) dropped" in result.stderr
    [drop] = [json.loads(x) for x in Path(f"{store}.rejects.jsonl").read_text().splitlines()]
    assert {k: v for k, v in drop.items() if k != "excerpt"} == {
        "file": str(dump), "line": 3, "record": "Q513", "path": f"claims.{second[0]}[{second[1]}]",
        "reason": f"statement id {sid} already used at claims.{first[0]}[{first[1]}]", "dropped": True}
    assert drop["excerpt"].startswith('{"mainsnak":{"snaktype":"value","property":"' + second[0] + '"')
    clean = write_dump(tmp_path / "clean.json", [REAL[0], unit_removed(Q513, (*second, "main"))])
    assert [len(load(clean, tmp_path / "clean.sqlite").drops), len(load(dump, tmp_path / "api.sqlite").drops)] == [0, 1]
    assert content_tables(tmp_path / "api.sqlite") == content_tables(tmp_path / "clean.sqlite")

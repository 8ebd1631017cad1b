"""A Wikidata record whose value cannot be stored as written is named at parse time, by file, line
and field: a value inside a unit of the record (a statement, a validity qualifier, a label,
description or alias) costs that unit alone, dropped while the rest of the record is stored
(issue 37 item 1); a record whose id, revision or structure cannot be read is rejected whole. The
good records of its chunk are kept exactly as a clean ingest keeps them.

The property test mutates the fields the ingest reads in the real-shaped records of
tests/fixtures/wikidata/dump.json (a value replaced by one of another JSON type, a huge number,
a NUL string or an impossible date; a required key dropped), mixes them with the good records
and ingests through the CLI in-process; the store must equal a clean ingest of the same records
with each mutated unit removed (or each rejected record left out).
"""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factprobe.cli.main import main
from factprobe.kg.readers import Chunk
from factprobe.kg.sources.wikidata_json import WikidataJsonSource

from conftest import FIXTURES, dump_tables

RECORDS = [json.loads(line.strip().rstrip(",")) for line in (FIXTURES / "wikidata" / "dump.json").open()
           if line.strip() not in ("[", "]", "")]
# The column naming the entity a row belongs to, for the tables a record writes.
OWNER = {"entities": 0, "names": 0, "types": 0, "facts": 1, "revisions": 0}
BAD_DATE = "+1990-13-45T00:00:00Z"
BAD_ID = 9_000_000


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    return path


def ingest_cli(dump: Path, store: Path):
    result = CliRunner().invoke(main, ["ingest", "wikidata", str(dump), "--store", str(store), "--quiet",
                                       "--workers", "0"])
    rejects = Path(f"{store}.rejects.jsonl")
    return result, [json.loads(x) for x in rejects.read_text().splitlines()] if rejects.exists() else []


def content(store: Path, drop: set[str] = frozenset()) -> dict[str, list]:
    """The store's tables without the per-input bookkeeping and without the rows of `drop`."""
    tables = dump_tables(store)
    return {t: [r for r in rows if t not in OWNER or r[OWNER[t]] not in drop]
            for t, rows in tables.items()
            if t not in ("ingests", "input_digests", "rejects", "dropped") and not t.startswith("sqlite_stat")}


# -- which fields the ingest reads, and how to break each -------------------------------------

def read_fields(e: dict):
    """(path, required) of every field of a record the ingest reads (languages en and mul)."""
    yield ("id",), True
    for key in ("type", "datatype", "modified", "lastrevid", "labels", "descriptions", "aliases", "sitelinks",
                "claims"):
        if e.get(key):
            yield (key,), False
    for field in ("labels", "descriptions"):
        for lang in ("en", "mul"):
            if lang in e.get(field, {}):
                yield (field, lang), False
                yield (field, lang, "value"), True
    for lang in ("en", "mul"):
        for k, _ in enumerate(e.get("aliases", {}).get(lang, ())):
            yield ("aliases", lang), False
            yield ("aliases", lang, k), False
            yield ("aliases", lang, k, "value"), True
    for prop, statements in e.get("claims", {}).items():
        yield ("claims", prop), False
        for i, s in enumerate(statements):
            if s["mainsnak"].get("datatype") == "external-id":
                continue  # skipped unread
            at = ("claims", prop, i)
            yield at, False
            yield from ((at + (k,), k == "mainsnak") for k in ("mainsnak", "rank", "id", "qualifiers") if k in s)
            yield from snak_fields(s["mainsnak"], at + ("mainsnak",), ("datatype",))
            for q in ("P580", "P582", "P585"):
                for k, snak in enumerate(s.get("qualifiers", {}).get(q, ())):
                    yield at + ("qualifiers", q), False
                    yield from snak_fields(snak, at + ("qualifiers", q, k), ())


def snak_fields(snak: dict, at: tuple, extra: tuple):
    yield at, False
    yield from ((at + (k,), False) for k in ("snaktype", *extra) if k in snak)
    if snak.get("snaktype") != "value":
        return
    dv = snak["datavalue"]
    yield at + ("datavalue",), True
    yield at + ("datavalue", "type"), True
    yield at + ("datavalue", "value"), True
    value = dv["value"]
    required = {"wikibase-entityid": ("id",), "time": ("time",), "quantity": ("amount",),
                "monolingualtext": ("text", "language"), "globecoordinate": ("latitude", "longitude")}
    optional = {"wikibase-entityid": ("entity-type",), "time": ("precision", "calendarmodel"),
                "quantity": ("unit", "lowerBound", "upperBound"), "globecoordinate": ("precision", "globe")}
    if "qualifiers" in at:
        optional = {"time": ("precision",)}
    for k in required.get(dv["type"], ()):
        # an entity value without its id is read from numeric-id (old dumps)
        yield at + ("datavalue", "value", k), not (k == "id" and "numeric-id" in value)
    for k in optional.get(dv["type"], ()):
        if k in value:
            yield at + ("datavalue", "value", k), False


def broken(value: object) -> list:
    """Values that cannot stand where `value` stands."""
    if isinstance(value, str):
        times = [BAD_DATE] if value[:1] in "+-" and "T00:00:00Z" in value else []
        return [[value], {"v": value}, 7, 10**30, value + "\x00", *times]
    if isinstance(value, bool) or value is None:
        return ["x", [1]]
    if isinstance(value, int):
        return [str(value), [value], {"v": value}, 1.5, 10**30]
    if isinstance(value, float):
        return [str(value), [value], {"v": value}, 1e300, 10**30]
    if isinstance(value, list):
        return [{"x": 1}, "x", 7, [7]]
    return [[1], "x", 7]


def get(e, path):
    for key in path:
        e = e[key]
    return e


def unit_of(path: tuple, how: object) -> tuple | None:
    """The path of the unit a mutation at `path` costs: None for the whole record. A list put
    where a list of units stands holds one bad unit, its first."""
    head, n = path[0], len(path)
    listed = how != "drop" and isinstance(how, list)
    if n == 1:
        return None
    if head in ("labels", "descriptions"):
        return path[:2]
    if head == "aliases":
        return path[:3] if n >= 3 else path + (0,) * listed
    if n == 2:  # claims.P
        return path + (0,) * listed
    if n >= 5 and path[3] == "qualifiers":
        return path[:6] if n >= 6 else path + (0,) * listed
    return path[:3]


def removed(e: dict, unit: tuple) -> dict:
    """The record without the unit at `unit` (a key of an object or an item of an array)."""
    e = copy.deepcopy(e)
    del get(e, unit[:-1])[unit[-1]]
    return e


def unit_path(unit: tuple) -> str:
    """A unit's path as the reader names it: claims.P36[0].qualifiers.P580[0]."""
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in unit).lstrip(".")


def renamed(record: dict, new_id: str) -> dict:
    """A copy with its own entity and statement ids, so that its rows never touch the original's."""
    e = copy.deepcopy(record)
    e["id"] = new_id
    for k, s in enumerate(s for statements in e.get("claims", {}).values() for s in statements):
        s["id"] = f"{new_id}$S{k}"
    return e


def mutated(e: dict, path: tuple, how: object) -> dict:
    e = copy.deepcopy(e)
    parent = get(e, path[:-1])
    if how == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = how
    return e


@st.composite
def bad_record(draw, serial: int) -> tuple[str, dict | None]:
    """A mutated record's line, and the record as a clean ingest should store it (None: not at all)."""
    e = renamed(draw(st.sampled_from(RECORDS)), f"Q{BAD_ID + serial}")
    path, required = draw(st.sampled_from(list(read_fields(e))))
    how = draw(st.sampled_from(broken(get(e, path)) + (["drop"] if required else [])))
    bad = mutated(e, path, how)
    unit = unit_of(path, how)
    return json.dumps(bad, ensure_ascii=False), None if unit is None else removed(bad, unit)


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict[str, list]:
    folder = tmp_path_factory.mktemp("clean")
    result, rejects = ingest_cli(write(folder / "good.json", [json.dumps(e) for e in RECORDS]), folder / "s.sqlite")
    assert result.exit_code == 0 and rejects == []
    return content(folder / "s.sqlite")


class Lines(list):
    """A dump's lines, shown by their bad ones only (a failing example stays readable)."""

    bad: set[int] = set()

    def __repr__(self) -> str:
        return repr({n: self[n - 2] for n in sorted(self.bad)})


@st.composite
def mixed_dump(draw) -> tuple[list[str], set[int], list[dict]]:
    n_bad = draw(st.integers(0, 5))
    bad = [draw(bad_record(k)) for k in range(n_bad)]
    lines = Lines(json.dumps(e) for e in RECORDS)
    places = sorted(draw(st.lists(st.integers(0, len(RECORDS)), min_size=n_bad, max_size=n_bad)))
    bad_lines = set()
    for k, (place, (text, _)) in enumerate(zip(places, bad)):
        lines.insert(place + k, text)
        bad_lines.add(place + k + 2)  # line 1 is the opening bracket
    lines.bad = bad_lines
    return lines, bad_lines, [e for _, e in bad if e is not None]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dump=mixed_dump())
def test_mutated_records_are_named_once_and_the_rest_kept(tmp_path_factory, dump):
    lines, bad_lines, repaired = dump
    folder = tmp_path_factory.mktemp("mixed")
    result, rejects = ingest_cli(write(folder / "mixed.json", lines), folder / "s.sqlite")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    whole = [r for r in rejects if not r.get("dropped")]
    assert result.exit_code == (3 if whole else 0), result.output
    named = sorted(r["line"] for r in rejects)
    assert named == sorted(bad_lines), (rejects, [lines[n - 2] for n in bad_lines])
    # the store holds what a clean ingest of the good records and the repaired ones holds
    result, rejects = ingest_cli(write(folder / "clean.json", [json.dumps(e) for e in RECORDS + repaired]),
                                 folder / "clean.sqlite")
    assert result.exit_code == 0 and rejects == []
    assert content(folder / "s.sqlite") == content(folder / "clean.sqlite")


def test_every_mutation_of_every_read_field_is_named_once():
    """The property test's whole mutation space, through the parser alone: each is named once,
    as a rejected record or as the one unit dropped (its path as the reader names it)."""
    source, count, wrong = WikidataJsonSource(), 0, []
    for record in RECORDS:
        base = renamed(record, f"Q{BAD_ID}")
        for path, required in read_fields(base):
            for how in broken(get(base, path)) + (["drop"] if required else []):
                e = mutated(base, path, how)
                result = source.parse(Chunk(1, 1, json.dumps(e, ensure_ascii=False).encode(), 0, 0))
                count += 1
                unit = unit_of(path, how)
                named = [r[0] for r in result.rejects] if unit is None else [d[:3] for d in result.dropped]
                want = [1] if unit is None else [(1, f"Q{BAD_ID}", unit_path(unit))]
                if named != want or len(result.rejects) + len(result.dropped) != 1:
                    wrong.append((record["id"], path, how, result.rejects, result.dropped))
    assert wrong == [] and count == 2452


# -- the cases, one by one -----------------------------------------------------------

Q937 = next(e for e in RECORDS if e["id"] == "Q937")
Q183 = next(e for e in RECORDS if e["id"] == "Q183")


def changed(record: dict, path: tuple, value: object) -> str:
    e = copy.deepcopy(record)
    get(e, path[:-1])[path[-1]] = value
    return json.dumps(e, ensure_ascii=False)


# (record, field, value, the unit dropped or None for the record, reason)
CASES = [
    (Q183, ("descriptions", "en", "value"), ["a", "b"], "descriptions.en", "value: expected a string, got an array"),
    (Q183, ("claims", "P1813", 0, "mainsnak", "datavalue", "value"), {"x": 1}, "claims.P1813[0]",
     "mainsnak.datavalue.value: expected a string, got an object"),
    (Q937, ("claims", "P569", 0, "mainsnak", "datavalue", "value", "time"), {"t": 1}, "claims.P569[0]",
     "mainsnak.datavalue.value.time: expected a string, got an object"),
    (Q183, ("claims", "P1082", 0, "mainsnak", "datavalue", "value", "amount"), ["+1"], "claims.P1082[0]",
     "mainsnak.datavalue.value.amount: expected a string, got an array"),
    (Q183, ("claims", "P36", 0, "mainsnak", "datavalue", "value", "entity-type"), ["item"], "claims.P36[0]",
     "mainsnak.datavalue.value.entity-type: expected a string, got an array"),
    (Q183, ("claims", "P36", 0, "id"), {"id": 1}, "claims.P36[0]", "id: expected a string, got an object"),
    (Q183, ("claims", "P36", 0, "qualifiers", "P580", 0, "datavalue", "value", "time"), "+9999999999999999-01-01T00:00:00Z",
     "claims.P36[0].qualifiers.P580[0]",
     "datavalue.value.time: year too large for a time key (at most 14 digits): '+9999999999999999-01-01T00:00:00Z'"),
    (Q937, ("claims", "P569", 0, "mainsnak", "datavalue", "value", "time"), BAD_DATE, "claims.P569[0]",
     "mainsnak.datavalue.value.time: no such date: '+1990-13-45T00:00:00Z'"),
    (Q937, ("claims", "P569", 0, "mainsnak", "datavalue", "value", "time"), "+1990-02-30T00:00:00Z", "claims.P569[0]",
     "mainsnak.datavalue.value.time: no such date: '+1990-02-30T00:00:00Z'"),
    (Q183, ("claims", "P36", 0, "mainsnak", "datavalue"), {"type": "string", "value": "Berlin"}, "claims.P36[0]",
     "mainsnak.datavalue.type: 'string' where the property's datatype 'wikibase-item' holds 'wikibase-entityid'"),
    (Q183, ("labels", "en", "value"), "Ger\x00many", "labels.en", "value: contains a NUL character"),
    (Q183, ("aliases", "en", 0, "value"), "F\x00RG", "aliases.en[0]", "value: contains a NUL character"),
    (Q183, ("descriptions", "en", "value"), "x\x00", "descriptions.en", "value: contains a NUL character"),
    (Q183, ("claims", "P36", 0, "rank"), "best", "claims.P36[0]", "rank: unknown rank 'best'"),
    (Q183, ("claims", "P625", 0, "mainsnak", "datavalue", "value", "latitude"), 91.5, "claims.P625[0]",
     "mainsnak.datavalue.value.latitude: 91.5 is out of range (-90 to 90)"),
    (Q183, ("sitelinks",), "enwiki", None, "Q183: sitelinks: expected an object, got a string"),
    (Q183, ("lastrevid",), 1 << 63, None, f"Q183: lastrevid: {1 << 63} is out of range (0 to {(1 << 63) - 1})"),
    (Q937, ("claims", "P569", 0, "mainsnak", "datavalue", "value", "precision"), True, "claims.P569[0]",
     "mainsnak.datavalue.value.precision: expected an integer, got a boolean"),
]


@pytest.mark.parametrize("record,path,value,unit,reason", CASES, ids=[c[3] or c[4].split(": ")[1] for c in CASES])
def test_each_case_is_named_by_field_and_the_rest_kept(tmp_path, record, path, value, unit, reason):
    others = [json.dumps(e) for e in RECORDS if e is not record]
    lines = others[:5] + [changed(record, path, value)] + others[5:]
    result, rejects = ingest_cli(write(tmp_path / "d.json", lines), tmp_path / "s.sqlite")
    assert result.exit_code == (3 if unit is None else 0), result.output
    named = [{k: v for k, v in r.items() if k != "excerpt"} for r in rejects]
    if unit is None:  # the record cannot be stored at all
        assert named == [{"file": str(tmp_path / "d.json"), "line": 7, "reason": reason}]
    else:
        assert named == [{"file": str(tmp_path / "d.json"), "line": 7, "record": record["id"], "path": unit,
                          "reason": reason, "dropped": True}]
    conn = sqlite3.connect(tmp_path / "s.sqlite")
    kept = sorted(r[0] for r in conn.execute("SELECT id FROM entities"))
    conn.close()
    assert kept == sorted(e["id"] for e in RECORDS if e is not record or unit is not None)


def test_wikidata_low_precision_and_far_dates_still_load(tmp_path):
    """Month and day 00, BCE years and years beyond 9999 are Wikidata's, and stay as they were."""
    times = ["+1949-00-00T00:00:00Z", "-0500-00-00T00:00:00Z", "+13798000000-00-00T00:00:00Z",
             "-13798000000-00-00T00:00:00Z", "+2000-02-29T00:00:00Z"]
    lines = [changed(renamed(Q937, f"Q{800 + k}"), ("claims", "P569", 0, "mainsnak", "datavalue", "value", "time"), t)
             for k, t in enumerate(times)]
    result, rejects = ingest_cli(write(tmp_path / "d.json", lines), tmp_path / "s.sqlite")
    assert result.exit_code == 0 and rejects == []
    conn = sqlite3.connect(tmp_path / "s.sqlite")
    stored = [r[0] for r in conn.execute("SELECT value FROM facts WHERE relation='P569' ORDER BY subject")]
    conn.close()
    assert stored == times


class _UnbindableLabel(WikidataJsonSource):
    """A parser that lets one unstorable value through (a label that is a list), as a bug would."""

    def parse(self, chunk):
        result = super().parse(chunk)
        result.rows.entities = [(e[0], e[1], [e[2]], *e[3:]) if e[0] == "Q64" else e for e in result.rows.entities]
        return result


def test_a_record_sqlite_refuses_is_rejected_by_name_and_the_chunk_kept(tmp_path):
    from factprobe.kg import Store
    from factprobe.kg.ingest import ingest

    dump = write(tmp_path / "d.json", [json.dumps(e) for e in RECORDS])
    with Store(tmp_path / "s.sqlite") as store:
        report = ingest(store, _UnbindableLabel(), dump, workers=0)
    assert [(line, reason.split(" (")[0]) for line, reason, _ in report.rejects] == [(3, "Q64: not stored")]
    assert "ProgrammingError" in report.rejects[0][1] and report.records == 13
    kept = content(tmp_path / "s.sqlite")
    assert sorted(e[0] for e in kept["entities"]) == sorted(e["id"] for e in RECORDS if e["id"] != "Q64")
    assert [f for f in kept["facts"] if f[1] == "Q64"] == [] and len(kept["facts"]) == 25 - 2

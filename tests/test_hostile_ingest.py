"""Issue 44, the ingest's readers: a hostile line (nesting 100,000 and 5,000 brackets deep, a
lone surrogate) among real records costs that line, named by file:line in the rejects file,
and every good record around it is stored as a clean ingest stores it; exit 3 (rejects), never
a traceback. Real-shaped records: tests/fixtures/wikidata/dump.json's entities, copied under
new ids to make 200; tests/fixtures/trex/re-nlg_0-5.json's documents.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from cli_runner import run_cli
from conftest import FIXTURES, content_tables

DUMP = FIXTURES / "wikidata" / "dump.json"
TREX = FIXTURES / "trex" / "re-nlg_0-5.json"
WBGETENTITIES = Path(__file__).parent / "data" / "wikidata_json" / "wbgetentities-labels.json"
DEPTHS = (100_000, 5_000)
TOO_DEEP = "nested deeper than 254 levels"


def dump_records() -> list[dict]:
    return [json.loads(x.strip().rstrip(",")) for x in DUMP.open(encoding="utf-8") if x.strip() not in ("[", "]", "")]


def entities(n: int) -> list[dict]:
    """n real-shaped items: the fixture's items again and again, each under an id of its own
    (and its statements' ids with it)."""
    items = [e for e in dump_records() if e["id"].startswith("Q")]
    out = []
    for i in range(n):
        e = copy.deepcopy(items[i % len(items)])
        old, new = e["id"], f"Q{900_000 + i}"
        e["id"] = new
        for statements in e.get("claims", {}).values():
            for st in statements:
                if "id" in st:
                    st["id"] = new + st["id"][len(old):]
        out.append(e)
    return out


def write_dump(path: Path, lines: list[str]) -> Path:
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    return path


def deep_entity(depth: int) -> str:
    return '{"type":"item","id":"Q1","labels":' + "[" * depth + "]" * depth + "}"


def ingest(kind: str, path: Path, store: Path, *extra: str):
    """`factprobe ingest KIND PATH` in this process: (result, rejects file's records)."""
    result = run_cli("ingest", kind, path, "--store", store, "--quiet", "--workers", "0", *extra)
    rejects = Path(f"{store}.rejects.jsonl")
    found = [json.loads(x) for x in rejects.read_text(encoding="utf-8").splitlines()] if rejects.exists() else []
    return result, found


def stored(store: Path) -> dict[str, list[tuple]]:
    """What the store holds (content_tables), less SQLite's statistics, which count the rejects too."""
    return {k: v for k, v in content_tables(store).items() if k != "sqlite_stat1"}


def reasons(rejects: list[dict]) -> list[tuple]:
    return [(r["file"], r["line"], r["reason"]) for r in rejects]


@pytest.fixture(scope="module")
def clean_200(tmp_path_factory) -> tuple[list[str], dict]:
    """The 200 good dump lines and the store a clean ingest of them makes."""
    folder = tmp_path_factory.mktemp("clean")
    lines = [json.dumps(e, ensure_ascii=False) for e in entities(200)]
    result, rejects = ingest("wikidata", write_dump(folder / "dump.json", lines), folder / "s.sqlite")
    assert (result.returncode, rejects) == (0, [])
    return lines, stored(folder / "s.sqlite")


# -- A: nesting -------------------------------------------------------------------------------

@pytest.mark.parametrize("depth", (*DEPTHS, 300))  # 300: orjson reads it, and wrote it back with a traceback
def test_a_deep_dump_line_costs_that_line_and_all_200_good_entities_are_stored(tmp_path, clean_200, depth):
    """The issue's case: a line whose labels are nested `depth` deep among 200 good entities."""
    lines, clean = clean_200
    dump = write_dump(tmp_path / "dump.json", lines[:120] + [deep_entity(depth)] + lines[120:])
    result, rejects = ingest("wikidata", dump, tmp_path / "s.sqlite")
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert reasons(rejects) == [(str(dump), 122, TOO_DEEP)]  # "[" is line 1, 120 entities, then it
    assert stored(tmp_path / "s.sqlite") == clean
    assert f"{dump}: complete: 200 records" in result.stderr and "1 rejected" in result.stderr


def test_nesting_at_the_bound_is_read_one_level_more_is_rejected(tmp_path):
    from factprobe.kg.readers import MAX_DEPTH, json_record

    inside = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)  # the record's object is the first level
    value, why = json_record(('{"a":' + inside + "}").encode())
    assert why is None and value is not None
    assert json_record(('{"a":[' + inside + "]}").encode()) == (None, TOO_DEEP)


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_pretty_printed_entity_data_file_is_one_reject(tmp_path, depth):
    """Saved pretty-printed, the object is one record: one reject at its first line, not one per line."""
    text = WBGETENTITIES.read_text(encoding="utf-8")
    deep = "[\n" * depth + "]\n" * depth
    path = tmp_path / "w.json"
    path.write_text(text.replace('"labels": {', '"labels": ' + deep + ', "x": {', 1), encoding="utf-8")
    result, rejects = ingest("wikidata", path, tmp_path / "s.sqlite")
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert reasons(rejects) == [(str(path), 1, "the object starting here: " + TOO_DEEP)]


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_trex_document_costs_that_document(tmp_path, depth):
    docs = json.loads(TREX.read_text(encoding="utf-8"))
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps(docs), encoding="utf-8")
    assert ingest("trex", clean, tmp_path / "clean.sqlite")[0].returncode == 0
    hostile = tmp_path / "docs.json"
    texts = [json.dumps(d) for d in docs]
    bad = '{"docid": "x", "text": "t", "entities": ' + "[" * depth + "]" * depth + "}"
    hostile.write_text("[" + ",".join(texts[:2] + [bad] + texts[2:]) + "]", encoding="utf-8")
    result, rejects = ingest("trex", hostile, tmp_path / "s.sqlite")
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert reasons(rejects) == [(str(hostile), 3, TOO_DEEP)]  # T-REx names a document by its index
    assert stored(tmp_path / "s.sqlite") == stored(tmp_path / "clean.sqlite")


def test_a_deep_line_in_a_gzip_dump_read_in_small_chunks(tmp_path, clean_200):
    lines, clean = clean_200
    dump = tmp_path / "dump.json"
    write_dump(dump, lines[:3] + [deep_entity(100_000)] + lines[3:])
    packed = tmp_path / "dump.json.gz"
    packed.write_bytes(gzip.compress(dump.read_bytes()))
    result, rejects = ingest("wikidata", packed, tmp_path / "s.sqlite", "--chunk-size", "65536")
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert reasons(rejects) == [(str(packed), 5, TOO_DEEP)]
    assert stored(tmp_path / "s.sqlite") == clean

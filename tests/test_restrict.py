"""A filtered ingest (`--relations`) equals the full ingest restricted to those relations.

The expectation is computed here, in plain Python, from the full store: the kept relations'
facts; the entities that take part in them and the relations' own property entities; the
classes their types name; and the entity, name and type rows of all of those.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from factprobe.kg import Store
from factprobe.kg.ingest import ingest
from factprobe.kg.restrict import filter_key, ingest_relations, parse_relations, staging_path
from factprobe.kg.sources.wikidata_json import WikidataJsonSource

from conftest import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from wikidata_dump import generate  # noqa: E402

CONTENT = ("entities", "names", "types", "facts")


def rows(store: Path) -> dict[str, set[tuple]]:
    conn = sqlite3.connect(store)
    try:
        out = {t: set(conn.execute(f"SELECT * FROM {t}")) for t in CONTENT}
        out["rejects"] = set(conn.execute("SELECT line, reason, excerpt FROM rejects"))
        out["dropped"] = set(conn.execute("SELECT line, record, path, reason, excerpt FROM dropped"))
        for t in ("documents", "annotations", "provenance", "fact_frequencies"):
            assert conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0
        return out
    finally:
        conn.close()


def restricted(full: dict[str, set[tuple]], relations: set[str]) -> dict[str, set[tuple]]:
    facts = {f for f in full["facts"] if f[2] in relations}
    needed = {f[1] for f in facts} | {f[3] for f in facts if f[3] is not None} | set(relations)
    needed |= {t[1] for t in full["types"] if t[0] in needed}
    return {
        "entities": {e for e in full["entities"] if e[0] in needed},
        "names": {n for n in full["names"] if n[0] in needed},
        "types": {t for t in full["types"] if t[0] in needed},
        "facts": facts,
        "rejects": full["rejects"],
        "dropped": full["dropped"],
    }


def full_ingest(dump: Path, store: Path, workers: int) -> dict[str, set[tuple]]:
    with Store(store) as st:
        report = ingest(st, WikidataJsonSource(), dump, workers=workers)
    assert not report.truncated
    return rows(store)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """1,500 entities of the bench's realistic mix (~20 MB of JSON: the pool path runs)."""
    path = tmp_path_factory.mktemp("dump") / "dump.json"
    generate(path, 1500, "none", 2)
    return path


@pytest.mark.parametrize("relations", [{"P36"}, {"P31", "P17"}, {"P279", "P150", "P1082"}])
def test_filtered_fixture_equals_full_restricted(tmp_path, wikidata_dump, relations):
    full = full_ingest(wikidata_dump, tmp_path / "full.sqlite", workers=0)
    with Store(tmp_path / "f.sqlite") as st:
        report = ingest_relations(st, WikidataJsonSource(), wikidata_dump, frozenset(relations),
                                  workers=0)
    assert report.complete and report.records == 14
    got = rows(tmp_path / "f.sqlite")
    assert got == restricted(full, relations)
    assert got["facts"] and got["entities"]


def test_filtered_generated_dump_equals_full_restricted(tmp_path, generated):
    relations = {"P27", "P106", "P19", "P131", "P17", "P39", "P1082", "P569"}
    full = full_ingest(generated, tmp_path / "full.sqlite", workers=2)
    with Store(tmp_path / "f.sqlite") as st:
        ingest_relations(st, WikidataJsonSource(), generated, frozenset(relations), workers=2)
    got = rows(tmp_path / "f.sqlite")
    want = restricted(full, relations)
    assert got == want
    # The filter keeps what it should and drops the rest of the dump.
    assert len(got["facts"]) < len(full["facts"]) / 2
    assert {f[2] for f in got["facts"]} == relations
    # Objects named by kept facts come in with their names whenever the dump has them.
    assert any(n[0] != f[1] for f in got["facts"] for n in got["names"] if n[0] == f[3])


def test_rerun_is_done_and_leaves_no_staging(tmp_path, wikidata_dump):
    relations = frozenset({"P36"})
    store_path = tmp_path / "f.sqlite"
    with Store(store_path) as st:
        ingest_relations(st, WikidataJsonSource(), wikidata_dump, relations, workers=0)
        again = ingest_relations(st, WikidataJsonSource(), wikidata_dump, relations, workers=0)
        stage = staging_path(st, filter_key("wikidata-json", wikidata_dump, relations))
    assert again.already_done
    assert not stage.exists()
    # The same dump with other relations is another input, added to the same store.
    with Store(store_path) as st:
        other = ingest_relations(st, WikidataJsonSource(), wikidata_dump, frozenset({"P17"}), workers=0)
    assert not other.already_done
    assert {f[2] for f in rows(store_path)["facts"]} == {"P36", "P17"}


def test_a_run_killed_after_staging_resumes_at_the_copy(tmp_path, wikidata_dump):
    """The staging store is a plain resumable ingest: left complete by a killed run, the next
    run copies from it without reading the dump again, and ends as an uninterrupted run."""
    relations = frozenset({"P31", "P17"})
    full = full_ingest(wikidata_dump, tmp_path / "full.sqlite", workers=0)
    store_path = tmp_path / "f.sqlite"
    with Store(store_path) as st:
        stage_file = staging_path(st, filter_key("wikidata-json", wikidata_dump, relations))
    with Store(stage_file, indexes=False) as stage:
        ingest(stage, WikidataJsonSource(relations=relations), wikidata_dump, workers=0)
    with Store(store_path) as st:
        report = ingest_relations(st, WikidataJsonSource(), wikidata_dump, relations, workers=0)
    assert report.records == 0  # nothing read again
    assert rows(store_path) == restricted(full, set(relations))
    assert not stage_file.exists()


def test_parse_relations():
    assert parse_relations("P31, p36 P19") == {"P31", "P36", "P19"}
    with pytest.raises(ValueError, match="property ids"):
        parse_relations("P31,Q5")
    with pytest.raises(ValueError, match="property ids"):
        parse_relations(" , ")


def test_cli_relations_and_templates(tmp_path, wikidata_dump):
    store = tmp_path / "cli.sqlite"
    done = run_cli("ingest", "wikidata", str(wikidata_dump), "--store", str(store),
                   "--relations", "templates", "--quiet", "--json", check=True)
    assert '"complete": true' in done.stdout
    kept = {f[2] for f in rows(store)["facts"]}
    templates = {p.stem for p in (Path(__file__).resolve().parents[1] / "probes/templates/relations").glob("P*.yaml")}
    assert kept and kept <= templates
    bad = run_cli("ingest", "wikidata", str(wikidata_dump), "--store", str(store),
                  "--relations", "P31,Q5")
    assert bad.returncode != 0 and "property ids" in bad.stderr


def test_bad_records_are_rejected_alike(tmp_path):
    """A damaged dump: the filter decodes everything it skips, so the same records are
    rejected, with the same lines and reasons, and the good ones restrict exactly."""
    bad = Path(__file__).parent / "fixtures/wikidata/bad.json"
    full = full_ingest(bad, tmp_path / "full.sqlite", workers=0)
    with Store(tmp_path / "f.sqlite") as st:
        report = ingest_relations(st, WikidataJsonSource(), bad, frozenset({"P31"}), workers=0)
    assert full["rejects"] and report.rejected == len(full["rejects"])
    assert full["dropped"] and report.dropped == len(full["dropped"])  # the same units dropped, named
    assert rows(tmp_path / "f.sqlite") == restricted(full, {"P31"})

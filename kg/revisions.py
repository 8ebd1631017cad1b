"""Which record of an entity the store keeps: the newest, as a newer Wikidata dump means.

Every Wikidata JSON record leaves its revision in the store's `revisions` table (entity,
`modified`, `lastrevid`). When a record of an entity arrives and the store already holds one:
- the newer replaces the older: its entity row, names, types and Wikidata JSON facts are what
  the store holds for the entity afterwards (deleted, then written as a first ingest would), and
  corpus counts of facts it drops or changes go with them;
- an older one arriving later is ignored and counted (`ingest` reports it as older_ignored).
"Newer" is Wikidata's order: the larger `lastrevid` when both records have one, else the later
`modified`; when those are equal or missing, the record read later wins (so re-reading a dump,
or a corrected record of the same revision, takes the last one). Facts of other sources (RDF,
T-REx, Wikidata5M) keep their own ids and stay; an entity the store holds only from them (no
revision row) is merged field by field as before. Names and types have no source: a newer
Wikidata record's names replace all of the entity's, and its types all those no fact supports.
"""

from __future__ import annotations

import json
import sqlite3

from .model import DEPRECATED, Rows

SOURCE = "wikidata-json"  # the facts a newer record replaces: those of the Wikidata JSON source

Revision = tuple  # (modified or None, lastrevid or None)


def replaces(new: Revision, old: Revision) -> bool:
    """Whether a record of revision `new` read after one of revision `old` replaces it."""
    if new[1] is not None and old[1] is not None:
        return new[1] >= old[1]
    if new[0] is not None and old[0] is not None:
        return new[0] >= old[0]
    return True


def _clean(value: object) -> object:
    return None if value != value else value  # the ingest's workers send NaN for None


# (table, column of the entity a row belongs to) for the rows a record makes
_KEYED = (("entities", 0), ("names", 0), ("types", 0), ("facts", 1), ("revisions", 0))


def without(rows: Rows, entities: set[str]) -> Rows:
    """A copy of `rows` without the rows of these entities' records."""
    out = Rows(**{name: list(getattr(rows, name)) for name in Rows.__dataclass_fields__})
    for table, column in _KEYED:
        setattr(out, table, [r for r in getattr(rows, table) if r[column] not in entities])
    return out


def apply(conn: sqlite3.Connection, rows: Rows) -> tuple[Rows, int]:
    """Before a batch with revisions is written: clear what its newer records replace, drop its
    records that the store holds newer. Returns (the rows to write, records ignored)."""
    new = {r[0]: (_clean(r[1]), _clean(r[2])) for r in rows.revisions}
    stored = conn.execute("SELECT entity, modified, lastrevid FROM revisions "
                          "WHERE entity IN (SELECT value FROM json_each(?))", (json.dumps(list(new)),)).fetchall()
    older = {e for e, modified, lastrevid in stored if not replaces(new[e], (modified, lastrevid))}
    replaced = [e for e, _, _ in stored if e not in older]
    if older:
        rows = without(rows, older)
    if replaced:
        _clear(conn, replaced, rows)
    conn.executemany("INSERT OR REPLACE INTO revisions VALUES (?,?,?)",
                     [(r[0], _clean(r[1]), _clean(r[2])) for r in rows.revisions])
    return rows, len(older)


def _clear(conn: sqlite3.Connection, entities: list[str], rows: Rows) -> None:
    clear(conn, entities, {(r[0], r[2], _clean(r[3]), _clean(r[5])) for r in rows.facts})


def clear(conn: sqlite3.Connection, entities: list[str], kept: set[tuple],
          relations: frozenset[str] | None = None) -> None:
    """Delete what the store holds of these entities' older records. `kept`: the newer records'
    facts as (id, relation, object, value), whose corpus counts stay; `relations`: only the
    facts of these (a filtered ingest replaces the relations it read, kg/restrict.py)."""
    stale, gone = [], []
    for entity in entities:
        for fact, relation, obj, value in conn.execute(
                "SELECT id, relation, object, value FROM facts WHERE subject=? AND source=?", (entity, SOURCE)):
            if relations is not None and relation not in relations:
                continue
            gone.append((fact,))
            if (fact, relation, obj, value) not in kept:
                stale.append((fact,))
    # Counted in a corpus as (subject, relation, object): a fact gone or changed loses its count.
    conn.executemany("DELETE FROM fact_frequencies WHERE fact=?", stale)
    one = [(e,) for e in entities]
    conn.executemany("DELETE FROM facts WHERE id=?", gone)
    conn.executemany("DELETE FROM names WHERE entity=?", one)
    conn.executemany("DELETE FROM types WHERE entity=? AND NOT EXISTS (SELECT 1 FROM facts f WHERE "
                     f"f.subject=types.entity AND f.relation=types.via AND f.object=types.type AND f.rank > {DEPRECATED})",
                     one)
    conn.executemany("DELETE FROM entities WHERE id=?", one)

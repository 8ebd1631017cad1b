"""Filtered ingest of a large dump: keep a few relations and only what their facts need.

Probing needs a few dozen relations; full Wikidata holds some 1.6B statements, nearly all
of them elsewhere. A filtered ingest keeps:
- the facts of the chosen relations;
- the entities that take part in them (subjects, entity objects) and the chosen relations'
  own property entities, with their labels, descriptions and aliases in the store's languages;
- their types (P31, and P279 for classes) and the classes those types name, with their names
  and their own type rows.
That is exactly the full ingest restricted to those relations (tests/test_restrict.py
compares the two table by table).

Whether an entity is needed is only known once every fact has been read: its record may come
before the fact that names it. So the dump goes first into a staging store (kept facts, every
entity's row, names and types; no secondary indexes), with the ordinary resumable ingest; then
one SQL pass copies what is needed into the store, and the staging file is deleted. A run
killed in either step resumes (the copy is one transaction). The staging store costs ~0.3 KB per
entity of the dump. A newer record replaces the store's as a full ingest does (kg/revisions.py),
for the relations read: another filter's facts stay; an entity no longer needed is not collected.
A finished filtered ingest is skipped only for a file of the same bytes (kg/identity.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path

from . import revisions
from .identity import InputDigest, mismatch
from .ingest import IngestReport, ProgressFn, Source, already_done, ingest
from .readers import check_readable, fingerprint
from .store import Store

# The same merge as Store.write's entity upsert, fed by a SELECT (the WHERE is SQLite's
# required disambiguation of INSERT ... SELECT ... ON CONFLICT); then the other tables as
# Store.write upserts them.
_COPY = (
    """INSERT INTO main.entities SELECT e.* FROM s.entities e JOIN temp.keep k ON k.id = e.id WHERE true
    ON CONFLICT(id) DO UPDATE SET kind=excluded.kind,
        label=COALESCE(excluded.label, entities.label),
        description=COALESCE(excluded.description, entities.description),
        sitelinks=MAX(excluded.sitelinks, entities.sitelinks),
        datatype=COALESCE(excluded.datatype, entities.datatype)""",
    "INSERT OR REPLACE INTO main.names SELECT n.* FROM s.names n JOIN temp.keep k ON k.id = n.entity",
    "INSERT OR IGNORE INTO main.types SELECT t.* FROM s.types t JOIN temp.keep k ON k.id = t.entity",
    "INSERT OR REPLACE INTO main.facts SELECT f.* FROM s.facts f WHERE f.subject NOT IN (SELECT id FROM temp.older)",
    "INSERT OR REPLACE INTO main.revisions SELECT r.* FROM s.revisions r JOIN temp.keep k ON k.id = r.entity",
    """INSERT INTO main.meta SELECT m.* FROM s.meta m WHERE m.key = 'as_of'
    ON CONFLICT(key) DO UPDATE SET value=MAX(meta.value, excluded.value)""",
)


def parse_relations(text: str) -> frozenset[str]:
    """`P31,P36 P19` -> {P31, P36, P19}; a clear error for anything that is not a property id."""
    ids = [x for x in text.replace(",", " ").split() if x]
    bad = [x for x in ids if not (x[:1] in "Pp" and x[1:].isdigit())]
    if bad or not ids:
        raise ValueError(f"relations must be property ids like P31,P36 (got {text!r})")
    return frozenset(x.upper() for x in ids)


def filter_key(source_name: str, path: Path, relations: frozenset[str]) -> str:
    return f"{source_name}:{fingerprint(path)}|relations={','.join(sorted(relations, key=_pid))}"


def _pid(relation: str) -> tuple[int, str]:
    return (int(relation[1:]) if relation[1:].isdigit() else -1, relation)


def staging_path(store: Store, key: str) -> Path:
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    return store.path.with_name(f"{store.path.name}.staging-{digest}")


def ingest_relations(
    store: Store,
    source: Source,
    path: str | os.PathLike,
    relations: frozenset[str],
    *,
    workers: int | None = None,
    restart: bool = False,
    progress: ProgressFn | None = None,
) -> IngestReport:
    """Ingest `path` keeping only `relations` and what their facts need (see the module doc).

    The report counts the dump's records and rejects; the store records the input under a
    key that names the relations, so the same dump filtered otherwise is another input."""
    if not hasattr(source, "relations"):
        raise ValueError(f"the {source.name} source cannot filter relations")
    started = time.perf_counter()
    p = check_readable(path)
    key = filter_key(source.name, p, relations)
    stage_file = staging_path(store, key)
    state = store.begin_ingest(key, source.name, str(p.resolve()), restart=restart)
    report = IngestReport(source.name, str(p), key)
    if state.complete:
        digest = InputDigest()
        report.changed = mismatch(state, p, digest, (lambda n: progress(0, n)) if progress else None)
        if not report.changed:
            _remove(stage_file)
            report.digest = digest.hexdigest()
            return already_done(store, report, state.records_done)
        store.begin_ingest(key, source.name, str(p.resolve()), restart=True)
    if restart or report.changed:
        _remove(stage_file)

    filtered = dataclasses.replace(source, relations=frozenset(relations))
    with Store(stage_file, languages=store.languages, indexes=False) as stage:
        staged = ingest(stage, filtered, p, workers=workers, progress=progress)
    older = copy_needed(store, stage_file, relations, key)
    if not staged.truncated:
        _remove(stage_file)  # a truncated dump keeps its staging store: a longer file resumes
    store.finish_ingest(key, truncated=staged.truncated)
    report.records = staged.records
    report.resumed_from = staged.resumed_from
    report.truncated = staged.truncated
    report.older_ignored = staged.older_ignored + older
    report.lines_read = staged.lines_read
    report.changed = report.changed or staged.changed
    report.digest = staged.digest
    report.rejects = store.rejects(key)
    report.rejected = len(report.rejects)
    report.drops = store.dropped(key)
    report.dropped = len(report.drops)
    report.seconds = time.perf_counter() - started
    return report


def copy_needed(store: Store, stage_file: Path, relations: frozenset[str], key: str) -> int:
    """One transaction: the staging store's facts, and the entities, names and types they
    need, into `store`; its rejects and drops under `key`, with the position reached. A record
    older than the store's is not copied; returns how many."""
    conn = store.conn
    conn.execute("ATTACH DATABASE ? AS s", (str(stage_file),))
    try:
        with conn:
            newer, older = _revisions(conn)
            # What the records the store takes need (an older record's facts and types need nothing)
            conn.executescript("""
                DROP TABLE IF EXISTS temp.keep;
                CREATE TEMP TABLE keep (id TEXT PRIMARY KEY) WITHOUT ROWID;
                INSERT OR IGNORE INTO temp.keep SELECT subject FROM s.facts
                    WHERE subject NOT IN (SELECT id FROM temp.older);
                INSERT OR IGNORE INTO temp.keep SELECT object FROM s.facts
                    WHERE object IS NOT NULL AND subject NOT IN (SELECT id FROM temp.older);
            """)
            conn.executemany("INSERT OR IGNORE INTO temp.keep VALUES (?)", [(r,) for r in relations])
            # The classes named by the kept entities' types (one step: a class's own classes
            # are its types, not needed entities).
            conn.execute("""
                INSERT OR IGNORE INTO temp.keep
                SELECT DISTINCT t.type FROM s.types t JOIN temp.keep k ON k.id = t.entity
                WHERE t.entity NOT IN (SELECT id FROM temp.older)
            """)
            # The store's newer record of an entity stays as it is; a newer staged one replaces it.
            conn.execute("DELETE FROM temp.keep WHERE id IN (SELECT id FROM temp.older)")
            _clear_replaced(conn, [e for e in newer if conn.execute(
                "SELECT 1 FROM temp.keep WHERE id=?", (e,)).fetchone()], relations)
            for statement in _COPY:  # one by one: executescript would commit the transaction
                conn.execute(statement)
            conn.execute("DELETE FROM rejects WHERE key=?", (key,))
            conn.execute("INSERT INTO rejects SELECT ?, line, reason, excerpt FROM s.rejects", (key,))
            conn.execute("DELETE FROM dropped WHERE key=?", (key,))
            conn.execute("INSERT INTO dropped SELECT ?, line, record, path, reason, excerpt FROM s.dropped", (key,))
            conn.execute("DELETE FROM input_digests WHERE key=?", (key,))
            conn.execute("INSERT INTO input_digests SELECT ?, bytes, digest FROM s.input_digests", (key,))
            conn.execute("""
                UPDATE ingests SET records_done = (SELECT MAX(records_done) FROM s.ingests),
                                   position = (SELECT MAX(position) FROM s.ingests)
                WHERE key = ?""", (key,))
            conn.execute("DROP TABLE temp.keep")
            conn.execute("DROP TABLE temp.older")
    finally:
        conn.execute("DETACH DATABASE s")
    return older


def _revisions(conn) -> tuple[list[str], int]:
    """The staged records that replace the store's (newer or the same revision, as a full
    ingest decides: kg/revisions.py) and, in temp.older, those the store holds newer."""
    conn.execute("CREATE TEMP TABLE older (id TEXT PRIMARY KEY) WITHOUT ROWID")
    newer, older = [], []
    for entity, modified, lastrevid, held_modified, held_lastrevid in conn.execute("""
            SELECT r.entity, r.modified, r.lastrevid, m.modified, m.lastrevid
            FROM s.revisions r JOIN main.revisions m ON m.entity = r.entity"""):
        if revisions.replaces((modified, lastrevid), (held_modified, held_lastrevid)):
            newer.append(entity)
        else:
            older.append((entity,))
    conn.executemany("INSERT INTO temp.older VALUES (?)", older)
    return newer, len(older)


def _clear_replaced(conn, newer: list[str], relations: frozenset[str]) -> None:
    """The store's older records of `newer`, for the relations read (another filter's facts stay)."""
    if newer:
        kept = set(conn.execute("SELECT f.id, f.relation, f.object, f.value FROM s.facts f "
                                "WHERE f.subject IN (SELECT value FROM json_each(?))", (json.dumps(newer),)))
        revisions.clear(conn, newer, kept, relations)


def _remove(stage_file: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{stage_file}{suffix}").unlink(missing_ok=True)

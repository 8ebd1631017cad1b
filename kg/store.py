"""The embedded store: one SQLite file (WAL) holding the whole graph.

This module owns the schema and every write. Reads go through `factprobe.kg.graph`; nothing
outside kg/ touches these tables.

Writes are upserts keyed by natural ids (statement ids, or derived ids for sources without
them), so ingesting the same input twice changes nothing; a newer Wikidata record of an entity
replaces the older one (kg/revisions.py). A batch of rows and the checkpoint
that says it was ingested commit in one transaction, which is what makes an ingest resumable
after SIGKILL: either both are on disk or neither is.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import revisions
from .model import DEPRECATED, LANGUAGES, Rows

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    label TEXT,
    description TEXT,
    sitelinks INTEGER NOT NULL DEFAULT 0,
    datatype TEXT
) WITHOUT ROWID;

-- Labels (is_alias = 0) and aliases (is_alias = 1) per language.
CREATE TABLE IF NOT EXISTS names (
    entity TEXT NOT NULL,
    lang TEXT NOT NULL,
    text TEXT NOT NULL,
    is_alias INTEGER NOT NULL,
    PRIMARY KEY (entity, lang, text)
) WITHOUT ROWID;

-- Direct P31 values, and P279 values for classes; no transitive closure (see DESIGN.md).
CREATE TABLE IF NOT EXISTS types (
    entity TEXT NOT NULL,
    type TEXT NOT NULL,
    via TEXT NOT NULL,
    PRIMARY KEY (entity, type, via)
) WITHOUT ROWID;

-- Time keys are YYYYMMDD integers widened by precision (kg/model.py:time_key) so validity
-- checks are integer comparisons.
CREATE TABLE IF NOT EXISTS facts (
    id TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    relation TEXT NOT NULL,
    object TEXT,
    value_type TEXT NOT NULL,
    value TEXT,
    extra TEXT,
    rank INTEGER NOT NULL,
    start_time TEXT, start_precision INTEGER, start_key INTEGER,
    end_time TEXT, end_precision INTEGER, end_key INTEGER,
    point_time TEXT, point_precision INTEGER, point_key INTEGER,
    source TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS provenance (
    fact TEXT NOT NULL,
    source TEXT NOT NULL,
    annotator TEXT NOT NULL,
    document TEXT NOT NULL,
    PRIMARY KEY (fact, source, annotator, document)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    title TEXT,
    text TEXT NOT NULL,
    source TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS annotations (
    document TEXT NOT NULL,
    entity TEXT NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    surface TEXT NOT NULL,
    annotator TEXT NOT NULL,
    PRIMARY KEY (document, start, "end", entity)
) WITHOUT ROWID;

-- One row per ingested input (keyed by content fingerprint, not path): how far it got.
CREATE TABLE IF NOT EXISTS ingests (
    key TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    records_done INTEGER NOT NULL DEFAULT 0,
    position INTEGER NOT NULL DEFAULT 0,
    complete INTEGER NOT NULL DEFAULT 0,
    truncated INTEGER NOT NULL DEFAULT 0,
    started REAL,
    finished REAL
) WITHOUT ROWID;

-- What each ingests row read, by content (kg/identity.py): the hash of the input file's first
-- `bytes` bytes (as on disk: a compressed file's compressed bytes) at its last checkpoint, and
-- of the whole file once complete. No row: nothing to check a resume or a skip against.
CREATE TABLE IF NOT EXISTS input_digests (
    key TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL,
    digest TEXT NOT NULL
) WITHOUT ROWID;

-- Co-occurrence counts of facts in a corpus (`factprobe frequency annotate --to-store`), one
-- row per (fact, corpus); `corpus` names the index they came from, `bucket` is under `edges`.
CREATE TABLE IF NOT EXISTS fact_frequencies (
    fact TEXT NOT NULL,
    corpus TEXT NOT NULL,
    documents INTEGER NOT NULL,
    bucket TEXT NOT NULL,
    edges TEXT NOT NULL,
    PRIMARY KEY (fact, corpus)
) WITHOUT ROWID;

-- Who counted a corpus's fact_frequencies, per relation (a JSON record: backend, index, settings, tokenizer);
-- a run stopped midway stays listed beside the annotator whose counts it only partly replaced.
CREATE TABLE IF NOT EXISTS frequency_annotators (
    corpus TEXT NOT NULL,
    relation TEXT NOT NULL,
    annotator TEXT NOT NULL,
    complete INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (corpus, relation, annotator)
) WITHOUT ROWID;

-- The revision of each entity's Wikidata JSON record in the store (kg/revisions.py).
CREATE TABLE IF NOT EXISTS revisions (
    entity TEXT PRIMARY KEY,
    modified TEXT,
    lastrevid INTEGER
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rejects (
    key TEXT NOT NULL,
    line INTEGER NOT NULL,
    reason TEXT NOT NULL,
    excerpt TEXT NOT NULL,
    PRIMARY KEY (key, line, reason)
) WITHOUT ROWID;

-- Parts of a record left out while the rest of it was stored (a mention, a triple, a
-- qualifier): the record's id and the part's path inside it (kg/ingest.py ParseResult.dropped).
CREATE TABLE IF NOT EXISTS dropped (
    key TEXT NOT NULL,
    line INTEGER NOT NULL,
    record TEXT NOT NULL,
    path TEXT NOT NULL,
    reason TEXT NOT NULL,
    excerpt TEXT NOT NULL,
    PRIMARY KEY (key, line, record, path)
) WITHOUT ROWID;
"""

# Secondary indexes serve the read API: objects(s, r), subjects by (r, o), entities_of_type.
_INDEXES = """
CREATE INDEX IF NOT EXISTS facts_subject_relation ON facts (subject, relation);
CREATE INDEX IF NOT EXISTS facts_relation_object ON facts (relation, object);
CREATE INDEX IF NOT EXISTS names_text ON names (text COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS types_type ON types (type, entity);
CREATE INDEX IF NOT EXISTS annotations_entity ON annotations (entity);
"""

_INSERTS = {
    # Field by field, so a source that knows less (Wikidata5M alias files, T-REx, RDF
    # without descriptions) never blanks what a richer one stored; sitelinks keep the larger count.
    "entities": (
        "INSERT INTO entities VALUES (?,?,?,?,COALESCE(?,0),?) ON CONFLICT(id) DO UPDATE SET "
        "kind=excluded.kind, label=COALESCE(excluded.label, entities.label), "
        "description=COALESCE(excluded.description, entities.description), "
        "sitelinks=MAX(excluded.sitelinks, entities.sitelinks), "
        "datatype=COALESCE(excluded.datatype, entities.datatype)"
    ),
    "names": "INSERT OR REPLACE INTO names VALUES (?,?,?,?)",
    # The graph's date (KnowledgeGraph.as_of) is its latest revision among every input read.
    "meta": "INSERT INTO meta VALUES (?,?) ON CONFLICT(key) DO UPDATE SET value=MAX(meta.value, excluded.value)",
    "types": "INSERT OR IGNORE INTO types VALUES (?,?,?)",
    "facts": "INSERT OR REPLACE INTO facts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "provenance": "INSERT OR IGNORE INTO provenance VALUES (?,?,?,?)",
    "documents": "INSERT OR REPLACE INTO documents VALUES (?,?,?,?)",
    "annotations": "INSERT OR REPLACE INTO annotations VALUES (?,?,?,?,?,?)",
}


class StoreError(Exception):
    """A store that cannot be opened or used; the message names the file."""


@dataclass(frozen=True)
class IngestState:
    key: str
    source: str
    path: str
    records_done: int
    position: int
    complete: bool
    truncated: bool
    digest_bytes: int = 0  # the input's bytes `digest` covers (input_digests)
    digest: str = ""  # "" when none was recorded


def connect(path: str | os.PathLike, *, create: bool = True, readonly: bool = False) -> sqlite3.Connection:
    path = Path(path)
    if not create and not path.exists():
        raise StoreError(f"{path}: no such store (run `factprobe ingest ...` first)")
    try:
        if readonly:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode keeps every committed transaction across a process crash
            # (only an OS crash can lose the last ones), which is what resume relies on.
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-262144")  # 256 MiB page cache
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("PRAGMA mmap_size=1073741824")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a factprobe store ({exc})") from exc
    return conn


class Store:
    """Write side of the embedded store. Use as a context manager or call close().

    Args:
        path: The SQLite file; created (with its folder) when missing.
        languages: The name languages the store keeps, the first the display language; fixed
            when the store is created (None: model.LANGUAGES, English). A store made for other languages is refused.
        indexes: Build the read API's secondary indexes (False only for a scan-only staging store).

    Raises:
        StoreError: Not a factprobe store, another schema version, or other languages.
    """

    def __init__(self, path: str | os.PathLike, *, languages: tuple[str, ...] | None = None,
                 indexes: bool = True):
        self.path = Path(path)
        # A staging store (kg/restrict.py) is only scanned and read by primary key, so it
        # skips the secondary indexes: on a full dump they would cost GBs and minutes.
        self.indexes = indexes
        self.conn = connect(self.path)
        try:
            self._init_schema(languages)
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise StoreError(f"{self.path}: not a factprobe store ({exc})") from exc

    def _init_schema(self, languages: tuple[str, ...] | None) -> None:
        c = self.conn
        c.executescript(_SCHEMA)
        row = c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            with c:
                c.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                c.execute(
                    "INSERT INTO meta VALUES ('languages', ?)",
                    (json.dumps(list(languages or LANGUAGES)),),
                )
                c.execute("INSERT INTO meta VALUES ('created', ?)", (str(time.time()),))
        elif int(row[0]) != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: schema version {row[0]}, this factprobe reads version "
                f"{SCHEMA_VERSION}; rebuild the store with this version"
            )
        stored = self.languages
        if languages is not None and tuple(languages) != stored:
            raise StoreError(
                f"{self.path}: store holds languages {','.join(stored)}, "
                f"ingest asked for {','.join(languages)}; use one store per language set"
            )
        if self.indexes:
            c.executescript(_INDEXES)

    @property
    def languages(self) -> tuple[str, ...]:
        row = self.conn.execute("SELECT value FROM meta WHERE key='languages'").fetchone()
        return tuple(json.loads(row[0]))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.conn:
            yield self.conn

    def write(self, rows: Rows, conn: sqlite3.Connection | None = None) -> int:
        """Upsert a batch of rows (call inside `transaction()` to group with a checkpoint); a
        record of an entity replaces the store's older one (kg/revisions.py). Returns how many
        of its records were ignored because the store holds a newer one."""
        c = conn or self.conn
        ignored = 0
        if rows.revisions:
            rows, ignored = revisions.apply(c, rows)
        for table, sql in _INSERTS.items():
            batch = getattr(rows, table)
            if batch:
                c.executemany(sql, batch)
        # Batches whose records arrive in pieces (RDF) finish here, in the same transaction:
        # they stage their pieces and upsert what the pieces now assemble (kg/sources/rdf/assemble.py).
        finish = getattr(rows, "write_staged", None)
        if finish is not None:
            finish(self, c)
        return ignored

    def write_fact_frequencies(self, corpus: str, edges: tuple[int, ...],
                               rows: list[tuple[str, int, str]]) -> None:
        """(fact, documents, bucket) counted in `corpus`; a recount replaces the old row."""
        with self.conn:
            self.conn.executemany("INSERT OR REPLACE INTO fact_frequencies VALUES (?,?,?,?,?)",
                                  [(fact, corpus, n, bucket, ",".join(map(str, edges))) for fact, n, bucket in rows])

    def begin_frequency_annotator(self, corpus: str, relation: str, annotator: dict) -> None:
        """`annotator` starts writing counts of `relation`'s facts under `corpus` (before its first row)."""
        with self.conn:
            self.conn.execute("INSERT OR IGNORE INTO frequency_annotators VALUES (?,?,?,0)",
                              (corpus, relation, json.dumps(annotator, sort_keys=True, ensure_ascii=False)))

    def finish_frequency_annotator(self, corpus: str, relation: str, annotator: dict) -> None:
        """`annotator` has counted every fact of `relation` under `corpus`: every row is its own now."""
        key = json.dumps(annotator, sort_keys=True, ensure_ascii=False)  # one spelling, whatever the key order
        with self.conn:
            self.conn.execute("DELETE FROM frequency_annotators WHERE corpus=? AND relation=? AND annotator!=?",
                              (corpus, relation, key))
            self.conn.execute("INSERT OR REPLACE INTO frequency_annotators VALUES (?,?,?,1)", (corpus, relation, key))

    # -- ingest bookkeeping -------------------------------------------------------------

    def ingest_state(self, key: str) -> IngestState | None:
        row = self.conn.execute(
            "SELECT i.key, source, path, records_done, position, complete, truncated, "
            "COALESCE(d.bytes, 0), COALESCE(d.digest, '') "
            "FROM ingests i LEFT JOIN input_digests d ON d.key = i.key WHERE i.key=?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        return IngestState(row[0], row[1], row[2], row[3], row[4], bool(row[5]), bool(row[6]), row[7], row[8])

    def begin_ingest(self, key: str, source: str, path: str, *, restart: bool = False) -> IngestState:
        with self.conn:
            if restart:
                self.conn.execute("DELETE FROM ingests WHERE key=?", (key,))
                self.conn.execute("DELETE FROM rejects WHERE key=?", (key,))
                self.conn.execute("DELETE FROM dropped WHERE key=?", (key,))
                self.conn.execute("DELETE FROM input_digests WHERE key=?", (key,))
            self.conn.execute(
                "INSERT OR IGNORE INTO ingests (key, source, path, started) VALUES (?,?,?,?)",
                (key, source, path, time.time()),
            )
            self.conn.execute("UPDATE ingests SET path=? WHERE key=?", (path, key))
        state = self.ingest_state(key)
        assert state is not None
        return state

    def checkpoint(
        self,
        conn: sqlite3.Connection,
        key: str,
        records_done: int,
        position: int,
        rejects: list[tuple[int, str, str]],
        dropped: list[tuple[int, str, str, str, str]] = (),  # type: ignore[assignment]
    ) -> None:
        conn.execute(
            "UPDATE ingests SET records_done=?, position=? WHERE key=?",
            (records_done, position, key),
        )
        if rejects:
            conn.executemany(
                "INSERT OR REPLACE INTO rejects VALUES (?,?,?,?)",
                [(key, line, reason, excerpt) for line, reason, excerpt in rejects],
            )
        if dropped:
            conn.executemany("INSERT OR REPLACE INTO dropped VALUES (?,?,?,?,?,?)",
                             [(key, *drop) for drop in dropped])

    def record_digest(self, conn: sqlite3.Connection, key: str, nbytes: int, digest: str) -> None:
        """With a checkpoint: the hash of the input's first `nbytes` bytes ("": none known, so
        a later run cannot resume from this checkpoint and starts the input over)."""
        if digest:
            conn.execute("INSERT OR REPLACE INTO input_digests VALUES (?,?,?)", (key, nbytes, digest))
        else:
            conn.execute("DELETE FROM input_digests WHERE key=?", (key,))

    def finish_ingest(self, key: str, *, truncated: bool, digest: tuple[int, str] | None = None) -> None:
        """Mark the input's run finished; `digest`: (size, hash) of the whole input file."""
        with self.conn:
            self.conn.execute(
                "UPDATE ingests SET complete=?, truncated=?, finished=? WHERE key=?",
                (0 if truncated else 1, int(truncated), time.time(), key),
            )
            if digest is not None:
                self.record_digest(self.conn, key, *digest)

    def rejects(self, key: str) -> list[tuple[int, str, str]]:
        return self.conn.execute(
            "SELECT line, reason, excerpt FROM rejects WHERE key=? ORDER BY line, reason", (key,)
        ).fetchall()

    def dropped(self, key: str) -> list[tuple[int, str, str, str, str]]:
        """(line, record, path, reason, excerpt) of each part of a record left out."""
        return self.conn.execute(
            "SELECT line, record, path, reason, excerpt FROM dropped WHERE key=? ORDER BY line, path", (key,)
        ).fetchall()

    # -- bulk loads ---------------------------------------------------------------------
    #
    # Two secondary indexes take their keys in random order during a bulk load: (relation,
    # object) of facts and the text of names. Every committed chunk dirties pages all over
    # them, and each such page is written to the WAL and checkpointed again at every commit:
    # on the 200k-entity bench (bench/ingest.py: 2.7M facts) the writer wrote 6.9 GB for a
    # 0.66 GB store and spent ~25 s of CPU in its transactions; without them 1.4 GB and ~11 s.
    # Built once at the end (CREATE INDEX sorts) they take ~4.5 s there. The stored rows are
    # the same either way; only a query running during the load lacks the indexes (it is
    # slower, not different). Whoever opens the store next recreates anything missing (see
    # _init_schema), so a killed load leaves nothing to repair. Unique indexes (primary keys)
    # are never deferred: upserts and idempotence rely on them.
    _DEFERRABLE_INDEXES = ("facts_relation_object", "names_text")

    def defer_random_indexes(self) -> None:
        with self.conn:
            for name in self._DEFERRABLE_INDEXES:
                self.conn.execute(f"DROP INDEX IF EXISTS {name}")

    def restore_indexes(self) -> None:
        """Create every secondary index that is missing (a no-op when none is)."""
        if self.indexes:
            self.conn.executescript(_INDEXES)

    def size_bytes(self) -> int:
        return (self.conn.execute("PRAGMA page_count").fetchone()[0]
                * self.conn.execute("PRAGMA page_size").fetchone()[0])

    def optimize(self) -> None:
        """Refresh the planner's statistics after a bulk load (cheap, bounded by analysis_limit).

        ANALYZE, not `PRAGMA optimize`: the latter only analyzes tables this connection has
        queried, and an ingest only writes, so a fresh store had no statistics. Without them
        SQLite read `objects(subject, relation)` through the (relation, object) index, a scan
        of the relation's facts: 5 ms a call at 20k entities instead of 8 us (bench/scale.py)."""
        self.conn.execute("PRAGMA analysis_limit=1000")
        self.conn.execute("ANALYZE")

    def merge_entities(self, conn: sqlite3.Connection, rows: list[tuple]) -> None:
        """Upsert entity rows field by field: a None label/description/datatype or sitelinks
        keeps what the store has (another source may have filled it); sitelinks keep the
        larger count."""
        conn.executemany(_INSERTS["entities"], rows)

    def delete_facts(self, conn: sqlite3.Connection, ids: list[str]) -> None:
        if ids:
            conn.executemany("DELETE FROM facts WHERE id=?", [(i,) for i in ids])

    def has_statement(self, conn: sqlite3.Connection, subject: str, relation: str, obj: str) -> bool:
        """Whether a fact with a Wikidata statement id (`Q1$...`) says (subject, relation, obj)."""
        row = conn.execute(
            "SELECT 1 FROM facts WHERE subject=? AND relation=? AND object=? AND instr(id, '$') > 0 "
            "LIMIT 1",
            (subject, relation, obj),
        ).fetchone()
        return row is not None

    def drop_unsupported_types(self, conn: sqlite3.Connection, types: list[tuple[str, str, str]]) -> None:
        """Remove (entity, type, via) rows that no non-deprecated fact supports any more."""
        for entity, type_, via in types:
            supported = conn.execute(
                "SELECT 1 FROM facts WHERE subject=? AND relation=? AND object=? "
                f"AND rank > {DEPRECATED} LIMIT 1",
                (entity, via, type_),
            ).fetchone()
            if supported is None:
                conn.execute("DELETE FROM types WHERE entity=? AND type=? AND via=?",
                             (entity, type_, via))

"""The `staged_parts` table: pieces of RDF records that arrive apart. In RDF one statement is many
triples (its link from the subject, its value, rank, qualifiers, value nodes shared between
statements), in any order and chunks apart; each is staged here as `(owner, part, key, value)`
and the records whose pieces changed are re-assembled in the same transaction (assemble.py).
The table belongs to the RDF source, not to the store: it is created on first use.
"""

from __future__ import annotations

import sqlite3

# `owner` is the record (a statement id, an entity id, a value node), `part`/`key`/`value` what one
# piece says about it. The second index finds owners by what they refer to (value nodes,
# subject-relation-object keys).
_DDL = (
    """CREATE TABLE IF NOT EXISTS staged_parts (
    owner TEXT NOT NULL,
    part TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (owner, part, key, value)
) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS staged_parts_lookup ON staged_parts (part, key, value)",
)


def ensure_table(conn: sqlite3.Connection) -> None:
    """Create the table if this store has none yet (inside the caller's transaction: no commit)."""
    for statement in _DDL:
        conn.execute(statement)


def stage_parts(conn: sqlite3.Connection, parts: list[tuple[str, str, str, str]]) -> None:
    """Keep (owner, part, key, value) pieces; a piece staged twice is kept once."""
    if parts:
        ensure_table(conn)
        conn.executemany("INSERT OR IGNORE INTO staged_parts VALUES (?,?,?,?)", parts)


def unstage_parts(conn: sqlite3.Connection, owners: list[str], part: str) -> None:
    """Forget the pieces `part` of these owners."""
    if owners:
        conn.executemany("DELETE FROM staged_parts WHERE owner=? AND part=?", [(owner, part) for owner in owners])


def staged_parts(conn: sqlite3.Connection, owners: list[str] | set[str]) -> dict[str, list[tuple[str, str, str]]]:
    """Every staged (part, key, value) of these owners, sorted."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    owners = sorted(set(owners))
    for i in range(0, len(owners), 500):
        batch = owners[i:i + 500]
        marks = ",".join("?" * len(batch))
        for owner, part, key, value in conn.execute(
            f"SELECT owner, part, key, value FROM staged_parts WHERE owner IN ({marks}) "
            "ORDER BY owner, part, key, value",
            batch,
        ):
            out.setdefault(owner, []).append((part, key, value))
    return out


def staged_owners(conn: sqlite3.Connection, part: str, key: str, value: str | None = None) -> list[str]:
    """Owners holding a piece `part`/`key` (and `value`, when given)."""
    if value is None:
        rows = conn.execute("SELECT DISTINCT owner FROM staged_parts WHERE part=? AND key=? ORDER BY owner",
                            (part, key))
    else:
        rows = conn.execute("SELECT DISTINCT owner FROM staged_parts WHERE part=? AND key=? AND value=? "
                            "ORDER BY owner", (part, key, value))
    return [r[0] for r in rows]

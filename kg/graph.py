"""The read API every other layer uses: `KnowledgeGraph`.

Truth, as DESIGN.md defines it: a deprecated statement is never true; somevalue/novalue
statements name no object; a fact is "current" when it has no end or ends today or later;
`at=date` asks for validity at that date instead (start <= date <= end, imprecise times widened
to their whole period). Point-in-time qualifiers (P585) date a value but do not bound validity.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from .model import (
    DEPRECATED,
    INSTANCE_OF,
    LANGUAGES,
    SUBCLASS_OF,
    TRUTH_RULES,
    Entity,
    Fact,
    Labels,
    RelationRow,
    Stats,
    TimeValue,
    date_key,
)
from .store import connect

_FACT_COLUMNS = (
    "id, subject, relation, object, value_type, value, extra, rank, "
    "start_time, start_precision, end_time, end_precision, point_time, point_precision, source"
)


def _time(text: str | None, precision: int | None) -> TimeValue | None:
    return TimeValue(text, precision) if text else None


# Statements that can be probed: entity-valued and not deprecated, on `facts f`; _ENTITY_STATEMENTS
# those of one relation (one parameter). Qualified because statement_groups joins fact_frequencies: a
# bare name would turn ambiguous the day that table gains a column of the same name.
_PROBED = f"f.object IS NOT NULL AND f.rank > {DEPRECATED}"
_ENTITY_STATEMENTS = f"f.relation=? AND {_PROBED}"


def _ranked(truth: str | None, alias: str = "f") -> str:
    """The clause (on `facts {alias}`) for a statement whose rank makes it true under `truth`
    (kg/model.py TRUTH_RULES): not deprecated; under "truthy" also of its group's best rank."""
    if truth not in (None, *TRUTH_RULES):
        raise ValueError(f"truth {truth!r}: use one of {', '.join(TRUTH_RULES)}")
    clause = f"{alias}.rank > {DEPRECATED}"
    if truth == "truthy":
        clause += (f" AND {alias}.rank = (SELECT MAX(g.rank) FROM facts g WHERE g.subject = {alias}.subject "
                   f"AND g.relation = {alias}.relation)")
    return clause


def _fact(row: tuple) -> Fact:
    return Fact(
        id=row[0], subject=row[1], relation=row[2], object=row[3], value_type=row[4],
        value=row[5], extra=row[6], rank=row[7],
        start=_time(row[8], row[9]), end=_time(row[10], row[11]), point=_time(row[12], row[13]),
        source=row[14],
    )


class KnowledgeGraph:
    """Read-only view of a store. Cheap to open; safe to share across threads for reads.
    Use as a context manager or call close().

    Args:
        path: The store's SQLite file (an ingest wrote it).

    Raises:
        StoreError: No store at `path`, or not a factprobe store.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.conn: sqlite3.Connection = connect(self.path, create=False, readonly=True)
        row = self.conn.execute("SELECT value FROM meta WHERE key='languages'").fetchone()
        self.languages: tuple[str, ...] = tuple(json.loads(row[0])) if row else LANGUAGES

    def close(self) -> None:
        self.conn.close()

    def as_of(self) -> str | None:
        """The graph's own date, YYYY-MM-DD: the latest revision of any entity read into it (a
        Wikidata JSON dump's `modified`); None when no input said (T-REx, Wikidata5M, truthy RDF)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key='as_of'").fetchone()
        return row[0] if row else None

    def loaded_on(self) -> str | None:
        """The UTC date the store last finished an ingest, YYYY-MM-DD; None when none finished."""
        row = self.conn.execute("SELECT MAX(finished) FROM ingests WHERE complete=1").fetchone()
        if not row or row[0] is None:
            return None
        return _dt.datetime.fromtimestamp(row[0], _dt.timezone.utc).date().isoformat()

    def __enter__(self) -> KnowledgeGraph:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- entities -----------------------------------------------------------------------

    def entity(self, entity_id: str) -> Entity | None:
        row = self.conn.execute(
            "SELECT id, kind, label, description, sitelinks, datatype FROM entities WHERE id=?",
            (entity_id,),
        ).fetchone()
        return Entity(*row) if row else None

    def entity_ids(self, kind: str = "item") -> Iterator[str]:
        """Every entity of a kind ("item" or "property"), streamed in id order."""
        yield from (r[0] for r in self.conn.execute("SELECT id FROM entities WHERE kind=? ORDER BY id", (kind,)))

    def labels(self, entity_id: str, lang: str | None = None) -> Labels:
        """Label and aliases in `lang` (default: the store's first language)."""
        lang = lang or self.languages[0]
        rows = self.conn.execute(
            "SELECT text, is_alias FROM names WHERE entity=? AND lang=? ORDER BY is_alias, text",
            (entity_id, lang),
        ).fetchall()
        label = next((t for t, alias in rows if not alias), None)
        return Labels(label, tuple(t for t, alias in rows if alias))

    def names(self, languages: Sequence[str] | None = None, *, aliases: bool = True) -> Iterator[tuple[str, str]]:
        """Every (entity, label or alias) in the given languages (default: all the store's);
        labels only with aliases=False."""
        langs = tuple(languages or self.languages)
        marks = ",".join("?" * len(langs))
        labels_only = "" if aliases else " AND NOT is_alias"
        yield from self.conn.execute(
            f"SELECT DISTINCT entity, text FROM names WHERE lang IN ({marks}){labels_only} ORDER BY entity, text", langs)

    def types(self, entity_id: str, via: str | None = None) -> list[str]:
        """Direct types; `via` "P31" keeps instance-of types only, "P279" a class's superclasses."""
        rows = self.conn.execute(
            "SELECT DISTINCT type FROM types WHERE entity=? AND (? IS NULL OR via=?) ORDER BY type",
            (entity_id, via, via)).fetchall()
        return [r[0] for r in rows]

    def entities_of_type(self, type_id: str, via: str | None = None) -> list[str]:
        rows = self.conn.execute(
            "SELECT DISTINCT entity FROM types WHERE type=? AND (? IS NULL OR via=?) ORDER BY entity",
            (type_id, via, via)).fetchall()
        return [r[0] for r in rows]

    def types_at(self, entity_id: str, via: str | None = None, at: _dt.date | str | None = None,
                 truth: str | None = None) -> list[str]:
        """Direct types held at `at` (default today): a type whose instance-of / subclass-of
        statements the store holds counts only while one of them is true then (Portugal's
        "colonial power", ended 1975, is no type of it in 2020); a type the store keeps without its
        statement (an ingest limited to other relations) counts as before, undated."""
        clause, args = self._validity(at)
        same = "f.subject = t.entity AND f.relation = t.via AND f.object = t.type"
        rows = self.conn.execute(
            "SELECT DISTINCT t.type FROM types t WHERE t.entity=? AND (? IS NULL OR t.via=?) "
            f"AND (NOT EXISTS (SELECT 1 FROM facts f WHERE {same}) "
            f"OR EXISTS (SELECT 1 FROM facts f WHERE {same} AND {_ranked(truth)} AND {clause})) ORDER BY t.type",
            (entity_id, via, via, *args)).fetchall()
        return [r[0] for r in rows]

    def is_class(self, entity_id: str) -> bool:
        """Whether the entity is a class: it has a subclass-of type, or some entity is an instance of it."""
        return self.conn.execute(
            "SELECT 1 FROM types WHERE entity=? AND via=? UNION ALL SELECT 1 FROM types WHERE type=? AND via=? LIMIT 1",
            (entity_id, SUBCLASS_OF, entity_id, INSTANCE_OF)).fetchone() is not None

    def search(self, text: str, limit: int = 20) -> list[str]:
        """Entities with a label or alias equal to `text` (ASCII case-insensitive), most popular first."""
        rows = self.conn.execute(
            "SELECT n.entity FROM names n JOIN entities e ON e.id = n.entity "
            "WHERE n.text = ? COLLATE NOCASE GROUP BY n.entity "
            "ORDER BY MAX(e.sitelinks) DESC, n.entity LIMIT ?",
            (text, limit),
        ).fetchall()
        return [r[0] for r in rows]

    # -- facts --------------------------------------------------------------------------

    def _validity(self, at: _dt.date | str | None) -> tuple[str, tuple]:
        """The clause (on `facts f`) for statements true at `at`, or now."""
        if at is None:
            return "(f.end_key IS NULL OR f.end_key >= ?)", (date_key(None),)
        key = date_key(at)
        return "(f.start_key IS NULL OR f.start_key <= ?) AND (f.end_key IS NULL OR f.end_key >= ?)", (key, key)

    def objects(self, subject: str, relation: str, at: _dt.date | str | None = None,
                truth: str | None = None) -> list[str]:
        """True entity objects of (subject, relation): current ones, or those valid at `at`;
        `truth` "truthy" counts only the group's best rank (kg/model.py TRUTH_RULES)."""
        clause, args = self._validity(at)
        rows = self.conn.execute(
            "SELECT DISTINCT object FROM facts f WHERE subject=? AND relation=? "
            f"AND object IS NOT NULL AND {_ranked(truth)} AND {clause} ORDER BY object",
            (subject, relation, *args),
        ).fetchall()
        return [r[0] for r in rows]

    def held_objects(self, subject: str, relation: str) -> list[str]:
        """Every entity object (subject, relation) ever had: a statement of any date and any rank
        but deprecated (Melbourne for Australia's capital, 1901-1927), sorted."""
        rows = self.conn.execute(
            "SELECT DISTINCT object FROM facts WHERE subject=? AND relation=? "
            f"AND object IS NOT NULL AND rank > {DEPRECATED} ORDER BY object", (subject, relation)).fetchall()
        return [r[0] for r in rows]

    def temporal_objects(
        self, subject: str, relation: str, at: _dt.date | str | None = None, truth: str | None = None
    ) -> list[str]:
        """Objects that were true of (subject, relation) but whose validity ended (by `at`,
        default today), most recently ended first; objects still true (under `truth`) are not among them."""
        key = date_key(at)
        still_true = set(self.objects(subject, relation, at=at, truth=truth))
        rows = self.conn.execute(
            "SELECT object, MAX(end_key) AS ended FROM facts WHERE subject=? AND relation=? "
            f"AND object IS NOT NULL AND rank > {DEPRECATED} AND end_key < ? "
            "GROUP BY object ORDER BY ended DESC, object",
            (subject, relation, key),
        ).fetchall()
        return [o for o, _ in rows if o not in still_true]

    def is_fact(
        self, subject: str, relation: str, obj: str, at: _dt.date | str | None = None, truth: str | None = None
    ) -> bool:
        clause, args = self._validity(at)
        row = self.conn.execute(
            "SELECT 1 FROM facts f WHERE subject=? AND relation=? AND object=? "
            f"AND {_ranked(truth)} AND {clause} LIMIT 1",
            (subject, relation, obj, *args),
        ).fetchone()
        return row is not None

    def facts(
        self,
        relation: str | None = None,
        subject: str | None = None,
        *,
        include_deprecated: bool = False,
        entity_objects_only: bool = False,
        batch: int = 10_000,
    ) -> Iterator[Fact]:
        """All statements matching the filters, streamed in (subject, relation, id) order."""
        where, args = [], []
        if relation:
            where.append("relation=?")
            args.append(relation)
        if subject:
            where.append("subject=?")
            args.append(subject)
        if not include_deprecated:
            where.append(f"rank > {DEPRECATED}")
        if entity_objects_only:
            where.append("object IS NOT NULL")
        sql = f"SELECT {_FACT_COLUMNS} FROM facts"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY subject, relation, id"
        cursor = self.conn.execute(sql, args)
        while True:
            rows = cursor.fetchmany(batch)
            if not rows:
                return
            for row in rows:
                yield _fact(row)

    def statement_groups(self, relation: str, *, at: _dt.date | str | None = None, lang: str | None = None,
                         corpus: str | None = None, batch: int = 10_000, subjects: Sequence[str] | None = None,
                         truth: str | None = None
                         ) -> Iterator[tuple[str, str, tuple[str, ...], bool, bool, bool, tuple[int, str] | None]]:
        """The relation's non-deprecated entity-valued statements grouped by (subject, object), in
        that order: (subject, object, statement ids in id order, true at `at`, subject has a
        label in `lang`, object has one, (documents, bucket) counted in `corpus` for the first
        counted id, or None). What a probe-set selection needs of every fact, in one scan, so
        that only the facts it keeps cost a query each. `subjects` (at most 500): only theirs,
        read off the (subject, relation) index (a fact list's, not the whole relation). `truth`:
        which ranks count as true (kg/model.py TRUTH_RULES)."""
        lang = lang or self.languages[0]
        clause, args = self._validity(at)
        clause = f"{clause} AND {_ranked(truth)}"
        # As `labels(...).label` is truthy: the first label text in order, and not empty.
        has_label = ("COALESCE((SELECT MIN(n.text) FROM names n WHERE n.entity = {} AND n.lang = ? "
                     "AND n.is_alias = 0), '') != ''")
        counted, join = (("fr.documents, fr.bucket",
                          "LEFT JOIN fact_frequencies fr ON fr.fact = f.id AND fr.corpus = ?")
                         if corpus else ("NULL, NULL", ""))
        sql = (f"SELECT f.subject, f.object, f.id, ({clause}), "
               f"{has_label.format('f.subject')}, {has_label.format('f.object')}, {counted} "
               f"FROM facts f {join} WHERE {_ENTITY_STATEMENTS} "
               + (f"AND f.subject IN ({', '.join('?' * len(subjects))}) " if subjects is not None else "")
               + "ORDER BY f.subject, f.object, f.id")
        params = (*args, lang, lang, *((corpus,) if corpus else ()), relation, *(subjects or ()))
        group: list = []
        cursor = self.conn.execute(sql, params)

        def done(rows):
            ids = tuple(r[2] for r in rows)
            first = next(((r[6], r[7]) for r in rows if r[6] is not None), None)
            return (rows[0][0], rows[0][1], ids, any(r[3] for r in rows), bool(rows[0][4]),
                    bool(rows[0][5]), first)

        while rows := cursor.fetchmany(batch):
            for row in rows:
                if group and (row[0] != group[0][0] or row[1] != group[0][1]):
                    yield done(group)
                    group = []
                group.append(row)
        if group:
            yield done(group)

    def has_frequencies(self, corpus: str) -> bool:
        try:
            return self.conn.execute("SELECT 1 FROM fact_frequencies WHERE corpus=? LIMIT 1",
                                     (corpus,)).fetchone() is not None
        except sqlite3.OperationalError:  # a store from before the table existed
            return False

    def has_entity_facts(self, relation: str) -> bool:
        return self.conn.execute(
            f"SELECT 1 FROM facts f WHERE {_ENTITY_STATEMENTS} LIMIT 1",
            (relation,)).fetchone() is not None

    def distinct_objects(self, relation: str) -> list[str]:
        """The relation's entity objects (non-deprecated statements), sorted; read off the
        (relation, object) index without visiting the facts one by one in Python."""
        return [r[0] for r in self.conn.execute(
            f"SELECT DISTINCT f.object FROM facts f WHERE {_ENTITY_STATEMENTS} ORDER BY f.object", (relation,))]

    def count_pairs(self, relation: str) -> int:
        """Distinct (subject, object) pairs of the relation's non-deprecated entity-valued statements."""
        return self.conn.execute(
            f"SELECT COUNT(*) FROM (SELECT DISTINCT f.subject, f.object FROM facts f WHERE {_ENTITY_STATEMENTS})",
            (relation,)).fetchone()[0]

    def relations(self) -> list[tuple[str, str | None, int]]:
        """(property id, label, number of entity-valued true facts), most used first."""
        rows = self.conn.execute(
            "SELECT f.relation, e.label, COUNT(*) AS n FROM facts f "
            f"LEFT JOIN entities e ON e.id = f.relation WHERE {_PROBED} "
            "GROUP BY f.relation ORDER BY n DESC, f.relation"
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def relation_rows(self) -> list[RelationRow]:
        """Every relation with probe-able statements (entity-valued, not deprecated) and their
        counts: statements, distinct subjects and objects, current and ended (today, as `objects`
        reads "current"); most statements first, ties by id in numeric order. One scan of the facts."""
        current, args = self._validity(None)
        rows = self.conn.execute(
            "SELECT f.relation, e.label, COUNT(*) AS n, COUNT(DISTINCT f.subject), COUNT(DISTINCT f.object), "
            f"SUM({current}) FROM facts f LEFT JOIN entities e ON e.id = f.relation WHERE {_PROBED} "
            "GROUP BY f.relation ORDER BY n DESC, LENGTH(f.relation), f.relation", args).fetchall()
        return [RelationRow(r, label, n, subjects, objects, now, n - now)
                for r, label, n, subjects, objects, now in rows]

    def stats(self) -> Stats:
        q = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        sources = dict(self.conn.execute(
            "SELECT source, COUNT(*) FROM facts GROUP BY source ORDER BY source"
        ).fetchall())
        return Stats(
            entities=q("SELECT COUNT(*) FROM entities"),
            items=q("SELECT COUNT(*) FROM entities WHERE kind='item'"),
            properties=q("SELECT COUNT(*) FROM entities WHERE kind='property'"),
            names=q("SELECT COUNT(*) FROM names"),
            types=q("SELECT COUNT(*) FROM types"),
            facts=q("SELECT COUNT(*) FROM facts"),
            entity_facts=q("SELECT COUNT(*) FROM facts WHERE object IS NOT NULL"),
            literal_facts=q("SELECT COUNT(*) FROM facts WHERE object IS NULL"),
            temporal_facts=q(
                "SELECT COUNT(*) FROM facts WHERE start_key IS NOT NULL OR end_key IS NOT NULL "
                "OR point_key IS NOT NULL"
            ),
            deprecated_facts=q(f"SELECT COUNT(*) FROM facts WHERE rank = {DEPRECATED}"),
            relations=q("SELECT COUNT(DISTINCT relation) FROM facts"),
            documents=q("SELECT COUNT(*) FROM documents"),
            annotations=q("SELECT COUNT(*) FROM annotations"),
            sources=sources,
        )

    # -- corpus material kept by sources that carry documents (T-REx) ---------------------

    def documents(self, source: str | None = None, batch: int = 1000) -> Iterator[tuple[str, str, str]]:
        """(id, title, text) of stored documents, streamed in id order."""
        sql = "SELECT id, title, text FROM documents"
        args: tuple = ()
        if source:
            sql += " WHERE source=?"
            args = (source,)
        cursor = self.conn.execute(sql + " ORDER BY id", args)
        while rows := cursor.fetchmany(batch):
            yield from rows

    def linked_documents(self, source: str | None = None, batch: int = 1000
                         ) -> Iterator[tuple[str, str, str, tuple[str, ...]]]:
        """(id, title, text, linked entities) of stored documents, streamed in id order."""
        sql = ("SELECT d.id, d.title, d.text, group_concat(DISTINCT a.entity) FROM documents d "
               "LEFT JOIN annotations a ON a.document = d.id")
        args: tuple = ()
        if source:
            sql += " WHERE d.source=?"
            args = (source,)
        cursor = self.conn.execute(sql + " GROUP BY d.id ORDER BY d.id", args)
        while rows := cursor.fetchmany(batch):
            for doc_id, title, text, links in rows:
                yield doc_id, title, text, tuple(sorted(links.split(","))) if links else ()

    def fact_frequencies(self, corpus: str | None = None) -> Iterator[tuple[str, str, int, str]]:
        """(fact, corpus, documents, bucket) as `frequency annotate --to-store` wrote them."""
        sql = "SELECT fact, corpus, documents, bucket FROM fact_frequencies"
        try:
            if corpus is None:
                yield from self.conn.execute(sql + " ORDER BY corpus, fact")
            else:
                yield from self.conn.execute(sql + " WHERE corpus=? ORDER BY fact", (corpus,))
        except sqlite3.OperationalError:  # a store from before the table existed: nothing counted yet
            return

    def frequency_annotators(self, corpus: str, relations: Iterable[str]) -> dict[str, list[dict]]:
        """Relation -> the annotators whose counts of its facts `corpus` holds (`frequency annotate
        --to-store` records them), in a stable order; a relation counted before annotators were
        recorded, or never counted, has none."""
        relations = tuple(relations)
        out: dict[str, list[dict]] = {}
        try:
            for relation in relations:
                rows = self.conn.execute("SELECT annotator FROM frequency_annotators WHERE corpus=? AND relation=? "
                                         "ORDER BY annotator", (corpus, relation)).fetchall()
                out[relation] = [json.loads(r[0]) for r in rows]
        except sqlite3.OperationalError:  # a store from before the table existed: nothing recorded
            return {relation: [] for relation in relations}
        return out

    def annotations(self, document: str) -> list[tuple[str, int, int, str]]:
        """(entity, start, end, surface) entity links of one stored document."""
        return self.conn.execute(
            'SELECT entity, start, "end", surface FROM annotations WHERE document=? '
            'ORDER BY start, "end", entity',
            (document,),
        ).fetchall()

    def fact(self, fact_id: str) -> Fact | None:
        """One statement by its id (deprecated ones too), or None."""
        row = self.conn.execute(f"SELECT {_FACT_COLUMNS} FROM facts WHERE id=?", (fact_id,)).fetchone()
        return _fact(row) if row else None

    def provenance(self, fact_id: str) -> list[tuple[str, str, str]]:
        """(source, annotator, document) records of one fact."""
        return self.conn.execute(
            "SELECT source, annotator, document FROM provenance WHERE fact=? "
            "ORDER BY source, annotator, document",
            (fact_id,),
        ).fetchall()

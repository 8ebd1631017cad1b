"""The knowledge-graph data model shared by every source, the store and its readers.

Boundary types are frozen dataclasses. Inside an ingest, rows travel between processes as plain
tuples in the column order of `Rows` (pickling tuples is several times cheaper than dataclasses,
and the bulk path moves millions of them).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from dataclasses import dataclass, field

# Statement ranks, ordered so that "not deprecated" is `rank > DEPRECATED`.
DEPRECATED, NORMAL, PREFERRED = 0, 1, 2
RANKS = {"deprecated": DEPRECATED, "normal": NORMAL, "preferred": PREFERRED}
RANK_NAMES = {v: k for k, v in RANKS.items()}
# Which non-deprecated statements are true (the first is the default). "non-deprecated": every
# value of normal or preferred rank. "truthy": Wikidata's truthy view (wdt:), only the best rank
# of a statement group (subject, property) counts, so a preferred value hides its normal-rank
# siblings. Validity at a date applies on top of either.
TRUTH_RULES = ("non-deprecated", "truthy")

# Value types of a statement without a known value ("some value", "no value"): never true.
NO_VALUE_TYPES = ("somevalue", "novalue")

# The name languages a store keeps unless told (the first the display language): the sources',
# the store's and `ingest --languages`' default, and the corpus index's (index/settings.py).
LANGUAGES = ("en",)

# Qualifiers that give a statement its temporal validity.
START_TIME, END_TIME, POINT_IN_TIME = "P580", "P582", "P585"
INSTANCE_OF, SUBCLASS_OF = "P31", "P279"

# Wikidata time precisions: 9 year, 10 month, 11 day (lower values are decades, centuries...).
PRECISION_YEAR, PRECISION_MONTH, PRECISION_DAY = 9, 10, 11

_TIME = re.compile(r"^([+-]?)(\d{1,16})-(\d{2})-(\d{2})")


@dataclass(frozen=True)
class TimeValue:
    """A Wikidata time: the `+YYYY-MM-DDT00:00:00Z` string and its precision."""

    time: str
    precision: int = PRECISION_DAY

    def sort_key(self, bound: str = "start") -> int | None:
        return time_key(self.time, self.precision, bound)

    @property
    def year(self) -> int | None:
        m = _TIME.match(self.time)
        if not m:
            return None
        return int(m.group(2)) * (-1 if m.group(1) == "-" else 1)


def time_key(time: str | None, precision: int | None, bound: str = "start") -> int | None:
    """An integer YYYYMMDD key that sorts like the calendar, negative years included.

    Imprecise times cover a period: as a start they count from its first day, as an end up to
    its last day, so a capital whose tenure "ended in 1990" (year precision) is still valid on
    1990-06-01. Unparseable times give None (treated as unknown).
    """
    if not time:
        return None
    m = _TIME.match(time)
    if not m:
        return None
    year = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
    month, day = int(m.group(3)), int(m.group(4))
    precision = PRECISION_DAY if precision is None else precision
    if precision < PRECISION_YEAR:
        # Decade/century/millennium: widen to the whole period of 10**(9 - precision) years.
        span = 10 ** (PRECISION_YEAR - precision)
        first = (year // span) * span
        year = first if bound == "start" else first + span - 1
    if precision <= PRECISION_YEAR or month == 0:
        month, day = (1, 1) if bound == "start" else (12, 31)
    elif precision == PRECISION_MONTH or day == 0:
        day = 1 if bound == "start" else 31
    return year * 10000 + month * 100 + day


def date_key(when: _dt.date | str | None) -> int:
    """Key of a calendar date (a `date`, `YYYY`, `YYYY-MM-DD`, or None for today)."""
    if when is None:
        when = _dt.date.today()
    if isinstance(when, _dt.date):
        return when.year * 10000 + when.month * 100 + when.day
    text = str(when).strip()
    if re.fullmatch(r"[+-]?\d{1,16}", text):
        return time_key(f"{text}-00-00", PRECISION_YEAR, "start")  # type: ignore[return-value]
    key = time_key(text if text[0] in "+-" else f"+{text}", PRECISION_DAY, "start")
    if key is None:
        raise ValueError(f"not a date: {when!r} (expected YYYY or YYYY-MM-DD)")
    return key


def derived_fact_id(source: str, subject: str, relation: str, obj: str) -> str:
    """Stable id for facts that come without a statement id (truthy RDF, T-REx, Wikidata5M).

    Deterministic so that ingesting the same input twice upserts instead of duplicating.
    """
    digest = hashlib.sha1(f"{subject}\t{relation}\t{obj}".encode()).hexdigest()[:20]
    return f"{source}:{subject}:{relation}:{digest}"


@dataclass(frozen=True)
class Entity:
    id: str
    kind: str  # item | property | lexeme
    label: str | None
    description: str | None
    sitelinks: int = 0  # number of sitelinks: the popularity proxy
    datatype: str | None = None  # properties only


@dataclass(frozen=True)
class Labels:
    label: str | None
    aliases: tuple[str, ...] = ()

    def all(self) -> tuple[str, ...]:
        return ((self.label,) if self.label else ()) + self.aliases


@dataclass(frozen=True)
class Fact:
    id: str
    subject: str
    relation: str
    object: str | None  # entity id, or None for literals / somevalue / novalue
    # item, property, lexeme, form, sense (an entity, in `object`); time, quantity, string,
    # monolingualtext, globecoordinate (a literal, in `value`); somevalue, novalue
    value_type: str
    value: str | None = None  # literal value (time string, amount, text, "lat,lon")
    extra: str | None = None  # JSON details: precision, unit, language, globe...
    rank: int = NORMAL
    start: TimeValue | None = None
    end: TimeValue | None = None
    point: TimeValue | None = None
    source: str = ""

    @property
    def is_true(self) -> bool:
        return self.rank > DEPRECATED and self.value_type not in NO_VALUE_TYPES


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str
    source: str


@dataclass(frozen=True)
class Stats:
    entities: int
    items: int
    properties: int
    names: int
    types: int
    facts: int
    entity_facts: int
    literal_facts: int
    temporal_facts: int
    deprecated_facts: int
    relations: int
    documents: int
    annotations: int
    sources: dict[str, int] = field(default_factory=dict)  # facts per source


@dataclass(frozen=True)
class RelationRow:
    """One relation of a store, counted over its probe-able statements: entity-valued and not
    deprecated (KnowledgeGraph.relation_rows; `kg relations` and the service's GET /relations)."""

    id: str
    label: str | None  # the property entity's label in the store; None where the store has no record of it
    facts: int  # statements
    subjects: int  # distinct subjects
    objects: int  # distinct objects
    current: int  # statements true today: no end, or an end today or later (the graph's "current")
    ended: int  # statements whose end is before today


@dataclass
class Rows:
    """A batch of store rows, as tuples in column order (see kg/store.py for the columns)."""

    entities: list[tuple] = field(default_factory=list)
    names: list[tuple] = field(default_factory=list)
    types: list[tuple] = field(default_factory=list)
    facts: list[tuple] = field(default_factory=list)
    provenance: list[tuple] = field(default_factory=list)
    documents: list[tuple] = field(default_factory=list)
    annotations: list[tuple] = field(default_factory=list)
    # (key, value) rows of the store's `meta` table, kept at their largest value: "as_of", the
    # latest entity revision date (YYYY-MM-DD) of the records a source read
    meta: list[tuple] = field(default_factory=list)
    # (entity, modified, lastrevid, line) of each Wikidata JSON record in the batch: kg/revisions.py
    # stores the first three and keeps the newest record of an entity; the line names a record
    # that fails to write
    revisions: list[tuple] = field(default_factory=list)

    def extend(self, other: Rows) -> None:
        for name in self.__dataclass_fields__:
            getattr(self, name).extend(getattr(other, name))

    def __len__(self) -> int:
        return sum(len(getattr(self, name)) for name in self.__dataclass_fields__)


def fact_row(
    fact_id: str,
    subject: str,
    relation: str,
    obj: str | None,
    value_type: str,
    value: str | None = None,
    extra: str | None = None,
    rank: int = NORMAL,
    start: TimeValue | None = None,
    end: TimeValue | None = None,
    point: TimeValue | None = None,
    source: str = "",
) -> tuple:
    """One `facts` row; the time keys are derived here so every source computes them alike."""
    return (
        fact_id, subject, relation, obj, value_type, value, extra, rank,
        start.time if start else None, start.precision if start else None,
        start.sort_key("start") if start else None,
        end.time if end else None, end.precision if end else None,
        end.sort_key("end") if end else None,
        point.time if point else None, point.precision if point else None,
        point.sort_key("start") if point else None,
        source,
    )

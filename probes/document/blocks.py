"""The report's document model: headings, text, tables and images, which render to Markdown and
to HTML alike (probes/report/render.py), and `Section`, a part of the report's "Method measures"
that methods declare (probes/methods/base.py `report_sections`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, Sequence, Union


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Image:
    file: str
    alt: str


@dataclass(frozen=True)
class Link:
    """A page beside the report (its item view, items.html)."""
    file: str
    text: str


Block = Union[Heading, Text, Table, Image, Link]


# What a cell holds when it has no figure: a row or column of nothing else is left out.
EMPTY_CELLS = frozenset({"", "–"})


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> Table:
    """A table without empty rows (every cell after the first empty) or empty columns (every
    cell empty, the first column kept): a reader scans neither for nothing."""
    rows = [tuple(r) for r in rows]
    rows = [r for r in rows if len(r) < 2 or any(c not in EMPTY_CELLS for c in r[1:])]
    keep = [k for k in range(len(headers)) if k == 0 or not rows or any(
        k < len(r) and r[k] not in EMPTY_CELLS for r in rows)]
    return Table(tuple(headers[k] for k in keep), tuple(tuple(r[k] for k in keep if k < len(r)) for r in rows))


class ReportRun(Protocol):
    """What a section reads of a run (probes/report/loading.py `Run`)."""

    rid: str  # the run's short id in tables ("R1")
    aggregate: dict  # its aggregate.json


def breakdown(run: ReportRun, key: str) -> dict[str, dict]:
    """The run's aggregate mapping under `key` (a breakdown such as `by_bucket`); empty when it
    has none."""
    value = run.aggregate.get(key)
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Section:
    """A part of the report's "Method measures", declared by each method whose numbers it shows:
    `build` gets every run of the report whose method declares it, in report order, and returns
    its blocks (none when no run has the numbers). Sections follow each other by `place`.
    `breakdowns`: the aggregate's `by_*` keys it shows, which the generic breakdown tables leave
    out."""

    place: int
    build: Callable[[Sequence[ReportRun]], list[Block]]
    breakdowns: tuple[str, ...] = ()

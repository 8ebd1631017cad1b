"""Corpus documents as the frequency indexes see them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str
    links: tuple[str, ...] = ()  # entities the corpus itself links in this document (T-REx)
    url: str = ""  # where the corpus says the document comes from (WikiExtractor's url)

    @property
    def searchable(self) -> str:
        """Title and body both count: a title is where a page names its subject."""
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass
class Reject:
    """A document a reader could not read: where, why, and the start of it."""
    file: str
    line: int
    reason: str
    excerpt: str


@dataclass
class ReadReport:
    """What one corpus reader read: documents given, rejects, whether the input was cut."""
    documents: int = 0
    rejects: list[Reject] = field(default_factory=list)
    truncated: bool = False


DEFAULT_BUCKETS = (1, 10, 100)  # edges: 0 | [1,10) | [10,100) | [100,inf)


def bucket_of(count: int, edges: tuple[int, ...] = DEFAULT_BUCKETS) -> str:
    """The frequency bucket's label, e.g. "0", "[1,10)", "[100,inf)"."""
    if count < edges[0]:
        return "0" if edges[0] == 1 else f"[0,{edges[0]})"
    for low, high in zip(edges, edges[1:]):
        if count < high:
            return f"[{low},{high})"
    return f"[{edges[-1]},inf)"


def bucket_labels(edges: tuple[int, ...] = DEFAULT_BUCKETS) -> tuple[str, ...]:
    """Every bucket's label, lowest first: "0", "[1,10)", "[10,100)", "[100,inf)" (a table's
    columns in numeric order, which the labels' text order is not)."""
    return tuple(bucket_of(count, edges) for count in (0, *edges))

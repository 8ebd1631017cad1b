"""Corpus documents as the frequency indexes see them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str
    links: tuple[str, ...] = ()  # entities the corpus itself links in this document (T-REx)

    @property
    def searchable(self) -> str:
        """Title and body both count: a title is where a page names its subject."""
        return f"{self.title}\n{self.text}" if self.title else self.text


DEFAULT_BUCKETS = (1, 10, 100)  # edges: 0 | [1,10) | [10,100) | [100,inf)


def bucket_of(count: int, edges: tuple[int, ...] = DEFAULT_BUCKETS) -> str:
    """The frequency bucket's label, e.g. "0", "[1,10)", "[100,inf)"."""
    if count < edges[0]:
        return "0" if edges[0] == 1 else f"[0,{edges[0]})"
    for low, high in zip(edges, edges[1:]):
        if count < high:
            return f"[{low},{high})"
    return f"[{edges[-1]},inf)"

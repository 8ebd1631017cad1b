"""Streaming corpus readers: JSONL files of {"id", "title", "text"} (plain or compressed), T-REx
document files and the Wikidata5M corpus file read directly (through the ingestion layer's own
parsers, so a document has the same id, title, text and links as when ingested), and the
documents a knowledge-graph store already holds. A bad record is reported with its file and line,
and skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ..kg.graph import KnowledgeGraph
from ..kg.readers import InputError, TruncatedInput, excerpt, json_record, line_chunks, split_lines
from .corpus import Document


@dataclass
class Reject:
    file: str
    line: int
    reason: str
    excerpt: str


@dataclass
class ReadReport:
    documents: int = 0
    rejects: list[Reject] = field(default_factory=list)
    truncated: bool = False


def jsonl_documents(path: str | Path, report: ReadReport,
                    on_progress: Callable[[int], None] | None = None) -> Iterator[Document]:
    name = str(path)
    try:
        for chunk in line_chunks(path):
            report.rejects.extend(Reject(name, *reject) for reject in chunk.rejects)  # lines over the cap
            for number, raw in split_lines(chunk):
                if not raw.strip():
                    continue
                record, why = json_record(raw)
                if record is not None:
                    why = _missing_field(record)
                if why:
                    report.rejects.append(Reject(name, number, why, excerpt(raw)))
                    continue
                report.documents += 1
                yield Document(str(record["id"]), record.get("title") or "", record["text"])
            if on_progress:
                on_progress(chunk.progress)
    except TruncatedInput as error:
        report.truncated = True
        report.rejects.append(Reject(name, 0, f"truncated input: {error}", ""))


FORMATS = ("jsonl", "trex", "wikidata5m")


def corpus_documents(path: str | Path, fmt: str, report: ReadReport, *, labels_from: str | None = None,
                     on_progress: Callable[[int], None] | None = None) -> Iterator[Document]:
    """Documents of one corpus file in `fmt` (see FORMATS). For Wikidata5M, `labels_from` names
    the store whose labels become titles, as `factprobe ingest wikidata5m` does."""
    if fmt == "jsonl":
        yield from jsonl_documents(path, report, on_progress)
        return
    from ..kg.sources.trex import TrexSource
    from ..kg.sources.wikidata5m import Wikidata5mSource

    source = TrexSource() if fmt == "trex" else Wikidata5mSource(kind="corpus", labels_from=labels_from)
    name = str(path)
    try:
        for chunk in source.chunks(Path(path), 0, 0):
            parsed = source.parse(chunk)
            report.rejects.extend(Reject(name, line, why, text) for line, why, text in parsed.rejects)
            links: dict[str, set[str]] = {}
            for annotation in parsed.rows.annotations:
                links.setdefault(annotation[0], set()).add(annotation[1])
            for doc_id, title, text, _source in parsed.rows.documents:
                report.documents += 1
                yield Document(doc_id, title or "", text, tuple(sorted(links.get(doc_id, ()))))
            if on_progress:
                on_progress(chunk.progress)
    except TruncatedInput as error:
        report.truncated = True
        report.rejects.append(Reject(name, 0, f"truncated input: {error}", ""))
    except InputError as error:
        report.rejects.append(Reject(name, 0, str(error), ""))


def _missing_field(record: dict) -> str | None:
    if not isinstance(record.get("id"), (str, int)) or record.get("id") == "":
        return "field 'id' is missing or not a string"
    if not isinstance(record.get("text"), str):
        return "field 'text' is missing or not a string"
    if record.get("title") is not None and not isinstance(record.get("title"), str):
        return "field 'title' is not a string"
    return None


def store_documents(store: str | Path, source: str | None = None) -> Iterator[Document]:
    """The store's documents, each with the entities its annotations link (T-REx)."""
    with KnowledgeGraph(store) as kg:
        for doc_id, title, text, links in kg.linked_documents(source):
            yield Document(doc_id, title or "", text or "", links)

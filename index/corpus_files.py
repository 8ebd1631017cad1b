"""Streaming corpus readers: JSONL files of {"id", "title", "text"} (plain or compressed; other
field names by `JsonFields`, text as a string or a list of paragraphs), WikiExtractor's `<doc>`
files (wikiextractor.py; found by their first line under the default format too), T-REx
document files and the Wikidata5M corpus file read directly (through the ingestion layer's own
parsers, so a document has the same id, title, text and links as when ingested), and the
documents a knowledge-graph store already holds. A bad record is reported with its file and line,
and skipped."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..kg.graph import KnowledgeGraph
from ..kg.readers import InputError, TruncatedInput, excerpt, json_record, line_chunks, split_lines
from .corpus import Document, ReadReport, Reject


@dataclass(frozen=True)
class JsonFields:
    """Which members of a JSONL record hold a document's id, title and text: Pyserini's
    corpora say `contents`, KILT's `wikipedia_id` and `wikipedia_title`."""
    id: str = "id"
    title: str = "title"
    text: str = "text"


def jsonl_documents(path: str | Path, report: ReadReport,
                    on_progress: Callable[[int], None] | None = None,
                    fields: JsonFields = JsonFields()) -> Iterator[Document]:
    name = str(path)
    try:
        for chunk in line_chunks(path):
            report.rejects.extend(Reject(name, *reject) for reject in chunk.rejects)  # lines over the cap
            for number, raw in split_lines(chunk):
                if not raw.strip():
                    continue
                record, why = json_record(raw)
                if record is not None:
                    why = _missing_field(record, fields)
                if why:
                    report.rejects.append(Reject(name, number, why, excerpt(raw)))
                    continue
                report.documents += 1
                text = record[fields.text]
                yield Document(str(record[fields.id]), record.get(fields.title) or "",
                               text if isinstance(text, str) else "\n\n".join(text))
            if on_progress:
                on_progress(chunk.progress)
    except TruncatedInput as error:
        report.truncated = True
        report.rejects.append(Reject(name, 0, f"truncated input: {error}", ""))


FORMATS = ("jsonl", "wikiextractor", "trex", "wikidata5m")


def corpus_documents(path: str | Path, fmt: str, report: ReadReport, *, labels_from: str | None = None,
                     on_progress: Callable[[int], None] | None = None,
                     fields: JsonFields = JsonFields()) -> Iterator[Document]:
    """Documents of one corpus file in `fmt` (see FORMATS); a `jsonl` file whose first line opens
    a WikiExtractor `<doc>` is read as one. For Wikidata5M, `labels_from` names the store whose
    labels become titles, as `factprobe ingest wikidata5m` does."""
    if fmt in ("jsonl", "wikiextractor"):
        from ..kg.sources.wikidata_documents import peek
        from .wikiextractor import looks_like_wikiextractor, wikiextractor_documents

        if fmt == "wikiextractor" or looks_like_wikiextractor(peek(Path(path))):
            yield from wikiextractor_documents(path, report, on_progress)
        else:
            yield from jsonl_documents(path, report, on_progress, fields)
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


def _missing_field(record: dict, fields: JsonFields) -> str | None:
    if type(record) is not dict:
        return "not a JSON object"
    hint = f" (the record has {', '.join(sorted(map(str, record))[:8]) or 'no field'}; --id-field, --title-field " \
           "and --text-field name others)"
    if isinstance(record.get(fields.id), bool) or not isinstance(record.get(fields.id), (str, int)) \
            or record.get(fields.id) == "":
        return f"field {fields.id!r} is missing or not a string{hint}"
    text = record.get(fields.text)
    if not (isinstance(text, str) or (isinstance(text, list) and all(isinstance(t, str) for t in text))):
        return f"field {fields.text!r} is missing or not a string or list of strings{hint}"
    if record.get(fields.title) is not None and not isinstance(record.get(fields.title), str):
        return f"field {fields.title!r} is not a string"
    return None


def store_documents(store: str | Path, source: str | None = None) -> Iterator[Document]:
    """The store's documents, each with the entities its annotations link (T-REx)."""
    with KnowledgeGraph(store) as kg:
        for doc_id, title, text, links in kg.linked_documents(source):
            yield Document(doc_id, title or "", text or "", links)

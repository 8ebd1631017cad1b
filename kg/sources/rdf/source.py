"""`RdfSource`: the ingest source for N-Triples and Turtle dumps (plain, gzip, bz2 or xz). N-Triples
are parsed line by line, Turtle chunk by chunk (a chunk that fails is re-parsed block by block);
each bad line or block is one reject naming its line.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rdflib import Graph
from rdflib.exceptions import ParserError
from rdflib.plugins.parsers.ntriples import W3CNTriplesParser

from ...identity import InputDigest
from ...ingest import ParseResult
from ...model import LANGUAGES
from ...readers import CHUNK_BYTES, MAX_RECORD_BYTES, Chunk, InputError, excerpt, line_chunks, split_lines

from .collect import TripleCollector
from .read import TurtleChunk, collect_directives, declared_prefix, turtle_chunks
from .terms import SOURCE, classify

# -- the source -------------------------------------------------------------------------------


class _StableBNodes(dict):
    """N-Triples blank node labels kept as they are, so `_:b1` names one node in every chunk."""

    def get(self, key, default=None):
        return key


@contextlib.contextmanager
def quiet_rdflib() -> Iterator[None]:
    """rdflib logs a warning with a traceback for every literal it cannot convert to a Python
    value (BCE dates, year 0); we read lexical forms, so those are noise."""
    logger = logging.getLogger("rdflib.term")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _one_line(exc: BaseException, limit: int = 120) -> str:
    text = str(exc)
    m = re.search(r"Bad syntax \(([^)]*)\)", text)
    if m:
        text = m.group(1)
    elif text.startswith("Failed to eat"):  # rdflib's N-Triples parser names its regex
        text = "cannot parse at " + repr(text.split(" at ", 1)[-1][:40])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


_FORMATS = {"nt": "nt", "ntriples": "nt", "n-triples": "nt", "ttl": "ttl", "turtle": "ttl"}


_SKIPPED_DATATYPES = ("external-id",)  # as the Wikidata JSON reader's default


@dataclass(frozen=True)
class RdfSource:
    """`entity_prefix`: the Wikibase's concept URI (`wd:`, e.g. `https://example.org/entity/`),
    for one whose IRIs are not `<server>/entity/Q1`; a Turtle file that declares `wd:` as such a
    prefix is read by it without the option. `keep_external_ids`: as the JSON reader's option
    (without it, statements of external-id properties are skipped once the property's
    `wikibase:propertyType` is read; the Turtle of Special:EntityData and the dumps carry it)."""

    languages: tuple[str, ...] = LANGUAGES
    format: str | None = None  # "nt" | "ttl"; None: from the file extension
    chunk_bytes: int = CHUNK_BYTES
    entity_prefix: str | None = None
    keep_external_ids: bool = False
    max_record_bytes: int = MAX_RECORD_BYTES  # a longer line is rejected unread (kg/readers.py)
    name: str = SOURCE

    def syntax(self, path: str | Path) -> str:
        if self.format:
            try:
                return _FORMATS[self.format.lower()]
            except KeyError:
                raise InputError(f"unknown RDF format {self.format!r} (use nt or ttl)") from None
        name = Path(path).name.lower()
        for suffix in (".gz", ".bz2", ".xz"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        ext = name.rsplit(".", 1)[-1] if "." in name else ""
        if ext in _FORMATS:
            return _FORMATS[ext]
        raise InputError(f"{path}: cannot tell the RDF syntax from the file name; use --format nt|ttl")

    def chunks(self, path: Path, start: int, position: int, digest: InputDigest | None = None) -> Iterator[Chunk]:
        if self.syntax(path) == "ttl":
            return turtle_chunks(path, start_line=start, start_position=position,
                                 chunk_bytes=self.chunk_bytes, digest=digest, max_line_bytes=self.max_record_bytes)
        return line_chunks(path, start_line=start, start_position=position,
                           chunk_bytes=self.chunk_bytes, digest=digest, max_line_bytes=self.max_record_bytes)

    def collector(self, chunk: Chunk) -> TripleCollector:
        prefix = self.entity_prefix
        if prefix is None and isinstance(chunk, TurtleChunk):
            declared = declared_prefix(chunk.header, b"wd:") or declared_prefix(chunk.data, b"wd:")
            # Only a `wd:` that Wikidata's layout does not already read (another Wikibase's)
            if declared and classify(declared + "Q1") != ("entity", "Q1"):
                prefix = declared
        return TripleCollector(self.languages, prefix, () if self.keep_external_ids else _SKIPPED_DATATYPES)

    def parse(self, chunk: Chunk) -> ParseResult:
        collector = self.collector(chunk)
        rejects: list[tuple[int, str, str]] = list(chunk.rejects)  # the lines over the cap
        with quiet_rdflib():
            if isinstance(chunk, TurtleChunk):
                self._parse_turtle(chunk, collector, rejects)
            else:
                self._parse_ntriples(chunk, collector, rejects)
        return ParseResult(collector.rows(), collector.used, rejects)

    @staticmethod
    def _parse_ntriples(chunk: Chunk, collector: TripleCollector, rejects: list) -> None:
        parser = W3CNTriplesParser(sink=collector)
        bnodes = _StableBNodes()
        for line_no, raw in split_lines(chunk):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                rejects.append((line_no, "invalid UTF-8", excerpt(raw)))
                continue
            parser.line = text
            try:
                parser.parseline(bnode_context=bnodes)
            except ParserError as exc:
                rejects.append((line_no, f"malformed N-Triples: {_one_line(exc)}", excerpt(raw)))
            except (ValueError, TypeError) as exc:
                rejects.append((line_no, f"bad value: {_one_line(exc)}", excerpt(raw)))

    @staticmethod
    def _parse_turtle(chunk: TurtleChunk, collector: TripleCollector, rejects: list) -> None:
        try:
            graph = Graph().parse(data=(chunk.header + chunk.data).decode("utf-8"), format="turtle")
        except Exception:  # noqa: BLE001 - any failure: find the bad blocks one by one
            graph = None
        if graph is not None:
            try:
                for s, p, o in graph:
                    collector.triple(s, p, o)
                return
            except (ValueError, TypeError):
                collector.clear()
        header = chunk.header
        for first, block in _blocks(chunk):
            data = b"\n".join(block) + b"\n"
            try:
                sub = TripleCollector(collector.names, collector.prefix, collector.skip_datatypes)
                for s, p, o in Graph().parse(data=(header + data).decode("utf-8"), format="turtle"):
                    try:
                        sub.triple(s, p, o)
                    except (ValueError, TypeError) as exc:  # a value of one triple: it alone is left out
                        rejects.append((first, f"bad value in the block starting here: {_one_line(exc)}",
                                        _ascii_excerpt(f"{s.n3()} {p.n3()} {o.n3()}")))
            except UnicodeDecodeError:
                rejects.append((first, "invalid UTF-8", excerpt(block[0])))
            except (ValueError, TypeError) as exc:
                rejects.append((first, f"bad value: {_one_line(exc)}", excerpt(block[0])))
            except Exception as exc:  # noqa: BLE001 - rdflib raises several syntax error types
                rejects.append((first, f"malformed Turtle: {_one_line(exc)}", excerpt(block[0])))
            else:
                collector.merge(sub)
            directives: dict[bytes, bytes] = {}
            collect_directives(directives, data)
            header += b"".join(directives.values())


def _ascii_excerpt(text: str) -> str:
    """An excerpt of parsed text as ASCII escapes where UTF-8 cannot hold it (a lone surrogate)."""
    return excerpt(text.encode("utf-8", "backslashreplace").decode("utf-8"))


def _blocks(chunk: Chunk) -> Iterator[tuple[int, list[bytes]]]:
    """(first line number, lines) of each blank-line-separated block of a chunk."""
    block: list[bytes] = []
    first = chunk.first
    for line_no, raw in split_lines(chunk):
        if not raw.strip():
            if block:
                yield first, block
                block = []
            continue
        if not block:
            first = line_no
        block.append(raw)
    if block:
        yield first, block

"""Saved SPARQL results, as query.wikidata.org downloads them (JSON, CSV, TSV), as an ingest source:
each result row is one truthy statement, the subject and object read from the variables the user
names (`--subject-var`, `--object-var`), the relation given (`--relation P36`) or read from a
variable (`--property-var`), with optional label variables (`--subject-label-var`, `--object-label-var`, as WDQS's
label service names them: `?itemLabel`).

The triples go through the RDF source's mapping (kg/sources/rdf/), so a results file yields the
rows an N-Triples file of the same `wdt:` triples and labels would. JSON is SPARQL 1.1's results
format (`head.vars`, `results.bindings`); TSV is SPARQL 1.1's (terms in N-Triples syntax, a
header of `?var`s); CSV is SPARQL 1.1's too (IRIs and literals as plain text, so a label there has
no language: it is taken as the store's first). A row that cannot be read costs only itself,
named by its line (CSV, TSV) or its place in `results.bindings` (JSON, line 0)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
from rdflib import Literal, URIRef
from rdflib.util import from_n3

from ..identity import InputDigest
from ..ingest import ParseResult
from ..model import LANGUAGES
from ..readers import Chunk, InputError, excerpt, without_bom
from .rdf import TripleCollector, quiet_rdflib
from .wikidata_documents import document_chunks

SOURCE = "sparql-results"
WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = URIRef("http://www.w3.org/2000/01/rdf-schema#label")
MAX_RESULTS_BYTES = 1 << 30  # one download; WDQS's own limits keep them far smaller


@dataclass(frozen=True)
class SparqlResultsSource:
    subject: str
    object: str
    relation: str | None = None  # P36; or None with `property`
    property: str | None = None  # a variable holding wdt:P36, wd:P36 or "P36"
    subject_label: str | None = None
    object_label: str | None = None
    languages: tuple[str, ...] = LANGUAGES
    name: str = SOURCE

    def __post_init__(self) -> None:
        if (self.relation is None) == (self.property is None):
            raise InputError("give the relation (--relation P36) or the variable holding it (--property-var), one of them")
        if self.relation is not None and not _property_id(self.relation):
            raise InputError(f"--relation {self.relation!r}: not a property id (like P36)")

    def chunks(self, path: Path, start: int, position: int, digest: InputDigest | None = None) -> Iterator[Chunk]:
        return document_chunks(path, digest, max_bytes=MAX_RESULTS_BYTES)

    def parse(self, chunk: Chunk) -> ParseResult:
        collector = TripleCollector(self.languages)
        rejects: list[tuple[int, str, str]] = list(chunk.rejects)
        used = 0
        with quiet_rdflib():
            for line, row in self._rows(without_bom(chunk.data), rejects):
                try:
                    self._triples(row, collector)
                    used += 1
                except (KeyError, ValueError, TypeError) as error:
                    where = "" if line > 0 else f"results.bindings[{-line - 1}]: "
                    rejects.append((max(line, 0), f"{where}{error}", excerpt(repr(row).encode("utf-8"))))
        return ParseResult(collector.rows(), used, rejects)

    def _triples(self, row: dict, collector: TripleCollector) -> None:
        subject = _entity(row, self.subject)
        relation = self.relation or _property_of(row, self.property)
        if self.object not in row:
            raise KeyError(f"?{self.object}: unbound")
        collector.triple(subject, URIRef(WDT + relation), row[self.object])
        for var, entity in ((self.subject_label, subject), (self.object_label, row[self.object])):
            if var and var in row and isinstance(entity, URIRef):
                label = row[var]
                lang = label.language if isinstance(label, Literal) and label.language else self.languages[0]
                collector.triple(entity, RDFS_LABEL, Literal(str(label), lang=lang))

    def _rows(self, data: bytes, rejects: list) -> Iterator[tuple[int, dict]]:
        """(line, {var: term}) of each result row; JSON rows' line is minus their 1-based place."""
        head = data.lstrip()[:1]
        if head == b"{":
            yield from _json_rows(data, rejects)
            return
        text = data.decode("utf-8")
        first = text.split("\n", 1)[0]
        if first.startswith("?"):
            yield from _tsv_rows(text, rejects)
        else:
            yield from _csv_rows(text)


def _json_rows(data: bytes, rejects: list) -> Iterator[tuple[int, dict]]:
    try:
        bindings = orjson.loads(data)["results"]["bindings"]
        if not isinstance(bindings, list):
            raise TypeError("results.bindings is not a list")
    except (orjson.JSONDecodeError, KeyError, TypeError) as error:
        rejects.append((1, f"not SPARQL JSON results (head, results.bindings): {error}", excerpt(data[:200])))
        return
    for k, binding in enumerate(bindings, 1):
        if not isinstance(binding, dict):
            rejects.append((0, f"results.bindings[{k - 1}]: not an object", excerpt(repr(binding).encode())))
            continue
        row = {}
        for var, term in binding.items():
            if isinstance(term, dict) and term.get("type") == "uri":
                row[var] = URIRef(term["value"])
            elif isinstance(term, dict) and term.get("type") in ("literal", "typed-literal"):
                row[var] = Literal(term["value"], lang=term.get("xml:lang"), datatype=term.get("datatype"))
        yield -k, row


def _tsv_rows(text: str, rejects: list) -> Iterator[tuple[int, dict]]:
    lines = text.split("\n")
    names = [v.strip().lstrip("?") for v in lines[0].rstrip("\r").split("\t")]
    for number, line in enumerate(lines[1:], 2):
        line = line.rstrip("\r")
        if not line:
            continue
        cells = line.split("\t")
        if len(cells) != len(names):
            rejects.append((number, f"{len(cells)} cells where the header names {len(names)}", excerpt(line.encode())))
            continue
        try:
            yield number, {name: from_n3(cell) for name, cell in zip(names, cells) if cell}
        except Exception as error:  # noqa: BLE001 - rdflib raises several kinds on a bad term
            rejects.append((number, f"a term that is no N-Triples term: {error}", excerpt(line.encode())))


def _csv_rows(text: str) -> Iterator[tuple[int, dict]]:
    reader = csv.reader(io.StringIO(text))
    names = next(reader, [])
    for row in reader:
        if not any(row):
            continue
        yield reader.line_num, {name: URIRef(cell) if cell.startswith(("http://", "https://")) else Literal(cell)
                                for name, cell in zip(names, row) if cell}


def _entity(row: dict, var: str) -> URIRef:
    term = row.get(var)
    if not (isinstance(term, URIRef) and str(term).startswith(WD)):
        raise ValueError(f"?{var}: {term!r} is not a Wikidata entity IRI ({WD}Q...)")
    return term


def _property_of(row: dict, var: str) -> str:
    term = row.get(var)
    value = str(term).rsplit("/", 1)[-1] if term is not None else ""
    if not _property_id(value):
        raise ValueError(f"?{var}: {term!r} names no property")
    return value


def _property_id(text: str) -> bool:
    return len(text) > 1 and text[0] == "P" and text[1:].isdigit() and text[1] != "0"

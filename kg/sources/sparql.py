"""SPARQL endpoints via SPARQLWrapper: pull the facts of one relation, with the labels, aliases,
descriptions and P31/P279 types of their entities, from a Wikidata-style endpoint.

Fetched triples go through the RDF source's mapping (kg/sources/rdf/), so an endpoint yields
the rows an RDF file with the same triples would. Paging, resuming, retries: docs/design/graph.md.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import socket
import sys
import time
import urllib.error
from dataclasses import dataclass

from rdflib import RDF, BNode, Literal, URIRef
from SPARQLWrapper import JSON, POST, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import EndPointInternalError, SPARQLWrapperException

from ... import __version__
from ..ingest import IngestReport, already_done
from ..model import INSTANCE_OF, SUBCLASS_OF
from ..store import Store
from .rdf import RdfRows, TripleCollector, entity_of, quiet_rdflib

SOURCE = "sparql"
MAX_BACKOFF = 60.0
MAX_RETRY_AFTER = 600.0
VALUES_BATCH = 200

_PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX psv: <http://www.wikidata.org/prop/statement/value/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX pqv: <http://www.wikidata.org/prop/qualifier/value/>
PREFIX wdno: <http://www.wikidata.org/prop/novalue/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX schema: <http://schema.org/>
"""


class SparqlError(Exception):
    """An endpoint that failed for good; the message is one line naming the endpoint URL."""


def _records_query(relation: str, limit: int, offset: int) -> str:
    return (
        # the truthy "no value" (`wd:Q189 a wdno:P47`) too, as an RDF file of the same triples gives it
        f"{_PREFIXES}SELECT ?s ?st ?o ?nv WHERE {{\n"
        f"  {{ ?s wdt:{relation} ?o }} UNION {{ ?s p:{relation} ?st }}\n"
        f"  UNION {{ ?s a wdno:{relation} BIND(wdno:{relation} AS ?nv) }}\n"
        f"}} ORDER BY ?s ?st ?o ?nv LIMIT {limit} OFFSET {offset}"
    )


def _statements_query(relation: str, statements: list[str]) -> str:
    values = " ".join(f"<{s}>" for s in statements)
    return (
        f"{_PREFIXES}SELECT ?x ?p ?o WHERE {{\n"
        f"  VALUES ?st {{ {values} }}\n"
        f"  {{ ?st ?p ?o . BIND(?st AS ?x)\n"
        f"    FILTER(?p IN (ps:{relation}, psv:{relation}, wikibase:rank, rdf:type, pq:P580, "
        f"pq:P582, pq:P585, pqv:P580, pqv:P582, pqv:P585)) }}\n"
        f"  UNION\n"
        f"  {{ ?st ?vp ?x . FILTER(?vp IN (psv:{relation}, pqv:P580, pqv:P582, pqv:P585))\n"
        f"    ?x ?p ?o . FILTER(?p IN (wikibase:timeValue, wikibase:timePrecision, "
        f"wikibase:timeCalendarModel, wikibase:quantityUnit, wikibase:quantityLowerBound, "
        f"wikibase:quantityUpperBound, wikibase:geoPrecision, wikibase:geoGlobe)) }}\n"
        f"}}"
    )


def _entities_query(entities: list[str], languages: tuple[str, ...]) -> str:
    values = " ".join(f"<{e}>" for e in entities)
    langs = ", ".join(json.dumps(lang) for lang in (*languages, "mul"))
    return (
        f"{_PREFIXES}SELECT ?e ?p ?o WHERE {{\n"
        f"  VALUES ?e {{ {values} }}\n"
        f"  ?e ?p ?o .\n"
        f"  FILTER(?p IN (rdfs:label, skos:prefLabel, schema:name, skos:altLabel, "
        f"schema:description, wikibase:sitelinks, wikibase:propertyType, "
        f"wdt:{INSTANCE_OF}, wdt:{SUBCLASS_OF}))\n"
        f"  FILTER(!isLiteral(?o) || lang(?o) = \"\" || lang(?o) IN ({langs}))\n"
        f"}}"
    )


def _term(binding: dict):
    kind = binding["type"]
    if kind == "uri":
        return URIRef(binding["value"])
    if kind == "bnode":
        return BNode(binding["value"])
    if kind in ("literal", "typed-literal"):
        return Literal(binding["value"], lang=binding.get("xml:lang"),
                       datatype=binding.get("datatype"))
    raise ValueError(f"unsupported binding type {kind!r}")


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


@dataclass
class Endpoint:
    """One SPARQL endpoint, queried with retries."""

    url: str
    retries: int = 5
    timeout: float = 60.0
    backoff: float = 1.0

    def select(self, query: str) -> list[dict]:
        attempt = 0
        while True:
            wait: float | None = None
            try:
                client = SPARQLWrapper(self.url, agent=f"factprobe/{__version__} (SPARQL source)")
                client.setMethod(POST)
                client.setReturnFormat(JSON)
                client.setOnlyConneg(True)
                client.setQuery(query)
                client.timeout = self.timeout  # setTimeout() would truncate to whole seconds
                result = client.queryAndConvert()
                if not isinstance(result, dict) or "results" not in result:
                    raise ValueError("the answer is not SPARQL JSON results")
                return result["results"]["bindings"]
            except urllib.error.HTTPError as exc:
                if exc.code != 429 and exc.code < 500:
                    raise SparqlError(f"{self.url}: HTTP {exc.code} {_one_line(exc.reason)}") from None
                wait = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
                reason = f"HTTP {exc.code} {_one_line(exc.reason)}"
            except EndPointInternalError as exc:
                reason = f"HTTP 500 ({_one_line(exc)})"
            except SPARQLWrapperException as exc:  # 400, 401, 404, 414: retrying cannot help
                raise SparqlError(f"{self.url}: {_one_line(exc)}") from None
            except urllib.error.URLError as exc:
                reason = f"cannot connect ({_one_line(exc.reason)})"
            except (TimeoutError, socket.timeout):
                reason = f"no answer within {self.timeout:g}s"
            except (ConnectionError, http.client.HTTPException, OSError) as exc:
                reason = f"connection failed ({_one_line(exc)})"
            except ValueError as exc:  # a truncated or non-JSON body
                reason = f"unreadable answer ({_one_line(exc)})"
            except RecursionError:  # json's reader recurses: an answer nested ~1,000 deep stops it
                raise SparqlError(f"{self.url}: the answer is nested too deep to read") from None
            if attempt >= self.retries:
                tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
                raise SparqlError(f"SPARQL endpoint {self.url}: {reason} (gave up after {tries})")
            if wait is None:
                wait = min(self.backoff * (2 ** attempt), MAX_BACKOFF)
            time.sleep(wait)
            attempt += 1


def _entity_iri(term) -> str | None:
    """The IRI of an entity term (an item, property, lexeme...), else None."""
    if isinstance(term, URIRef) and entity_of(str(term)):
        return str(term)
    return None


def _page_rows(endpoint: Endpoint, relation: str, records: list[dict],
               languages: tuple[str, ...]) -> tuple[RdfRows, list[tuple[int, str, str]], int]:
    """Rows for one page of records: the records' triples, their statements' pieces, and the
    names and types of every entity they mention."""
    collector = TripleCollector(languages)
    rejects: list[tuple[int, str, str]] = []
    statements: list[str] = []
    # The relation's own property entity too, so it has its labels and datatype.
    entities: set[str] = {f"http://www.wikidata.org/entity/{relation}"}
    wdt = URIRef(f"http://www.wikidata.org/prop/direct/{relation}")
    p = URIRef(f"http://www.wikidata.org/prop/{relation}")
    used = 0
    with quiet_rdflib():
        for index, record in enumerate(records):
            try:
                s = _term(record["s"])
                if "st" in record:
                    st = _term(record["st"])
                    collector.triple(s, p, st)
                    if isinstance(st, URIRef):
                        statements.append(str(st))
                elif "o" in record:
                    o = _term(record["o"])
                    collector.triple(s, wdt, o)
                    if (iri := _entity_iri(o)) is not None:
                        entities.add(iri)
                elif "nv" in record:
                    collector.triple(s, RDF.type, _term(record["nv"]))
                else:
                    continue
                if (iri := _entity_iri(s)) is not None:
                    entities.add(iri)
                used += 1
            except (KeyError, ValueError, TypeError) as exc:
                rejects.append((index, f"bad record: {_one_line(exc)}", _one_line(json.dumps(record))))

        for i in range(0, len(statements), VALUES_BATCH):
            batch = statements[i:i + VALUES_BATCH]
            for b in endpoint.select(_statements_query(relation, batch)):
                try:
                    o = _term(b["o"])
                    collector.triple(_term(b["x"]), _term(b["p"]), o)
                    if str(b["p"]["value"]).endswith(f"/prop/statement/{relation}"):
                        if (iri := _entity_iri(o)) is not None:
                            entities.add(iri)
                except (KeyError, ValueError, TypeError) as exc:
                    rejects.append((-1, f"bad statement triple: {_one_line(exc)}",
                                    _one_line(json.dumps(b))))

        types: set[tuple[str, str, str]] = set()
        ordered = sorted(entities)
        type_predicates = {f"http://www.wikidata.org/prop/direct/{r}": r for r in (INSTANCE_OF, SUBCLASS_OF)}
        for i in range(0, len(ordered), VALUES_BATCH):
            for b in endpoint.select(_entities_query(ordered[i:i + VALUES_BATCH], languages)):
                try:
                    e, pred, o = _term(b["e"]), _term(b["p"]), _term(b["o"])
                    via = type_predicates.get(str(pred))
                    if via is not None:
                        eid = entity_of(str(e))
                        tid = entity_of(str(o)) if isinstance(o, URIRef) else None
                        if eid and tid:
                            types.add((eid, tid, via))
                    else:
                        collector.triple(e, pred, o)
                except (KeyError, ValueError, TypeError) as exc:
                    rejects.append((-1, f"bad entity triple: {_one_line(exc)}",
                                    _one_line(json.dumps(b))))
    rows = collector.rows()
    rows.types = sorted(types)
    return rows, rejects, used


def ingest_sparql(
    store: Store,
    endpoint: str,
    relation: str,
    *,
    page_size: int = 10_000,
    limit: int | None = None,
    retries: int = 5,
    timeout: float = 60.0,
    restart: bool = False,
    progress: bool = False,
    backoff: float = 1.0,
) -> IngestReport:
    """Pull one relation's facts (and their entities' names and types) into the store."""
    started = time.perf_counter()
    relation = relation.strip().upper()
    if not relation[:1] == "P" or not relation[1:].isdigit():
        raise SparqlError(f"{endpoint}: {relation!r} is not a property id (e.g. P36)")
    if page_size < 1:
        raise SparqlError(f"{endpoint}: page size must be at least 1")
    key = f"{SOURCE}:{endpoint}:{relation}"
    state = store.begin_ingest(key, SOURCE, endpoint, restart=restart)
    report = IngestReport(SOURCE, endpoint, key, resumed_from=state.position)
    if state.complete:
        return already_done(store, report, state.position)

    client = Endpoint(endpoint, retries=retries, timeout=timeout, backoff=backoff)
    languages = store.languages
    offset = state.position
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=limit, initial=min(offset, limit) if limit else offset, unit="rec",
                   desc=f"sparql {relation}", file=sys.stderr, dynamic_ncols=True, leave=False)
    finished = False
    try:
        while True:
            want = page_size if limit is None else min(page_size, limit - offset)
            if want <= 0:
                break  # the limit is reached: leave the ingest open for a later, larger run
            records = client.select(_records_query(relation, want, offset))
            rows, rejects, used = _page_rows(client, relation, records, languages)
            rejects = [(offset + 1 + i if i >= 0 else offset + 1, reason, text)
                       for i, reason, text in rejects]
            new_offset = offset + len(records)
            with store.transaction() as conn:
                store.write(rows, conn)
                store.checkpoint(conn, key, new_offset, new_offset, rejects)
            report.records += used
            offset = new_offset
            if bar is not None:
                bar.update(len(records))
            if len(records) < want:
                finished = True
                break
    finally:
        if bar is not None:
            bar.close()
    if finished:
        store.finish_ingest(key, truncated=False)
    report.lines_read = offset
    report.rejects = store.rejects(key)
    report.rejected = len(report.rejects)
    report.seconds = time.perf_counter() - started
    return report

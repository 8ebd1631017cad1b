"""Corpus jobs as library calls: index a corpus for co-occurrence frequency (`index_corpus`),
count the facts of relations against that index (`annotate`, or per bucket without writing:
`relation_buckets`), and count any term, QID or raw string (`count_documents`).

`factprobe corpus index`, `factprobe frequency ...`, the pipeline runner and Python users call
these. Options and results are dataclasses; progress goes to an optional callback (no progress
bar, no printing here); problems raise `MissingInput` or `CorpusJobError`, and an index that is
unbuilt, unreachable or built with other settings raises the backend's own error.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from .backend import Backend, open_for_counting, open_for_indexing
from .corpus import DEFAULT_BUCKETS, Document, bucket_labels, bucket_of
from .corpus_files import FORMATS, JsonFields, ReadReport, Reject, corpus_documents, jsonl_documents, store_documents
from .settings import IndexSettings

ANNOTATE_CHUNK = 50_000  # facts counted per backend call


class CorpusJobError(ValueError):
    """Options that cannot work together, or a term that cannot be counted."""


class MissingInput(FileNotFoundError):
    """A store or corpus file the job needs is not there."""


@dataclass(frozen=True)
class IndexOptions:
    """What to index and how names count as mentions (recorded in the index at its first build;
    every later run must match)."""
    files: tuple[str, ...] = ()
    format: str = FORMATS[0]  # of `files`: jsonl, wikiextractor, trex or wikidata5m (see corpus_files.FORMATS)
    from_store: bool = False  # also the documents the store holds (T-REx / Wikidata5M ingests)
    links: bool = False  # count the corpus's own entity links instead of names in the text
    # how names count as mentions: IndexSettings' defaults
    languages: tuple[str, ...] = IndexSettings.languages
    min_alias_length: int = IndexSettings.min_alias_length
    exclude_aliases: tuple[str, ...] = ()
    count_facts: tuple[str, ...] = ()  # relations (or "all") whose fact pairs are counted while linking
    names: str = IndexSettings.names  # "all" (labels and aliases) or "label" (KDF's one name per language)
    zh_convert: str = IndexSettings.zh_convert  # with a Chinese language: OpenCC to simplified, or "none"
    min_han_length: int = IndexSettings.min_han_length  # with a Chinese or Japanese language: Han names
    mentions: str = IndexSettings.mentions  # "maximal": no name inside a longer indexed name counts; "any": all
    zh_variants: str = IndexSettings.zh_variants  # "all": zh stands for every Chinese variant code; "as-given"
    ko_particles: bool = IndexSettings.ko_particles  # with Korean: a Hangul name ends before particles
    # a JSONL corpus's members holding each document's id, title and text (not recorded: they name no setting)
    id_field: str = JsonFields.id
    title_field: str = JsonFields.title
    text_field: str = JsonFields.text

    def settings(self) -> IndexSettings:
        return IndexSettings("links" if self.links else "names", tuple(self.languages), self.min_alias_length,
                             tuple(self.exclude_aliases), self.names, self.zh_convert, self.min_han_length,
                             self.mentions, self.zh_variants, self.ko_particles)


@dataclass(frozen=True)
class IndexResult:
    backend: str  # embedded or elasticsearch
    index: str  # the index file, or the cluster and index name
    method: str  # names or links
    added: int  # documents added by this run (documents already indexed are skipped)
    tracked_pairs: int  # fact pairs newly counted while linking
    documents: int  # documents in the index now
    rejects: tuple[Reject, ...]  # records skipped, with file and line
    seconds: float
    names: int | None = None  # embedded, by names: names and entities of the automaton
    entities: int | None = None
    settings: dict | None = None  # the index's settings (settings_record)

    @property
    def complete(self) -> bool:
        return not self.rejects

    def to_dict(self) -> dict:
        out = {"backend": self.backend, "index": self.index, "method": self.method, "added": self.added,
               "tracked_pairs": self.tracked_pairs, "documents": self.documents, "rejected": len(self.rejects),
               "seconds": round(self.seconds, 2)}
        if self.names is not None:
            out.update(names=self.names, entities=self.entities)
        if self.settings is not None:
            out["settings"] = self.settings
        return out

    def summary(self) -> str:
        how = ("entity links" if self.method == "links" else f"{self.names:,} names of {self.entities:,} entities"
               if self.names is not None else "names matched at query time")
        if self.settings is not None and self.settings.get("names") == "label":
            how += " (labels only: --names label)"
        if self.settings is not None and self.settings.get("mentions") == "any":
            how += " (names inside longer names too: --mentions any)"
        return (f"{self.added:,} documents added ({self.documents:,} in {self.index}), {how}, "
                f"{self.seconds:.1f} s; {len(self.rejects)} rejected"
                + (f"; {self.tracked_pairs:,} new fact pairs counted while linking" if self.tracked_pairs else ""))


def index_corpus(backend: Backend, store: str | Path | None, options: IndexOptions, *,
                 progress: Callable[[int], None] | None = None) -> IndexResult:
    """Add the documents of `options.files` (and/or the store's) to the frequency index of
    `backend`. A rerun skips documents already indexed, so an interrupted run resumes and every
    count stays exact. `progress(n)` is called with the documents read so far."""
    if not options.files and not options.from_store:
        raise CorpusJobError("nothing to index: give corpus files, the store's documents, or both")
    if options.format not in FORMATS:
        raise CorpusJobError(f"corpus format {options.format!r}: use one of {', '.join(FORMATS)}")
    if options.links and options.files and options.format != "trex":
        raise CorpusJobError("link-based counting reads a corpus's own entity links: only T-REx files "
                             "or the store's documents have them")
    # names are found in the documents now by the embedded backend, and by Elasticsearch under "maximal"
    needs_store = (options.from_store or (not options.links and (backend.kind == "embedded"
                                                                 or (backend.kind == "elasticsearch"
                                                                     and options.mentions == "maximal")))
                   or options.format == "wikidata5m" or options.count_facts)
    if needs_store and (store is None or not Path(store).is_file()):
        raise MissingInput(f"no knowledge-graph store at {store}")
    for f in options.files:
        if not Path(f).is_file():
            raise MissingInput(f"{f}: no such file")
    settings = options.settings()
    started = time.perf_counter()
    report = ReadReport()
    added = 0
    index = open_for_indexing(backend, settings, store)
    try:
        tracked = index.track_pairs(fact_pairs(store, options.count_facts)) if options.count_facts else 0
        fields = JsonFields(options.id_field, options.title_field, options.text_field)
        sources = [corpus_documents(f, options.format, report, labels_from=str(store) if store else None,
                                    fields=fields) for f in options.files]
        if options.from_store:
            sources.append(store_documents(store))
        read = [0]
        for documents in sources:
            for taken in index.add_documents(_counted(documents, progress, read)):
                added += taken
        total = index.document_count()
    finally:
        index.close()
    if backend.kind == "infini-gram" and total == 0:  # nothing was written: no folder is left behind
        raise CorpusJobError(f"no documents to index in {', '.join(options.files) or 'the store'}"
                             f"{f' ({len(report.rejects)} rejected)' if report.rejects else ''}; "
                             f"no token index written at {backend.path}")
    finder = getattr(index, "mentions", None)
    counted = hasattr(finder, "names")
    return IndexResult(backend.kind, backend.describe(), settings.method, added, tracked, total,
                       tuple(report.rejects), time.perf_counter() - started,
                       finder.names if counted else None, finder.entities if counted else None,
                       settings_record(settings))


def settings_record(settings: IndexSettings) -> dict:
    """An index's settings as results and summaries show them: `names` and `mentions` always said,
    `zh_convert` whenever a Chinese language is indexed, `min_han_length` whenever it applies and
    differs."""
    record = settings.to_dict()
    if settings.method == "names":
        record["names"] = settings.names
        record["mentions"] = settings.mentions
    if settings.chinese:
        record["zh_convert"] = settings.zh_convert
    return record


def fact_pairs(store: str | Path, relations: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(subject, object) of every entity-valued fact of `relations` ("all": every relation)."""
    from ..kg.graph import KnowledgeGraph

    relations = tuple(relations)
    with KnowledgeGraph(store) as kg:
        for relation in (None,) if "all" in relations else relations:
            for fact in kg.facts(relation, entity_objects_only=True):
                yield fact.subject, fact.object


def _counted(documents: Iterable[Document], progress: Callable[[int], None] | None,
             read: list[int]) -> Iterator[Document]:
    """The documents, passed on; `read[0]` counts them over all sources, `progress` hears it."""
    for document in documents:
        read[0] += 1
        if progress is not None:
            progress(read[0])
        yield document


# -- annotate -----------------------------------------------------------------------------------


def parse_buckets(text: str) -> tuple[int, ...]:
    """"1,10,100" -> (1, 10, 100): bucket edges, increasing positive integers."""
    try:
        edges = tuple(int(x) for x in text.split(","))
    except ValueError:
        edges = ()
    if not edges or edges[0] < 1 or list(edges) != sorted(set(edges)):
        raise CorpusJobError(f"buckets {text!r}: give increasing positive integers, e.g. 1,10,100")
    return edges


@dataclass(frozen=True)
class AnnotateOptions:
    relations: tuple[str, ...]
    out: str | None = None  # JSONL, one line per counted fact
    to_store: bool = False  # write the counts into the store (where probe-set builders read them)
    corpus_name: str | None = None  # the name they are stored under [default: see default_corpus_name]
    buckets: tuple[int, ...] = DEFAULT_BUCKETS  # edges: (1, 10, 100) gives 0 | [1,10) | [10,100) | [100,inf)


@dataclass(frozen=True)
class AnnotateResult:
    facts: int
    out: str | None
    store_corpus: str | None  # the corpus name the counts were stored under, when stored
    per_bucket: dict[tuple[str, str], int] = field(default_factory=dict)  # (relation, bucket) -> facts
    settings: dict | None = None  # how the index counted (settings_record): names in which languages, which names
    annotator: dict | None = None  # who counted (annotator_record): what the store and the sidecars name
    approximate: tuple[str, ...] = ()  # entities or "Q1+Q2" pairs whose counts are not exact (the index says which)

    def to_dict(self) -> dict:
        out = {"facts": self.facts, "out": self.out, "store_corpus": self.store_corpus,
               "buckets": {f"{r} {b}": n for (r, b), n in sorted(self.per_bucket.items())}}
        if self.settings is not None:
            out["settings"] = self.settings
        if self.annotator is not None:
            out["annotator"] = self.annotator
        if self.approximate:
            out["approximate"] = list(self.approximate)
        return out

    def summary_lines(self, store: str | Path) -> list[str]:
        where = " and ".join(x for x in (self.out, f"{store} (corpus {self.store_corpus})"
                                         if self.store_corpus else None) if x)
        counted = [f"  counted by {IndexSettings.from_dict(self.settings).describe()}"] if self.settings else []
        inexact = ([f"  approximate counts (not exact) for {len(self.approximate)} {approximate_kind(self.approximate)}: "
                    f"{', '.join(self.approximate[:20])}{' ...' if len(self.approximate) > 20 else ''}"]
                   if self.approximate else [])
        semantics = ([f"  counts are {self.annotator['counts']}"]
                     if self.annotator and self.annotator.get("counts", COUNTED) != COUNTED else [])
        return [f"{self.facts:,} facts counted -> {where}", *counted, *semantics, *inexact,
                *(f"  {relation} {bucket:>10}  {n:,}" for (relation, bucket), n in sorted(self.per_bucket.items()))]


def default_corpus_name(backend: Backend) -> str:
    """The Elasticsearch index name, or the stem of the index's file or folder (embedded, infini-gram)."""
    if backend.kind == "infini-gram-api":
        return backend.api_index or "infini-gram-api"
    return backend.es_index if backend.kind == "elasticsearch" else Path(backend.path).stem


COUNTED = "documents with head and tail"  # what every backend's pair count is (one semantics: backend.py)


def annotator_record(backend: Backend, index, stored: dict | None) -> dict:
    """Who counted: the backend's kind, its index (`Backend.describe()`), the index's settings as
    one line (`IndexSettings.describe()`), the tokenizer's name where the index counts in a
    model's tokens (an index's `tokenizer` attribute, or its settings' `tokenizer`: a name, or a
    mapping with a `name`), and what a count is. Two counts are comparable only when their records
    are equal: a probe set records its facts' one annotator, and refuses to mix two."""
    line = IndexSettings.from_dict(stored).describe() if stored else None
    tokenizer = getattr(index, "tokenizer", None) or (stored or {}).get("tokenizer")
    record = {"backend": backend.kind, "index": backend.describe(), "settings": line,
              "tokenizer": tokenizer_name(tokenizer),
              # an index whose pair counts are something else says what (the infini-gram API's windows)
              "counts": getattr(index, "pair_semantics", None) or COUNTED}
    digest = tokenizer.get("sha256") if isinstance(tokenizer, dict) else None
    if isinstance(digest, str) and digest:  # two tokenizers of one name (a retrained vocabulary) count apart
        record["tokenizer_sha256"] = digest
    return record


def annotator_line(record: dict | None) -> str:
    """An annotator record as one line: "embedded wiki.sqlite (names in en: labels and aliases; ...)",
    "infini-gram idx/ with SmolLM2-135M's tokens (...)"."""
    if not record:
        return "an annotator not recorded (counted before factprobe recorded annotators)"
    tokens = f" with {record['tokenizer']}'s tokens" if record.get("tokenizer") else ""
    settings = f" ({record['settings']})" if record.get("settings") else ""
    return f"{record.get('backend', '?')} {record.get('index', '?')}{tokens}{settings}"


def tokenizer_name(tokenizer) -> str | None:
    """A tokenizer's name as a record holds it: a text as it is, a mapping's `name`, an object's
    `name_or_path` (a Hugging Face tokenizer's) or `name`; None for none."""
    if tokenizer is None or isinstance(tokenizer, str):
        return tokenizer or None
    if isinstance(tokenizer, dict):
        return tokenizer_name(tokenizer.get("name"))
    for attribute in ("name_or_path", "name"):
        value = getattr(tokenizer, attribute, None)
        if isinstance(value, str) and value:
            return value
    return str(tokenizer)


def entity_labels(kg) -> Callable[[str | None], str | None]:
    """id -> its label in the store (None for an id it lacks, or none), each id looked up once."""

    @lru_cache(maxsize=None)
    def label(entity_id: str | None) -> str | None:
        entity = kg.entity(entity_id) if entity_id is not None else None
        return entity.label if entity is not None else None
    return label


def store_labels(store: str | Path | None, ids: Sequence[str]) -> dict[str, str | None]:
    """The labels the store gives `ids` (QIDs or PIDs; None for a raw string, an id it lacks, or
    no store): what a count names beside each id."""
    from ..kg.graph import KnowledgeGraph

    if store is None or not Path(store).is_file() or not any(is_qid(i) or i[:1] == "P" for i in ids):
        return {i: None for i in ids}
    import sqlite3
    from ..kg.store import StoreError

    try:
        with KnowledgeGraph(store) as kg:
            return dict(zip(ids, map(entity_labels(kg), ids)))
    except (StoreError, sqlite3.Error, OSError, ValueError):  # no store there: the count stands alone
        return {i: None for i in ids}


def annotate(backend: Backend, store: str | Path, options: AnnotateOptions, *,
             progress: Callable[[str, int], None] | None = None) -> AnnotateResult:
    """Count every entity-valued fact of `options.relations` (documents that mention both head
    and tail) and write the counts to `options.out` and/or the store. `progress(relation, n)` is
    called with 0 when a relation starts and with its facts counted so far after each chunk."""
    from ..kg.graph import KnowledgeGraph
    from ..kg.outputs import open_truncate
    from ..kg.store import Store

    if not options.out and not options.to_store:
        raise CorpusJobError("say where the counts go: an output file, the store, or both")
    edges = tuple(options.buckets)
    if not edges or edges[0] < 1 or list(edges) != sorted(set(edges)):
        raise CorpusJobError(f"buckets {edges}: give increasing positive integers, e.g. (1, 10, 100)")
    if not Path(store).is_file():
        raise MissingInput(f"no knowledge-graph store at {store}")
    corpus_name = options.corpus_name or default_corpus_name(backend)
    per_bucket: Counter = Counter()
    facts = 0
    writer = Store(store) if options.to_store else None
    out = open_truncate(options.out) if options.out else None  # never through a link (kg/outputs.py)
    try:
        index = open_for_counting(backend, store)
        try:
            stored = index.settings()
            annotator = annotator_record(backend, index, stored)
            field_name = getattr(index, "count_field", "documents")  # what a count is, in its key
            with KnowledgeGraph(store) as kg:
                label = entity_labels(kg)
                for relation in options.relations:
                    done = 0
                    if progress:
                        progress(relation, 0)
                    if writer:  # before any count: a run stopped midway is still named beside the earlier one
                        writer.begin_frequency_annotator(corpus_name, relation, annotator)
                    for chunk in counted_facts(index, kg, relation, edges):
                        for fact, count, bucket in chunk:
                            per_bucket[(relation, bucket)] += 1
                            if out:  # each id with its label, so the file reads without the store
                                out.write(json.dumps({"fact": fact.id, "subject": fact.subject,
                                                      "subject_label": label(fact.subject), "relation": relation,
                                                      "relation_label": label(relation), "object": fact.object,
                                                      "object_label": label(fact.object), field_name: count,
                                                      "bucket": bucket}, ensure_ascii=False) + "\n")
                        if writer:
                            writer.write_fact_frequencies(corpus_name, edges, [(f.id, n, b) for f, n, b in chunk])
                        facts += len(chunk)
                        done += len(chunk)
                        if progress:
                            progress(relation, done)
                    if writer:
                        writer.finish_frequency_annotator(corpus_name, relation, annotator)
            approximate = tuple(sorted(getattr(index, "approximate", ()) or ()))
        finally:
            index.close()
    finally:
        if out:
            out.close()
        if writer:
            writer.close()
    return AnnotateResult(facts, options.out, corpus_name if options.to_store else None, dict(per_bucket),
                          settings_record(IndexSettings.from_dict(stored)) if stored else None, annotator,
                          approximate)


def counted_facts(index, kg, relation: str, edges: tuple[int, ...] = DEFAULT_BUCKETS) -> Iterator[list[tuple]]:
    """The relation's entity-valued, non-deprecated facts, a chunk at a time, each as (fact, pair
    count, bucket): what `annotate` writes and `relation_buckets` tallies, counted one way."""
    for chunk in _chunks(kg.facts(relation, entity_objects_only=True), ANNOTATE_CHUNK):
        counts = index.pair_frequencies([(f.subject, f.object) for f in chunk])
        yield [(fact, count, bucket_of(count, edges)) for fact, count in zip(chunk, counts)]


def relation_buckets(backend: Backend, store: str | Path, relations: Iterable[str],
                     edges: tuple[int, ...] = DEFAULT_BUCKETS) -> dict[str, dict[str, int]]:
    """Relation -> bucket label -> how many of its facts (entity-valued, not deprecated: the
    statements KnowledgeGraph.relation_rows counts) the index puts in that bucket, every bucket
    lowest first, empty ones as 0. Counted now, as `annotate` counts; nothing is written."""
    from ..kg.graph import KnowledgeGraph

    out = {}
    index = open_for_counting(backend, store)
    try:
        with KnowledgeGraph(store) as kg:
            for relation in relations:
                tally = Counter(bucket for chunk in counted_facts(index, kg, relation, edges) for _, _, bucket in chunk)
                out[relation] = {label: tally[label] for label in bucket_labels(edges)}
    finally:
        index.close()
    return out


def _chunks(items: Iterable, size: int) -> Iterator[list]:
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# -- one count ----------------------------------------------------------------------------------


def is_qid(text: str) -> bool:
    return len(text) > 1 and text[0] == "Q" and text[1:].isdigit()


def count_documents(terms: Sequence[str], backend: Backend, store: str | Path | None, *,
                    corpus_files: Sequence[str] = (), corpus_from_store: bool = False,
                    languages: Sequence[str] = IndexSettings.languages,
                    zh_convert: str = IndexSettings.zh_convert) -> tuple[int, str]:
    """Documents that mention every one of `terms` (one or two), and how they were counted.

    QIDs only, with no corpus given: from the index ("embedded" / "elasticsearch"). Any raw
    string: a scan of the corpus files and/or the store's documents ("scan"), QIDs there standing
    for their names in the store, since no index holds arbitrary strings. A scan compares Chinese
    as an index would (`zh_convert` when `languages` has a Chinese one: index/chinese.py)."""
    if not 1 <= len(terms) <= 2:
        raise CorpusJobError("count one term, or a pair")
    if all(is_qid(t) for t in terms) and not corpus_files and not corpus_from_store:
        index = open_for_counting(backend, store)
        try:
            count = index.entity_frequency(terms[0]) if len(terms) == 1 else index.pair_frequency(*terms)
            approximate = sorted(getattr(index, "approximate", ()) or ())
            return count, backend.kind + (f", approximate for {', '.join(approximate)}" if approximate else "")
        finally:
            index.close()
    from .scan import scan_count
    from .text import name_key

    if not corpus_files and not corpus_from_store:
        raise CorpusJobError("raw strings are counted by reading a corpus: give corpus files or the store's documents")
    convert = IndexSettings(languages=tuple(languages), zh_convert=zh_convert).converter()
    names = []
    for term in terms:
        if is_qid(term):
            default = IndexSettings(languages=tuple(languages)).alias_filter
            names.append(_names_of(term, store, IndexSettings(languages=tuple(languages)).name_languages, default,
                                   name_key))
        else:
            names.append([term])
    report = ReadReport()
    sources = [jsonl_documents(f, report) for f in corpus_files]
    if corpus_from_store:
        sources.append(store_documents(store))
    return scan_count(chain(*sources), names, convert=convert), "scan"


def _names_of(entity: str, store, languages: tuple[str, ...], keep, name_key) -> list[str]:
    """An entity's names in `languages`, filtered as the index's default filter does (a QID's
    one-letter names do not count; one Han character does, with a Chinese or Japanese language)."""
    from ..kg.graph import KnowledgeGraph

    if store is None or not Path(store).is_file():
        raise MissingInput(f"no knowledge-graph store at {store} to look up the names of {entity}")
    with KnowledgeGraph(store) as kg:
        labels = [kg.labels(entity, lang) for lang in languages]
    found = [n for lab in labels for n in (lab.label, *lab.aliases) if n and keep.keeps(name_key(n))]
    if not found:
        raise CorpusJobError(f"{entity} has no names in {languages} in {store}")
    return found


def approximate_kind(names: tuple[str, ...]) -> str:
    """What an approximate list holds: a token index names entities, the API backend pairs ("Q1+Q2")."""
    pairs = sum("+" in name for name in names)
    return "pairs" if pairs == len(names) else "entities" if pairs == 0 else "entities and pairs"

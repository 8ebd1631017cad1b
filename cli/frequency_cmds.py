"""`factprobe corpus index` and `factprobe frequency ...`: how often entities and facts occur."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from .options import json_option, store_option, with_options

index_option = click.option("--index", "index_path", type=click.Path(dir_okay=False), default="frequency.sqlite",
                            show_default=True, envvar="FACTPROBE_INDEX", help="The embedded frequency index file.")


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def _open_index(path: str, must_exist: bool = True):
    from ..index.embedded import EmbeddedIndex

    if must_exist and not Path(path).is_file():
        _fail(f"no frequency index at {path}; build one with `factprobe corpus index`")
    return EmbeddedIndex(path)


@click.group("corpus")
def corpus_group() -> None:
    """Index a corpus for co-occurrence frequency (embedded backend: one SQLite file, no server)."""


@corpus_group.command("index")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--from-store", "from_store", is_flag=True,
              help="Also index the documents the store holds (T-REx / Wikidata5M ingests).")
@click.option("--links", is_flag=True,
              help="Link-based counting: a document mentions the entities its own annotations link "
                   "(T-REx), instead of names found in its text. Needs --from-store; its own index file.")
@click.option("--languages", default="en", show_default=True, help="Name languages that count as mentions.")
@click.option("--min-alias-length", type=click.IntRange(min=1), default=2, show_default=True,
              help="Ignore names shorter than this (after normalization).")
@click.option("--exclude-alias", multiple=True, help="A name never to count as a mention; repeatable.")
@store_option
@index_option
@click.option("--quiet", is_flag=True, help="No progress bar.")
@json_option
def corpus_index(files, from_store, links, languages, min_alias_length, exclude_alias, store, index_path, quiet, as_json):
    """Link FILES (JSONL with id, title, text; .gz/.bz2/.xz too) to the store's entities and add
    them to the index. Documents already indexed are skipped, so a rerun after an interruption,
    or more documents later, keeps every count exact.

    \b
    factprobe corpus index wiki.jsonl.gz --store graph.sqlite --index freq.sqlite
    """
    from tqdm import tqdm

    from ..index.corpus_files import ReadReport, jsonl_documents, store_documents
    from ..index.embedded import linked
    from ..index.mentions import MentionFinder
    from ..index.text import AliasFilter
    from ..kg.graph import KnowledgeGraph

    if not files and not from_store:
        raise click.UsageError("give JSONL files, --from-store, or both")
    if links and (files or not from_store):
        raise click.UsageError("--links counts the store's own entity links: use it with --from-store and no files")
    if not Path(store).is_file():
        _fail(f"no knowledge-graph store at {store}")
    for f in files:
        if not Path(f).is_file():
            _fail(f"{f}: no such file")
    langs = tuple(x.strip() for x in languages.split(",") if x.strip())
    alias_filter = AliasFilter(min_length=min_alias_length, excluded=frozenset(exclude_alias))
    settings = {"method": "links"} if links else {
        "method": "names", "languages": list(langs), "min_alias_length": min_alias_length,
        "excluded": sorted(alias_filter.excluded)}
    started = time.perf_counter()
    with KnowledgeGraph(store) as kg:
        finder = MentionFinder([] if links else kg.names(langs), alias_filter)
    mentions = linked if links else finder
    index = _open_index(index_path, must_exist=False)
    try:
        index.bind_settings(settings)
    except ValueError as error:
        _fail(str(error))
    report = ReadReport()
    sources = [jsonl_documents(f, report) for f in files]
    if from_store:
        sources.append(store_documents(store))
    added = 0
    with tqdm(desc="indexing", unit=" docs", disable=quiet, dynamic_ncols=True) as bar:
        for documents in sources:
            for taken in index.add_documents(_counting(documents, bar), mentions):
                added += taken
    seconds = time.perf_counter() - started
    summary = {"index": index_path, "names": finder.names, "entities": finder.entities, "added": added,
               "documents": index.document_count(), "rejected": len(report.rejects), "seconds": round(seconds, 2)}
    index.close()
    for reject in report.rejects:
        click.echo(f"rejected {reject.file}:{reject.line}: {reject.reason}", err=True)
    if as_json:
        click.echo(json.dumps(summary))
    else:
        how = "entity links" if links else f"{finder.names:,} names of {finder.entities:,} entities"
        click.echo(f"{added:,} documents added ({summary['documents']:,} in the index), {how}, "
                   f"{seconds:.1f} s; {len(report.rejects)} rejected")
    if report.rejects:
        sys.exit(3)


def _counting(documents, bar):
    for document in documents:
        bar.update(1)
        yield document


@click.group("frequency")
def frequency_group() -> None:
    """Document counts: how many documents mention an entity, or both entities of a pair."""


scan_options = [
    click.option("--corpus", "corpus_files", multiple=True, type=click.Path(dir_okay=False),
                 help="Count raw strings by reading these JSONL files (repeatable)."),
    click.option("--corpus-from-store", is_flag=True, help="Count raw strings in the store's documents."),
    click.option("--languages", default="en", show_default=True, help="Name languages of QIDs in a scan."),
    store_option,
]


def _count(terms, index_path, corpus_files, corpus_from_store, languages, store) -> tuple[int, str]:
    """QIDs only: from the index. Any raw string: a scan of the corpus (QIDs there stand for
    their names in the store), since no index holds arbitrary strings."""
    if all(_is_qid(t) for t in terms) and not corpus_files and not corpus_from_store:
        with _open_index(index_path) as index:
            if len(terms) == 1:
                return index.entity_frequency(terms[0]), "index"
            return index.pair_frequency(*terms), "index"
    from itertools import chain

    from ..index.corpus_files import ReadReport, jsonl_documents, store_documents
    from ..index.scan import scan_count
    from ..index.text import AliasFilter, normalize
    from ..kg.graph import KnowledgeGraph

    if not corpus_files and not corpus_from_store:
        raise click.UsageError("raw strings are counted by reading a corpus: give --corpus FILE or --corpus-from-store")
    names = []
    langs = tuple(x.strip() for x in languages.split(",") if x.strip())
    for term in terms:
        if _is_qid(term):
            if not Path(store).is_file():
                _fail(f"no knowledge-graph store at {store} to look up the names of {term}")
            with KnowledgeGraph(store) as kg:
                labels = [kg.labels(term, lang) for lang in langs]
            keep = AliasFilter()  # the index's default: a QID's one-letter names do not count
            found = [n for lab in labels for n in (lab.label, *lab.aliases) if n and keep.keeps(normalize(n).strip())]
            if not found:
                _fail(f"{term} has no names in {langs} in {store}")
            names.append(found)
        else:
            names.append([term])
    report = ReadReport()
    sources = [jsonl_documents(f, report) for f in corpus_files]
    if corpus_from_store:
        sources.append(store_documents(store))
    return scan_count(chain(*sources), names), "scan"


def _is_qid(text: str) -> bool:
    return len(text) > 1 and text[0] == "Q" and text[1:].isdigit()


@frequency_group.command("entity")
@click.argument("entity")
@index_option
@with_options(scan_options)
@json_option
def frequency_entity(entity, index_path, corpus_files, corpus_from_store, languages, store, as_json):
    """Documents that mention ENTITY: a QID (any of its names, from the index) or a raw string
    (read from --corpus / --corpus-from-store)."""
    from ..index.corpus import bucket_of

    count, how = _count([entity], index_path, corpus_files, corpus_from_store, languages, store)
    if as_json:
        click.echo(json.dumps({"entity": entity, "documents": count, "bucket": bucket_of(count), "counted_by": how}))
    else:
        click.echo(f"{entity}: {count:,} documents  (bucket {bucket_of(count)}, by {how})")


@frequency_group.command("pair")
@click.argument("head")
@click.argument("tail")
@index_option
@with_options(scan_options)
@json_option
def frequency_pair(head, tail, index_path, corpus_files, corpus_from_store, languages, store, as_json):
    """Documents that mention both HEAD and TAIL (QIDs from the index; raw strings by reading a corpus)."""
    from ..index.corpus import bucket_of

    count, how = _count([head, tail], index_path, corpus_files, corpus_from_store, languages, store)
    if as_json:
        click.echo(json.dumps({"head": head, "tail": tail, "documents": count, "bucket": bucket_of(count),
                               "counted_by": how}))
    else:
        click.echo(f"{head} + {tail}: {count:,} documents  (bucket {bucket_of(count)}, by {how})")


@frequency_group.command("annotate")
@click.option("--relation", "relations", multiple=True, required=True, help="A relation (PID) whose facts to count; repeatable.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True, help="JSONL file of counted facts.")
@click.option("--buckets", default="1,10,100", show_default=True,
              help="Bucket edges: 1,10,100 gives 0 | [1,10) | [10,100) | [100,inf).")
@store_option
@index_option
@click.option("--quiet", is_flag=True, help="No progress bar.")
@json_option
def frequency_annotate(relations, out_path, buckets, store, index_path, quiet, as_json):
    """Count every fact of the chosen relations (head and tail in one document) and write one
    JSONL line per fact: fact id, subject, relation, object, documents, bucket."""
    from collections import Counter

    from tqdm import tqdm

    from ..index.corpus import bucket_of
    from ..kg.graph import KnowledgeGraph

    try:
        edges = tuple(int(x) for x in buckets.split(","))
        if not edges or edges[0] < 1 or list(edges) != sorted(set(edges)):
            raise ValueError
    except ValueError:
        raise click.UsageError(f"--buckets {buckets!r}: give increasing positive integers, e.g. 1,10,100") from None
    if not Path(store).is_file():
        _fail(f"no knowledge-graph store at {store}")
    per_bucket: Counter = Counter()
    facts = 0
    with _open_index(index_path) as index, KnowledgeGraph(store) as kg, open(out_path, "w") as out:
        for relation in relations:
            bar = tqdm(desc=relation, unit=" facts", disable=quiet, dynamic_ncols=True)
            for chunk in _chunks(kg.facts(relation, entity_objects_only=True), 50_000):
                counts = index.pair_frequencies([(f.subject, f.object) for f in chunk])
                for fact, count in zip(chunk, counts):
                    bucket = bucket_of(count, edges)
                    per_bucket[(relation, bucket)] += 1
                    out.write(json.dumps({"fact": fact.id, "subject": fact.subject, "relation": relation,
                                          "object": fact.object, "documents": count, "bucket": bucket}) + "\n")
                facts += len(chunk)
                bar.update(len(chunk))
            bar.close()
    summary = {"facts": facts, "out": out_path,
               "buckets": {f"{r} {b}": n for (r, b), n in sorted(per_bucket.items())}}
    if as_json:
        click.echo(json.dumps(summary))
    else:
        click.echo(f"{facts:,} facts counted -> {out_path}")
        for (relation, bucket), n in sorted(per_bucket.items()):
            click.echo(f"  {relation} {bucket:>10}  {n:,}")


def _chunks(items, size):
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk

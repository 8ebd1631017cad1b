"""`factprobe ingest`: load a knowledge graph (Wikidata JSON, RDF, T-REx, Wikidata5M, SPARQL)
into the embedded store. Every source streams, upserts by stable ids, checkpoints, and rejects
bad records to a rejects file; a run with rejected records or truncated input exits with
EXIT_PARTIAL (cli/errors.py).
"""

from __future__ import annotations

import json
import sys

import click

from ..kg.ingest import IngestReport, default_workers
from ..kg.model import LANGUAGES
from ..kg.readers import MAX_RECORD_BYTES, InputError
from ..kg.restrict import parse_relations
from ..kg.store import StoreError
from .errors import EXIT_PARTIAL, EXIT_USAGE, fail
from .options import RenamedOption, json_option, store_option, with_options
from .outputs import overwrite_option
from .terminal import echo


def _languages(value: str) -> tuple[str, ...]:
    langs = tuple(x.strip() for x in value.split(",") if x.strip())
    if not langs:
        raise click.BadParameter("give at least one language code, e.g. en or en,de")
    return langs


languages_option = click.option(
    "--languages", "languages", cls=RenamedOption, old_names=("--lang",), default=",".join(LANGUAGES),
    show_default=True,
    callback=lambda c, p, v: _languages(v),
    help="Comma-separated label languages to keep; the first is the display language.",
)
workers_option = click.option(
    "--workers", type=int, default=None,
    help=f"Parsing processes (default: cores, here {default_workers()}; 0 = inline).")
# Options of every ingest; file-based ingests add --workers (SPARQL has nothing to parse in parallel).
common_ingest_options = [
    store_option,
    languages_option,
    click.option("--restart", is_flag=True, help="Ignore an earlier partial run of the same input."),
    click.option("--rejects", "rejects_path", type=click.Path(dir_okay=False), default=None,
                 help="Where to write rejected records (default: STORE.rejects.jsonl)."),
    click.option("--quiet", is_flag=True, help="No progress bar."),
    overwrite_option,
    json_option,
]
ingest_options = [workers_option, *common_ingest_options]
# Of the line readers: a longer line is rejected as it streams past (kg/readers.py).
max_record_option = click.option(
    "--max-record-bytes", type=click.IntRange(min=4096), default=MAX_RECORD_BYTES, show_default=True,
    help="The longest record read (a line; a pretty-printed EntityData file; a T-REx document); a longer "
         "one is rejected by its line (a document by its index), never held in memory.")


@click.group("ingest")
def ingest_group() -> None:
    """Load a knowledge graph into the embedded store (idempotent, resumable).

    Every source streams its input, upserts by stable ids (ingesting twice changes nothing),
    checkpoints as it goes (rerun the same command after a crash to resume), and never stops
    on a bad record: it is counted, skipped, and written to the rejects file with its line. A
    value that cannot be read inside a readable record (an impossible date, a mention naming
    nothing) drops only its unit (a qualifier, a statement, a mention), named in the same file.
    """


def hold_store(store) -> None:
    """This command is the store's one writer until it ends (kg/output_lock.hold_output): a second
    ingest into it is refused while this one runs."""
    from ..kg.output_lock import hold_output

    click.get_current_context().with_resource(hold_output(store, folder=False, flag="--store"))


def _run_ingest(store_path, sources_and_paths, *, workers, restart, rejects_path, quiet,
                as_json, languages, overwrite, relations: frozenset[str] | None = None) -> None:
    """The ingest step (the pipeline's too) with the command's output: per-input lines on stderr,
    or one JSON object; exit 3 when an input was truncated."""
    from .steps import Console
    from .steps_graph import ingest_step

    console = Console(quiet=quiet, say=echo,
                      note=(lambda _: None) if as_json else (lambda text: echo(text, err=True)))
    hold_store(store_path)
    try:
        reports = ingest_step(store_path, sources_and_paths, languages, workers=workers, restart=restart,
                              relations=relations, rejects_path=rejects_path, console=console, overwrite=overwrite)
    except (InputError, StoreError) as exc:
        fail(str(exc), EXIT_USAGE)
    _finish(store_path, reports, rejects_path, as_json, files=True)


def _finish(store_path, reports: list[IngestReport], rejects_path, as_json, files: bool = False) -> None:
    """The JSON summary when asked; exit 2 when an input file (`files`) gave nothing, 3 when an
    input was truncated."""
    if as_json:
        rejected = sum(r.rejected + r.dropped for r in reports)
        target = rejects_path or f"{store_path}.rejects.jsonl"
        echo(json.dumps({"store": str(store_path), "inputs": [r.as_dict() for r in reports],
                               "rejects_file": target if rejected else None}, indent=2))
    # An input file that read without an error and gave nothing is not what its format's
    # reader reads (another Wikibase's IRIs, an empty or foreign file): said, exit 2.
    empty = [r for r in reports if files and not (r.already_done or r.resumed_from or r.records or r.rejected
                                                  or r.older_ignored or r.truncated)]
    if empty:
        fail("; ".join(_nothing_read(r) for r in empty), EXIT_USAGE)
    if any(not r.complete for r in reports):
        sys.exit(EXIT_PARTIAL)


def _nothing_read(report: IngestReport) -> str:
    hint = {"rdf": "no triple about a Wikibase entity; if its entity IRIs are not <server>/entity/Q1, "
                   "give --entity-prefix"}.get(report.source, f"no record in it; is it {report.source} input?")
    return f"{report.path}: nothing read from it ({hint})"


def print_report(r: IngestReport) -> None:
    """One input's outcome, one line on stderr (also `factprobe sample`'s)."""
    from .steps_graph import ingest_line

    echo(ingest_line(r), err=True)


@ingest_group.command("wikidata")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--keep-external-ids", is_flag=True, help="Also keep external-id claims (skipped by default).")
@click.option("--chunk-size", type=click.IntRange(min=4096), default=None,
              help="Bytes of (decompressed) input per parsing task and per committed checkpoint.")
@click.option("--relations", "relations_text", default=None, metavar="P31,P36,...|templates",
              help="Keep only these relations' facts, the entities they name (with their names "
                   "and types) and the classes of those types. 'templates': the relations that "
                   "have templates (`factprobe templates list`). For full dumps: a few percent "
                   "of the store, same facts.")
@max_record_option
@with_options(ingest_options)
def ingest_wikidata(files, keep_external_ids, chunk_size, relations_text, max_record_bytes, store, languages,
                    workers, restart, rejects_path, quiet, overwrite, as_json):
    """Ingest Wikidata JSON dumps (.json, .json.gz, .json.bz2, .json.xz).

    Keeps labels, descriptions and aliases in --languages, sitelink counts, P31/P279 types, and
    every statement with an entity, time, quantity, string, monolingual-text or coordinate
    value, with rank and P580/P582/P585 qualifiers. External-id claims are skipped unless
    --keep-external-ids.

    With --relations, the dump goes through a staging store next to STORE (about 0.3 KB per
    entity of the dump, deleted at the end) and only what the kept facts need is copied in:
    the same rows as the full ingest restricted to those relations.
    """
    from ..kg.sources.wikidata_json import WikidataJsonSource

    relations = _relations(relations_text)
    options = {"chunk_bytes": chunk_size} if chunk_size else {}
    source = WikidataJsonSource(languages=languages, keep_external_ids=keep_external_ids,
                                max_record_bytes=max_record_bytes, **options)
    _run_ingest(store, [(source, f) for f in files], workers=workers, restart=restart,
                rejects_path=rejects_path, quiet=quiet, as_json=as_json, languages=languages, overwrite=overwrite,
                relations=relations)


def _relations(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    if text.strip() == "templates":
        from ..probes.templates import load_templates

        return frozenset(load_templates())
    try:
        return parse_relations(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--relations") from exc


@ingest_group.command("rdf")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["nt", "ttl"]), default=None,
              help="RDF syntax (default: from the file extension).")
@click.option("--chunk-size", type=click.IntRange(min=4096), default=None,
              help="Bytes of (decompressed) input per parsing task and per committed checkpoint.")
@click.option("--entity-prefix", default=None, metavar="IRI",
              help="The Wikibase's entity IRI prefix (its `wd:`, e.g. https://example.org/id/) when its "
                   "entities are not <server>/entity/Q1; a Turtle file's `@prefix wd:` is used without it.")
@click.option("--keep-external-ids", is_flag=True, help="Also keep external-id claims (skipped by default).")
@max_record_option
@with_options(ingest_options)
def ingest_rdf(files, fmt, chunk_size, entity_prefix, keep_external_ids, max_record_bytes, store, languages,
               workers, restart, rejects_path, quiet, overwrite, as_json):
    """Ingest Wikidata-style RDF: N-Triples (.nt, .nt.gz, .nt.bz2) or Turtle (.ttl, .ttl.gz),
    as Wikidata's dumps and Special:EntityData write it, or another Wikibase (--entity-prefix).

    Reads what the Wikidata JSON reader reads: labels, aliases, descriptions (a `mul` name
    holds in every language without its own), sitelink counts, truthy (wdt:) and full
    (p:/ps:/pq:) statements with rank and P580/P582/P585 qualifiers; external-id claims are
    skipped unless --keep-external-ids. A statement spread over many triples is assembled
    whatever their order; one also in a Wikidata JSON dump (same statement id) stays one fact.
    A malformed N-Triples line, or a Turtle block that does not parse, is rejected by its
    (first) line number.
    """
    from ..kg.sources.rdf import RdfSource

    options = {"chunk_bytes": chunk_size} if chunk_size else {}
    pairs = [(RdfSource(languages=languages, format=fmt, entity_prefix=entity_prefix,
                        keep_external_ids=keep_external_ids, max_record_bytes=max_record_bytes, **options), f)
             for f in files]
    _run_ingest(store, pairs, workers=workers, restart=restart, rejects_path=rejects_path,
                quiet=quiet, as_json=as_json, languages=languages, overwrite=overwrite)


@ingest_group.command("sparql-results")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--subject-var", "subject_var", required=True, metavar="VAR",
              help="The variable holding each row's subject, a Wikidata entity IRI (item for ?item).")
@click.option("--object-var", "object_var", required=True, metavar="VAR",
              help="The variable holding each row's object: an entity IRI or a value.")
@click.option("--relation", default=None, help="The property every row states (P36); or --property-var.")
@click.option("--property-var", "property_var", default=None, metavar="VAR",
              help="The variable holding each row's property (wdt:P36, wd:P36 or P36); or --relation.")
@click.option("--subject-label-var", "subject_label", default=None, metavar="VAR", help="A variable holding the subject's label (itemLabel).")
@click.option("--object-label-var", "object_label", default=None, metavar="VAR", help="A variable holding the object's label.")
@with_options(ingest_options)
def ingest_sparql_results(files, subject_var, object_var, relation, property_var, subject_label, object_label, store,
                          languages, workers, restart, rejects_path, quiet, overwrite, as_json):
    """Ingest saved SPARQL results, as query.wikidata.org downloads them (JSON, CSV or TSV): each
    row one truthy statement, subject and object from the variables named, with optional labels.
    The rows are what `ingest rdf` makes of the same wdt: triples and labels. A CSV label has no
    language (CSV results keep none): it is taken as the first of --languages.

    \b
    factprobe ingest sparql-results query.json --subject-var country --object-var capital --relation P36 \\
        --subject-label-var countryLabel --object-label-var capitalLabel --store graph.sqlite
    """
    from ..kg.readers import InputError
    from ..kg.sources.sparql_results import SparqlResultsSource

    try:
        source = SparqlResultsSource(subject_var.lstrip("?"), object_var.lstrip("?"), relation,
                                     property_var.lstrip("?") if property_var else None,
                                     subject_label.lstrip("?") if subject_label else None,
                                     object_label.lstrip("?") if object_label else None, languages=languages)
    except InputError as error:
        fail(str(error), EXIT_USAGE)
    _run_ingest(store, [(source, f) for f in files], workers=workers, restart=restart, rejects_path=rejects_path,
                quiet=quiet, as_json=as_json, languages=languages, overwrite=overwrite)


@ingest_group.command("trex")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--chunk-size", type=click.IntRange(min=4096), default=None,
              help="Bytes of (decompressed) documents per parsing task and per committed checkpoint.")
@max_record_option
@with_options(ingest_options)
def ingest_trex(files, chunk_size, max_record_bytes, store, languages, workers, restart, rejects_path, quiet,
                overwrite, as_json):
    """Ingest T-REx JSON documents (.json, .json.gz, .json.bz2, .json.xz; one JSON array of
    documents per file, or one document per line).

    Keeps each document (id, title, text), its entity links, and every aligned triple as a
    fact with provenance (aligner normalized to NoSub / AllEnt / SPO, and the document id).
    Date objects become time literals. A bad document is rejected by its index in the file.
    """
    from ..kg.sources.trex import TrexSource

    options = {"chunk_bytes": chunk_size} if chunk_size else {}
    pairs = [(TrexSource(languages=languages, max_record_bytes=max_record_bytes, **options), f) for f in files]
    _run_ingest(store, pairs, workers=workers, restart=restart, rejects_path=rejects_path,
                quiet=quiet, as_json=as_json, languages=languages, overwrite=overwrite)


@ingest_group.command("wikidata5m")
@click.option("--triples", "triples", multiple=True, type=click.Path(dir_okay=False),
              help="Triples TSV (head, relation, tail); repeatable.")
@click.option("--entity-aliases", multiple=True, type=click.Path(dir_okay=False),
              help="Entity alias file (id, then names, tab-separated); repeatable.")
@click.option("--relation-aliases", multiple=True, type=click.Path(dir_okay=False),
              help="Relation alias file (id, then names, tab-separated); repeatable.")
@click.option("--documents", "documents", cls=RenamedOption, old_names=("--corpus",), multiple=True,
              type=click.Path(dir_okay=False),
              help="The corpus: a file of documents (id, then the entity's text); repeatable. Stored as documents "
                   "'wikidata5m:<id>' titled with the entity's label when known.")
@click.option("--chunk-size", type=click.IntRange(min=4096), default=None,
              help="Bytes of (decompressed) input per parsing task and per committed checkpoint.")
@max_record_option
@with_options(ingest_options)
def ingest_wikidata5m(triples, entity_aliases, relation_aliases, documents, chunk_size, max_record_bytes, store,
                      languages, workers, restart, rejects_path, quiet, overwrite, as_json):
    """Ingest Wikidata5M: triples TSV, entity/relation alias files, and the corpus (--documents).

    Alias files go first, then triples, then the corpus (whose titles come from the labels).
    Names are English: they are kept when --languages includes en.
    """
    from ..kg.sources.wikidata5m import Wikidata5mSource

    options = {"chunk_bytes": chunk_size} if chunk_size else {}

    def source(kind, **extra):
        return Wikidata5mSource(kind=kind, languages=languages, max_record_bytes=max_record_bytes, **options, **extra)

    pairs = [(source("entity-aliases"), f) for f in entity_aliases]
    pairs += [(source("relation-aliases"), f) for f in relation_aliases]
    pairs += [(source("triples"), f) for f in triples]
    pairs += [(source("corpus", labels_from=str(store)), f) for f in documents]
    if not pairs:
        raise click.UsageError(
            "give at least one of --triples, --entity-aliases, --relation-aliases, --documents")
    _run_ingest(store, pairs, workers=workers, restart=restart, rejects_path=rejects_path,
                quiet=quiet, as_json=as_json, languages=languages, overwrite=overwrite)


@ingest_group.command("sparql")
@click.option("--endpoint", required=True, help="SPARQL endpoint URL (e.g. http://127.0.0.1:7878/query).")
@click.option("--relation", "relations", multiple=True, required=True,
              help="Property id whose facts to pull, e.g. P36; repeatable.")
@click.option("--page-size", type=int, default=10_000, show_default=True, help="Rows per request.")
@click.option("--limit", type=int, default=None, help="At most this many facts per relation.")
@click.option("--retries", type=int, default=5, show_default=True,
              help="Retries per request on 429/5xx/timeouts (exponential backoff, honours Retry-After).")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per request.")
@with_options(common_ingest_options)
def ingest_sparql(endpoint, relations, page_size, limit, retries, timeout, store, languages,
                  restart, rejects_path, quiet, overwrite, as_json):
    """Pull facts (with labels, aliases and types of their entities) of given relations from
    a SPARQL endpoint, page by page; a rerun resumes at the last finished page."""
    from ..kg.store import Store
    from ..kg.sources.sparql import SparqlError, ingest_sparql as run
    from .steps import Console
    from .steps_graph import claim_ingest_outputs, write_ingest_rejects

    reports: list[IngestReport] = []
    hold_store(store)
    claim_ingest_outputs(store, rejects_path, [], overwrite=overwrite)
    try:
        with Store(store, languages=languages) as st:
            for relation in relations:
                report = run(st, endpoint, relation, page_size=page_size, limit=limit,
                             retries=retries, timeout=timeout, restart=restart, progress=not quiet)
                reports.append(report)
                if not as_json:
                    print_report(report)
            st.optimize()
    except (InputError, StoreError, SparqlError) as exc:
        fail(str(exc), EXIT_USAGE)
    write_ingest_rejects(store, reports, rejects_path,
                         Console(note=(lambda _: None) if as_json else (lambda text: echo(text, err=True))))
    _finish(store, reports, rejects_path, as_json)


"""The `factprobe` command.

Exit codes: 0 = done and complete; 3 = done but partial (records rejected or input truncated;
see the rejects file); 2 = bad usage or unreadable input; 1 = unexpected failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .. import __version__
from ..kg.graph import KnowledgeGraph
from ..kg.ingest import IngestReport, default_workers, ingest, write_rejects
from ..kg.readers import InputError, check_readable
from ..kg.store import Store, StoreError
from .options import json_option, store_option, with_options
from .progress import file_progress

EXIT_PARTIAL = 3


def _languages(value: str) -> tuple[str, ...]:
    langs = tuple(x.strip() for x in value.split(",") if x.strip())
    if not langs:
        raise click.BadParameter("give at least one language code, e.g. en or en,de")
    return langs


lang_option = click.option(
    "--lang", "languages", default="en", show_default=True, callback=lambda c, p, v: _languages(v),
    help="Comma-separated label languages to keep; the first is the display language.",
)
workers_option = click.option(
    "--workers", type=int, default=None,
    help=f"Parsing processes (default: cores, here {default_workers()}; 0 = inline).")
# Options of every ingest; file-based ingests add --workers (SPARQL has nothing to parse in parallel).
common_ingest_options = [
    store_option,
    lang_option,
    click.option("--restart", is_flag=True, help="Ignore an earlier partial run of the same input."),
    click.option("--rejects", "rejects_path", type=click.Path(dir_okay=False), default=None,
                 help="Where to write rejected records (default: STORE.rejects.jsonl)."),
    click.option("--quiet", is_flag=True, help="No progress bar."),
    json_option,
]
ingest_options = [workers_option, *common_ingest_options]


def fail(message: str, code: int = 2) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="factprobe")
def main() -> None:
    """factprobe: build factual-knowledge probe sets from a knowledge graph and measure what
    language models know.

    \b
    Typical flow:
      factprobe run                               # the whole job on the shipped sample (or: run my.yaml)
      factprobe sample                            # ingest the shipped sample graph, show it
      factprobe ingest wikidata latest-all.json.gz --store wd.sqlite
      factprobe kg stats --store wd.sqlite
      factprobe kg entity Q90 --store wd.sqlite
      factprobe kg facts --relation P36 --store wd.sqlite --json
      factprobe model score smollm2-135m-instruct --context "The capital of France is" \\
          --continuation " Paris" --continuation " Lyon"
      factprobe probeset build --kind icl-mc --relation P36 --store wd.sqlite --out mc.jsonl
      factprobe eval --model gemma3-270m --method ic-lke --probes mc.jsonl --out runs/gemma-iclke
      factprobe report runs/* --out report/
      FACTPROBE_TOKEN=secret factprobe serve --store wd.sqlite     # HTTP service, docs at /docs
    """


# -- ingest -----------------------------------------------------------------------------------


@main.group("ingest")
def ingest_group() -> None:
    """Load a knowledge graph into the embedded store (idempotent, resumable).

    Every source streams its input, upserts by stable ids (ingesting twice changes nothing),
    checkpoints as it goes (rerun the same command after a crash to resume), and never stops
    on a bad record: it is counted, skipped, and written to the rejects file with its line.
    """


def _run_ingest(store_path, sources_and_paths, *, workers, restart, rejects_path, quiet,
                as_json, languages) -> None:
    reports: list[IngestReport] = []
    try:
        with Store(store_path, languages=languages) as store:
            for source, path in sources_and_paths:
                check_readable(path)
                with file_progress(path, disable=quiet, label=source.name) as progress:
                    report = ingest(store, source, path, workers=workers, restart=restart,
                                    progress=progress)
                reports.append(report)
                if not as_json:
                    _print_report(report)
            store.optimize()
    except (InputError, StoreError) as exc:
        fail(str(exc))
    _finish(store_path, reports, rejects_path, as_json)


def _finish(store_path, reports: list[IngestReport], rejects_path, as_json) -> None:
    rejected = sum(r.rejected for r in reports)
    target = rejects_path or f"{store_path}.rejects.jsonl"
    if rejected:
        write_rejects(target, reports)
    if as_json:
        click.echo(json.dumps({"store": str(store_path), "inputs": [r.as_dict() for r in reports],
                               "rejects_file": target if rejected else None}, indent=2))
    elif rejected:
        click.echo(f"{rejected} rejected record(s) written to {target}", err=True)
    if any(not r.complete for r in reports):
        sys.exit(EXIT_PARTIAL)


def _print_report(r: IngestReport) -> None:
    if r.already_done:
        click.echo(f"{r.path}: already ingested ({r.lines_read} lines; use --restart to redo)", err=True)
        return
    state = "TRUNCATED" if r.truncated else "complete"
    resumed = f", resumed after line {r.resumed_from}" if r.resumed_from else ""
    rate = r.records / r.seconds if r.seconds else 0.0
    click.echo(
        f"{r.path}: {state}: {r.records} records in {r.seconds:.1f}s ({rate:,.0f}/s), "
        f"{r.rejected} rejected{resumed}",
        err=True,
    )


@ingest_group.command("wikidata")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--keep-external-ids", is_flag=True, help="Also keep external-id claims (skipped by default).")
@click.option("--chunk-size", type=click.IntRange(min=4096), default=None,
              help="Bytes of (decompressed) input per parsing task and per committed checkpoint.")
@with_options(ingest_options)
def ingest_wikidata(files, keep_external_ids, chunk_size, store, languages, workers, restart,
                    rejects_path, quiet, as_json):
    """Ingest Wikidata JSON dumps (.json, .json.gz, .json.bz2, .json.xz).

    Keeps labels, descriptions and aliases in --lang, sitelink counts, P31/P279 types, and
    every statement with an entity, time, quantity, string, monolingual-text or coordinate
    value, with rank and P580/P582/P585 qualifiers. External-id claims are skipped unless
    --keep-external-ids.
    """
    from ..kg.sources.wikidata_json import WikidataJsonSource

    options = {"chunk_bytes": chunk_size} if chunk_size else {}
    source = WikidataJsonSource(languages=languages, keep_external_ids=keep_external_ids, **options)
    _run_ingest(store, [(source, f) for f in files], workers=workers, restart=restart,
                rejects_path=rejects_path, quiet=quiet, as_json=as_json, languages=languages)


@ingest_group.command("rdf")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["nt", "ttl"]), default=None,
              help="RDF syntax (default: from the file extension).")
@click.option("--chunk-size", type=click.IntRange(min=4096), default=None,
              help="Bytes of (decompressed) input per parsing task and per committed checkpoint.")
@with_options(ingest_options)
def ingest_rdf(files, fmt, chunk_size, store, languages, workers, restart, rejects_path, quiet,
               as_json):
    """Ingest Wikidata-style RDF: N-Triples (.nt, .nt.gz, .nt.bz2) or Turtle (.ttl, .ttl.gz),
    truthy (wdt:) and full (p:/ps:/pq:) statements, labels, aliases, descriptions.

    A statement spread over many triples is assembled whatever their order; one also in a
    Wikidata JSON dump (same statement id) stays one fact. A malformed N-Triples line, or a
    Turtle block that does not parse, is rejected by its (first) line number.
    """
    from ..kg.sources.rdf import RdfSource

    options = {"chunk_bytes": chunk_size} if chunk_size else {}
    pairs = [(RdfSource(languages=languages, format=fmt, **options), f) for f in files]
    _run_ingest(store, pairs, workers=workers, restart=restart, rejects_path=rejects_path,
                quiet=quiet, as_json=as_json, languages=languages)


@ingest_group.command("trex")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--chunk-size", type=click.IntRange(min=4096), default=None,
              help="Bytes of (decompressed) documents per parsing task and per committed checkpoint.")
@with_options(ingest_options)
def ingest_trex(files, chunk_size, store, languages, workers, restart, rejects_path, quiet, as_json):
    """Ingest T-REx JSON documents (.json, .json.gz, .json.bz2, .json.xz; one JSON array of
    documents per file, or one document per line).

    Keeps each document (id, title, text), its entity links, and every aligned triple as a
    fact with provenance (aligner normalized to NoSub / AllEnt / SPO, and the document id).
    Date objects become time literals. A bad document is rejected by its index in the file.
    """
    from ..kg.sources.trex import TrexSource

    options = {"chunk_bytes": chunk_size} if chunk_size else {}
    pairs = [(TrexSource(languages=languages, **options), f) for f in files]
    _run_ingest(store, pairs, workers=workers, restart=restart, rejects_path=rejects_path,
                quiet=quiet, as_json=as_json, languages=languages)


@ingest_group.command("wikidata5m")
@click.option("--triples", "triples", multiple=True, type=click.Path(dir_okay=False),
              help="Triples TSV (head, relation, tail); repeatable.")
@click.option("--entity-aliases", multiple=True, type=click.Path(dir_okay=False),
              help="Entity alias file (id, then names, tab-separated); repeatable.")
@click.option("--relation-aliases", multiple=True, type=click.Path(dir_okay=False),
              help="Relation alias file (id, then names, tab-separated); repeatable.")
@click.option("--corpus", multiple=True, type=click.Path(dir_okay=False),
              help="Corpus file (id, then the entity's text); repeatable. Stored as documents "
                   "'wikidata5m:<id>' titled with the entity's label when known.")
@click.option("--chunk-size", type=click.IntRange(min=4096), default=None,
              help="Bytes of (decompressed) input per parsing task and per committed checkpoint.")
@with_options(ingest_options)
def ingest_wikidata5m(triples, entity_aliases, relation_aliases, corpus, chunk_size, store,
                      languages, workers, restart, rejects_path, quiet, as_json):
    """Ingest Wikidata5M: triples TSV, entity/relation alias files, and the corpus.

    Alias files go first, then triples, then the corpus (whose titles come from the labels).
    Names are English: they are kept when --lang includes en.
    """
    from ..kg.sources.wikidata5m import Wikidata5mSource

    options = {"chunk_bytes": chunk_size} if chunk_size else {}

    def source(kind, **extra):
        return Wikidata5mSource(kind=kind, languages=languages, **options, **extra)

    pairs = [(source("entity-aliases"), f) for f in entity_aliases]
    pairs += [(source("relation-aliases"), f) for f in relation_aliases]
    pairs += [(source("triples"), f) for f in triples]
    pairs += [(source("corpus", labels_from=str(store)), f) for f in corpus]
    if not pairs:
        raise click.UsageError(
            "give at least one of --triples, --entity-aliases, --relation-aliases, --corpus")
    _run_ingest(store, pairs, workers=workers, restart=restart, rejects_path=rejects_path,
                quiet=quiet, as_json=as_json, languages=languages)


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
                  restart, rejects_path, quiet, as_json):
    """Pull facts (with labels, aliases and types of their entities) of given relations from
    a SPARQL endpoint, page by page; a rerun resumes at the last finished page."""
    from ..kg.sources.sparql import SparqlError, ingest_sparql as run

    reports: list[IngestReport] = []
    try:
        with Store(store, languages=languages) as st:
            for relation in relations:
                report = run(st, endpoint, relation, page_size=page_size, limit=limit,
                             retries=retries, timeout=timeout, restart=restart, progress=not quiet)
                reports.append(report)
                if not as_json:
                    _print_report(report)
            st.optimize()
    except (InputError, StoreError, SparqlError) as exc:
        fail(str(exc))
    _finish(store, reports, rejects_path, as_json)


# -- kg ---------------------------------------------------------------------------------------


@main.group("kg")
def kg_group() -> None:
    """Look into an ingested graph."""


def _open(store_path) -> KnowledgeGraph:
    try:
        return KnowledgeGraph(store_path)
    except StoreError as exc:
        fail(str(exc))
        raise  # unreachable


@kg_group.command("stats")
@store_option
@json_option
def kg_stats(store, as_json):
    """Counts of entities, names, types, facts (by kind and source), documents."""
    from dataclasses import asdict

    with _open(store) as kg:
        stats = kg.stats()
    if as_json:
        click.echo(json.dumps(asdict(stats), indent=2))
        return
    from .render import render_stats

    click.echo(render_stats(store, stats))


@kg_group.command("entity")
@click.argument("entity_id")
@store_option
@click.option("--at", default=None, help="Show facts valid at this date (YYYY or YYYY-MM-DD) instead of today.")
@json_option
def kg_entity(entity_id, store, at, as_json):
    """One entity: labels, aliases, types and its statements (temporal ones with their dates)."""
    from .render import entity_record, render_entity

    with _open(store) as kg:
        record = entity_record(kg, entity_id.strip().upper())
        if record is None:
            fail(f"{entity_id}: not in {store}", code=1)
        if as_json:
            click.echo(json.dumps(record, indent=2, ensure_ascii=False))
        else:
            click.echo(render_entity(kg, record, at=at))


@kg_group.command("facts")
@click.option("--relation", default=None, help="Property id, e.g. P36.")
@click.option("--subject", default=None, help="Subject entity id, e.g. Q183.")
@click.option("--at", default=None, help="Only facts valid at this date (YYYY or YYYY-MM-DD).")
@click.option("--current", is_flag=True, help="Only facts valid today.")
@click.option("--include-deprecated", is_flag=True, help="Also deprecated-rank statements.")
@click.option("--limit", type=int, default=None, help="Stop after this many facts.")
@store_option
@json_option
def kg_facts(relation, subject, at, current, include_deprecated, limit, store, as_json):
    """Stream facts (JSON lines with --json, one per fact), with object labels and dates."""
    from .render import fact_record, render_fact_line

    if not relation and not subject:
        raise click.UsageError("give --relation and/or --subject")
    with _open(store) as kg:
        n = 0
        for fact in kg.facts(relation=relation, subject=subject, include_deprecated=include_deprecated):
            if (at or current) and not (fact.object and kg.is_fact(fact.subject, fact.relation, fact.object, at=at)):
                continue
            record = fact_record(kg, fact)
            click.echo(json.dumps(record, ensure_ascii=False) if as_json else render_fact_line(record))
            n += 1
            if limit and n >= limit:
                break


# -- the sample graph on its own (`factprobe run` is the main job) ------------------------------


@main.command("sample")
@click.option("--out", type=click.Path(file_okay=False), default="runs/sample", show_default=True,
              help="Directory for the sample run's files.")
@click.option("--entity", "entity_id", default="Q183", show_default=True, help="Entity to show.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def sample(out, entity_id, quiet):
    """Ingest just the shipped sample graph (Wikidata JSON) and show it (`factprobe run` runs the whole job):
    print its statistics and one entity with its temporal facts."""
    from .render import entity_record, render_entity, render_stats
    from ..kg.sources.wikidata_json import WikidataJsonSource

    data = Path(__file__).resolve().parent.parent / "kg" / "data" / "sample_wikidata.json"
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    store_path = out_dir / "graph.sqlite"
    source = WikidataJsonSource(languages=("en", "de", "fr"))
    try:
        with Store(store_path, languages=source.languages) as st:
            with file_progress(data, disable=quiet, label="sample graph") as progress:
                report = ingest(st, source, data, progress=progress)
            _print_report(report)
    except (InputError, StoreError) as exc:
        fail(str(exc))
    with KnowledgeGraph(store_path) as kg:
        click.echo(render_stats(str(store_path), kg.stats()))
        click.echo()
        record = entity_record(kg, entity_id)
        if record is None:
            fail(f"{entity_id}: not in the sample graph", code=1)
        click.echo(render_entity(kg, record))
    click.echo(f"\nstore: {store_path}  (try: factprobe kg facts --relation P36 --store {store_path})")


from .frequency_cmds import corpus_group, frequency_group  # noqa: E402  (after `main` exists)
from .model_cmds import model_group  # noqa: E402
from .distractor_cmds import distractors_group  # noqa: E402
from .template_cmds import templates_group  # noqa: E402
from .probeset_cmds import probeset_group  # noqa: E402
from .eval_cmds import eval_command  # noqa: E402
from .run_cmd import run_command  # noqa: E402
from .report_cmds import compare_command, report_command  # noqa: E402
from .serve_cmd import serve_command  # noqa: E402

main.add_command(model_group)
main.add_command(corpus_group)
main.add_command(frequency_group)
main.add_command(distractors_group)
main.add_command(templates_group)
main.add_command(probeset_group)
main.add_command(eval_command)
main.add_command(run_command)
main.add_command(report_command)
main.add_command(compare_command)
main.add_command(serve_command)


if __name__ == "__main__":
    main()

"""The graph and corpus steps, one function each: ingest inputs into the store, index a corpus,
count facts into the store, build the semantic index. The `factprobe` commands and the
pipeline call these same functions; each writes through a `Console` (cli/steps.py) and returns
its result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .steps import Console

def source_for(fmt: str, languages: tuple[str, ...], *, part: str = "triples", store: str | Path | None = None,
               **options):
    """The kg source that reads one input format ("wikidata", "rdf", "trex", "wikidata5m")."""
    if fmt == "wikidata":
        from ..kg.sources.wikidata_json import WikidataJsonSource

        return WikidataJsonSource(languages=languages, **options)
    if fmt == "rdf":
        from ..kg.sources.rdf import RdfSource

        return RdfSource(languages=languages, **options)
    if fmt == "trex":
        from ..kg.sources.trex import TrexSource

        return TrexSource(languages=languages, **options)
    if fmt == "wikidata5m":
        from ..kg.sources.wikidata5m import Wikidata5mSource

        extra = {"labels_from": str(store)} if part == "corpus" and store is not None else {}
        return Wikidata5mSource(kind=part, languages=languages, **extra, **options)
    raise ValueError(f"input format {fmt!r}: use wikidata, rdf, trex or wikidata5m")


def ingest_step(store: str | Path, inputs: Sequence[tuple[object, str | Path]], languages: tuple[str, ...], *,
                workers: int | None = None, restart: bool = False, relations: frozenset[str] | None = None,
                rejects_path: str | Path | None = None, console: Console = Console(), overwrite: bool = False) -> list:
    """`factprobe ingest`: each (source, path) into the store (resumable: an input already
    ingested is skipped), one line per input on stderr; rejected records go to the rejects file
    (STORE.rejects.jsonl unless named). Returns the IngestReports. InputError / StoreError on
    an unreadable input or store; OutputError (kg/outputs.py) for a store or rejects file that
    is not factprobe's (`overwrite` replaces it), an input, or a link. Underneath:
    kg.ingest.ingest per input into a kg.Store (kg.restrict.ingest_relations with
    `relations`), then Store.optimize."""
    from ..kg.ingest import ingest
    from ..kg.readers import check_readable
    from ..kg.restrict import ingest_relations
    from ..kg.store import Store
    from .progress import file_progress

    claim_ingest_outputs(store, rejects_path, [path for _, path in inputs], overwrite=overwrite)
    reports = []
    with Store(store, languages=languages) as writer:
        for source, path in inputs:
            check_readable(path)
            with file_progress(path, disable=console.quiet, label=source.name) as progress:
                if relations is None:
                    report = ingest(writer, source, path, workers=workers, restart=restart, progress=progress)
                else:
                    report = ingest_relations(writer, source, path, relations, workers=workers, restart=restart,
                                              progress=progress)
            reports.append(report)
            console.note(ingest_line(report))
        writer.optimize()
    write_ingest_rejects(store, reports, rejects_path, console)
    return reports


def claim_ingest_outputs(store: str | Path, rejects_path: str | Path | None, inputs: Sequence[str | Path], *,
                         overwrite: bool = False) -> None:
    """An ingest's store and rejects file, claimed before anything is read (cli/outputs.py)."""
    from ..kg.outputs import claim_store
    from .outputs import REJECTS, claim_jsonl

    claim_store(store, overwrite=overwrite, inputs=inputs)
    claim_jsonl(rejects_path or f"{store}.rejects.jsonl", REJECTS, "an ingest's rejects file", overwrite=overwrite,
                inputs=[*inputs, store], flag="--rejects")


def write_ingest_rejects(store: str | Path, reports: Sequence, rejects_path: str | Path | None,
                         console: Console = Console()) -> str | None:
    """The rejected records of `reports` into the rejects file (STORE.rejects.jsonl unless named);
    its path, or None when nothing was rejected."""
    from ..kg.ingest import write_rejects

    rejected = sum(r.rejected for r in reports)
    dropped = sum(getattr(r, "dropped", 0) for r in reports)
    if not rejected and not dropped:
        return None
    target = str(rejects_path or f"{store}.rejects.jsonl")
    write_rejects(target, reports)
    parts = f" and {dropped} dropped part(s) of stored records" if dropped else ""
    console.note(f"{rejected} rejected record(s){parts} written to {target}")
    return target


def ingest_line(report) -> str:
    """One input's outcome in one line."""
    if report.already_done:
        return f"{report.path}: already ingested ({report.lines_read} lines; use --restart to redo)"
    # as `--json`'s "complete" and the exit status read it: a reject leaves an input incomplete
    state = "TRUNCATED" if report.truncated else "complete" if report.complete else "read to its end, incomplete"
    resumed = f", resumed after line {report.resumed_from}" if report.resumed_from else ""
    rate = report.records / report.seconds if report.seconds else 0.0
    older = (f", {report.older_ignored} older record(s) ignored (the store holds those entities newer)"
             if report.older_ignored else "")
    changed = f" (read from the start: {report.changed})" if report.changed else ""
    dropped = f", {report.dropped} part(s) dropped" if getattr(report, "dropped", 0) else ""
    return (f"{report.path}: {state}: {report.records} records in {report.seconds:.1f}s ({rate:,.0f}/s), "
            f"{report.rejected} rejected{dropped}{older}{resumed}{changed}")


def index_step(backend, store: str | Path, options, console: Console = Console(), overwrite: bool = False):
    """`factprobe corpus index`: add the documents `options` (index.corpus_jobs.IndexOptions) name
    to the backend's index; rejected documents on stderr, the summary on stdout. An embedded
    index file must be factprobe's (resumed) unless `overwrite` (cli/outputs.py)."""
    from ..index.corpus_jobs import index_corpus
    from .outputs import claim_index
    from .progress import document_progress

    if backend.kind == "embedded":
        claim_index(backend.path, overwrite=overwrite, inputs=[*options.files, *([store] if store else [])])

    with document_progress("indexing", disable=console.quiet) as progress:
        result = index_corpus(backend, store, options, progress=progress)
    for reject in result.rejects:
        console.note(f"rejected {reject.file}:{reject.line}: {reject.reason}")
    console.say(result.summary())
    return result


def annotate_step(backend, store: str | Path, options, console: Console = Console(), overwrite: bool = False):
    """`factprobe frequency annotate`: count the facts of `options` (index.corpus_jobs.AnnotateOptions)
    into its file and/or the store; the summary on stdout. The file must be counts factprobe
    wrote unless `overwrite` (cli/outputs.py)."""
    from ..index.corpus_jobs import annotate
    from ..kg.outputs import OutputError, is_store
    from .outputs import COUNTS, claim_jsonl
    from .progress import fact_progress

    if options.out:
        claim_jsonl(options.out, COUNTS, "fact counts factprobe wrote", overwrite=overwrite,
                    inputs=[store, *([backend.path] if backend.kind == "embedded" else [])])
    if options.to_store and Path(store).is_file() and not is_store(store):  # it would get our tables
        raise OutputError(f"{store} is not a factprobe graph store: --to-store writes counts only into one")

    with fact_progress(disable=console.quiet) as progress:
        result = annotate(backend, store, options, progress=progress)
    for line in result.summary_lines(store):
        console.say(line)
    return result


def semantic_step(store: str | Path, out: str | Path, console: Console = Console(), *, min_df: int | None = None,
                  check_queries: int | None = None, seed: int = 0, overwrite: bool = False):
    """`factprobe distractors build`: the TF-IDF semantic index of the store's entities, with its
    self-check of Sem against brute force on `check_queries` sampled facts (0: none); the summary
    on stdout, a failed check also as a warning on stderr. `min_df`, `check_queries` None: the
    index's own defaults (index/semantic_check.py). FileNotFoundError without a store;
    OutputError for an `out` holding other files, unless `overwrite` (cli/outputs.py)."""
    from ..index.semantic_check import build_semantic_index
    from ..kg.graph import KnowledgeGraph
    from .outputs import claim_semantic_folder

    def stage(text: str) -> None:
        if not console.quiet:
            console.note(f"  {text}...")

    if not Path(store).is_file():
        raise FileNotFoundError(f"no knowledge-graph store at {store}")
    claim_semantic_folder(out, overwrite=overwrite, inputs=[store])
    with KnowledgeGraph(store) as kg:
        given = {k: v for k, v in (("min_df", min_df), ("check_queries", check_queries)) if v is not None}
        index, report = build_semantic_index(kg, str(out), seed=seed, on_stage=stage, **given)
    meta = index.meta
    console.say(f"{meta['entities']:,} entities ({meta['indexed']:,} with features), {meta['features']:,} features, "
                f"built in {meta['build_seconds']} s -> {out}")
    if check_queries != 0:
        console.say(report.summary())
    if not report.ok:
        console.note(f"warning: {report.summary()}")
    return index, report

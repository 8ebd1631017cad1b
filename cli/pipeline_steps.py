"""The steps of `factprobe run`, each a library call in this process (no `factprobe`
subprocess): ingest a source, index the corpus, count a relation's facts, build the semantic
index, build a probe set, evaluate, write the report.

Each step prints what the equivalent command prints: its summary on stdout, progress and
warnings on stderr. pipeline.py prints the command itself and decides what runs; this module
also turns a config's probe-set and evaluation options into the library's option objects, with
the defaults the commands have.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any


def say(text: str) -> None:
    print(text, flush=True)


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- graph --------------------------------------------------------------------------------------

WIKIDATA5M_KINDS = ("triples", "entity-aliases", "relation-aliases", "corpus")


def ingest_source(store: Path, fmt: str, path: Path, languages: tuple[str, ...], *, part: str = "triples",
                  quiet: bool = False) -> None:
    """`factprobe ingest FORMAT PATH --store STORE`: one input into the store (resumable; an input
    already ingested is skipped). Rejected records go to STORE.rejects.jsonl."""
    from ..kg.ingest import ingest, write_rejects
    from ..kg.readers import check_readable
    from ..kg.store import Store
    from .progress import file_progress

    source = _source(fmt, languages, part, store)
    with Store(store, languages=languages) as writer:
        check_readable(path)
        with file_progress(path, disable=quiet, label=source.name) as progress:
            report = ingest(writer, source, path, progress=progress)
        _ingest_line(report)
        writer.optimize()
    if report.rejected:
        target = f"{store}.rejects.jsonl"
        write_rejects(target, [report])
        note(f"{report.rejected} rejected record(s) written to {target}")


def _source(fmt: str, languages: tuple[str, ...], part: str, store: Path):
    if fmt == "wikidata":
        from ..kg.sources.wikidata_json import WikidataJsonSource

        return WikidataJsonSource(languages=languages)
    if fmt == "rdf":
        from ..kg.sources.rdf import RdfSource

        return RdfSource(languages=languages)
    if fmt == "trex":
        from ..kg.sources.trex import TrexSource

        return TrexSource(languages=languages)
    from ..kg.sources.wikidata5m import Wikidata5mSource

    extra = {"labels_from": str(store)} if part == "corpus" else {}
    return Wikidata5mSource(kind=part, languages=languages, **extra)


def _ingest_line(r) -> None:
    if r.already_done:
        note(f"{r.path}: already ingested ({r.lines_read} lines; use --restart to redo)")
        return
    state = "TRUNCATED" if r.truncated else "complete"
    resumed = f", resumed after line {r.resumed_from}" if r.resumed_from else ""
    rate = r.records / r.seconds if r.seconds else 0.0
    note(f"{r.path}: {state}: {r.records} records in {r.seconds:.1f}s ({rate:,.0f}/s), {r.rejected} rejected{resumed}")


# -- corpus -------------------------------------------------------------------------------------


def index_corpus_step(store: Path, index: Path, files: list[str], fmt: str, relations: list[str], *,
                      quiet: bool = False) -> None:
    """`factprobe corpus index FILES --store STORE --index INDEX --count-facts R ...`."""
    from ..index.backend import Backend
    from ..index.corpus_jobs import IndexOptions, index_corpus
    from .frequency_cmds import document_progress

    options = IndexOptions(tuple(files), fmt, count_facts=tuple(relations))
    with document_progress("indexing", disable=quiet) as progress:
        result = index_corpus(Backend("embedded", str(index)), store, options, progress=progress)
    for reject in result.rejects:
        note(f"rejected {reject.file}:{reject.line}: {reject.reason}")
    say(result.summary())


def annotate_step(store: Path, index: Path, relation: str, corpus_name: str, out: Path, *,
                  quiet: bool = False) -> None:
    """`factprobe frequency annotate --relation R --to-store --corpus-name NAME ... --out OUT`."""
    from ..index.backend import Backend
    from ..index.corpus_jobs import AnnotateOptions, annotate
    from .frequency_cmds import fact_progress

    options = AnnotateOptions((relation,), str(out), True, corpus_name)
    with fact_progress(disable=quiet) as progress:
        result = annotate(Backend("embedded", str(index)), store, options, progress=progress)
    for line in result.summary_lines(store):
        say(line)


# -- semantic index -----------------------------------------------------------------------------


def semantic_step(store: Path, out: Path, *, quiet: bool = False) -> None:
    """`factprobe distractors build --store STORE --out OUT`: TF-IDF index, self-checked."""
    from ..index.semantic_check import build_semantic_index
    from ..kg.graph import KnowledgeGraph

    def stage(text: str) -> None:
        if not quiet:
            note(f"  {text}...")

    with KnowledgeGraph(store) as kg:
        index, report = build_semantic_index(kg, str(out), on_stage=stage)
    meta = index.meta
    say(f"{meta['entities']:,} entities ({meta['indexed']:,} with features), {meta['features']:,} features, "
        f"built in {meta['build_seconds']} s -> {out}")
    say(report.summary())
    if not report.ok:
        note(f"warning: {report.summary()}")


# -- probe sets ---------------------------------------------------------------------------------

# A probe set's config keys, as `probeset build` names its options (--per-relation: per_relation),
# -> (where the value goes, the field there). Lists go to repeatable options.
PROBESET_KEYS: dict[str, tuple[str, str]] = {
    "relations": ("selection", "relations"), "per_relation": ("selection", "per_relation"),
    "corpus": ("selection", "corpus"), "buckets": ("selection", "buckets"),
    "per_bucket": ("selection", "per_bucket"), "annotators": ("selection", "annotators"),
    "at": ("selection", "at"), "popularity_bins": ("selection", "popularity_bins"), "seed": ("selection", "seed"),
    "languages": ("options", "languages"), "templates": ("options", "template_dirs"),
    "manual_only": ("options", "manual_only"), "aliases_per_subject": ("options", "aliases_per_subject"),
    "cloze_unit": ("options", "cloze_unit"), "single_token": ("options", "single_token_model"),
    "choices": ("options", "choices"), "demo_fraction": ("options", "demo_fraction"),
    "allow_fewer_choices": ("options", "allow_fewer_choices"), "shots": ("options", "shots"),
    "kdf_demonstrations": ("options", "kdf_demonstrations"), "kdf_options": ("options", "kdf_options"),
    "strategies": ("options", "strategies"), "n": ("options", "n"), "semantic": ("options", "semantic_dir"),
    "model": ("options", "model"), "parquet": ("build", "parquet"),
}


def probeset_request(kind: str, options: dict[str, Any], seed: int):
    """A probe set's config options -> (FactSelection, BuildOptions, parquet), the command's
    defaults for what the config leaves out. Raises ValueError naming a key it cannot use."""
    from ..probes.build import BuildOptions, request_from_mapping
    from ..probes.facts import FactSelection

    request: dict[str, Any] = {"seed": seed, "kind": kind}
    parquet = False
    types = {f.name: f.type for cls in (FactSelection, BuildOptions) for f in fields(cls)}
    for key, value in options.items():
        if key not in PROBESET_KEYS:
            raise ValueError(f"unknown option {key} (allowed: {', '.join(sorted(PROBESET_KEYS))}, with_corpus)")
        where, name = PROBESET_KEYS[key]
        if where == "build":
            parquet = bool(value)
            continue
        request[name] = _typed(key, value, str(types[name]))
    selection, build = request_from_mapping(request)
    return selection, build, parquet


def _typed(key: str, value: Any, annotation: str) -> Any:
    """A config value as the option's type: lists for repeatable options ("en,de" is a list of
    languages too), numbers and flags as such."""
    try:
        if annotation.startswith("tuple"):
            if isinstance(value, str):
                return tuple(x.strip() for x in value.split(",") if x.strip()) if key == "languages" else (value,)
            return tuple(str(v) for v in value)
        if annotation == "bool":
            return bool(value)
        if annotation.startswith("int"):
            return None if value is None else int(value)
        if annotation.startswith("float"):
            return float(value)
        return None if value is None else str(value)
    except (TypeError, ValueError):
        raise ValueError(f"option {key}: {value!r} is not a {annotation.split(' ')[0]}") from None


def probeset_step(store: Path, out: Path, kind: str, options: dict[str, Any], seed: int, *,
                  quiet: bool = False) -> None:
    """`factprobe probeset build --kind KIND --store STORE --out OUT --seed SEED ...`."""
    from ..probes.build import build_probeset
    from .probeset_cmds import _warnings

    selection, build, parquet = probeset_request(kind, options, seed)
    meta = build_probeset(store, out, selection, build, parquet=parquet,
                          progress=None if quiet else (lambda text: note(f"{text} ...")))
    for warning in _warnings(meta.source):
        note(f"warning: {warning}")
    kept = meta.source["selection"]
    say(f"{meta.items:,} {kind} items from {kept['kept']:,} facts -> {out} "
        f"(sidecar {out.name.removesuffix('.jsonl')}.meta.json)")
    paper = meta.source.get("paper_filter")
    if paper:
        def listed(names):
            return ", ".join(f"{r} ({paper['relations'][r]['facts']:,} facts, "
                             f"{paper['relations'][r]['objects']:,} objects)" for r in names) or "none"

        say(f"paper filter ({paper['rule']}): pass {listed(paper['pass'])}; fail {listed(paper['fail'])}")


# -- evaluation ---------------------------------------------------------------------------------


class Models:
    """The model of the evaluations running now, loaded once for all of them (one at a time:
    models are the big memory)."""

    def __init__(self) -> None:
        self.spec: str | None = None
        self.scorer: Any = None

    def get(self, spec: str):
        if spec != self.spec:
            from ..probes.scoring.loader import load_scorer

            self.spec, self.scorer = None, None
            self.scorer = load_scorer(spec, device=os.environ.get("FACTPROBE_DEVICE", "auto"),
                                      dtype=os.environ.get("FACTPROBE_DTYPE", "auto"))
            self.spec = spec
        return self.scorer


def option_value(value: Any) -> Any:
    """A config option's value as `eval --option KEY=VALUE` reads it: text that is JSON is parsed
    ("10" is 10), other text stays text; lists and numbers stay what they are."""
    if not isinstance(value, str):
        return json.loads(json.dumps(value))
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def eval_step(models: Models, model: str, method: str, probes: Path, out: Path, seed: int,
              options: dict[str, Any], limit: int | None, *, quiet: bool = False) -> None:
    """`factprobe eval --model M --method X --probes P --out DIR --seed S --option K=V ...`; a rerun
    continues after the finished items."""
    from tqdm import tqdm

    from ..probes.runner import evaluate

    scorer = models.get(model)
    bar = tqdm(unit=" items", disable=quiet, dynamic_ncols=True)

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        summary = evaluate(scorer, method, probes, out, options={k: option_value(v) for k, v in options.items()},
                           limit=limit, seed=seed, progress=progress)
    finally:
        bar.close()
    for line in summary.rejected:
        note(f"rejected {line}")
    accuracy = summary.aggregate.get("accuracy")
    say(f"{method} on {summary.items:,} items ({summary.new:,} new): accuracy "
        f"{'n/a' if accuracy is None else f'{accuracy:.4f}'} -> {summary.out}/aggregate.json")


# -- report -------------------------------------------------------------------------------------


def report_step(folders: list[Path], out: Path, title: str) -> None:
    """`factprobe report DIR... --out OUT --title TITLE` with the default definitions."""
    from ..probes.report import Definitions, load_runs, write_report

    runs = load_runs(folders)
    files = write_report(runs, out, title, Definitions(known="per-template", sharing="probed"))
    say(f"{len(runs)} run(s) -> {files.markdown}, {files.html}, {len(files.images)} plot(s)")

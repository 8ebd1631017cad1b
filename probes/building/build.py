"""One entry point from a store to a probe set: a `BuildRequest` (the kind, the fact selection
and the kind's options, each checked against its declaration), then `build_probeset`: select
the facts, run the kind's builder, write the files. `probeset build`, the pipeline and the
service all make their request with `build_request` and build with `build_probeset`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from ...kg.graph import KnowledgeGraph
from ..declare import as_dict, coerce, option_specs
from .facts import FactSelection, select_facts
from ..kinds import BuildContext, KindOptions, get_kind, registered
from .probeset import ProbeSetMeta, read_meta, sidecar_path, write_probeset
from ..scoring.model_cache import ModelCache

SELECTION_OPTIONS = tuple(spec.name for spec in option_specs(FactSelection))


@dataclass(frozen=True)
class BuildRequest:
    """What to build, checked: the kind's name, the fact selection (probes.building.facts.FactSelection)
    and the kind's own options. Made by `build_request`; `to_dict` is what a sidecar records."""
    kind: str
    selection: FactSelection
    options: KindOptions  # the kind's own options dataclass

    def to_dict(self) -> dict:
        return {"kind": self.kind, "selection": self.selection.to_dict(), "options": as_dict(self.options)}


def build_request(kind: str, values: Mapping[str, Any], where: str = "") -> BuildRequest:
    """A request from option name -> value, the selection's and the kind's in one mapping (as a
    command line, a pipeline config or an HTTP request gives them). A None value means "not
    given" (the declared default). ValueError names an unknown option, an option of another
    kind, or a value its declaration refuses; `where` prefixes the message.

    Args:
        kind: A registered probe-set kind ("cloze", "icl-mc", "kdf", "distractor", "belief-icl",
            or a plugin's; probes.kinds.registered()).
        values: Option name -> value, named as `probeset build --help` names them with `_` for
            `-` ("per_relation": 60, "relations": ["P36"]); the selection's options
            (FactSelection: relations, per_relation, corpus, at, seed, ...) and the kind's.
        where: Where the values came from, prefixed to an error ("probesets.kdf").

    Returns:
        The BuildRequest, every value coerced to its declared type.

    Raises:
        ValueError: An unknown option, an option of another kind, a value its declaration
            refuses, or options the kind's check refuses together.
    """
    cls = get_kind(kind)
    own = {spec.name for spec in option_specs(cls.options)}
    given = {k: v for k, v in values.items() if v is not None}
    prefix = f"{where}: " if where else ""
    strangers = [k for k in given if k not in own and k not in SELECTION_OPTIONS]
    if strangers:
        elsewhere = {k: [n for n, c in registered().items() if k in {s.name for s in option_specs(c.options)}]
                     for k in strangers}
        name = strangers[0]
        if elsewhere[name]:
            raise ValueError(f"{prefix}option {name!r} is for {' and '.join(elsewhere[name])} probe sets, not {kind} "
                             f"(a {kind} set takes: {', '.join(sorted(own | set(SELECTION_OPTIONS)))})")
        raise ValueError(f"{prefix}unknown option {name!r} (a {kind} set takes: "
                         f"{', '.join(sorted(own | set(SELECTION_OPTIONS)))})")
    selection = coerce(FactSelection, {k: v for k, v in given.items() if k in SELECTION_OPTIONS}, where)
    options = coerce(cls.options, {k: v for k, v in given.items() if k in own}, where)
    try:
        cls.check(options)
    except ValueError as error:
        raise ValueError(f"{prefix}{error}") from None
    return BuildRequest(kind, selection, options)


def build_probeset(store: str | Path, out: str | Path, request: BuildRequest, *,
                   progress: Callable[[str], None] | None = None, models: ModelCache | None = None,
                   overwrite: bool = False) -> ProbeSetMeta:
    """Build `request` from the store at `store` into `out` (JSONL, the sidecar beside it, and
    Parquet when the options ask). Returns the sidecar's contents. `models`: where a kind that
    asks a model loads it (a new ModelCache by default). ValueError when the selection leaves no
    fact or the kind cannot build from what is selected, and, unless `overwrite`, when `out`
    holds a probe set this build would change (`check_replace`, before any fact is selected,
    then the items' bytes once built): the same request over the same graph rebuilds in place.

    Args:
        store: The knowledge-graph store (SQLite file an ingest wrote).
        out: The probe set's JSONL path; the sidecar NAME.meta.json is written beside it.
        request: What to build (`build_request`).
        progress: Called with a short note at each stage ("selecting facts", ...); None: silent.
        models: The ModelCache a kind that asks a model loads it from (`single_token`, ApprOpt).
        overwrite: Replace a probe set at `out` that this build would change.

    Returns:
        The ProbeSetMeta the sidecar holds: `kind`, `items` (test items and demonstrations),
        `seed`, `params`, `source` (the store, the selection's counts, the truth date) and
        the `sha256` of the JSONL.

    Raises:
        ValueError: No fact left after the selection, the kind cannot build from it, or `out`
            holds a probe set this build would change (unless `overwrite`).
        StoreError: No store at `store`, or not a factprobe store.
    """
    kind = get_kind(request.kind)()
    say = progress or (lambda _: None)
    with KnowledgeGraph(store) as kg:
        selection, date_from = with_truth_date(request.selection, kg)
        selection = with_relation_ids(selection, kg)
        params = {"selection": selection.to_dict(), "options": as_dict(request.options)}
        held = None if overwrite else check_replace(out, request.kind, params)
        say("selecting facts")
        facts, report = select_facts(kg, selection, selection.languages or None)
        if not facts:
            raise ValueError(f"no facts left after the filters ({_dropped(report.to_dict())}{_unlisted(report)})")
        annotator = frequency_annotator(kg, selection.corpus, facts) if selection.corpus else None
        say(f"building {len(facts):,} {request.kind} items")
        context = BuildContext(kg, selection, say, models=models or ModelCache())
        items = kind.build(context, facts, request.options)
        _check_fields(kind, items)
        if held is not None and held != items_sha256(items):
            raise ValueError(f"{out} holds other items (sha256 {held}) than this build makes from the same request "
                             f"(sha256 {items_sha256(items)}; has the graph changed?): pass --overwrite to replace "
                             "it, or another --out")
        source = {"store": Path(store).name, "store_stats": _store_stats(kg), "selection": report.to_dict(),
                  "truth_date": {"at": selection.at, "from": date_from}}
        if selection.corpus:
            source["frequency_annotator"] = annotator
        source.update(kind.source_notes(context, facts, items, request.options))
        if report.listed is not None:  # what became of each listed fact, and the list's SHA-256
            source["fact_list"] = report.listed.outcome(_asked_facts(items, "test"), request.kind,
                                                        _asked_facts(items, "demo"))
        return write_probeset(out, items, kind=request.kind, seed=selection.seed, params=params, source=source,
                              parquet=request.options.parquet)


def frequency_annotator(kg: KnowledgeGraph, corpus: str, facts) -> dict | None:
    """The one annotator whose counts `corpus` holds for the facts' relations (None: counted before
    annotators were recorded). ValueError naming two of them where the counts come from more than
    one (another backend, index, settings or tokenizer, or a recount stopped midway): a frequency
    axis must mean one thing, so they are never mixed."""
    from ...index.corpus_jobs import annotator_line

    found: dict[str, tuple[dict | None, str]] = {}  # the record's spelling -> (record, a relation it counted)
    for relation, records in kg.frequency_annotators(corpus, sorted({f.relation for f in facts})).items():
        for record in records or [None]:
            found.setdefault(json.dumps(record, sort_keys=True), (record, relation))
    if len(found) > 1:
        (a, at_a), (b, at_b) = list(found.values())[:2]
        raise ValueError(f"corpus {corpus!r} holds counts of two annotators for these facts: {at_a} by "
                         f"{annotator_line(a)}; {at_b} by {annotator_line(b)}. Count every relation with one "
                         f"(`factprobe frequency annotate --to-store --corpus {corpus} ...`), or store them "
                         "under another --corpus")
    return next(iter(found.values()))[0] if found else None


def check_replace(out: str | Path, kind: str, params: dict) -> str | None:
    """Whether a build of `kind` with `params` may write over `out`: nothing there (None), or the
    probe set the same request built, unedited (its SHA-256, for the caller to compare the new
    items with). ValueError naming what differs otherwise: no sidecar (not a factprobe probe
    set), another kind, other options, or bytes edited after the build."""
    out = Path(out)
    if not out.exists():
        return None
    again = "pass --overwrite to replace it, or another --out"
    if not sidecar_path(out).is_file():
        raise ValueError(f"{out} exists and is not a factprobe probe set (no {sidecar_path(out).name} beside it): {again}")
    held = read_meta(out)
    if held.kind != kind:
        raise ValueError(f"{out} holds a probe set of kind {held.kind}, this build is of kind {kind}: {again}")
    wanted = json.loads(json.dumps(params))  # as the sidecar holds them (lists, not tuples)
    if not isinstance(held.params, dict) or set(held.params) != set(wanted):
        raise ValueError(f"{out} holds a probe set of kind {held.kind} made another way (`probeset import`?): {again}")
    # An option added since the build (--facts), not given now, is the build's own: no key, no value.
    changed = [f"{key} {json.dumps(held.params[group].get(key))} -> {json.dumps(value)}"
               for group, values in wanted.items() for key, value in values.items()
               if held.params[group].get(key, None if value is None else ...) != value]
    if changed:
        raise ValueError(f"{out} was built with other options ({', '.join(changed)}): {again}")
    with open(out, "rb") as stream:
        actual = hashlib.file_digest(stream, "sha256").hexdigest()
    if actual != held.sha256:
        raise ValueError(f"{out} was edited after its build (its bytes hash to sha256 {actual}, its sidecar says "
                         f"{held.sha256}): {again}")
    return held.sha256


def items_sha256(items: list[dict]) -> str:
    """The SHA-256 of the JSONL probes.building.probeset.write_probeset writes for `items`."""
    digest = hashlib.sha256()
    for item in items:
        digest.update((json.dumps(item, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8"))
    return digest.hexdigest()


# The truth date of a store that says nothing of its date: statements without an end are true.
UNDATED = "9999-12-31"


def with_truth_date(selection: FactSelection, kg: KnowledgeGraph) -> tuple[FactSelection, str]:
    """The selection with its truth date fixed, and where the date came from: the one asked for;
    else the graph's own date (kg.as_of, its latest entity revision). Never the
    clock, so the same command, graph and seed rebuild the same bytes on any day. A graph whose
    inputs carry no revision dates (T-REx, Wikidata5M, truthy RDF) is as of the day its store
    was last loaded. Every query of the build uses that one date, and the sidecar names it."""
    if selection.at is not None:
        return selection, "asked (--at)"
    for date, where in ((kg.as_of(), "the graph's latest entity revision"),
                        (kg.loaded_on(), "the day the store was last loaded (its inputs carry no dates)")):
        if date is not None:
            return replace(selection, at=date), where
    return replace(selection, at=UNDATED), "none in the store: statements without an end are true"


def with_relation_ids(selection: FactSelection, kg: KnowledgeGraph) -> FactSelection:
    """The selection with each relation, a P-id or a label, as its id (kg/relations.py; the shipped
    templates' labels behind the store's), so the sidecar and a rebuild's comparison hold ids.
    ValueError where a label names no relation or several."""
    from ...kg.relations import resolve_relation
    from ..templates import shipped_labels

    return replace(selection, relations=tuple(resolve_relation(kg, r, shipped_labels) for r in selection.relations))


def _check_fields(kind, items: list[dict]) -> None:
    """Every test item carries the fields its kind declares (what the methods that read it rely on)."""
    for item in items:
        missing = [f for f in kind.item_fields if f not in item] if item.get("split") != "demo" else []
        if missing:
            raise RuntimeError(f"kind {kind.name} built item {item.get('id')} without its declared "
                               f"field(s) {', '.join(missing)}")


def _asked_facts(items: list[dict], split: str) -> set[str]:
    """The fact ids the items of `split` (test: any but demo) ask; a pair's item stands for its `facts`."""
    return {fact for item in items if (item.get("split") == "demo") == (split == "demo")
            for fact in (item.get("fact"), *(item.get("facts") or ()))}


def _unlisted(report) -> str:
    if report.listed is None:
        return ""
    outcome = report.listed.outcome(set(), "")
    reasons = ", ".join(f"{reason} {n}" for reason, n in outcome["by_reason"].items())
    return f"; of the {outcome['listed']} listed: {reasons}"


def _dropped(report: dict) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.items() if isinstance(v, int) and v) or "none seen"


def _store_stats(kg: KnowledgeGraph) -> dict:
    return {k: v for k, v in asdict(kg.stats()).items() if isinstance(v, int)}

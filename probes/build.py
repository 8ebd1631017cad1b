"""One entry point from a store to a probe set: a `BuildRequest` (the kind, the fact selection
and the kind's options, each checked against its declaration), then `build_probeset`: select
the facts, run the kind's builder, write the files. `probeset build`, the pipeline and the
service all make their request with `build_request` and build with `build_probeset`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from ..kg.graph import KnowledgeGraph
from .declare import as_dict, coerce, option_specs
from .facts import FactSelection, select_facts
from .kinds import BuildContext, KindOptions, get_kind, registered
from .probeset import ProbeSetMeta, write_probeset
from .scoring.model_cache import ModelCache

SELECTION_OPTIONS = tuple(spec.name for spec in option_specs(FactSelection))


@dataclass(frozen=True)
class BuildRequest:
    kind: str
    selection: FactSelection
    options: KindOptions  # the kind's own options dataclass

    def to_dict(self) -> dict:
        return {"kind": self.kind, "selection": self.selection.to_dict(), "options": as_dict(self.options)}


def build_request(kind: str, values: Mapping[str, Any], where: str = "") -> BuildRequest:
    """A request from option name -> value, the selection's and the kind's in one mapping (as a
    command line, a pipeline config or an HTTP request gives them). A None value means "not
    given" (the declared default). ValueError names an unknown option, an option of another
    kind, or a value its declaration refuses; `where` prefixes the message."""
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
                   progress: Callable[[str], None] | None = None, models: ModelCache | None = None) -> ProbeSetMeta:
    """Build `request` from the store at `store` into `out` (JSONL, the sidecar beside it, and
    Parquet when the options ask). Returns the sidecar's contents. `models`: where a kind that
    asks a model loads it (a new ModelCache by default). ValueError when the selection leaves no
    fact or the kind cannot build from what is selected."""
    kind = get_kind(request.kind)()
    say = progress or (lambda _: None)
    with KnowledgeGraph(store) as kg:
        selection, date_from = with_truth_date(request.selection, kg)
        say("selecting facts")
        facts, report = select_facts(kg, selection, selection.languages or None)
        if not facts:
            raise ValueError(f"no facts left after the filters ({_dropped(report.to_dict())})")
        say(f"building {len(facts):,} {request.kind} items")
        context = BuildContext(kg, selection, say, models=models or ModelCache())
        items = kind.build(context, facts, request.options)
        _check_fields(kind, items)
        source = {"store": Path(store).name, "store_stats": _store_stats(kg), "selection": report.to_dict(),
                  "truth_date": {"at": selection.at, "from": date_from}}
        source.update(kind.source_notes(context, facts, items, request.options))
        params = {"selection": selection.to_dict(), "options": as_dict(request.options)}
        return write_probeset(out, items, kind=request.kind, seed=selection.seed, params=params, source=source,
                              parquet=request.options.parquet)


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


def _check_fields(kind, items: list[dict]) -> None:
    """Every test item carries the fields its kind declares (what the methods that read it rely on)."""
    for item in items:
        missing = [f for f in kind.item_fields if f not in item] if item.get("split") != "demo" else []
        if missing:
            raise RuntimeError(f"kind {kind.name} built item {item.get('id')} without its declared "
                               f"field(s) {', '.join(missing)}")


def _dropped(report: dict) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.items() if isinstance(v, int) and v) or "none seen"


def _store_stats(kg: KnowledgeGraph) -> dict:
    return {k: v for k, v in asdict(kg.stats()).items() if isinstance(v, int)}

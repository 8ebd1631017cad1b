"""One entry point from a store to a probe set: select facts, run the kind's builder, write the
files. The CLI (`factprobe probeset build`) and the HTTP service both call `build_probeset`."""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..kg.graph import KnowledgeGraph
from . import builders
from .facts import FactSelection, ProbeFact, keyword_arguments, select_facts
from .probeset import KINDS, ProbeSetMeta, write_probeset


@dataclass(frozen=True)
class BuildOptions:
    kind: str
    languages: tuple[str, ...] = ()
    template_dirs: tuple[str, ...] = ()  # user template dirs merged over the shipped ones
    manual_only: bool = False  # cloze / belief-icl: only hand-written templates
    aliases_per_subject: int = 3  # cloze: subject names per template
    single_token_model: str | None = None  # cloze: keep facts with a single-token gold name for this model
    choices: int = 100  # icl-mc
    demo_fraction: float = 0.2  # icl-mc: share of each relation's subjects in the demonstration pool
    shots: int = 5  # kdf demonstrations; belief-icl demonstrations per setting
    strategies: tuple[str, ...] = ("random",)  # distractor
    n: int = 5  # distractor
    semantic_dir: str | None = None  # distractor: sem / temp+sem
    model: str | None = None  # distractor: appropt
    # icl-mc: a relation with fewer fair objects than `choices` is refused unless this is set;
    # then its items get fewer choices, each short item says so, and the sidecar counts them
    allow_fewer_choices: bool = False
    # kdf, the paper's by default: demonstrations from other relations ("same-relation": of the
    # item's relation), wrong options random tails of the same relation ("type-pool": fair random
    # distractors that share a type with the object)
    kdf_demonstrations: str = "other-relations"
    kdf_options: str = "relation-tails"
    # cloze: one item per subject-relation pair ("pair", BELIEF's unit T) or per (s, r, o) fact
    # ("fact", factprobe's older unit: a subject with two true objects counted twice)
    cloze_unit: str = "pair"
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> BuildOptions:
        """Options from their fields by name (lists become tuples); ValueError on an unknown key."""
        return cls(**keyword_arguments(cls, mapping))

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items() if k != "extra"}


def request_from_mapping(mapping: Mapping[str, Any]) -> tuple[FactSelection, BuildOptions]:
    """A build request, the fields of FactSelection and BuildOptions by name in one mapping (the
    two share no name), as the two objects; lists become tuples, a key of neither raises ValueError."""
    selection_names = {f.name for f in fields(FactSelection)}
    option_names = {f.name for f in fields(BuildOptions)}
    for key in mapping:
        if key not in selection_names and key not in option_names:
            raise ValueError(f"unknown key {key!r}: neither a FactSelection nor a BuildOptions field "
                             f"(allowed: {', '.join(sorted(selection_names | option_names))})")
    return (FactSelection.from_mapping({k: v for k, v in mapping.items() if k in selection_names}),
            BuildOptions.from_mapping({k: v for k, v in mapping.items() if k in option_names}))


def build_probeset(store: str | Path, out: str | Path, selection: FactSelection, options: BuildOptions, *,
                   parquet: bool = False, progress: Callable[[str], None] | None = None) -> ProbeSetMeta:
    if options.kind not in KINDS:
        raise ValueError(f"kind {options.kind!r}: use one of {', '.join(KINDS)}")
    say = progress or (lambda _: None)
    selection = with_truth_date(selection)
    kg = KnowledgeGraph(store)
    try:
        say("selecting facts")
        facts, report = select_facts(kg, selection, options.languages or None)
        if not facts:
            raise ValueError(f"no facts left after the filters ({_dropped(report.to_dict())})")
        say(f"building {len(facts):,} {options.kind} items")
        items = _items(kg, facts, selection, options)
        source = {"store": Path(store).name, "store_stats": _store_stats(kg), "selection": report.to_dict()}
        source.update(_paper_checks(kg, facts, items, selection, options))
        params = {"selection": selection.to_dict(), "options": options.to_dict()}
        return write_probeset(out, items, kind=options.kind, seed=selection.seed, params=params, source=source,
                              parquet=parquet)
    finally:
        kg.close()


def with_truth_date(selection: FactSelection) -> FactSelection:
    """The selection with its truth date fixed: "today" when none was given. Every query of the
    build then uses that one date (a build running past midnight does not mix two), and the
    sidecar names it, so `--at` with the recorded date rebuilds the same items on any later day."""
    if selection.at is not None:
        return selection
    return replace(selection, at=_dt.date.today().isoformat())


def _dropped(report: dict) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.items() if isinstance(v, int) and v) or "none seen"


def _store_stats(kg: KnowledgeGraph) -> dict:
    return {k: v for k, v in asdict(kg.stats()).items() if isinstance(v, int)}


def _templates(options: BuildOptions, relations: Sequence[str]) -> dict[str, list[str]]:
    from .templates import load_templates

    loaded = load_templates([Path(d) for d in options.template_dirs] or None)
    out = {}
    for relation in relations:
        entry = loaded.get(relation)
        if entry is None:
            continue
        texts = [t.text for t in entry.cloze if not options.manual_only or t.source == "manual"]
        if texts:
            out[relation] = texts
    missing = sorted(set(relations) - set(out))
    if missing:
        raise ValueError(f"no cloze templates for {', '.join(missing)}: add a YAML file for each "
                         "(see `factprobe templates list`) and pass its folder with --templates")
    return out


def _items(kg: KnowledgeGraph, facts: list[ProbeFact], selection: FactSelection, options: BuildOptions) -> list[dict]:
    relations = sorted({f.relation for f in facts})
    kind = options.kind
    if kind == "cloze":
        single = _single_token(options.single_token_model) if options.single_token_model else None
        return builders.build_cloze(facts, _templates(options, relations),
                                    aliases_per_subject=options.aliases_per_subject, single_token=single,
                                    unit=options.cloze_unit)
    if kind == "belief-icl":
        return builders.build_belief_icl(facts, _templates(options, relations), shots=options.shots,
                                         seed=selection.seed)
    if kind == "icl-mc":
        lang = (options.languages or kg.languages)[0]
        return builders.build_icl_mc(facts, _objects_of(kg, lang, selection.at),
                                     lambda s, r: set(kg.objects(s, r, at=selection.at)),
                                     choices=options.choices, demo_fraction=options.demo_fraction, seed=selection.seed,
                                     allow_fewer_choices=options.allow_fewer_choices)
    from ..index.distractors import DistractorFinder

    if kind == "kdf":
        if options.kdf_options not in builders.KDF_OPTIONS:
            raise ValueError(f"kdf options {options.kdf_options!r}: use one of {', '.join(builders.KDF_OPTIONS)}")
        questions = _questions(options, relations)

        def question(f: ProbeFact) -> str:
            return questions[f.relation].replace("[X]", f.subject_label)

        if options.kdf_options == "relation-tails":
            lang = (options.languages or kg.languages)[0]
            tails = builders.relation_tails(_objects_of(kg, lang, selection.at),
                                            lambda s, r: set(kg.objects(s, r, at=selection.at)), seed=selection.seed)
            return builders.build_kdf(facts, tails, question, shots=options.shots, seed=selection.seed,
                                      demonstrations=options.kdf_demonstrations)
        finder = DistractorFinder(kg, languages=options.languages or None)

        def wrong(fact: ProbeFact) -> list[tuple[str, str]]:
            # Random distractors follow one seeded order whatever n is, so a larger n only extends the
            # list: ask again for more while entities sharing a label leave fewer than 3 distinct ones.
            n = 3
            while True:
                found = finder.find(fact.subject, fact.relation, fact.object, strategy="random", n=n,
                                    at=selection.at, seed=selection.seed)
                pairs = [(d.entity, d.label or d.entity) for d in found.distractors]
                if len(builders.distinct_by_name(pairs, fact.gold)) >= 3 or len(pairs) < n:
                    return pairs
                n *= 2

        return builders.build_kdf(facts, wrong, question, shots=options.shots, seed=selection.seed,
                                  demonstrations=options.kdf_demonstrations)
    return _distractor_items(kg, facts, selection, options)


# T-REx-MC (Wu et al. 2024) keeps the relations with at least this many facts and distinct objects.
PAPER_MIN_FACTS, PAPER_MIN_OBJECTS = 500, 100


def _paper_checks(kg: KnowledgeGraph, facts: list[ProbeFact], items: list[dict], selection: FactSelection,
                  options: BuildOptions) -> dict:
    """What the sidecar says about the published constructions: for icl-mc, which relations
    T-REx-MC's filter would keep and which items got fewer choices than asked; for kdf, the facts
    left out for want of 3 wrong options."""
    if options.kind == "icl-mc":
        lang = (options.languages or kg.languages)[0]
        objects_of = _objects_of(kg, lang, selection.at)
        relations = {}
        for relation in sorted({f.relation for f in facts}):
            # Counted in the store (true statements, labelled objects), not in the capped selection:
            # the paper filters relations of the knowledge base before sampling.
            pairs = kg.count_pairs(relation)
            objects = len(objects_of(relation))
            relations[relation] = {"facts": pairs, "objects": objects,
                                   "passes": pairs >= PAPER_MIN_FACTS and objects >= PAPER_MIN_OBJECTS}
        short = builders.choice_shortfall(items)
        return {"paper_filter": {"rule": f"T-REx-MC: relations with >= {PAPER_MIN_FACTS} facts and >= "
                                         f"{PAPER_MIN_OBJECTS} distinct objects",
                                 "pass": [r for r, x in relations.items() if x["passes"]],
                                 "fail": [r for r, x in relations.items() if not x["passes"]],
                                 "relations": relations},
                "choices": {"requested": options.choices, "short": short,
                            "items_short": sum(x["items_short"] for x in short.values())}}
    if options.kind == "kdf":
        asked = {item["fact"] for item in items}
        skipped: dict[str, int] = {}
        for fact in facts:
            if fact.id not in asked:
                skipped[fact.relation] = skipped.get(fact.relation, 0) + 1
        return {"kdf": {"skipped_too_few_options": skipped}}
    return {}


def _questions(options: BuildOptions, relations: Sequence[str]) -> dict[str, str]:
    """A question per relation: `RelationTemplates.question()` (its first QA template, else a cloze
    with a blank)."""
    from .templates import load_templates

    loaded = load_templates([Path(d) for d in options.template_dirs] or None)
    out = {}
    for relation in relations:
        entry = loaded.get(relation)
        if entry is None or not (entry.qa or entry.cloze):
            raise ValueError(f"no templates for {relation}: KDF questions are written from them")
        out[relation] = entry.question()
    return out


def _objects_of(kg: KnowledgeGraph, lang: str, at: str | None):
    memo: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {}

    def objects_of(relation: str):
        if relation not in memo:
            rows = []
            for entity in kg.distinct_objects(relation):
                names = kg.labels(entity, lang)
                if names.label:
                    rows.append((entity, names.label, names.all()))
            memo[relation] = rows
        return memo[relation]

    return objects_of


def _single_token(spec: str) -> Callable[[str], bool]:
    from .scoring.loader import load_scorer

    tokenizer = load_scorer(spec).tokenizer
    unknown = tokenizer.unk_token_id

    def single(name: str) -> bool:
        # A word-piece vocabulary maps an unknown word to one [UNK]: one token, but not the name.
        ids = tokenizer(name, add_special_tokens=False)["input_ids"]
        return len(ids) == 1 and ids[0] != unknown

    return single


def _object_final(texts: Sequence[str]) -> str:
    """ApprOpt scores object labels as continuations: the first object-final template."""
    from .templates import object_final

    for text in texts:
        if object_final(text):
            return text
    raise ValueError(f"appropt needs a template that ends with [Y]; none among {texts[:3]}...")


def _distractor_items(kg, facts, selection, options) -> list[dict]:
    from ..index.distractors import DistractorFinder

    semantic = ranker = None
    if {"sem", "temp+sem"} & set(options.strategies):
        from ..index.semantic import SemanticIndex

        if not options.semantic_dir:
            raise ValueError("sem and temp+sem need a semantic index (--semantic DIR, from `factprobe distractors build`)")
        semantic = SemanticIndex.load(options.semantic_dir)
    prompts = {}
    if "appropt" in options.strategies:
        if not options.model:
            raise ValueError("appropt needs --model")
        from .scoring.appropt import ApprOptRanker
        from .scoring.loader import load_scorer

        ranker = ApprOptRanker(load_scorer(options.model))
        from .templates import prompt_before_object

        templates = _templates(options, sorted({f.relation for f in facts}))
        prompts = {f.id: prompt_before_object(_object_final(templates[f.relation]), f.subject_label) for f in facts}
    finder = DistractorFinder(kg, semantic, languages=options.languages or None, appropt=ranker)
    found = {}
    for strategy in options.strategies:
        keys = [(f.subject, f.relation, f.object, prompts.get(f.id)) for f in facts]
        found[strategy] = finder.find_many(keys, strategy=strategy, n=options.n, at=selection.at, seed=selection.seed)
    return _with_names(builders.build_distractor_sets(facts, found), finder)


def _with_names(items: list[dict], finder) -> list[dict]:
    """The distractor measure sums an entity's plausibility over all its names (label and
    aliases), for the object and for each distractor alike: the items carry those names."""
    for item in items:
        item["object_names"] = list(finder.names_of_raw(item["object"]))
        for found in item["distractors"].values():
            for entry in found:
                entry["names"] = list(finder.names_of_raw(entry["entity"]))
    return items

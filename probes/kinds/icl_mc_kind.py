"""The icl-mc kind (IC-LKE, T-REx-MC): the relations T-REx-MC keeps (>= 500 facts, >= 100
distinct objects, 002:531-534), and per relation a seeded share of the subjects forms the
demonstration pool; every other fact is a test item whose choices are the gold object and
objects of the same relation that are fair (not true, not the subject, no shared name)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Sequence

from ..building.facts import ProbeFact
from .base import BuildContext, KindOptions, ProbeSetKind, exclude_objects_option
from ..declare import option
from .sampling import ChoicePool, seeded

# T-REx-MC (Wu et al. 2024) keeps the relations with at least this many facts and distinct objects
# ("We selected relations from T-REx with at least 500 samples and linked to a minimum of 100 unique
# objects", 002:531-534).
PAPER_MIN_FACTS, PAPER_MIN_OBJECTS = 500, 100
RELATION_FILTERS = ("apply", "report")  # the paper's first: relations that fail are left out


@dataclass(frozen=True)
class IclMcKindOptions(KindOptions):
    choices: int = option(100, "choices per item.", minimum=2, http_limit=100)
    demo_fraction: float = option(0.2, "share of each relation's subjects that form the demonstration pool.",
                                  minimum=0, maximum=1)
    allow_fewer_choices: bool = option(
        False, "a relation with fewer fair objects than --choices gives its items fewer choices (recorded per "
               "item as `choices_requested` and in the sidecar, with a warning) instead of refusing the build.")
    trex_mc_filter: str = option(
        "apply", f"T-REx-MC's relation filter (>= {PAPER_MIN_FACTS} facts and >= {PAPER_MIN_OBJECTS} distinct "
                 "objects in the store): apply leaves out the relations that fail (the paper's), report only "
                 "says which fail (factprobe's earlier default).", choices=RELATION_FILTERS)
    exclude_objects: str = exclude_objects_option()


class IclMcKind(ProbeSetKind):
    name = "icl-mc"
    summary = "IC-LKE 100-way choices with a demonstration pool"
    options = IclMcKindOptions
    item_fields = ("choices", "choice_ids", "answer_index")  # test items; demonstrations carry the fact only

    def build(self, context: BuildContext, facts: list[ProbeFact], options: IclMcKindOptions) -> list[dict]:
        if options.trex_mc_filter == "apply":
            counts = relation_counts(context, facts)
            failing = sorted(r for r, x in counts.items() if not x["passes"])
            if failing and len(failing) == len(counts):
                raise ValueError(f"icl-mc: no relation passes T-REx-MC's filter (>= {PAPER_MIN_FACTS} facts and >= "
                                 f"{PAPER_MIN_OBJECTS} distinct objects, 002:531-534): {_listed(counts, failing)}; "
                                 "build with --trex-mc-filter report to keep them (the filter is then only reported)")
            facts = [f for f in facts if f.relation not in failing]
        return build_icl_mc(facts, context.objects_of, context.excluded_objects(options), choices=options.choices,
                            demo_fraction=options.demo_fraction, seed=context.selection.seed,
                            allow_fewer_choices=options.allow_fewer_choices)

    def source_notes(self, context: BuildContext, facts: list[ProbeFact], items: list[dict],
                     options: IclMcKindOptions) -> dict:
        """Which relations T-REx-MC's filter keeps (and, applied, which it left out), and which
        items got fewer choices than asked."""
        relations = relation_counts(context, facts)
        short = choice_shortfall(items)
        applied = options.trex_mc_filter == "apply"
        failing = [r for r, x in relations.items() if not x["passes"]]
        return {"paper_filter": {"rule": f"T-REx-MC: relations with >= {PAPER_MIN_FACTS} facts and >= "
                                         f"{PAPER_MIN_OBJECTS} distinct objects",
                                 "applied": applied, "pass": [r for r, x in relations.items() if x["passes"]],
                                 "fail": failing, "dropped": failing if applied else [],
                                 "relations": relations},
                "choices": {"requested": options.choices, "short": short,
                            "items_short": sum(x["items_short"] for x in short.values())}}

    @classmethod
    def warnings(cls, source: dict) -> list[str]:
        choices = source.get("choices") or {}
        paper = source.get("paper_filter") or {}
        dropped = [f"{relation}: left out by T-REx-MC's relation filter ({_why(paper['relations'][relation])}); "
                   "--trex-mc-filter report keeps it" for relation in paper.get("dropped") or ()]
        return dropped + [f"{relation}: {short['items_short']} item(s) have fewer than {choices['requested']} "
                          f"choices (the fewest {short['fewest_choices']}); each carries `choices_requested`"
                          for relation, short in sorted((choices.get("short") or {}).items())]

    @classmethod
    def summary_lines(cls, source: dict) -> list[str]:
        paper = source.get("paper_filter")
        if not paper:
            return []
        # A sidecar written before the filter was applied has no `applied`: it only reported.
        if paper.get("applied"):
            return [f"paper filter ({paper['rule']}): kept {_listed(paper['relations'], paper['pass'])}; "
                    f"dropped {_listed(paper['relations'], paper['dropped'])}"]
        return [f"paper filter ({paper['rule']}): pass {_listed(paper['relations'], paper['pass'])}; "
                f"fail {_listed(paper['relations'], paper['fail'])}"]


def relation_counts(context: BuildContext, facts: Sequence[ProbeFact]) -> dict[str, dict]:
    """Relation -> {facts, objects, passes} for the relations of `facts`: T-REx-MC's filter. Counted
    in the store (true statements, labelled objects), not in the capped selection: the paper filters
    relations of the knowledge base before sampling."""
    relations = {}
    for relation in sorted({f.relation for f in facts}):
        pairs = context.kg.count_pairs(relation)
        objects = len(context.objects_of(relation))
        relations[relation] = {"facts": pairs, "objects": objects,
                               "passes": pairs >= PAPER_MIN_FACTS and objects >= PAPER_MIN_OBJECTS}
    return relations


def _why(counts: dict) -> str:
    short = [f"{counts['facts']:,} facts" + (f" < {PAPER_MIN_FACTS}" if counts["facts"] < PAPER_MIN_FACTS else ""),
             f"{counts['objects']:,} objects" + (f" < {PAPER_MIN_OBJECTS}" if counts["objects"] < PAPER_MIN_OBJECTS
                                                 else "")]
    return ", ".join(short)


def _listed(relations: dict, names: Sequence[str]) -> str:
    return ", ".join(f"{r} ({relations[r]['facts']:,} facts, {relations[r]['objects']:,} objects)"
                     for r in names) or "none"


def split_by_subject(facts: Sequence[ProbeFact], demo_fraction: float, seed: int) -> tuple[set[str], set[str]]:
    """Fact ids of the demonstration pool and the test split: per relation, a seeded share of the
    subjects goes to the pool with all its facts."""
    by_relation: dict[str, set[str]] = defaultdict(set)  # a set: the order comes from sorting below
    for fact in facts:
        by_relation[fact.relation].add(fact.subject)
    demo_subjects = set()
    for relation, subjects in by_relation.items():
        order = seeded(seed, "split", relation).sample(sorted(subjects), len(subjects))
        take = round(len(order) * demo_fraction)
        if demo_fraction > 0 and len(order) > 1:
            take = min(max(take, 1), len(order) - 1)  # both sides non-empty when there are two subjects
        demo_subjects |= {(relation, s) for s in order[:take]}
    demo = {f.id for f in facts if (f.relation, f.subject) in demo_subjects}
    return demo, {f.id for f in facts} - demo


class ChoiceShortfall(ValueError):
    """Some relations have fewer fair objects than the choices asked for: the build is refused
    rather than giving those items fewer choices behind the user's back."""

    def __init__(self, choices: int, short: dict[str, dict]) -> None:
        self.choices, self.short = choices, short
        listed = "; ".join(f"{relation}: {s['objects']} distinct objects, {s['items_short']} test items short, "
                           f"the fewest {s['fewest_choices']} choices" for relation, s in sorted(short.items()))
        super().__init__(f"icl-mc: {len(short)} relation(s) have fewer candidate objects than --choices {choices} "
                         f"({listed}); build with fewer --choices, or pass --allow-fewer-choices to give those "
                         "items fewer choices (recorded per item and in the sidecar)")


def choice_shortfall(items: Sequence[dict]) -> dict[str, dict]:
    """Relation -> {items_short, fewest_choices} over the test items that got fewer choices than
    requested (those carrying `choices_requested`); what the sidecar and the CLI report."""
    out: dict[str, dict] = {}
    for item in items:
        if "choices_requested" in item:
            entry = out.setdefault(item["relation"], {"items_short": 0, "fewest_choices": len(item["choices"])})
            entry["items_short"] += 1
            entry["fewest_choices"] = min(entry["fewest_choices"], len(item["choices"]))
    return out


def build_icl_mc(facts: Sequence[ProbeFact], objects_of: Callable[[str], Sequence[tuple[str, str, tuple[str, ...]]]],
                 true_objects: Callable[[str, str], set[str]], *, choices: int = 100,
                 demo_fraction: float = 0.2, seed: int = 0, allow_fewer_choices: bool = False) -> list[dict]:
    """`objects_of(relation)`: (entity, label, names) of every object of the relation, sorted;
    `true_objects(subject, relation)`: the objects no choice may be (the kind passes every object
    the subject ever held, or those true at the date). Choices read differently from each other,
    from every name of those objects, from the gold names and from the subject's label.

    A test item whose relation has fewer than `choices` - 1 fair other objects raises
    ChoiceShortfall (every short relation named, with its counts); with `allow_fewer_choices` it
    gets them all and `choices_requested` says how many it should have had."""
    demo, _ = split_by_subject(facts, demo_fraction, seed)
    pools: dict[str, ChoicePool] = {}
    items = []
    for fact in facts:
        base = {"id": f"icl-mc:{fact.id}", "kind": "icl-mc", **fact.fields()}
        if fact.id in demo:
            items.append({**base, "split": "demo"})
            continue
        if fact.relation not in pools:
            pools[fact.relation] = ChoicePool(objects_of(fact.relation))
        others = pools[fact.relation].fair(fact, true_objects(fact.subject, fact.relation))
        rng = seeded(seed, "choices", fact.id)
        picked = rng.sample(others, min(choices - 1, len(others)))
        options = [(fact.object, fact.object_label), *picked]
        rng.shuffle(options)
        item = {**base, "split": "test", "choices": [label for _, label in options],
                "choice_ids": [e for e, _ in options], "answer_index": [e for e, _ in options].index(fact.object)}
        if len(options) < choices:
            item["choices_requested"] = choices  # only short items: full ones stay byte for byte as before
        items.append(item)
    short = choice_shortfall(items)
    if short and not allow_fewer_choices:
        for relation, entry in short.items():
            entry["objects"] = len(pools[relation].rows)
        raise ChoiceShortfall(choices, short)
    return items

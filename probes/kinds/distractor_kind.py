"""The distractor kind (Ammar Khodja et al. 2025): per fact, n fair wrong answers from each asked
strategy (random, sem, temp+sem, appropt), with every name of the object and of each distractor,
which the distractor measure sums its plausibility over."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ...index.distractors import (APPROPT_OBJECT, CLASS_CANDIDATES, CLASS_CANDIDATES_HELP, TYPE_DATES, TYPE_DATES_HELP,
                                  TYPE_RULES, UNTYPED_POOLS)
from ..building.facts import ProbeFact
from .base import BuildContext, ClozeTemplateOptions, ProbeSetKind, exclude_objects_option
from ..declare import LOCAL, SERVED_MODEL, option

STRATEGIES = ("random", "sem", "temp+sem", "appropt")


@dataclass(frozen=True)
class DistractorKindOptions(ClozeTemplateOptions):
    strategies: tuple[str, ...] = option(("random",), "repeatable.", choices=STRATEGIES, flag="--strategy",
                                         http_limit=len(STRATEGIES))
    n: int = option(5, "per fact and strategy.", minimum=1, http_limit=50)
    semantic: str | None = option(None, "semantic index folder.", exposure=LOCAL, metavar="DIR")
    model: str | None = option(None, "model spec for appropt.", exposure=SERVED_MODEL)
    # DistFact's rules first (issue 28 f, g); the others are factprobe's older ones.
    distractor_types: str = option(TYPE_RULES[0], "union: an entity's instance-of and subclass-of types together "
                                   "(DistFact's); instance-first: o's P31 types, else its P279 ones, matched "
                                   "through the same property.", choices=TYPE_RULES)
    untyped_pool: str = option(UNTYPED_POOLS[0], "candidates of an object without a type: none (DistFact's) or "
                               "relation-objects (the relation's objects).", choices=UNTYPED_POOLS)
    appropt_object: str = option(APPROPT_OBJECT[0], "appropt: grammar (DistFact's: the true object's labels are "
                                 "searched, take a result and are dropped) or banned (kept out; n come back).",
                                 choices=APPROPT_OBJECT)
    # Temp+Sem's temporal distractors are former objects by design: drawn whatever this says.
    exclude_objects: str = exclude_objects_option()
    class_candidates: str = option(CLASS_CANDIDATES[0], CLASS_CANDIDATES_HELP, choices=CLASS_CANDIDATES)
    type_dates: str = option(TYPE_DATES[0], TYPE_DATES_HELP, choices=TYPE_DATES)


class DistractorKind(ProbeSetKind):
    name = "distractor"
    summary = "strategy x n distractors per fact"
    options = DistractorKindOptions
    item_fields = ("distractors", "shortfall", "object_names")

    @classmethod
    def check(cls, options: DistractorKindOptions) -> None:
        if "appropt" in options.strategies and not options.model:
            raise ValueError("appropt needs a model: --model SPEC (over HTTP, `model`: one the server serves)")

    def build(self, context: BuildContext, facts: list[ProbeFact], options: DistractorKindOptions) -> list[dict]:
        from ...index.distractors import DistractorFinder

        semantic = ranker = None
        if {"sem", "temp+sem"} & set(options.strategies):
            from ...index.semantic import SemanticIndex

            if not options.semantic:
                raise ValueError("sem and temp+sem need a semantic index (--semantic DIR, from "
                                 "`factprobe distractors build`)")
            semantic = SemanticIndex.load(options.semantic)
        prompts = {}
        if "appropt" in options.strategies:
            from ..scoring.appropt import ApprOptRanker
            from ..templates import prompt_before_object

            if not context.models.holds(options.model):
                context.say(f"loading model {options.model}")
            ranker = ApprOptRanker(context.models.get(options.model), progress=_searched(context.say))
            templates = context.cloze_texts(options, sorted({f.relation for f in facts}))
            prompts = {f.id: prompt_before_object(_object_final(templates[f.relation]), f.subject_label)
                       for f in facts}
        finder = DistractorFinder(context.kg, semantic, languages=context.languages, appropt=ranker,
                                  types=options.distractor_types, untyped=options.untyped_pool,
                                  appropt_object=options.appropt_object, exclude_objects=options.exclude_objects,
                                  class_candidates=options.class_candidates, type_dates=options.type_dates,
                                  truth=context.selection.truth)
        found = {}
        for strategy in options.strategies:
            keys = [(f.subject, f.relation, f.object, prompts.get(f.id)) for f in facts]
            found[strategy] = finder.find_many(keys, strategy=strategy, n=options.n, at=context.selection.at,
                                               seed=context.selection.seed)
        return _with_names(build_distractor_sets(facts, found), finder)


def _object_final(texts: Sequence[str]) -> str:
    """ApprOpt scores object labels as continuations: the first object-final template."""
    from ..templates import object_final

    for text in texts:
        if object_final(text):
            return text
    raise ValueError(f"appropt needs a template that ends with [Y]; none among {texts[:3]}...")


def build_distractor_sets(facts: Sequence[ProbeFact], found: Mapping[str, Sequence]) -> list[dict]:
    """`found`: strategy -> DistractorSet per fact (same order as `facts`)."""
    items = []
    for k, fact in enumerate(facts):
        per_strategy, shortfall = {}, {}
        for strategy, sets in found.items():
            result = sets[k]
            per_strategy[strategy] = [{"entity": d.entity, "label": d.label, "source": d.source, "score": d.score}
                                      for d in result.distractors]
            if result.shortfall:
                shortfall[strategy] = result.shortfall
        items.append({"id": f"distractor:{fact.id}", "kind": "distractor", "split": "test", **fact.fields(),
                      "distractors": per_strategy, "shortfall": shortfall or None})
    return items


def _with_names(items: list[dict], finder) -> list[dict]:
    """The distractor measure sums an entity's plausibility over all its names (label and
    aliases), for the object and for each distractor alike: the items carry those names."""
    for item in items:
        item["object_names"] = list(finder.names_of_raw(item["object"]))
        for found in item["distractors"].values():
            for entry in found:
                entry["names"] = list(finder.names_of_raw(entry["entity"]))
    return items


def _searched(say):
    """ApprOpt's progress as build notes, "appropt: 32 of 106 facts searched", at most one every
    2 s and the last: a build of a hundred facts is otherwise silent for a minute."""
    import time

    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= 2.0:
            last[0] = now
            say(f"appropt: {done:,} of {total:,} facts searched")

    return report

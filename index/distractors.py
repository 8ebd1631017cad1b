"""Distractors: wrong answers for a fact (s, r, o) that a model could plausibly pick.

Only fair candidates (sharing a type with o, not o under another name, not true of s, not s) are
drawn, by strategy random, sem, temp+sem or appropt (Ammar Khodja et al. 2025); with fewer than n
fair candidates fewer are returned, `shortfall` says why. Types are the paper's by default (`types`
"union": instance-of and subclass-of together; an untyped o has no candidates); "instance-first"
and `untyped` "relation-objects" are factprobe's older rules. The rules: docs/design/frequency.md.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Protocol, Sequence

from .text import name_key

STRATEGIES = ("random", "sem", "temp+sem", "appropt")
# What "sharing a type" means (the paper's first). "union" (seed 004 =
# ../shared/papers/004_9e1422d598bbbe4c.txt lines 115 and 142): an entity's types are its
# instance-of (P31) and subclass-of (P279) values together, on both sides. "instance-first"
# (factprobe before issue 28): o's P31 types when it has any, else its P279 ones, compared with the
# candidates' types through the same property, so a class (capital: P279 city) never answers for an
# instance (Zagreb: P31 city), which the paper's rule allows.
TYPE_RULES = ("union", "instance-first")
# The pool of an o with no type (the paper's first): "none", the paper's Omega(f) is empty; or
# "relation-objects" (factprobe before issue 28), every object of the relation.
UNTYPED_POOLS = ("none", "relation-objects")
# The true object in ApprOpt's search (the paper's first). "grammar" (seed 004 line 124): the
# grammar allows "a label of o or of one of its distractors", so o competes for the n results
# and, found, is dropped: fewer than n distractors come back. "banned" (factprobe before issue
# 28): o's labels are kept out of the search, which fills all n while fair candidates last.
APPROPT_OBJECT = ("grammar", "banned")
# What wrong answers keep out besides the objects true at the date (the first is the default).
# "ever-held": every object the subject had for the relation at any date and any rank but
# deprecated. KDF asks for options that "do not form a valid triple with the given head" (seed 003
# line 63), and DistFact's Omega(f) for (s, r, o*) not in B (004 line 115); a statement the graph
# holds with an end date is such a triple (Melbourne, Australia's capital 1901-1927). Temp+Sem
# still draws them first: "valid in the past but is not anymore" (004 line 136) is its point.
# "true-at-date": only the objects true at the date are kept out (factprobe before issue 45).
EXCLUDE_OBJECTS = ("ever-held", "true-at-date")
# A class among the candidates of an instance (the first is the default). "exclude": an entity
# that is a class (it has a subclass-of type, or some entity is an instance of it) is no candidate
# when o is not a class ("capital", P279 city, is no wrong answer for Zagreb, P31 city). "allow":
# DistFact's rule as written (004 line 142: instance-of and subclass-of types alike), which lets it.
CLASS_CANDIDATES = ("exclude", "allow")
CLASS_CANDIDATES_HELP = ("exclude: an entity that is a class (it has a subclass-of type, or something is an instance "
                         "of it) is no candidate where the object is not one; allow: DistFact's types as written "
                         "(004:142), so 'capital' (subclass of city) answers for a city.")
# Which types count (the first is the default). "build-date": those whose instance-of /
# subclass-of statement is true at the date (Portugal's "colonial power" ended in 1975); types
# stored without their statement count undated. "any-date": every stored type (before issue 45).
TYPE_DATES = ("build-date", "any-date")
TYPE_DATES_HELP = ("build-date: a type counts when its instance-of / subclass-of statement is true at the truth date "
                   "(an ended one is no type); any-date: every type the store holds (factprobe's earlier default).")


@dataclass(frozen=True)
class Distractor:
    entity: str
    label: str | None
    source: str  # "random", "sem", "temporal", "appropt"
    score: float | None = None  # cosine similarity (sem), log-probability (appropt)


@dataclass(frozen=True)
class DistractorSet:
    subject: str
    relation: str
    object: str
    strategy: str
    n: int
    distractors: tuple[Distractor, ...]
    # "type": entities sharing a type with o; o has no type: "relation-objects" or "none" (empty)
    pool: str
    types: tuple[str, ...]
    at: str | None = None
    seed: int = 0
    shortfall: str | None = None  # why fewer than n, when fewer
    type_rule: str = TYPE_RULES[0]

    def to_dict(self) -> dict:
        return {"subject": self.subject, "relation": self.relation, "object": self.object,
                "strategy": self.strategy, "n": self.n, "at": self.at, "seed": self.seed,
                "pool": self.pool, "types": list(self.types), "type_rule": self.type_rule,
                "distractors": [d.__dict__ for d in self.distractors], "found": len(self.distractors),
                "shortfall": self.shortfall}


@dataclass
class Fairness:
    """The fairness rules for one fact, with the pool they draw from."""
    kg: object
    subject: str
    relation: str
    object: str
    at: str | None
    names_of: Callable[[str], frozenset[str]]  # entity -> its name keys
    objects_of_relation: Callable[[str], frozenset[str]]  # the pool when o has no type (untyped)
    type_rule: str = TYPE_RULES[0]
    untyped: str = UNTYPED_POOLS[0]
    exclude_objects: str = EXCLUDE_OBJECTS[0]
    class_candidates: str = CLASS_CANDIDATES[0]
    type_dates: str = TYPE_DATES[0]
    truth: str | None = None  # kg/model.py TRUTH_RULES; None: every non-deprecated statement
    types: tuple[str, ...] = field(init=False)
    # The property types are read through: None for "union" (P31 and P279 alike); under
    # "instance-first", the one that gave o its types, for o and candidates alike.
    via: str | None = field(init=False)
    pool_kind: str = field(init=False)  # "type", or `untyped` when o has no type
    excluded: frozenset[str] = field(init=False)  # the true objects (every held one: ever-held), the subject
    taken_names: frozenset[str] = field(init=False)  # every name of those objects
    # Temp+Sem's former objects are fair when only the objects true at the date are kept out.
    excluded_now: frozenset[str] = field(init=False)
    taken_names_now: frozenset[str] = field(init=False)
    classes_out: bool = field(init=False)  # a class is no candidate (o is no class itself)

    def __post_init__(self) -> None:
        for name, value, allowed in (("distractor types", self.type_rule, TYPE_RULES),
                                     ("untyped pool", self.untyped, UNTYPED_POOLS),
                                     ("exclude objects", self.exclude_objects, EXCLUDE_OBJECTS),
                                     ("class candidates", self.class_candidates, CLASS_CANDIDATES),
                                     ("type dates", self.type_dates, TYPE_DATES)):
            if value not in allowed:
                raise ValueError(f"{name} {value!r}: use one of {', '.join(allowed)}")
        if self.type_rule == "union":
            self.via, self.types = None, tuple(self.types_of(self.object))
        else:
            instance_types = tuple(self.types_of(self.object, "P31"))
            self.via = "P31" if instance_types else "P279"
            self.types = instance_types or tuple(self.types_of(self.object, "P279"))
        self.pool_kind = "type" if self.types else self.untyped
        true_objects = frozenset(self.kg.objects(self.subject, self.relation, at=self.at, truth=self.truth))
        true_objects |= {self.object}
        self.excluded_now = true_objects | {self.subject}
        self.taken_names_now = frozenset().union(*(self.names_of(o) for o in true_objects))
        if self.exclude_objects == "ever-held":
            held = frozenset(self.kg.held_objects(self.subject, self.relation)) - true_objects
            self.excluded = self.excluded_now | held
            self.taken_names = self.taken_names_now.union(*(self.names_of(o) for o in held))
        else:
            self.excluded, self.taken_names = self.excluded_now, self.taken_names_now
        self.classes_out = self.class_candidates == "exclude" and not self.kg.is_class(self.object)

    def types_of(self, entity: str, via: str | None = None) -> list[str]:
        """An entity's types under the rules: those held at the date (build-date), or all stored."""
        if self.type_dates == "any-date":
            return self.kg.types(entity, via=via)
        return self.kg.types_at(entity, via=via, at=self.at, truth=self.truth)

    def in_pool(self, entity: str) -> bool:
        if self.pool_kind == "type":
            if self.classes_out and self.kg.is_class(entity):
                return False
            return not set(self.types).isdisjoint(self.types_of(entity, self.via))
        return self.pool_kind == "relation-objects" and entity in self.objects_of_relation(self.relation)

    def fair(self, entity: str) -> bool:
        return (entity not in self.excluded and self.in_pool(entity)
                and self.taken_names.isdisjoint(self.names_of(entity)))

    def fair_former(self, entity: str) -> bool:
        """Fair as a temporal distractor: held once, so only the objects true at the date are kept out."""
        return (entity not in self.excluded_now and self.in_pool(entity)
                and self.taken_names_now.isdisjoint(self.names_of(entity)))


class RankedName(Protocol):
    """One candidate a model ranker found: the entity, the name it scored, log P(name | prompt)."""

    entity: str
    name: str
    logprob: float


class PlausibilityRanker(Protocol):
    """What strategy "appropt" asks of a model: for each (prompt, pool key, [(entity, names)],
    banned entities), the n candidates whose names are most probable after the prompt, best
    first. The model side (ApprOptRanker: ApprOpt's trie beam search)
    lives with the scorers; the graph side never imports it."""

    def rank_many(self, items: Sequence[tuple[str, str, Sequence[tuple[str, Sequence[str]]], frozenset[str]]],
                  n: int) -> list[list[RankedName]]: ...


class DistractorFinder:
    """Distractors from one graph (and, for sem and temp+sem, one semantic index)."""

    def __init__(self, kg, semantic=None, *, languages: Sequence[str] | None = None,
                 appropt: PlausibilityRanker | None = None, types: str = TYPE_RULES[0],
                 untyped: str = UNTYPED_POOLS[0], appropt_object: str = APPROPT_OBJECT[0],
                 exclude_objects: str = EXCLUDE_OBJECTS[0], class_candidates: str = CLASS_CANDIDATES[0],
                 type_dates: str = TYPE_DATES[0], truth: str | None = None) -> None:
        for name, value, allowed in (("distractor types", types, TYPE_RULES), ("untyped pool", untyped, UNTYPED_POOLS),
                                     ("appropt_object", appropt_object, APPROPT_OBJECT),
                                     ("exclude objects", exclude_objects, EXCLUDE_OBJECTS),
                                     ("class candidates", class_candidates, CLASS_CANDIDATES),
                                     ("type dates", type_dates, TYPE_DATES)):
            if value not in allowed:
                raise ValueError(f"{name} {value!r}: use one of {', '.join(allowed)}")
        self.kg = kg
        self.semantic = semantic
        self.types, self.untyped, self.appropt_object = types, untyped, appropt_object
        self.exclude_objects, self.class_candidates, self.type_dates = exclude_objects, class_candidates, type_dates
        self.truth = truth
        self.languages = tuple(languages or kg.languages)
        self.appropt = appropt  # for strategy "appropt": anything with rank_many (PlausibilityRanker)
        self.names_of = lru_cache(maxsize=500_000)(self._names_of)
        self._relation_objects = lru_cache(maxsize=64)(self._objects_of_relation)
        self._type_members = lru_cache(maxsize=256)(self._members)
        # Sorted once per pool, not per fact: a type such as "human" is millions of entities in
        # full Wikidata, and every fact of a relation asks for the same pool.
        self._pool_members = lru_cache(maxsize=8)(self._sorted_pool)
        # A pool's inverted index costs a pass over its members: built once per pool key. The
        # head of a ranking is kept per (pool, object): real objects repeat (every city of a
        # country asks for that country's distractors), and fairness is applied per fact after.
        self._semantic_pool = lru_cache(maxsize=16)(self._build_semantic_pool)
        self._ranking_head = lru_cache(maxsize=8192)(self._head)

    def _names_of(self, entity: str) -> frozenset[str]:
        return frozenset(k for k in map(name_key, self.names_of_raw(entity)) if k)

    def label(self, entity: str) -> str | None:
        return next((lab.label for lab in (self.kg.labels(entity, lang) for lang in self.languages) if lab.label), None)

    def _objects_of_relation(self, relation: str) -> frozenset[str]:
        return frozenset(self.kg.distinct_objects(relation))

    def _members(self, type_id: str, via: str | None) -> tuple[str, ...]:
        return tuple(self.kg.entities_of_type(type_id, via=via))

    def rules(self, subject: str, relation: str, obj: str, at: str | None = None) -> Fairness:
        return Fairness(self.kg, subject, relation, obj, at, self.names_of, self._relation_objects, self.types,
                        self.untyped, self.exclude_objects, self.class_candidates, self.type_dates, self.truth)

    @staticmethod
    def pool_key(rules: Fairness) -> str:
        """Names a candidate pool (ApprOpt keeps one label trie per model and pool key)."""
        if rules.pool_kind == "type":
            return f"type-{rules.via}:" + ",".join(rules.types) if rules.via else "type:" + ",".join(rules.types)
        if rules.pool_kind == "none":
            return "none:"
        return f"objects-of:{rules.relation}"

    def pool(self, rules: Fairness) -> list[str]:
        """Every candidate of the pool, fair or not, sorted (so seeded draws are reproducible)."""
        return list(self._pool_members(self.pool_key(rules)))

    def _sorted_pool(self, key: str) -> tuple[str, ...]:
        kind, _, value = key.partition(":")
        if kind == "objects-of":
            return tuple(sorted(self._relation_objects(value)))
        if kind == "none":
            return ()
        via = kind.removeprefix("type-") if kind != "type" else None
        members = set()
        for t in value.split(","):
            members.update(self._type_members(t, via))
        return tuple(sorted(members))

    def find(self, subject: str, relation: str, obj: str, *, strategy: str, n: int, at: str | None = None,
             seed: int = 0, prompt: str | None = None) -> DistractorSet:
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
        if n < 1:
            raise ValueError("n must be at least 1")
        rules = self.rules(subject, relation, obj, at)
        fair = rules.fair
        chosen: list[Distractor] = []
        shortfall = None
        if rules.pool_kind == "none":  # no candidate at all, whatever the strategy
            return self._result(rules, strategy, n, chosen, shortfall, seed)
        if strategy == "random":
            chosen = self._random(rules, fair, n, seed)
        elif strategy == "sem":
            chosen, shortfall = self._sem(rules, fair, n, exclude=set())
        elif strategy == "temp+sem":
            for entity in self.kg.temporal_objects(subject, relation, at=at, truth=self.truth):
                if len(chosen) < n and rules.fair_former(entity):
                    chosen.append(Distractor(entity, self.label(entity), "temporal"))
            if len(chosen) < n:
                more, shortfall = self._sem(rules, fair, n - len(chosen), exclude={d.entity for d in chosen})
                chosen += more
        else:
            return self.find_many([(subject, relation, obj, prompt)], strategy=strategy, n=n, at=at, seed=seed)[0]
        return self._result(rules, strategy, n, chosen, shortfall, seed)

    def find_many(self, facts: Sequence[tuple[str, str, str, str | None]], *, strategy: str, n: int,
                  at: str | None = None, seed: int = 0) -> list[DistractorSet]:
        """`find` for many (subject, relation, object, prompt); appropt searches them together."""
        if strategy != "appropt":
            return [self.find(s, r, o, strategy=strategy, n=n, at=at, seed=seed, prompt=p) for s, r, o, p in facts]
        if n < 1:
            raise ValueError("n must be at least 1")
        if self.appropt is None:
            raise ValueError("appropt needs a model (--model)")
        all_rules, items = [], []
        for subject, relation, obj, prompt in facts:
            if not prompt:
                raise ValueError("appropt needs the cloze prompt that precedes the object")
            rules = self.rules(subject, relation, obj, at)
            pool = self.pool(rules)
            key = self.pool_key(rules)
            banned = frozenset(e for e in pool if not rules.fair(e))
            if self.appropt_object == "grammar":
                banned -= {obj}
            all_rules.append(rules)
            items.append((prompt, key, [(e, self.names_of_raw(e)) for e in pool], banned))
        found = self.appropt.rank_many(items, n)
        return [self._appropt_result(rules, n, hits, seed) for rules, hits in zip(all_rules, found)]

    def _appropt_result(self, rules: Fairness, n: int, hits: Sequence[RankedName], seed: int) -> DistractorSet:
        """The search's hits less the true object, which the paper's grammar lets take a result."""
        kept = [Distractor(h.entity, h.name, "appropt", round(h.logprob, 6)) for h in hits if h.entity != rules.object]
        shortfall = None
        if len(kept) < len(hits):
            rank = next(k for k, h in enumerate(hits, start=1) if h.entity == rules.object)
            shortfall = (f"the true object took result {rank} of {len(hits)} (ApprOpt's grammar holds its labels) "
                         "and is no distractor")
        return self._result(rules, "appropt", n, kept, shortfall, seed)

    @staticmethod
    def _result(rules: Fairness, strategy: str, n: int, chosen: list[Distractor], shortfall: str | None,
                seed: int) -> DistractorSet:
        if len(chosen) < n and shortfall is None:
            shortfall = (f"{rules.object} has no type (instance of, subclass of): no candidate shares one"
                         if rules.pool_kind == "none" else
                         f"only {len(chosen)} fair candidates in the {rules.pool_kind} pool")
        return DistractorSet(rules.subject, rules.relation, rules.object, strategy, n, tuple(chosen), rules.pool_kind,
                             rules.types, rules.at, seed, shortfall if len(chosen) < n else None, rules.type_rule)

    def _random(self, rules: Fairness, fair, n: int, seed: int) -> list[Distractor]:
        pool = self._pool_members(self.pool_key(rules))
        rng = random.Random(f"{seed}|{rules.subject}|{rules.relation}|{rules.object}")
        picked = []
        for entity in _shuffled(pool, rng):
            if fair(entity):
                picked.append(Distractor(entity, self.label(entity), "random"))
                if len(picked) == n:
                    break
        return picked

    def _build_semantic_pool(self, key: str):
        return self.semantic.pool(self._pool_members(key))

    HEAD = 256  # ranked candidates kept per (pool, object); a fact that needs more ranks again

    def _head(self, key: str, obj: str) -> tuple[tuple[str, float], ...]:
        pool = self._semantic_pool(key)
        return tuple(itertools.islice(self.semantic.ranked(obj, pool), self.HEAD))

    def _ranked(self, rules: Fairness):
        """The pool ranked by similarity to o, best first, ties by id."""
        key = self.pool_key(rules)
        head = self._ranking_head(key, rules.object)
        yield from head
        if len(head) == self.HEAD:
            pool = self._semantic_pool(key)
            yield from itertools.islice(self.semantic.ranked(rules.object, pool), self.HEAD, None)

    def _sem(self, rules: Fairness, fair, n: int, exclude: set[str]) -> tuple[list[Distractor], str | None]:
        if self.semantic is None:
            raise ValueError("sem and temp+sem need a semantic index (factprobe distractors build)")
        if not self.semantic.has_vector(rules.object):
            return [], f"{rules.object} has no features in the semantic index"
        picked: list[Distractor] = []
        for entity, similarity in self._ranked(rules):
            if entity not in exclude and fair(entity):
                picked.append(Distractor(entity, self.label(entity), "sem", similarity))
                if len(picked) == n:
                    break
        return picked, None

    def names_of_raw(self, entity: str) -> tuple[str, ...]:
        """Labels and aliases as written (ApprOpt scores them as text)."""
        names = []
        for lang in self.languages:
            names += [n for n in self.kg.labels(entity, lang).all() if n not in names]
        return tuple(names)


def _shuffled(pool: Sequence[str], rng: random.Random):
    """`rng.sample(pool, len(pool))`, drawn lazily: the same order, element for element (the
    partial Fisher-Yates that `random.sample` runs when it takes the whole population, with
    the swapped slots kept in a dict), but a fact that finds its n fair distractors early
    costs n draws instead of a copy and shuffle of a pool of millions."""
    n = len(pool)
    moved: dict[int, int] = {}
    for i in range(n):
        j = rng.randrange(n - i)
        yield pool[moved.get(j, j)]
        last = n - i - 1
        moved[j] = moved.get(last, last)

"""Probe-set builders: from selected facts (probes/facts.py) to the items each method needs.

One builder per probe-set kind (cloze, icl-mc, kdf, distractor, belief-icl), each deterministic
for its inputs and seed (no global random state), returning the JSONL records in the order of the
facts. What each kind's items hold: docs/design-notes.md.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence as SequenceABC
from typing import Callable, Mapping, Sequence

from ..index.text import name_key
from .facts import ProbeFact
from .templates import fill

LETTERS = "ABCD"


def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random("|".join([str(seed), *parts]))


class _AllBut(SequenceABC):
    """`items` without the positions in `skipped` (sorted), read-only and not copied.

    The builders draw demonstrations from "every fact but this subject's" once per fact; copying
    that list each time made them quadratic in the number of facts. Element for element this view
    equals the filtered list, so a seeded `sample` over it draws the same items (same bytes)."""

    def __init__(self, items: Sequence, skipped: Sequence[int]) -> None:
        self.items, self.skipped = items, skipped

    def __len__(self) -> int:
        return len(self.items) - len(self.skipped)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[k] for k in range(*j.indices(len(self)))]
        if j < 0:
            j += len(self)
        if not 0 <= j < len(self):
            raise IndexError(j)
        # The position i of the j-th kept item satisfies i = j + (skipped positions <= i); iterating
        # from i = j climbs to the least such i, which is never a skipped one.
        i = j
        while (nxt := j + bisect_right(self.skipped, i)) != i:
            i = nxt
        return self.items[i]


def _positions_by_subject(facts: Sequence[ProbeFact]) -> dict[str, list[int]]:
    """Subject -> its facts' positions in `facts`, ascending (what `_AllBut` skips)."""
    where: dict[str, list[int]] = defaultdict(list)
    for k, fact in enumerate(facts):
        where[fact.subject].append(k)
    return where


# -- cloze -----------------------------------------------------------------------------------


CLOZE_UNITS = ("pair", "fact")  # BELIEF's unit first


def build_cloze(facts: Sequence[ProbeFact], templates: Mapping[str, Sequence[str]], *,
                aliases_per_subject: int = 3, single_token: Callable[[str], bool] | None = None,
                unit: str = "pair") -> list[dict]:
    """`templates`: relation -> cloze texts with [X] and [Y]. `single_token(name)` keeps an item only
    when one of its gold names is a single token (for masked LMs), and keeps only those names.

    `unit="pair"` (BELIEF: "we denote the subject-relation pairs in dataset as T"): one item per
    (subject, relation), in the order of its first fact. Its gold answers already name every true
    object (probes/facts.py), so nothing is lost; `facts`, `objects` and `object_labels` list the
    selected facts it stands for, `fact` is "subject|relation", and `object`, `object_label`,
    `frequency` and `bucket` are those of its most frequent fact (the first one on a tie or
    without frequencies). `unit="fact"`: one item per fact, as factprobe built them before."""
    if unit not in CLOZE_UNITS:
        raise ValueError(f"cloze unit {unit!r}: use one of {', '.join(CLOZE_UNITS)}")
    groups = _cloze_units(facts, unit)
    items = []
    for group in groups:
        fact = max(group, key=lambda f: -1 if f.frequency is None else f.frequency)  # first on ties
        texts = templates.get(fact.relation)
        if not texts:
            raise ValueError(f"no cloze templates for {fact.relation} ({fact.relation_label})")
        gold = list(fact.gold)  # the same for every fact of a pair: every true object's names
        if single_token is not None:
            gold = [g for g in gold if single_token(g)]
            if not gold:
                continue
        names = [fact.subject_label, *[a for a in fact.subject_aliases if a != fact.subject_label]]
        prompts = [{"template": t, "template_id": k, "subject_name": name, "text": fill(t, name)}
                   for k, t in enumerate(texts) for name in names[:aliases_per_subject]]
        if unit == "fact":
            items.append({"id": f"cloze:{fact.id}", "kind": "cloze", "split": "test", **fact.fields(),
                          "gold": gold, "unit": "fact", "prompts": prompts})
            continue
        pair = f"{fact.subject}|{fact.relation}"
        items.append({"id": f"cloze:{pair}", "kind": "cloze", "split": "test", **fact.fields(), "fact": pair,
                      "gold": gold, "unit": "pair", "facts": [f.id for f in group],
                      "objects": [f.object for f in group], "object_labels": [f.object_label for f in group],
                      "prompts": prompts})
    return items


def _cloze_units(facts: Sequence[ProbeFact], unit: str) -> list[list[ProbeFact]]:
    """The facts each cloze item stands for: one each, or those of one subject-relation pair (in
    the order of each pair's first fact, and of the facts within it)."""
    if unit == "fact":
        return [[fact] for fact in facts]
    pairs: dict[tuple[str, str], list[ProbeFact]] = {}
    for fact in facts:
        pairs.setdefault((fact.subject, fact.relation), []).append(fact)
    return list(pairs.values())


# -- IC-LKE multiple choice ------------------------------------------------------------------


def split_by_subject(facts: Sequence[ProbeFact], demo_fraction: float, seed: int) -> tuple[set[str], set[str]]:
    """Fact ids of the demonstration pool and the test split: per relation, a seeded share of the
    subjects goes to the pool with all its facts."""
    by_relation: dict[str, set[str]] = defaultdict(set)  # a set: the order comes from sorting below
    for fact in facts:
        by_relation[fact.relation].add(fact.subject)
    demo_subjects = set()
    for relation, subjects in by_relation.items():
        order = _rng(seed, "split", relation).sample(sorted(subjects), len(subjects))
        take = round(len(order) * demo_fraction)
        if demo_fraction > 0 and len(order) > 1:
            take = min(max(take, 1), len(order) - 1)  # both sides non-empty when there are two subjects
        demo_subjects |= {(relation, s) for s in order[:take]}
    demo = {f.id for f in facts if (f.relation, f.subject) in demo_subjects}
    return demo, {f.id for f in facts} - demo


class _ChoicePool:
    """A relation's objects as icl-mc choices, with what one fact must leave out found by lookup.

    Two entities with the same normalized label would give two identical choice strings, so the
    pool keeps one per label (the first by id) and files every member's names and id under it."""

    def __init__(self, objects: Sequence[tuple[str, str, tuple[str, ...]]]) -> None:
        self.rows: list[tuple[str, str]] = []  # (entity, label) shown as a choice
        self.row_of: dict[str, int] = {}  # every object, a representative or not -> its row
        self.rows_named: dict[str, set[int]] = defaultdict(set)  # name key -> rows bearing it
        row_of_label: dict[str, int] = {}
        for entity, label, names in objects:
            key = name_key(label)
            if key not in row_of_label:
                row_of_label[key] = len(self.rows)
                self.rows.append((entity, label))
            row = self.row_of[entity] = row_of_label[key]
            for name in (label, *names):
                self.rows_named[name_key(name)].add(row)

    def unfair(self, fact: ProbeFact, true: set[str]) -> list[int]:
        """Rows that may not be a choice for `fact`, ascending: true objects, the subject (a
        symmetric relation lists it among its objects), and any row sharing a name with a gold
        answer or with the subject's label."""
        out = {self.row_of[e] for e in (*true, fact.object, fact.subject) if e in self.row_of}
        for name in (*fact.gold, fact.subject_label):
            out |= self.rows_named.get(name_key(name), set())
        return sorted(out)


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
    `true_objects(subject, relation)`: the objects true for the subject. Choices read differently
    from each other, from every name of a true object and from the subject's label.

    A test item whose relation has fewer than `choices` - 1 fair other objects raises
    ChoiceShortfall (every short relation named, with its counts); with `allow_fewer_choices` it
    gets them all and `choices_requested` says how many it should have had."""
    demo, _ = split_by_subject(facts, demo_fraction, seed)
    pools: dict[str, _ChoicePool] = {}
    items = []
    for fact in facts:
        base = {"id": f"icl-mc:{fact.id}", "kind": "icl-mc", **fact.fields()}
        if fact.id in demo:
            items.append({**base, "split": "demo"})
            continue
        if fact.relation not in pools:
            pools[fact.relation] = _ChoicePool(objects_of(fact.relation))
        pool = pools[fact.relation]
        others = _AllBut(pool.rows, pool.unfair(fact, true_objects(fact.subject, fact.relation)))
        rng = _rng(seed, "choices", fact.id)
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


# -- KDF multiple choice ---------------------------------------------------------------------


def distinct_by_name(candidates: Sequence[tuple[str, str]], taken: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(entity, label) candidates in their order, without those whose normalized label is in
    `taken` or was seen earlier: two options that read the same cannot both be answered."""
    seen = {name_key(name) for name in taken}
    out = []
    for entity, label in candidates:
        key = name_key(label)
        if key not in seen:
            seen.add(key)
            out.append((entity, label))
    return out


KDF_DEMONSTRATIONS = ("other-relations", "same-relation")  # the paper's first
KDF_OPTIONS = ("relation-tails", "type-pool")  # the paper's first


def relation_tails(objects_of: Callable[[str], Sequence[tuple[str, str, tuple[str, ...]]]],
                   true_objects: Callable[[str, str], set[str]], *, seed: int = 0,
                   n: int = 3) -> Callable[[ProbeFact], list[tuple[str, str]]]:
    """KDF's wrong answers as the paper draws them: random tails (objects) of the fact's own
    relation, whatever their type. They are as fair as icl-mc choices (_ChoicePool): not true for
    the subject, not the subject, no name shared with a gold answer or the subject's label, one
    entity per label; a seeded draw per fact."""
    pools: dict[str, _ChoicePool] = {}

    def tails(fact: ProbeFact) -> list[tuple[str, str]]:
        if fact.relation not in pools:
            pools[fact.relation] = _ChoicePool(objects_of(fact.relation))
        pool = pools[fact.relation]
        others = _AllBut(pool.rows, pool.unfair(fact, true_objects(fact.subject, fact.relation)))
        return _rng(seed, "tails", fact.id).sample(others, min(n, len(others)))

    return tails


def build_kdf(facts: Sequence[ProbeFact], distractors_of: Callable[[ProbeFact], list[tuple[str, str]]],
              question_of: Callable[[ProbeFact], str], *, shots: int = 5, seed: int = 0,
              demonstrations: str = "other-relations") -> list[dict]:
    """`distractors_of(fact)`: fair (entity, label) wrong answers, best first; the first 3 that read
    differently from each other and from every gold name are the options, and a fact with fewer
    is skipped (the caller counts what is missing). `question_of(fact)`: the question text.
    Demonstrations are other asked facts, each with its own options and answer: with
    `demonstrations="other-relations"` (the paper) facts of other relations, about other subjects;
    with "same-relation" facts of the same relation with other subjects."""
    if demonstrations not in KDF_DEMONSTRATIONS:
        raise ValueError(f"kdf demonstrations {demonstrations!r}: use one of {', '.join(KDF_DEMONSTRATIONS)}")
    questions = {}
    for fact in facts:
        wrong = distinct_by_name(distractors_of(fact), fact.gold)[:3]
        if len(wrong) < 3:
            continue
        options = [(fact.object, fact.object_label), *wrong]
        _rng(seed, "options", fact.id).shuffle(options)
        answer = [e for e, _ in options].index(fact.object)
        questions[fact.id] = {"question": question_of(fact), "options": [label for _, label in options],
                              "option_ids": [e for e, _ in options], "answer": LETTERS[answer]}
    by_relation: dict[str, list[ProbeFact]] = defaultdict(list)
    for fact in facts:
        if fact.id in questions:
            by_relation[fact.relation].append(fact)
    if demonstrations == "other-relations":
        # Per relation, every asked fact of the other relations (in the facts' order); a fact then
        # skips its own subject's positions in its relation's list, as below.
        asked = [f for f in facts if f.id in questions]
        sources = {relation: [f for f in asked if f.relation != relation] for relation in by_relation}
        if shots > 0 and len(by_relation) < 2:
            only = ", ".join(by_relation) or "none"
            raise ValueError(f"kdf: demonstrations from other relations (the KDF paper's) need questions of at "
                             f"least two relations; only {only} has any. Add relations, or build with "
                             "--kdf-demonstrations same-relation")
    else:
        sources = by_relation
    subject_at = {relation: _positions_by_subject(source) for relation, source in sources.items()}
    items = []
    for fact in facts:
        if fact.id not in questions:
            continue
        pool = _AllBut(sources[fact.relation], subject_at[fact.relation].get(fact.subject, []))
        shots_taken = _rng(seed, "shots", fact.id).sample(pool, min(shots, len(pool)))
        items.append({"id": f"kdf:{fact.id}", "kind": "kdf", "split": "test", **fact.fields(), **questions[fact.id],
                      "demonstrations": [{"fact": f.id, **questions[f.id]} for f in shots_taken]})
    return items


# -- distractor sets -------------------------------------------------------------------------


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


# -- BELIEF-ICL ------------------------------------------------------------------------------


def build_belief_icl(facts: Sequence[ProbeFact], templates: Mapping[str, Sequence[str]], *, shots: int = 4,
                     seed: int = 0) -> list[dict]:
    """One item per (fact, template). Demonstrations are (text with the object filled) of other
    facts; the four settings use the same number of shots so they compare."""
    by_relation: dict[str, list[ProbeFact]] = defaultdict(list)
    for fact in facts:
        by_relation[fact.relation].append(fact)
    subject_at = _positions_by_subject(facts)
    subject_at_in = {relation: _positions_by_subject(same) for relation, same in by_relation.items()}
    items = []
    for fact in facts:
        texts = templates.get(fact.relation)
        if not texts:
            raise ValueError(f"no cloze templates for {fact.relation} ({fact.relation_label})")
        others_any = _AllBut(facts, subject_at[fact.subject])
        others_relation = _AllBut(by_relation[fact.relation], subject_at_in[fact.relation][fact.subject])
        for t_id, template in enumerate(texts):
            rng = _rng(seed, "belief", fact.id, str(t_id))
            x_random = [_demo(f, rng.choice(templates[f.relation]))
                        for f in rng.sample(others_any, min(shots, len(others_any)))]
            x_relation = [_demo(f, rng.choice(texts)) for f in rng.sample(others_relation, min(shots, len(others_relation)))]
            x_template = [_demo(f, template) for f in rng.sample(others_relation, min(shots, len(others_relation)))]
            items.append({"id": f"belief-icl:{fact.id}:{t_id}", "kind": "belief-icl", "split": "test",
                          **fact.fields(), "template": template, "template_id": t_id,
                          "prompt": fill(template, fact.subject_label),
                          "demonstrations": {"zero-shot": [], "x-random": x_random, "x-relation": x_relation,
                                             "x-template": x_template}})
    return items


def _demo(fact: ProbeFact, template: str) -> dict:
    # The labels let a method rebuild the cloze with a mask where the object is (BELIEF-ICL's Q lines).
    return {"fact": fact.id, "relation": fact.relation, "template": template,
            "subject_label": fact.subject_label, "object_label": fact.object_label,
            "text": fill(template, fact.subject_label, fact.object_label)}

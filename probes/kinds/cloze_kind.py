"""The cloze kind (BELIEF, MyriadLAMA): per subject-relation pair (or per fact), the relation's
cloze templates filled with the subject's names; the gold answers name every true object."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..building.facts import ProbeFact
from ..templates import fill
from .base import BuildContext, ClozeTemplateOptions, ProbeSetKind
from ..declare import SERVED_MODEL, option

CLOZE_UNITS = ("pair", "fact")  # BELIEF's unit first
# What a subject-relation unit's `facts`, `objects` and `object_labels` list (the first is the
# default): "every-true", every labelled object true for the pair at the truth date, as its gold
# answers name them (the selected facts first, then the others by object id), so an item's
# metadata agrees with its gold (Turkey's continents: Asia and Europe, though a per-relation cap
# kept one fact); "selected", only the facts the selection kept (factprobe before issue 45).
PAIR_FACTS = ("every-true", "selected")
TrueStatements = Callable[[str, str], Sequence[tuple[str, str, str]]]  # BuildContext.true_statements


def pair_facts_option():
    """The `pair_facts` field of a kind with subject-relation units: one declaration for each."""
    return option(PAIR_FACTS[0], "a subject-relation unit lists as its facts and objects every object true for the "
                                 "pair at the truth date, as its gold names them (every-true), or only the selected "
                                 "facts (selected, factprobe's earlier default).", choices=PAIR_FACTS)


def pair_lists(group: Sequence[ProbeFact], true_statements: TrueStatements | None) -> dict[str, list[str]]:
    """A unit's `facts`, `objects` and `object_labels`: its selected facts, then (given
    `true_statements`) every other object true for the pair, with its first statement id."""
    rows = [(f.id, f.object, f.object_label) for f in group]
    if true_statements is not None:
        head = group[0]
        listed = {f.object for f in group}
        rows += [(fact_id, obj, label) for obj, fact_id, label in true_statements(head.subject, head.relation)
                 if obj not in listed]
    return {"facts": [r[0] for r in rows], "objects": [r[1] for r in rows], "object_labels": [r[2] for r in rows]}


@dataclass(frozen=True)
class ClozeKindOptions(ClozeTemplateOptions):
    # MyriadLAMA fills every template with every expression of the subject (000:324, 2.47 per
    # subject on average, 000:368); factprobe asked at most 3 before issue 38.
    aliases_per_subject: int | None = option(None, "subject names (label first, then aliases) per template; "
                                                   "every name when not given (MyriadLAMA's).", minimum=1,
                                             http_limit=20)
    cloze_unit: str = option("pair", "one item per subject-relation pair (BELIEF's unit) or per (s, r, o) fact.",
                             choices=CLOZE_UNITS)
    pair_facts: str = pair_facts_option()
    single_token: str | None = option(None, "keep facts with a single-token gold name under this model's "
                                            "tokenizer (for MLMs).", exposure=SERVED_MODEL, metavar="MODEL")


class ClozeKind(ProbeSetKind):
    name = "cloze"
    summary = "MyriadLAMA-style templates x subject names"
    options = ClozeKindOptions
    item_fields = ("unit", "prompts")

    def build(self, context: BuildContext, facts: list[ProbeFact], options: ClozeKindOptions) -> list[dict]:
        single = None
        if options.single_token:
            single = single_token_test(context.models.get(options.single_token).tokenizer)
        texts = context.cloze_texts(options, sorted({f.relation for f in facts}))
        return build_cloze(facts, texts, aliases_per_subject=options.aliases_per_subject, single_token=single,
                           unit=options.cloze_unit,
                           true_statements=context.true_statements if options.pair_facts == "every-true" else None)


def build_cloze(facts: Sequence[ProbeFact], templates: Mapping[str, Sequence[str]], *,
                aliases_per_subject: int | None = None, single_token: Callable[[str], bool] | None = None,
                unit: str = "pair", true_statements: TrueStatements | None = None) -> list[dict]:
    """`templates`: relation -> cloze texts with [X] and [Y], each filled with every subject name
    (the label, then its aliases; the first `aliases_per_subject` when given). `single_token(name)`
    keeps an item only when one of its gold names is a single token (for masked LMs), and keeps only
    those names.

    `unit="pair"` (BELIEF: "we denote the subject-relation pairs in dataset as T"): one item per
    (subject, relation), in the order of its first fact. Its gold answers already name every true
    object (probes/building/facts.py), so nothing is lost; `facts`, `objects` and `object_labels` list the
    selected facts it stands for and, given `true_statements` (BuildContext.true_statements), every
    other object true for the pair (`pair_lists`), `fact` is "subject|relation", and `object`, `object_label`,
    `frequency` and `bucket` are those of its most frequent fact (the first one on a tie or
    without frequencies). `unit="fact"`: one item per fact, as factprobe built them before."""
    if unit not in CLOZE_UNITS:
        raise ValueError(f"cloze unit {unit!r}: use one of {', '.join(CLOZE_UNITS)}")
    items = []
    for group in cloze_units(facts, unit):
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
                      "gold": gold, "unit": "pair", **pair_lists(group, true_statements), "prompts": prompts})
    return items


def cloze_units(facts: Sequence[ProbeFact], unit: str) -> list[list[ProbeFact]]:
    """The facts each cloze item stands for: one each, or those of one subject-relation pair (in
    the order of each pair's first fact, and of the facts within it)."""
    if unit == "fact":
        return [[fact] for fact in facts]
    pairs: dict[tuple[str, str], list[ProbeFact]] = {}
    for fact in facts:
        pairs.setdefault((fact.subject, fact.relation), []).append(fact)
    return list(pairs.values())


def single_token_test(tokenizer) -> Callable[[str], bool]:
    """Whether a name is one token of the tokenizer (one [UNK] is not the name)."""
    unknown = tokenizer.unk_token_id

    def single(name: str) -> bool:
        ids = tokenizer(name, add_special_tokens=False)["input_ids"]
        return len(ids) == 1 and ids[0] != unknown

    return single

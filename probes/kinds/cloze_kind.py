"""The cloze kind (BELIEF, MyriadLAMA): per subject-relation pair (or per fact), the relation's
cloze templates filled with the subject's names; the gold answers name every true object."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..facts import ProbeFact
from ..templates import fill
from .base import BuildContext, ClozeTemplateOptions, ProbeSetKind
from ..declare import SERVED_MODEL, option

CLOZE_UNITS = ("pair", "fact")  # BELIEF's unit first


@dataclass(frozen=True)
class ClozeKindOptions(ClozeTemplateOptions):
    # MyriadLAMA fills every template with every expression of the subject (000:324, 2.47 per
    # subject on average, 000:368); factprobe asked at most 3 before issue 38.
    aliases_per_subject: int | None = option(None, "subject names (label first, then aliases) per template; "
                                                   "every name when not given (MyriadLAMA's).", minimum=1,
                                             http_limit=20)
    cloze_unit: str = option("pair", "one item per subject-relation pair (BELIEF's unit) or per (s, r, o) fact.",
                             choices=CLOZE_UNITS)
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
                           unit=options.cloze_unit)


def build_cloze(facts: Sequence[ProbeFact], templates: Mapping[str, Sequence[str]], *,
                aliases_per_subject: int | None = None, single_token: Callable[[str], bool] | None = None,
                unit: str = "pair") -> list[dict]:
    """`templates`: relation -> cloze texts with [X] and [Y], each filled with every subject name
    (the label, then its aliases; the first `aliases_per_subject` when given). `single_token(name)`
    keeps an item only when one of its gold names is a single token (for masked LMs), and keeps only
    those names.

    `unit="pair"` (BELIEF: "we denote the subject-relation pairs in dataset as T"): one item per
    (subject, relation), in the order of its first fact. Its gold answers already name every true
    object (probes/facts.py), so nothing is lost; `facts`, `objects` and `object_labels` list the
    selected facts it stands for, `fact` is "subject|relation", and `object`, `object_label`,
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
                      "gold": gold, "unit": "pair", "facts": [f.id for f in group],
                      "objects": [f.object for f in group], "object_labels": [f.object_label for f in group],
                      "prompts": prompts})
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

"""The belief-icl kind (BELIEF-ICL): one item per subject-relation pair (BELIEF's unit; per fact
with `cloze_unit=fact`), template and subject name, carrying the solved examples of every
in-context setting (zero-shot, x-random, x-relation, x-template) so the settings compare on the
same questions."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..building.facts import ProbeFact
from ..templates import fill
from .base import BuildContext, ClozeTemplateOptions, ProbeSetKind
from ..declare import option
from .cloze_kind import CLOZE_UNITS, TrueStatements, cloze_units, pair_facts_option, pair_lists
from .sampling import AllBut, positions_by_subject, seeded


@dataclass(frozen=True)
class BeliefIclKindOptions(ClozeTemplateOptions):
    shots: int = option(4, "demonstrations per setting.", minimum=0, http_limit=20)  # 000_d5e47173cc9830b1.txt:519
    # BELIEF-ICL's full-scale evaluation (000:153) asks MyriadLAMA's prompts, every template with
    # every expression of the subject (000:324), as the cloze kind does; factprobe asked at most 3
    # before issue 38.
    aliases_per_subject: int | None = option(None, "subject names (label first, then aliases) per template; "
                                                   "every name when not given (MyriadLAMA's).", minimum=1,
                                             http_limit=20)
    cloze_unit: str = option("pair", "one item per subject-relation pair (BELIEF's unit) or per (s, r, o) fact.",
                             choices=CLOZE_UNITS)
    pair_facts: str = pair_facts_option()


class BeliefIclKind(ProbeSetKind):
    name = "belief-icl"
    summary = "per (subject-relation pair, template, subject name) demonstrations for zero-shot / x-random / " \
              "x-relation / x-template"
    options = BeliefIclKindOptions
    item_fields = ("unit", "template", "template_id", "subject_name", "prompt", "demonstrations")

    def build(self, context: BuildContext, facts: list[ProbeFact], options: BeliefIclKindOptions) -> list[dict]:
        texts = context.cloze_texts(options, sorted({f.relation for f in facts}))
        return build_belief_icl(facts, texts, shots=options.shots, seed=context.selection.seed,
                                aliases_per_subject=options.aliases_per_subject, unit=options.cloze_unit,
                                true_statements=context.true_statements if options.pair_facts == "every-true" else None)


def build_belief_icl(facts: Sequence[ProbeFact], templates: Mapping[str, Sequence[str]], *, shots: int = 4,
                     seed: int = 0, aliases_per_subject: int | None = None, unit: str = "pair",
                     true_statements: TrueStatements | None = None) -> list[dict]:
    """Items per unit, template and subject name (the label, then every alias; the first
    `aliases_per_subject` names when given): BELIEF-ICL's prompts for a subject-relation pair are
    its templates filled with its subject expressions (000_d5e47173cc9830b1.txt:60 and :102, "the
    same N as in §2.2"), all of them as in MyriadLAMA (000:324) and the paper's full-scale runs (000:153).

    `unit="pair"` (the paper's): one unit per (subject, relation), standing for its facts as in
    the cloze kind (`facts`, `objects`, `object_labels`: its selected facts, and given
    `true_statements` every other object true for the pair, as the gold names them; `fact` is
    "subject|relation", the other fact fields those of its most frequent fact); its gold answers
    name every true object.
    `unit="fact"`: one unit per (s, r, o) fact, as factprobe built them before. An item's id is
    "belief-icl:UNIT:TEMPLATE", with ":K" added for the K-th alias (K >= 1).

    Demonstrations are units of other subjects (3.1: "the target fact is excluded"), each shown
    by its label and its unit's object, drawn once per (unit, template) so a template's subject
    names share them; the four settings use the same number of shots so they compare."""
    if unit not in CLOZE_UNITS:
        raise ValueError(f"belief-icl unit {unit!r}: use one of {', '.join(CLOZE_UNITS)}")
    groups = cloze_units(facts, unit)
    heads = [max(g, key=lambda f: -1 if f.frequency is None else f.frequency) for g in groups]  # first on ties
    keys = [h.id if unit == "fact" else f"{h.subject}|{h.relation}" for h in heads]
    by_relation: dict[str, list[int]] = defaultdict(list)
    for k, head in enumerate(heads):
        by_relation[head.relation].append(k)
    subject_at = positions_by_subject(heads)
    subject_at_in = {relation: positions_by_subject([heads[k] for k in ks]) for relation, ks in by_relation.items()}
    items = []
    for group, head, key in zip(groups, heads, keys):
        texts = templates.get(head.relation)
        if not texts:
            raise ValueError(f"no cloze templates for {head.relation} ({head.relation_label})")
        others_any = AllBut(range(len(heads)), subject_at[head.subject])
        others_relation = AllBut(by_relation[head.relation], subject_at_in[head.relation][head.subject])
        names = [head.subject_label, *[a for a in head.subject_aliases if a != head.subject_label]]
        fields = {**head.fields(), "unit": unit}
        if unit == "pair":
            fields.update({"fact": key, **pair_lists(group, true_statements)})
        for t_id, template in enumerate(texts):
            rng = seeded(seed, "belief", key, str(t_id))

            def demos(pool: Sequence[int], template_of) -> list[dict]:
                return [_demo(heads[k], keys[k], template_of(heads[k])) for k in rng.sample(pool, min(shots, len(pool)))]

            shown = {"zero-shot": [], "x-random": demos(others_any, lambda f: rng.choice(templates[f.relation])),
                     "x-relation": demos(others_relation, lambda f: rng.choice(texts)),
                     "x-template": demos(others_relation, lambda f: template)}
            for k, name in enumerate(names[:aliases_per_subject]):
                items.append({"id": f"belief-icl:{key}:{t_id}" + (f":{k}" if k else ""), "kind": "belief-icl",
                              "split": "test", **fields, "template": template, "template_id": t_id,
                              "subject_name": name, "prompt": fill(template, name), "demonstrations": shown})
    return items


def _demo(fact: ProbeFact, key: str, template: str) -> dict:
    # The labels let a method rebuild the cloze with a mask where the object is (BELIEF-ICL's Q lines).
    return {"fact": key, "relation": fact.relation, "template": template,
            "subject_label": fact.subject_label, "object_label": fact.object_label,
            "text": fill(template, fact.subject_label, fact.object_label)}

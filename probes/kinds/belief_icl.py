"""The belief-icl kind (BELIEF-ICL): one item per (fact, template), carrying the solved examples
of every in-context setting (zero-shot, x-random, x-relation, x-template) so the settings
compare on the same questions."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..facts import ProbeFact
from ..templates import fill
from .base import BuildContext, ClozeTemplateOptions, ProbeSetKind
from ..declare import option
from .sampling import AllBut, positions_by_subject, seeded


@dataclass(frozen=True)
class BeliefIclOptions(ClozeTemplateOptions):
    shots: int = option(5, "demonstrations per setting.", minimum=0, http_limit=20)


class BeliefIcl(ProbeSetKind):
    name = "belief-icl"
    summary = "per (fact, template) demonstrations for zero-shot / x-random / x-relation / x-template"
    options = BeliefIclOptions
    item_fields = ("template", "template_id", "prompt", "demonstrations")

    def build(self, context: BuildContext, facts: list[ProbeFact], options: BeliefIclOptions) -> list[dict]:
        texts = context.cloze_texts(options, sorted({f.relation for f in facts}))
        return build_belief_icl(facts, texts, shots=options.shots, seed=context.selection.seed)


def build_belief_icl(facts: Sequence[ProbeFact], templates: Mapping[str, Sequence[str]], *, shots: int = 4,
                     seed: int = 0) -> list[dict]:
    """One item per (fact, template). Demonstrations are (text with the object filled) of other
    facts; the four settings use the same number of shots so they compare."""
    by_relation: dict[str, list[ProbeFact]] = defaultdict(list)
    for fact in facts:
        by_relation[fact.relation].append(fact)
    subject_at = positions_by_subject(facts)
    subject_at_in = {relation: positions_by_subject(same) for relation, same in by_relation.items()}
    items = []
    for fact in facts:
        texts = templates.get(fact.relation)
        if not texts:
            raise ValueError(f"no cloze templates for {fact.relation} ({fact.relation_label})")
        others_any = AllBut(facts, subject_at[fact.subject])
        others_relation = AllBut(by_relation[fact.relation], subject_at_in[fact.relation][fact.subject])
        for t_id, template in enumerate(texts):
            rng = seeded(seed, "belief", fact.id, str(t_id))
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

"""The distractor measure (Ammar Khodja et al. 2025): a model knows a fact in a cloze when the
true object is more plausible than the distractors. Plausibility of an entity after a cloze is
the sum over its names of P(" " + name + EOS | cloze), so a name the model would continue
("Paris Hilton") does not count as "Paris". Min@n: the object beats each of the first n
distractors (a tie counts as not known); Avg@n: the share of the first n it beats. Both are
taken per cloze and averaged over the fact's clozes (the relation's object-final templates,
`clozes` of them, default 5).

Causal scorers only: the score needs EOS after the name, which the string-level loglikelihood
interface cannot express."""

from __future__ import annotations

import math
from typing import Sequence

from ..templates import load_templates, prompt_before_object
from .base import Method, base_record


class DistractorMeasure(Method):
    name = "distractor"
    kinds = ("distractor",)
    defaults = {"clozes": 5, "n": None}  # n: default every distractor the item has

    def __init__(self, context) -> None:
        super().__init__(context)
        self.templates = load_templates()

    def clozes(self, item: dict) -> list[str]:
        entry = self.templates.get(item["relation"])
        texts = [t.text for t in entry.cloze if t.text.rstrip(" .!?").endswith("[Y]")] if entry else []
        if not texts:
            raise ValueError(f"{item['id']}: no object-final cloze template for {item['relation']}")
        return [prompt_before_object(t, item["subject_label"]) for t in texts[: self.options["clozes"]]]

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        from ...index.appropt import path_logprob, prompt_ids
        from ...index.label_trie import LabelTrie

        records = []
        for item in items:
            # The object is scored by its own label: the gold list also holds other true objects' names.
            names = {item["object"]: [item["object_label"]]}
            for found in item["distractors"].values():
                for d in found:
                    names.setdefault(d["entity"], [d["label"]] if d["label"] else [])
            trie = LabelTrie.for_scorer(scorer, {e: n for e, n in names.items() if n})
            per_strategy = {s: {"min_at_n": [], "avg_at_n": []} for s in item["distractors"]}
            for cloze in self.clozes(item):
                ids = prompt_ids(scorer, cloze)
                plausibility: dict[str, float] = {}
                for path in trie.paths:
                    logprob = path_logprob(scorer, ids, (*path.tokens, trie.eos_id))
                    held = plausibility.get(path.entity)
                    plausibility[path.entity] = logprob if held is None else _logaddexp(held, logprob)
                gold = plausibility[item["object"]]
                for strategy, found in item["distractors"].items():
                    n = len(found) if self.options["n"] is None else min(self.options["n"], len(found))
                    beaten = [gold > plausibility.get(d["entity"], -math.inf) for d in found[:n]]
                    per_strategy[strategy]["min_at_n"].append(float(all(beaten)) if beaten else None)
                    per_strategy[strategy]["avg_at_n"].append(sum(beaten) / len(beaten) if beaten else None)
            summary = {s: {k: _mean(v) for k, v in scores.items()} for s, scores in per_strategy.items()}
            first = next(iter(summary.values()), {"min_at_n": None})
            records.append(base_record(item, by_strategy=summary, correct=first["min_at_n"]))
        return records


def _logaddexp(a: float, b: float) -> float:
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


def _mean(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None

"""IC-LKE (Wu et al. 2024): the model sees n "subject object" lines of the same relation, then the
test subject, and the answer is the choice with the highest probability as a continuation
(all its tokens). No relation words appear anywhere in the prompt.

Options: `examples` (n, default 50), `separator` between subject and object (default " "),
`line_separator` (default "\\n"), `fixed_examples` (EIC-LKE as we read it: one seeded example set
per relation shared by every test item, so its prompt prefix is computed once; default False:
a fresh seeded draw per item). Demonstrations come from the probe set's demo split of the same
relation; a relation with fewer demos uses what it has.
"""

from __future__ import annotations

import math
from typing import Sequence

from ..scoring.requests import LoglikelihoodRequest
from .base import Method, base_record


class ICLKE(Method):
    name = "ic-lke"
    kinds = ("icl-mc",)
    defaults = {"examples": 50, "separator": " ", "line_separator": "\n", "fixed_examples": False}

    def prompt(self, item: dict) -> str:
        pool = self.context.demonstrations.get(item["relation"], [])
        key = item["relation"] if self.options["fixed_examples"] else item["id"]
        shots = self.context.rng("ic-lke", key).sample(pool, min(self.options["examples"], len(pool)))
        sep, nl = self.options["separator"], self.options["line_separator"]
        lines = [f"{d['subject_label']}{sep}{d['object_label']}" for d in shots]
        return nl.join([*lines, item["subject_label"]])

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        sep = self.options["separator"]
        requests = [LoglikelihoodRequest(self.prompt(i), tuple(sep + c for c in i["choices"])) for i in items]
        records = []
        for item, scores in zip(items, scorer.loglikelihood(requests)):
            logprobs = [s.logprob for s in scores]
            best = max(range(len(logprobs)), key=lambda k: (logprobs[k], -k))  # ties: the earlier choice
            top = max(logprobs)
            norm = sum(math.exp(lp - top) for lp in logprobs)
            records.append(base_record(item, prediction=item["choices"][best], predicted_index=best,
                                       answer_index=item["answer_index"], correct=best == item["answer_index"],
                                       probability=math.exp(logprobs[best] - top) / norm,
                                       gold_logprob=logprobs[item["answer_index"]], choices=len(logprobs)))
        return records

"""Multiple choice with each item's own prompt: every choice is scored as `target_delimiter` + the
choice after the item's `prompt` (all its tokens), and the answer is the most probable one (ties:
the earlier choice). This is lm-evaluation-harness's multiple_choice `acc`, on icl-mc items that
carry their prompt: tasks imported with `probeset import --format lm-eval`
(probes/formats/import_lm_eval.py). Records and measures are IC-LKE's (choice_record, Accuracy@K).
"""

from __future__ import annotations

from typing import Sequence

from ..scoring.requests import LoglikelihoodRequest
from .base import Method
from .ic_lke import ACCURACY_AT_K, choice_record, icl_measures


class PromptedChoice(Method):
    name = "mc"
    summary = ("each item's own prompt (imported lm-eval tasks), the choice most probable after its "
               "target_delimiter; harness's multiple_choice acc")
    kinds = ("icl-mc",)
    reads = ("prompt", "choices", "answer_index")
    aggregate_extra = staticmethod(icl_measures)
    report_sections = (ACCURACY_AT_K,)

    @staticmethod
    def continuations(item: dict) -> tuple[str, ...]:
        """Each choice as scored after the prompt: the item's target_delimiter (harness's default
        " " when it has none) and the choice."""
        delimiter = item.get("target_delimiter", " ")
        return tuple(delimiter + choice for choice in item["choices"])

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        requests = [LoglikelihoodRequest(item["prompt"], self.continuations(item)) for item in items]
        return [choice_record(item, [s.logprob for s in scores])
                for item, scores in zip(items, scorer.loglikelihood(requests))]

"""BELIEF on masked LMs (Zhao et al.): every prompt of a multi-prompt cloze item is filled at the
mask; the prediction is the top-1 token, its probability the confidence, and it is correct when
it equals one of the gold names (casefolded). Records keep every prompt's answer, so the runner
can report Acc@1 over one-prompt-per-fact draws, consistency, overconfidence and coverage."""

from __future__ import annotations

from typing import Sequence

from ..scoring.requests import FillMaskRequest
from .base import Method, answer_key, base_record


class Belief(Method):
    name = "belief"
    kinds = ("cloze",)
    defaults = {"top_k": 1}

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        requests, owners = [], []
        for k, item in enumerate(items):
            for prompt in item["prompts"]:
                text = prompt["text"]
                if text.count("[Y]") != 1:
                    raise ValueError(f"{item['id']}: prompt {text!r} needs exactly one [Y] for the mask")
                requests.append(FillMaskRequest(text.replace("[Y]", FillMaskRequest.PLACEHOLDER),
                                                top_k=max(1, self.options["top_k"])))
                owners.append(k)
        answers = scorer.fill_mask(requests) if requests else []
        per_item: list[list] = [[] for _ in items]
        for k, candidates in zip(owners, answers):
            per_item[k].append(candidates[0])
        records = []
        for item, tops in zip(items, per_item):
            gold = {answer_key(g) for g in item["gold"]}
            predictions = [top.token for top in tops]
            correct = [answer_key(p) in gold for p in predictions]
            records.append(base_record(
                item, predictions=predictions, prompt_correct=correct, confidence=[top.prob for top in tops],
                template_ids=[p["template_id"] for p in item["prompts"]],
                correct=sum(correct) / len(correct) if correct else 0.0))
        return records

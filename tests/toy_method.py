"""A probing method added in one file: a masked LM's top-1 answer to one cloze prompt per item.

Importing this module registers the method; `FACTPROBE_PLUGINS=toy_method` (with this folder on
PYTHONPATH) makes `factprobe eval --method toy` see it in another process
(tests/test_registry.py)."""

from __future__ import annotations

from typing import Sequence

from factprobe.probes.methods import Method, register
from factprobe.probes.methods.base import answer_key, base_record
from factprobe.probes.scoring.requests import FillMaskRequest


class ToyMethod(Method):
    name = "toy"
    summary = "toy: a masked LM's top-1 answer to the item's one prompt"
    kinds = ("cloze",)
    reads = ("prompt", "gold")
    defaults = {"top_k": 1}

    @staticmethod
    def aggregate_extra(records: Sequence[dict], options: dict) -> dict:
        confidence = [r["confidence"] for r in records]
        return {"toy": {"mean_confidence": sum(confidence) / len(confidence), "top_k": options["top_k"]}}

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        answers = scorer.fill_mask([FillMaskRequest(i["prompt"], top_k=self.options["top_k"]) for i in items])
        records = []
        for item, candidates in zip(items, answers):
            top = candidates[0]
            records.append(base_record(item, prediction=top.token, confidence=top.prob,
                                       correct=answer_key(top.token) in {answer_key(g) for g in item["gold"]}))
        return records


register(ToyMethod)

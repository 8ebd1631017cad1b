"""A probing method added in one file: a masked LM's top-1 answer to one cloze prompt per item,
with its own measure, its own figures in `factprobe run`'s closing lines and its own table in
the report.

Importing this module registers the method; `FACTPROBE_PLUGINS=toy_method` (with this folder on
PYTHONPATH) makes `factprobe eval --method toy` see it in another process
(tests/test_registry.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from factprobe.probes.declare import option
from factprobe.probes.document import Heading, Section, fmt, table
from factprobe.probes.methods import Method, register
from factprobe.probes.methods.base import answer_key, base_record, headline_number
from factprobe.probes.scoring.requests import FillMaskRequest


def confidence_table(runs) -> list:
    """The report's table of the toy measure, one row per toy run."""
    rows = [(r.rid, fmt(r.aggregate["toy"]["mean_confidence"]), str(r.aggregate["toy"]["top_k"]))
            for r in runs if "toy" in r.aggregate]
    return [Heading("Toy: mean confidence", 3), table(("Run", "Mean confidence", "top_k"), rows)] if rows else []


@dataclass(frozen=True)
class ToyOptions:
    top_k: int = option(1, "candidates asked for (the answer is the first).", minimum=1)


class ToyMethod(Method):
    name = "toy"
    summary = "toy: a masked LM's top-1 answer to the item's one prompt"
    kinds = ("cloze",)
    reads = ("prompt", "gold")
    Options = ToyOptions
    report_sections = (Section(50, confidence_table),)

    @staticmethod
    def aggregate_extra(records: Sequence[dict], options: dict) -> dict:
        confidence = [r["confidence"] for r in records]
        return {"toy": {"mean_confidence": sum(confidence) / len(confidence), "top_k": options["top_k"]}}

    @classmethod
    def headline(cls, aggregate: dict, probes: Path) -> str:
        toy = aggregate.get("toy") or {}
        return (f"{super().headline(aggregate, probes)} | mean confidence "
                f"{headline_number(toy.get('mean_confidence'))} (top_k {toy.get('top_k')})")

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        answers = scorer.fill_mask([FillMaskRequest(i["prompt"], top_k=self.options["top_k"]) for i in items])
        records = []
        for item, candidates in zip(items, answers):
            top = candidates[0]
            records.append(base_record(item, prediction=top.token, confidence=top.prob,
                                       correct=answer_key(top.token) in {answer_key(g) for g in item["gold"]}))
        return records


register(ToyMethod)

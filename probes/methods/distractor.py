"""The distractor measure (Ammar Khodja et al. 2025): a model knows a fact in a cloze when the
true object is more plausible than the distractors. Plausibility of an entity after a cloze is
the sum over ALL its names (label and aliases) of P(" " + name + EOS | cloze), so it needs a
scorer that answers label paths (local causal models). Min@n and Avg@n are taken per cloze (the
item's own `clozes`, else its relation's templates: probes/methods/clozes.py) and averaged over
the fact's clozes; the details: docs/design/methods.md."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from .. import measures
from ..declare import option
from ..document import Block, Heading, ReportRun, Section, breakdown, fmt_count, table, with_interval
from ..scoring.requests import LabelPathRequest, LabelPathScore
from ..templates import load_templates
from .base import Method, base_record, headline_interval, headline_number
from .clozes import Clozes, cloze_definition, item_clozes
from ..measures.accuracy import interval


def distractor_measures(records: Sequence[dict], options: dict | None = None) -> dict:
    """Min@n and Avg@n per strategy, each with its own breakdowns by relation and bucket: a
    record's `correct` speaks for one strategy at most, so the top-level breakdowns cannot."""
    strategies = sorted({s for r in records for s in r["by_strategy"]})
    out = {}
    for strategy in strategies:
        # One flat row per (item, strategy): the strategy's scores over the item's fields.
        rows = [{**r, **r["by_strategy"][strategy]} for r in records if strategy in r["by_strategy"]]
        out[strategy] = {**_min_avg(rows), "skipped": sum(len(r.get("skipped") or ()) for r in rows),
                         "by_relation": _min_avg_by(rows, "relation"), "by_bucket": _min_avg_by(rows, "bucket")}
    return {"by_strategy": out, "definitions": {"cloze_source": cloze_definition(records)}}


def _min_avg(rows: Sequence[dict]) -> dict:
    """A record's Min@n / Avg@n is already the mean over its clozes; the probe set's is the mean
    over facts (measures.mean_over_facts: a distractor set has one item per fact)."""
    scored = [r for r in rows if r.get("min_at_n") is not None]
    facts = [r.get("fact") or r["id"] for r in scored]

    def over_facts(key: str) -> float | None:
        return measures.mean_over_facts([r[key] for r in scored], facts) if scored else None

    def per_fact(key: str) -> list[float]:
        return measures.fact_means([r[key] for r in scored], facts) if scored else []

    return {"min_at_n": over_facts("min_at_n"), "avg_at_n": over_facts("avg_at_n"), "items": len(scored),
            "min_at_n_interval": interval(per_fact("min_at_n")), "avg_at_n_interval": interval(per_fact("avg_at_n"))}


def _min_avg_by(rows: Sequence[dict], key: str) -> dict:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault("none" if row.get(key) is None else str(row[key]), []).append(row)
    return {name: _min_avg(group) for name, group in groups.items()}


def _strategy_blocks(runs: Sequence[ReportRun]) -> list[Block]:
    rows = [(r.rid, s, with_interval(v.get("min_at_n"), v.get("min_at_n_interval")),
             with_interval(v.get("avg_at_n"), v.get("avg_at_n_interval")), fmt_count(v.get("items")))
            for r in runs for s, v in sorted(breakdown(r, "by_strategy").items()) if isinstance(v, dict)]
    if not rows:
        return []
    return [Heading("Distractors: Min@n and Avg@n per strategy", 3),
            table(("Run", "Strategy", "Min@n [95%]", "Avg@n [95%]", "Items"), rows)]


MIN_AVG_BY_STRATEGY = Section(40, _strategy_blocks, breakdowns=("by_strategy",))


@dataclass(frozen=True)
class DistractorOptions:
    clozes: int = option(5, "the item's first N object-final clozes (its `clozes`, else its relation's templates), "
                            "a fact's measures averaged over them.", minimum=1, http_limit=100)
    n: int | None = option(None, "the first N named distractors of each item (default every one it has).", minimum=1)


class DistractorMeasure(Method):
    name = "distractor"
    summary = "Min@n / Avg@n: the object's plausibility (all its names + EOS) against each distractor's"
    kinds = ("distractor",)
    reads = ("distractors", "object", "object_label", "subject_label")
    aggregate_extra = staticmethod(distractor_measures)
    report_sections = (MIN_AVG_BY_STRATEGY,)
    Options = DistractorOptions

    @classmethod
    def headline(cls, aggregate: dict, probes: Path) -> str:
        """Min@n and Avg@n per strategy."""
        strategies = aggregate.get("by_strategy") or {}
        if not strategies:  # no records: what every method has
            return super().headline(aggregate, probes)
        def entry(name: str, v: dict) -> str:
            return (f"{name} Min@n {headline_number(v.get('min_at_n'))}{headline_interval(v.get('min_at_n_interval'))} "
                    f"Avg@n {headline_number(v.get('avg_at_n'))}{headline_interval(v.get('avg_at_n_interval'))}")

        # two spaces after ";": the line as `factprobe run` has always printed it
        return ";  ".join(entry(name, v) for name, v in strategies.items())

    def __init__(self, context) -> None:
        super().__init__(context)
        self.templates = load_templates()

    def clozes(self, item: dict) -> Clozes:
        """The item's own clozes, else its relation's templates (probes/methods/clozes.py)."""
        return item_clozes(item, self.templates, self.options["clozes"])

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        asked = []  # per item, per cloze: (cloze, request, the entity of each name asked)
        sources = []
        for item in items:
            names, clozes = entity_names(item), self.clozes(item)
            sources.append(clozes.source)
            asked.append([(cloze, *label_request(cloze, names)) for cloze in clozes.prompts(item["subject_label"])])
        answers = iter(scorer.label_paths([request for clozes in asked for _, request, _ in clozes]))
        return [self._record(item, [(cloze, owners, next(answers)) for cloze, _, owners in clozes], source)
                for item, clozes, source in zip(items, asked, sources)]

    progress_within_piece = False

    def run_each(self, scorer, items: Sequence[dict]) -> Iterator[list[dict]]:
        """Item by item: a causal backend answers label paths one request at a time (each a pass
        over all its names), so a batch shares nothing, and an item can take half a minute at the
        defaults; per item the bar moves as items finish, not once per batch of 16."""
        for item in items:
            yield self.run(scorer, [item])

    def _record(self, item: dict, scored: list[tuple[str, list[str], list[LabelPathScore]]], source: str) -> dict:
        """`scored`: per cloze, the cloze, the entity of each name asked and the scores."""
        named = {entity for _, owners, _ in scored for entity in owners}
        per_cloze, scores = [], {s: {"min_at_n": [], "avg_at_n": []} for s in item["distractors"]}
        compared: dict[str, int] = {}
        for cloze, owners, answer in scored:
            plausibility = log_plausibility(owners, answer)
            per_cloze.append({"cloze": cloze, "log_plausibility": plausibility})
            gold = plausibility[item["object"]]
            for strategy, found in item["distractors"].items():
                first = [plausibility[d["entity"]] for d in self._first_named(found, plausibility)]
                compared[strategy] = len(first)
                # No named distractor: nothing to beat, no verdict (metrics refuse n = 0).
                scores[strategy]["min_at_n"].append(float(measures.min_at_n(gold, first, len(first))) if first else None)
                scores[strategy]["avg_at_n"].append(measures.avg_at_n(gold, first, len(first)) if first else None)
        by_strategy = {strategy: {"min_at_n": _mean(scores[strategy]["min_at_n"]),
                                  "avg_at_n": _mean(scores[strategy]["avg_at_n"]),
                                  "compared": compared.get(strategy, 0),
                                  "skipped": [d["entity"] for d in found if d["entity"] not in named],
                                  # in the strategy's order: `factprobe assess` recomputes Min@n for any n
                                  "distractors": [d["entity"] for d in found]}
                       for strategy, found in item["distractors"].items()}
        only = next(iter(by_strategy.values())) if len(by_strategy) == 1 else None
        return base_record(item, object=item["object"], by_strategy=by_strategy,
                           correct=only["min_at_n"] if only else None, per_cloze=per_cloze, cloze_source=source)

    def _first_named(self, found: list[dict], plausibility: dict[str, float]) -> list[dict]:
        """The first n distractors that have a name (n: the option, default all of them)."""
        named = [d for d in found if d["entity"] in plausibility]
        return named if self.options["n"] is None else named[: self.options["n"]]


def entity_names(item: dict) -> dict[str, list[str]]:
    """Every name to score per entity: the object's and each distractor's, label first."""
    names = {item["object"]: all_names(item["object_label"], item.get("object_names"))}
    for found in item["distractors"].values():
        for d in found:
            names.setdefault(d["entity"], all_names(d.get("label"), d.get("names")))
    return names


def all_names(label: str | None, more: list[str] | None) -> list[str]:
    """The label, then the other names, each once; blank names dropped."""
    return list(dict.fromkeys(n for n in [label, *(more or [])] if n and n.strip()))


def label_request(prompt: str, names: dict[str, list[str]], eos: bool = True) -> tuple[LabelPathRequest, list[str]]:
    """One label-path request for every name of every entity after `prompt` (each (entity, name)
    once, stripped, sorted by entity then name), and the entity each name belongs to. An entity
    without a name is not asked about. `eos`: each name followed by the end-of-sequence token (the
    plausibility's, seed 004 line 85), or not (the probability baseline's, line 204)."""
    pairs = sorted({(entity, name.strip()) for entity, entity_names in names.items()
                    for name in entity_names if name and name.strip()})
    return LabelPathRequest(prompt, tuple(name for _, name in pairs), eos), [entity for entity, _ in pairs]


def log_plausibility(owners: Sequence[str], scores: Sequence[LabelPathScore]) -> dict[str, float]:
    """Per entity, the log of the sum over its names of P(" " + name [+ EOS] | prompt), kept in log
    space so that very unlikely names do not underflow to a tie at 0. Two names of one entity that
    tokenize alike are one string to the model and count once (`same_as`); the same name of two
    entities counts for each."""
    logprobs: dict[str, list[float]] = {}
    seen: set[tuple[str, int]] = set()
    for k, (entity, score) in enumerate(zip(owners, scores)):
        path = k if score.same_as is None else score.same_as
        if (entity, path) not in seen:
            seen.add((entity, path))
            logprobs.setdefault(entity, []).append(score.logprob)
    out = {}
    for entity, values in logprobs.items():
        top = max(values)
        out[entity] = top + math.log(math.fsum(math.exp(v - top) for v in values))
    return out


def _mean(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None

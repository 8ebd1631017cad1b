"""IC-LKE (Wu et al. 2024): the model sees n "subject object" lines of the same relation, then the
test subject, and the answer is the choice with the highest probability as a continuation
(all its tokens). No relation words appear anywhere in the prompt. A relation whose
demonstration pool is smaller than n is refused, as EIC-LKE does, unless `allow_fewer_examples`
(then its items say so, and the aggregate, headline and report count them). Options (separators
and presets, fixed examples, the paper's design-space study): docs/design/methods.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .. import measures
from ..declare import option
from ..document import (Block, Heading, ReportRun, Section, Text, breakdown, bucket_key, fmt, fmt_count, fmt_interval,
                        table)
from ..scoring.requests import LoglikelihoodRequest
from .base import Method, base_record
from ..measures.accuracy import json_number, proportion_interval

_SYLLABLES = ("ka", "lo", "mi", "ren", "tu", "vas", "no", "bri", "sel", "dor", "qua", "zen")


def fictitious_name(rng, words: int = 1) -> str:
    """A pronounceable name no graph holds: what "unknown" examples are made of."""
    return " ".join("".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize() for _ in range(words))


def icl_measures(records: Sequence[dict], options: dict | None = None) -> dict:
    """IC-LKE's and EIC-LKE's Accuracy@K: accuracy over the items whose normalized probability of
    the predicted choice exceeds K (0.5, 0.7, 0.9), with its Wilson interval."""
    probability = [r["probability"] for r in records]
    correct = [bool(r["correct"]) for r in records]
    at_k = {}
    for k in (0.5, 0.7, 0.9):
        found = measures.accuracy_at_k(probability, correct, k)
        right = sum(c for p, c in zip(probability, correct) if p > k)  # as accuracy_at_k selects
        at_k[str(k)] = {"accuracy": json_number(found.accuracy), "items": found.count,
                        "interval": proportion_interval(right, found.count) if found.count else None}
    return {"accuracy_at_k": at_k, **examples_short(records)}


def examples_short(records: Sequence[dict]) -> dict:
    """`examples_short` over the records whose prompt had fewer examples than asked (those
    carrying `examples_requested`, written only with `allow_fewer_examples`): how many, the
    fewest, and per relation; nothing when none did, so other aggregates stay as they were."""
    short = [r for r in records if "examples_requested" in r]
    if not short:
        return {}
    by_relation: dict[str, dict] = {}
    for r in short:
        entry = by_relation.setdefault(str(r.get("relation")), {"items": 0, "fewest": r["examples_seen"]})
        entry["items"] += 1
        entry["fewest"] = min(entry["fewest"], r["examples_seen"])
    return {"examples_short": {"items": len(short), "requested": max(r["examples_requested"] for r in short),
                               "fewest": min(r["examples_seen"] for r in short), "by_relation": by_relation}}


def _examples_short_blocks(runs: Sequence[ReportRun]) -> list[Block]:
    rows = [(r.rid, relation, fmt_count(v.get("items")), fmt_count(v.get("fewest")),
             fmt_count(r.aggregate["examples_short"].get("requested")))
            for r in runs if isinstance(r.aggregate.get("examples_short"), dict)
            for relation, v in sorted(r.aggregate["examples_short"].get("by_relation", {}).items())]
    if not rows:
        return []
    return [Heading("IC-LKE items with fewer examples than asked", 3),
            Text("Their relation's demonstration pool was smaller than `examples` (allowed with "
                 "allow_fewer_examples): these items were asked with all of it."),
            table(("Run", "Relation", "Items", "Fewest examples", "Asked"), rows)]


def _accuracy_at_k_blocks(runs: Sequence[ReportRun]) -> list[Block]:
    rows = [(r.rid, k, fmt((v or {}).get("accuracy")), fmt_interval((v or {}).get("interval")),
             fmt_count((v or {}).get("items")))
            for r in runs for k, v in sorted(breakdown(r, "accuracy_at_k").items(), key=lambda kv: bucket_key(kv[0]))]
    if not rows:
        return []
    return [Heading("IC-LKE Accuracy@K", 3),
            Text("Accuracy over the items whose normalized probability of the predicted choice exceeds K."),
            table(("Run", "K", "Accuracy", "95% interval", "Items"), rows)]


ACCURACY_AT_K = Section(30, _accuracy_at_k_blocks)  # IC-LKE's and EIC-LKE's
EXAMPLES_SHORT = Section(31, _examples_short_blocks)


class ExamplesShortfall(ValueError):
    """Some relations have fewer demonstrations than the examples a prompt asks for: refused, as
    EIC-LKE refuses, rather than asking those items with fewer examples unsaid."""

    def __init__(self, examples: int, pools: dict[str, int]) -> None:
        self.examples, self.pools = examples, pools
        listed = "; ".join(f"{relation} has {count}" for relation, count in sorted(pools.items()))
        super().__init__(f"ic-lke: {len(pools)} relation(s) have fewer demonstration items than examples={examples} "
                         f"({listed}): lower `examples`, build the probe set with a larger --demo-fraction, or pass "
                         "allow_fewer_examples=true to ask their items with all of them (recorded per item and in "
                         "the aggregate)")


PRESETS = {"factprobe": {}, "paper": {"separator": " ", "line_separator": " "}}  # what a preset changes


@dataclass(frozen=True)
class ICLKEOptions:
    preset: str = option("factprobe", "separators as factprobe writes them (a newline between pairs) or as the "
                                      "paper (spaces only); an option given explicitly wins.", choices=tuple(PRESETS))
    examples: int = option(50, "demonstration pairs before the test subject.", minimum=1, http_limit=1000)
    separator: str = option(" ", "between a subject and its object.")
    line_separator: str = option("\n", "between pairs.")
    fixed_examples: bool = option(False, "one seeded example set per relation instead of a draw per item.")
    order_seed: int | None = option(None, "reorder the drawn examples with this seed (design-space study).")
    replace: int = option(0, "examples replaced by replace_with ones (design-space study).", minimum=0)
    replace_with: str = option("unknown", "replacements: fictitious pairs, or the subject with another "
                                          "example's object.", choices=("unknown", "incorrect"))
    replace_positions: str = option("random", "where the replaced examples go.", choices=("random", "contiguous"))
    record_positions: bool = option(False, "record each example line's object log-probability.")
    allow_fewer_examples: bool = option(False, "ask a relation with fewer demonstrations than examples with all "
                                               "of them (recorded) instead of refusing it.")


class ICLKE(Method):
    name = "ic-lke"
    summary = "'subject object' demonstrations of the relation, then the subject; argmax over the choices"
    kinds = ("icl-mc",)
    reads = ("subject_label", "choices", "answer_index")
    aggregate_extra = staticmethod(icl_measures)
    report_sections = (ACCURACY_AT_K, EXAMPLES_SHORT)
    Options = ICLKEOptions
    presets = PRESETS

    def __init__(self, context) -> None:
        super().__init__(context)
        # the preset's separators over the defaults; options given explicitly over the preset
        self.options = {**self.option_defaults, **self.presets[self.options["preset"]], **self.given}
        # every relation with test items, before any is asked (the runner passes them all)
        self._check_pools(context.tests)

    @classmethod
    def headline(cls, aggregate: dict, probes) -> str:
        """Accuracy as every method's, and how many items had fewer examples than asked."""
        text = super().headline(aggregate, probes)
        short = aggregate.get("examples_short")
        if isinstance(short, dict):
            text += (f" | {short['items']} item(s) with fewer than {short['requested']} examples "
                     f"(the fewest {short['fewest']})")
        return text

    def _check_pools(self, relations) -> None:
        examples = self.options["examples"]
        pools = {str(r): len(self.context.demonstrations.get(r, [])) for r in relations}
        short = {r: n for r, n in pools.items() if n < examples}
        if short and not self.options["allow_fewer_examples"]:
            raise ExamplesShortfall(examples, short)

    def examples(self, item: dict) -> list[dict]:
        """The (subject_label, object_label, kind) example lines of an item's prompt, in order."""
        pool = self.context.demonstrations.get(item["relation"], [])
        if len(pool) < self.options["examples"]:
            self._check_pools([item["relation"]])  # an item outside MethodContext.tests
        key = item["relation"] if self.options["fixed_examples"] else item["id"]
        drawn = self.context.rng("ic-lke", key).sample(pool, min(self.options["examples"], len(pool)))
        lines = [{"subject": d["subject_label"], "object": d["object_label"], "kind": "true"} for d in drawn]
        if self.options["order_seed"] is not None:
            self.context.rng("order", str(self.options["order_seed"]), key).shuffle(lines)
        k = min(self.options["replace"], len(lines))
        if k:
            rng = self.context.rng("replace", key)
            if self.options["replace_positions"] == "contiguous":
                start = rng.randrange(len(lines) - k + 1)
                positions = list(range(start, start + k))
            else:
                positions = sorted(rng.sample(range(len(lines)), k))
            for p in positions:
                if self.options["replace_with"] == "unknown":
                    lines[p] = {"subject": fictitious_name(rng), "object": fictitious_name(rng), "kind": "unknown"}
                else:
                    others = [x["object"] for x in lines if x["object"] != lines[p]["object"]]
                    if others:
                        lines[p] = {**lines[p], "object": rng.choice(others), "kind": "incorrect"}
        return lines

    def prompt(self, item: dict, lines: list[dict] | None = None) -> str:
        lines = self.examples(item) if lines is None else lines
        sep, nl = self.options["separator"], self.options["line_separator"]
        return nl.join([*(f"{x['subject']}{sep}{x['object']}" for x in lines), item["subject_label"]])

    def continuations(self, item: dict) -> tuple[str, ...]:
        """What each choice is scored as after the prompt: `separator` and the choice."""
        return tuple(self.options["separator"] + c for c in item["choices"])

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        sep, nl = self.options["separator"], self.options["line_separator"]
        examples = [self.examples(i) for i in items]
        requests = [LoglikelihoodRequest(self.prompt(i, e), self.continuations(i)) for i, e in zip(items, examples)]
        position_requests = []
        if self.options["record_positions"]:
            for lines in examples:
                for p, line in enumerate(lines):
                    context = nl.join([*(f"{x['subject']}{sep}{x['object']}" for x in lines[:p]), line["subject"]])
                    position_requests.append(LoglikelihoodRequest(context, (sep + line["object"],)))
        answers = scorer.loglikelihood(requests + position_requests)
        positions = iter(answers[len(requests):])
        records = []
        for item, lines, scores in zip(items, examples, answers[:len(requests)]):
            extra = {}
            if self.options["replace"]:
                extra["example_kinds"] = [x["kind"] for x in lines]
            if self.options["record_positions"]:
                # log-probabilities: a fictitious object's probability underflows any rounding
                extra["position_logprobs"] = [round(next(positions)[0].logprob, 6) for _ in lines]
            if len(lines) < self.options["examples"]:  # only short items: full ones stay as before
                extra.update(examples_seen=len(lines), examples_requested=self.options["examples"])
            records.append(choice_record(item, [s.logprob for s in scores], **extra))
        return records


def choice_record(item: dict, logprobs: list[float], **extra) -> dict:
    """The record of a multiple-choice item scored by continuation log-probabilities (IC-LKE and
    EIC-LKE write the same fields, so one aggregate reads both): the argmax choice, and its
    probability renormalized over the choices (what Accuracy@K thresholds), and every choice's
    log-probability, rounded for reading (the item view shows what the pick was chosen over)."""
    best = max(range(len(logprobs)), key=lambda k: (logprobs[k], -k))  # ties: the earlier choice
    return base_record(item, prediction=item["choices"][best], predicted_index=best,
                       answer_index=item["answer_index"], correct=best == item["answer_index"],
                       probability=measures.normalize_choice_probs(logprobs)[best],
                       gold_logprob=logprobs[item["answer_index"]], choices=len(logprobs),
                       choice_logprobs=[round(x, 6) for x in logprobs], **extra)

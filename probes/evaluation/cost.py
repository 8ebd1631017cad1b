"""What an evaluation will cost, said before it runs (`eval --dry-run`, a service job's
`dry_run`): the items per relation, example prompts exactly as the model is asked them, the
prompt and continuation tokens with the model's tokenizer, and the time from a short calibration.

The method builds its own requests, so the one way to see them without copying each method's
prompt code is to let it ask: a pass over every item with a scorer that writes the requests
down and answers a fixed zero (no model runs), then a timed pass of a few items on the model.
A method that reads what the model generated may not make sense of the zeros; its tokens are
then left unknown (None), never guessed.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from ..scoring.requests import ContinuationScore, Generation, LabelPathScore
from .runner import BATCH, EvalPlan

CALIBRATE = 4  # items scored on the model to time one


@dataclass
class EvalCost:
    """An evaluation's cost before it runs. `tokens`: every prompt and continuation (names,
    choices) token the method asks the model about, by its tokenizer (None where the scorer has
    none or the method's requests could not all be made); `seconds_per_item` from the
    `calibrated` items scored on the model, `estimate_seconds` for the items left to do."""
    method: str
    model: str
    items: int  # selected test items
    todo: int  # of them, those the folder does not hold yet
    by_relation: dict[str, int]
    examples: list[str]
    tokens: int | None
    requests: int | None
    calibrated: int
    seconds_per_item: float | None
    estimate_seconds: float | None
    batch: int
    notes: list[str] = field(default_factory=list)
    warmup_seconds: float | None = None  # what the first calibrated items took beyond the rate


class Recorder:
    """A scorer that writes down what it is asked: `dry` answers a fixed zero with no model run;
    otherwise it asks `scorer` and passes its answer on."""

    def __init__(self, scorer, dry: bool) -> None:
        self.scorer, self.dry, self.asked = scorer, dry, []
        self.identity = getattr(scorer, "identity", "unknown")

    def __getattr__(self, name):  # tokenizer, work, label_batch: the model's own
        return getattr(self.scorer, name)

    def loglikelihood(self, requests):
        self.asked += [(r.context, list(r.continuations)) for r in requests]
        if not self.dry:
            return self.scorer.loglikelihood(requests)
        return [[ContinuationScore(0.0, False, 1) for _ in r.continuations] for r in requests]

    def label_paths(self, requests):
        self.asked += [(r.prompt, [" " + n for n in r.names]) for r in requests]
        if not self.dry:
            return self.scorer.label_paths(requests)
        return [[LabelPathScore(0.0, 1) for _ in r.names] for r in requests]

    def generate(self, requests):
        self.asked += [(r.prompt, []) for r in requests]
        if not self.dry:
            return self.scorer.generate(requests)
        return [Generation(("",) * r.n, ("length",) * r.n) for r in requests]

    def fill_mask(self, requests):
        self.asked += [(r.text, []) for r in requests]
        if not self.dry:
            return self.scorer.fill_mask(requests)
        return [[] for _ in requests]


def count_tokens(tokenizer, asked: Sequence[tuple[str, list[str]]]) -> int:
    """Tokens of every prompt and every continuation, each tokenized alone without special
    tokens (what a reader reckons a request costs; a backend that shares prefixes feeds fewer)."""
    def length(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    return sum(length(prompt) + sum(length(c) for c in continuations) for prompt, continuations in asked)


def example_lines(asked: Sequence[tuple[str, list[str]]], count: int = 2) -> list[str]:
    """The first `count` requests as the model is asked them: the prompt, then what is scored after it."""
    lines = []
    for prompt, continuations in asked[:count]:
        after = f" -> scored after it: {continuations[:4]!r}{' ...' if len(continuations) > 4 else ''}" \
            if continuations else ""
        lines.append(f"{prompt!r}{after}")
    return lines


def estimate_cost(scorer, plan: EvalPlan, *, batch: int, calibrate: int = CALIBRATE) -> EvalCost:
    """The cost of running `plan` with `scorer`, found by asking the method for every request
    (no model run) and timing `calibrate` items on the model. Nothing is written."""
    runner = plan.runner
    todo = runner.order([i for i in plan.test if i["id"] not in plan.done])
    notes: list[str] = []
    dry = Recorder(scorer, dry=True)
    try:
        for start in range(0, len(plan.test), max(1, batch)):
            runner.run(dry, plan.test[start:start + batch])
        complete = True
    except Exception as error:  # a method that reads generated text may refuse the zeros: say so, guess nothing
        complete = False
        notes.append(f"the requests of every item could not be listed without the model ({error}); "
                     "tokens unknown")
    tokenizer = getattr(scorer, "tokenizer", None)
    tokens = count_tokens(tokenizer, dry.asked) if complete and tokenizer is not None else None
    if tokenizer is None:
        notes.append(f"{dry.identity} has no tokenizer here: tokens unknown")
    timed = Recorder(scorer, dry=False)
    sample = todo[:calibrate]
    # Timed in two halves: the first pays the model's warm-up (allocations, kernels chosen on the
    # first call), which the items after it do not pay again.
    halves = [part for part in (sample[:(len(sample) + 1) // 2], sample[(len(sample) + 1) // 2:]) if part]
    spans = []
    for part in halves:
        started = time.perf_counter()
        runner.run(timed, part)
        spans.append((len(part), time.perf_counter() - started))
    per_item, warmup = calibrated_rate(spans)
    examples = example_lines(dry.asked or timed.asked)
    relations = Counter("none" if i.get("relation") is None else str(i["relation"]) for i in plan.test)
    return EvalCost(plan.method, dry.identity, len(plan.test), len(todo), dict(relations), examples, tokens,
                    len(dry.asked) if complete else None, len(sample), per_item,
                    per_item * len(todo) if per_item is not None else None, batch, notes, warmup)


def calibrated_rate(spans: Sequence[tuple[int, float]]) -> tuple[float | None, float | None]:
    """Seconds an item, and the warm-up, from (items, seconds) of the calibration's halves: the
    rate is the second half's, the warm-up what the first took beyond it (never below 0). With
    one half only (one item), its rate, warm-up included, and no warm-up known."""
    if not spans:
        return None, None
    if len(spans) == 1:
        return spans[0][1] / spans[0][0], None
    (first, spent), (items, seconds) = spans[0], spans[-1]
    rate = seconds / items
    return rate, max(0.0, spent - rate * first)


def auto_batch(seconds_per_item: float | None, *, target_seconds: float = 10.0, largest: int = 64) -> int:
    """`--batch auto`: items per batch so that one takes about `target_seconds` (a killed run
    loses at most that, the bar moves at least that often), between 1 and `largest`; the
    default BATCH when there is nothing to time."""
    if not seconds_per_item:
        return BATCH
    return max(1, min(largest, int(target_seconds / seconds_per_item)))

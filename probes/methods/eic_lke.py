"""EIC-LKE (Wu et al. 2024), the efficient variant of IC-LKE: many test facts are asked in one
prompt instead of one prompt per fact: `construction=paper` (default; test facts interspersed
among training examples, one sequence per choice rank) or `construction=chain` (factprobe's
earlier one; test facts as each other's examples). Prompts do not depend on --limit, batching or
resume. The constructions, options and measured prefix reuse: docs/design/methods.md.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Sequence

from ..declare import option
from ..scoring.requests import LoglikelihoodRequest
from .base import Method, OptionError
from .ic_lke import ACCURACY_AT_K, choice_record, icl_measures


LINE_SEPARATORS = {"paper": ", ", "chain": "\n"}
# paper: "all 100 samples" of the training set in one sequence (002_f44cecac2bc50a79.txt:989);
# chain: test facts before each one in its window
EXAMPLES_BY_CONSTRUCTION = {"paper": 100, "chain": 50}


@dataclass(frozen=True)
class EICLKEOptions:
    construction: str = option("paper", "test facts interspersed among training examples (the paper's), or "
                                        "seeded windows of test facts (factprobe's earlier).",
                               choices=tuple(LINE_SEPARATORS))
    examples: int | None = option(None, "paper: training examples per window (default 100); chain: test facts "
                                        "before each one (default 50).", minimum=1, http_limit=1000)
    start: int = option(50, "paper: training examples before the first test slot (below examples).", minimum=0)
    every: int = option(5, "paper: training examples between test slots.", minimum=1)
    separator: str = option(" ", "between a subject and its object.")
    line_separator: str | None = option(None, "between tuples (default ', ' for paper, a newline for chain).")
    reuse_prefix: bool = option(False, "reuse the scorer's key/value blocks (numbers independent of the batch).")


class EICLKE(Method):
    name = "eic-lke"
    summary = ("IC-LKE's scoring with many test facts per prompt (construction paper: interspersed among "
               "examples; chain: seeded windows of test facts)")
    kinds = ("icl-mc",)
    reads = ("subject_label", "choices", "answer_index")
    aggregate_extra = staticmethod(icl_measures)
    report_sections = (ACCURACY_AT_K,)
    Options = EICLKEOptions
    line_separators = LINE_SEPARATORS
    examples_by_construction = EXAMPLES_BY_CONSTRUCTION

    @classmethod
    def check(cls, options: EICLKEOptions) -> None:
        """paper: the test slots (after `start`, then every `every`) fit in the `examples`."""
        if options.construction != "paper":
            return
        examples = options.examples or EXAMPLES_BY_CONSTRUCTION["paper"]
        if options.start >= examples:
            raise OptionError("start", f"method eic-lke: option start: {options.start} leaves no test slot among "
                                       f"examples={examples} (give at most {examples - 1})")
        if options.every > examples - options.start:
            raise OptionError("every", f"method eic-lke: option every: {options.every} is above examples - start "
                                       f"({examples - options.start})")

    def __init__(self, context) -> None:
        super().__init__(context)
        construction = self.options["construction"]
        if self.options["line_separator"] is None:
            self.options["line_separator"] = self.line_separators[construction]
        if self.options["examples"] is None:
            self.options["examples"] = self.examples_by_construction[construction]
        self._train: list[list[dict]] = []  # paper: each window's training examples, in order
        self._windows = self._paper_windows() if construction == "paper" else self._chain()
        self._place = {item["id"]: (w, p) for w, window in enumerate(self._windows)
                       for p, item in enumerate(window)}

    def _test_order(self, relation) -> list[dict]:
        # Sorted first, so the order depends on the items and the seed, not on the file's order.
        chain = sorted(self.context.tests[relation], key=lambda item: item["id"])
        self.context.rng("eic-lke", str(relation)).shuffle(chain)
        return chain

    def _chain(self) -> list[list[dict]]:
        """Every relation's test items in seeded order, cut into windows of examples + 1."""
        size = self.options["examples"] + 1
        windows = []
        for relation in sorted(self.context.tests, key=str):
            chain = self._test_order(relation)
            windows += [chain[start:start + size] for start in range(0, len(chain), size)]
        return windows

    def _paper_windows(self) -> list[list[dict]]:
        """Every relation's test items in seeded order, (examples - start) // every per window: the
        paper's sequence of 100 training examples holds a test slot before each run of `every`
        from the 50th on ("starting from the 50th training sample, we intersperse our test sample
        with all the choices every 5 examples", 002_f44cecac2bc50a79.txt:990), so slot k follows
        start + k * every of them (50, 55, ..., 95). Each window has its own seeded draw of
        `examples` training examples (self._train)."""
        examples = self.options["examples"]
        slots = (examples - self.options["start"]) // self.options["every"]
        windows = []
        for relation in sorted(self.context.tests, key=str):
            pool = sorted(self.context.demonstrations.get(relation, []), key=lambda item: item["id"])
            if len(pool) < examples:
                raise ValueError(f"eic-lke (construction=paper): relation {relation} has {len(pool)} demonstration "
                                 f"items, a prompt needs examples={examples}: lower `examples`, or build the probe "
                                 "set with a larger --demo-fraction")
            chain = self._test_order(relation)
            for start in range(0, len(chain), slots):
                # keyed by the relation's own window number: other relations do not change its draws
                rng = self.context.rng("eic-lke-paper", str(relation), str(start // slots))
                self._train.append(rng.sample(pool, examples))
                windows.append(chain[start:start + slots])
        return windows

    def preceding(self, item: dict) -> list[dict]:
        """The test items before this one in its window, in order."""
        if item["id"] not in self._place:
            raise ValueError(f"eic-lke: {item['id']} is not among the test items the chain was built from "
                             "(MethodContext.tests)")
        window, position = self._place[item["id"]]
        return self._windows[window][:position]

    def prompt(self, item: dict, rank: int = 0) -> str:
        """The context item's choices are scored after; for paper, the one of choice rank `rank`
        (each choice is scored after `separator`); for chain, the one context (choices follow it
        directly)."""
        sep, nl = self.options["separator"], self.options["line_separator"]
        if self.options["construction"] == "chain":
            lines = [f"{x['subject_label']}{sep}{x['choices'][x['answer_index']]}" for x in self.preceding(item)]
            return nl.join([*lines, f"{item['subject_label']}{sep}"])
        window, _ = self._place[item["id"]]
        train, start, every = self._train[window], self.options["start"], self.options["every"]

        def shown(examples: list[dict]) -> list[str]:
            return [f"{x['subject_label']}{sep}{x['object_label']}" for x in examples]

        tuples = shown(train[:start])
        for k, earlier in enumerate(self.preceding(item)):
            tuples.append(f"{earlier['subject_label']}{sep}{earlier['choices'][rank % len(earlier['choices'])]}")
            tuples += shown(train[start + k * every:start + (k + 1) * every])
        return nl.join([*tuples, item["subject_label"]])

    def choice_pairs(self, item: dict) -> list[tuple[str, str]]:
        """(context, continuation) of each choice, in choice order: for chain, every choice right
        after the one context; for paper, `separator` and the choice after the context of its rank."""
        if self.options["construction"] == "chain":
            context = self.prompt(item)
            return [(context, choice) for choice in item["choices"]]
        sep = self.options["separator"]
        return [(self.prompt(item, rank), sep + choice) for rank, choice in enumerate(item["choices"])]

    def order(self, items: Sequence[dict]) -> list[dict]:
        # Window by window, each in chain order: one batch then holds nested contexts.
        return sorted(items, key=lambda item: self._place.get(item["id"], (len(self._windows), 0)))

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        # One request per distinct context: chain has one per item; paper's first slot of a window
        # has the same context for every rank, the later ones (almost always) one per rank.
        requests, ranks = [], []
        for item in items:
            pairs = self.choice_pairs(item)
            grouped: dict[str, list[int]] = {}
            for rank, (context, _) in enumerate(pairs):
                grouped.setdefault(context, []).append(rank)
            requests += [LoglikelihoodRequest(context, tuple(pairs[k][1] for k in group))
                         for context, group in grouped.items()]
            ranks.append(list(grouped.values()))
        with _prefix_reuse(scorer) if self.options["reuse_prefix"] else nullcontext():
            answers = iter(scorer.loglikelihood(requests))
        records = []
        for item, groups in zip(items, ranks):
            logprobs = [0.0] * len(item["choices"])
            for group in groups:
                for k, score in zip(group, next(answers)):
                    logprobs[k] = score.logprob
            seen = len(self.preceding(item))
            extra = ({"examples_seen": seen} if self.options["construction"] == "chain" else
                     {"examples_seen": self.options["start"] + seen * self.options["every"], "tests_before": seen})
            records.append(choice_record(item, logprobs, **extra))
        return records


def _prefix_reuse(scorer):
    """The scorer's own block reuse, looking through wrappers (the result cache's `inner`);
    nothing for a scorer that has none."""
    while scorer is not None:
        reusing = getattr(scorer, "reusing_prefixes", None)
        if reusing is not None:
            return reusing()
        scorer = getattr(scorer, "inner", None)
    return nullcontext()

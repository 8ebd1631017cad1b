"""EIC-LKE (Wu et al. 2024), the efficient variant of IC-LKE: instead of a fresh set of
demonstrations per test fact, a relation's test facts are chained, and each one is asked after
the test facts before it, shown with their gold objects:

    Germany: Berlin
    Italy: Rome
    France: ?          <- scored: every choice as the continuation, argmax

Per relation the test items are put in a seeded order (sorted by id, then shuffled with the run's
seed) and cut into windows of `examples` + 1 items; an item's context is the items before it in
its window as "subject{separator}object" lines, then its own subject and the separator. The first
item of a window sees no example, the last sees `examples`; each record says how many it saw
(`examples_seen`). The object shown for an earlier item is its gold choice. Choices are scored as
whole continuations (all their tokens) and the prediction is the argmax, as in IC-LKE, and the
records carry IC-LKE's fields, so both aggregate the same way.

The chain is built from every test item of the probe set (MethodContext.tests), so an item's
prompt does not depend on --limit, the batch size or where a killed run resumed.

Options: `examples` (default 50), `separator` (default " "), `line_separator` (default "\\n"),
`reuse_prefix` (default True).

Efficiency: the contexts of one window are nested prefixes of each other. The runner computes
items window by window (`order`), and with `reuse_prefix` a scorer that can (the HF causal
backend, `reusing_prefixes`) keeps the keys and values of fixed-size token blocks of the contexts
it has encoded and runs only the blocks it has not seen, plus the context's last partial block.
The blocks' boundaries depend on the token positions alone, so a context is computed the same way
whatever was scored before it: the numbers do not depend on batch or resume. They are not
bit-identical to encoding each context in one pass (floating-point sums in another order; the
difference is in the last digits), which is why the option is recorded with the run. Other
scorers (an OpenAI-compatible server, the result cache's hits) encode each context as usual.

Measured (bench/eic_lke.py, SmolLM2 on the 2-core CPU, one window of 51 facts, batch 16): the
reuse forwards 4,858 instead of 12,218 tokens with 20 choices (13.6 s instead of 18.0 s, 1.32x)
but 23,840 instead of 31,200 with 100 choices, where the choices' own tokens dominate (47.6 s
instead of 49.5 s, 1.04x); same predictions, gold log-probabilities within 3.5e-5 of one pass.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Sequence

from ..scoring.requests import LoglikelihoodRequest
from .base import Method
from .icl_mc import choice_record


class EICLKE(Method):
    name = "eic-lke"
    kinds = ("icl-mc",)
    defaults = {"examples": 50, "separator": " ", "line_separator": "\n", "reuse_prefix": True}

    def __init__(self, context) -> None:
        super().__init__(context)
        examples = self.options["examples"]
        if not isinstance(examples, int) or isinstance(examples, bool) or examples < 0:
            raise ValueError(f"eic-lke: examples must be a whole number >= 0, got {examples!r}")
        self._windows = self._chain()
        self._place = {item["id"]: (w, p) for w, window in enumerate(self._windows)
                       for p, item in enumerate(window)}

    def _chain(self) -> list[list[dict]]:
        """Every relation's test items in seeded order, cut into windows of examples + 1."""
        size = self.options["examples"] + 1
        windows = []
        for relation in sorted(self.context.tests, key=str):
            # Sorted first, so the order depends on the items and the seed, not on the file's order.
            chain = sorted(self.context.tests[relation], key=lambda item: item["id"])
            self.context.rng("eic-lke", str(relation)).shuffle(chain)
            windows += [chain[start:start + size] for start in range(0, len(chain), size)]
        return windows

    def preceding(self, item: dict) -> list[dict]:
        """The test items shown before this one, in order."""
        if item["id"] not in self._place:
            raise ValueError(f"eic-lke: {item['id']} is not among the test items the chain was built from "
                             "(MethodContext.tests)")
        window, position = self._place[item["id"]]
        return self._windows[window][:position]

    def prompt(self, item: dict) -> str:
        sep, nl = self.options["separator"], self.options["line_separator"]
        lines = [f"{x['subject_label']}{sep}{x['choices'][x['answer_index']]}" for x in self.preceding(item)]
        return nl.join([*lines, f"{item['subject_label']}{sep}"])

    def order(self, items: Sequence[dict]) -> list[dict]:
        # Window by window, each in chain order: one batch then holds nested contexts.
        return sorted(items, key=lambda item: self._place.get(item["id"], (len(self._windows), 0)))

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        requests = [LoglikelihoodRequest(self.prompt(item), tuple(item["choices"])) for item in items]
        with _prefix_reuse(scorer) if self.options["reuse_prefix"] else nullcontext():
            answers = scorer.loglikelihood(requests)
        return [choice_record(item, [s.logprob for s in scores], examples_seen=len(self.preceding(item)))
                for item, scores in zip(items, answers)]


def _prefix_reuse(scorer):
    """The scorer's own block reuse, looking through wrappers (the result cache's `inner`);
    nothing for a scorer that has none."""
    while scorer is not None:
        reusing = getattr(scorer, "reusing_prefixes", None)
        if reusing is not None:
            return reusing()
        scorer = getattr(scorer, "inner", None)
    return nullcontext()

"""The distractor measure (Ammar Khodja et al. 2025): a model knows a fact in a cloze when the
true object is more plausible than the distractors. Plausibility of an entity after a cloze is
the sum over ALL its names (label and aliases) of P(" " + name + EOS | cloze), so a name the
model would continue ("Paris Hilton") does not count as "Paris", and an entity the model knows
under an alias gets credit for it. Min@n: the object beats each of the first n distractors (a tie
counts as not known); Avg@n: the share of the first n it beats. Both are taken per cloze and
averaged over the fact's clozes (the relation's object-final templates, `clozes` of them,
default 5).

Names come from the probe item: `object_names` and each distractor's `names` (written by the
builder); a set built before those fields existed falls back to `object_label` and the
distractor's `label`.

A distractor with no name at all cannot be asked about. It is skipped (listed under `skipped` in
the strategy's scores) and the first n are taken among the named ones; counting it as beaten
would credit the model for a gap in the graph.

`correct` is the item's Min@n when it has exactly one strategy. With several strategies no single
verdict exists: `correct` is None and the aggregate breaks each strategy down by relation and
bucket on its own (probes/aggregate.py).

Each record keeps, per cloze, every entity's log-plausibility (`per_cloze`), so a run can be
checked name by name. A cloze's names are scored together: one forward pass per 32 names,
right-padded, the log-softmax taken only where name tokens are predicted.

Causal scorers only: the score needs EOS after the name, which the string-level loglikelihood
interface cannot express portably."""

from __future__ import annotations

import math
from typing import Sequence

from .. import metrics
from ..templates import load_templates, prompt_before_object
from .base import Method, base_record


class DistractorMeasure(Method):
    name = "distractor"
    kinds = ("distractor",)
    defaults = {"clozes": 5, "n": None}  # n: default every named distractor the item has

    def __init__(self, context) -> None:
        super().__init__(context)
        self.templates = load_templates()

    def clozes(self, item: dict) -> list[str]:
        entry = self.templates.get(item["relation"])
        texts = [t.text for t in entry.cloze if t.text.rstrip(" .!?").endswith("[Y]")] if entry else []
        if not texts:
            raise ValueError(f"{item['id']}: no object-final cloze template for {item['relation']}")
        return [prompt_before_object(t, item["subject_label"]) for t in texts[: self.options["clozes"]]]

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        return [self._record(scorer, item) for item in items]

    def _record(self, scorer, item: dict) -> dict:
        from ...index.appropt import prompt_ids
        from ...index.label_trie import LabelTrie

        trie = LabelTrie.for_scorer(scorer, {e: n for e, n in entity_names(item).items() if n})
        paths = paths_by_entity(trie)
        per_cloze, scores = [], {s: {"min_at_n": [], "avg_at_n": []} for s in item["distractors"]}
        compared: dict[str, int] = {}
        for cloze in self.clozes(item):
            plausibility = log_plausibility(scorer, prompt_ids(scorer, cloze), paths, trie.eos_id)
            per_cloze.append({"cloze": cloze, "log_plausibility": plausibility})
            gold = plausibility[item["object"]]
            for strategy, found in item["distractors"].items():
                first = [plausibility[d["entity"]] for d in self._first_named(found, plausibility)]
                compared[strategy] = len(first)
                # No named distractor: nothing to beat, no verdict (metrics refuse n = 0).
                scores[strategy]["min_at_n"].append(float(metrics.min_at_n(gold, first, len(first))) if first else None)
                scores[strategy]["avg_at_n"].append(metrics.avg_at_n(gold, first, len(first)) if first else None)
        by_strategy = {strategy: {"min_at_n": _mean(scores[strategy]["min_at_n"]),
                                  "avg_at_n": _mean(scores[strategy]["avg_at_n"]),
                                  "compared": compared.get(strategy, 0),
                                  "skipped": [d["entity"] for d in found if d["entity"] not in paths]}
                       for strategy, found in item["distractors"].items()}
        only = next(iter(by_strategy.values())) if len(by_strategy) == 1 else None
        return base_record(item, by_strategy=by_strategy, correct=only["min_at_n"] if only else None,
                           per_cloze=per_cloze)

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


def paths_by_entity(trie) -> dict[str, list[tuple[int, ...]]]:
    """Token paths per entity, each distinct sequence once: two names that tokenize alike are one
    string to the model and must not be counted twice."""
    out: dict[str, dict[tuple[int, ...], None]] = {}
    for path in trie.paths:
        if path.tokens:
            out.setdefault(path.entity, {})[path.tokens] = None
    return {entity: list(tokens) for entity, tokens in out.items()}


def log_plausibility(scorer, ids: list[int], paths: dict[str, list[tuple[int, ...]]], eos: int) -> dict[str, float]:
    """log of the sum over an entity's names of P(name tokens, EOS | prompt), kept in log space so
    that very unlikely names do not underflow to a tie at 0."""
    from ...index.appropt import path_logprobs

    flat = [(entity, (*tokens, eos)) for entity, token_paths in paths.items() for tokens in token_paths]
    logprobs: dict[str, list[float]] = {}
    for start in range(0, len(flat), _BATCH):
        chunk = flat[start:start + _BATCH]
        for (entity, _), logprob in zip(chunk, path_logprobs(scorer, ids, [p for _, p in chunk])):
            logprobs.setdefault(entity, []).append(logprob)
    out = {}
    for entity, values in logprobs.items():
        top = max(values)
        out[entity] = top + math.log(math.fsum(math.exp(v - top) for v in values))
    return out


_BATCH = 32  # paths per forward pass: a prompt's names are short, and Gemma's head is 262k wide


def _mean(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None

"""BELIEF on masked LMs (Zhao et al.): every prompt of a multi-prompt cloze item is filled at the
mask; the prediction is the top-1 token, its probability the confidence, and it is correct when
it equals one of the gold names (casefolded). As in MyriadLAMA, only facts with a single-token
object are asked, and only their single-token names count (000:114, footnote 6: "the object is a
single token according to the BERT tokenizer"), under the model's own tokenizer. The bias level is by default the paper's entropy
over the relation's candidate objects, multi-prompt and single-prompt (`bias=top1`: factprobe's
older top-1 agreement); both definitions and the aggregation options: docs/design/methods.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..declare import option
from ..measures import (BIAS_DEFINITIONS, COVERAGE_MAXIMUM, PAPER_ACC_DRAWS, PAPER_CONTENT_FREE, entropy_bias_level,
                       single_prompt_bias_level)
from ..scoring.requests import FillMaskRequest
from ..templates import fill
from ..kinds.cloze_kind import single_token_test
from .base import Method, OptionError, answer_key, base_record
from ..measures.belief import BIN_ORDERS, TIE_RULES
from ..measures.belief_records import belief_measures
from .belief_sections import BELIEF_DEFINITIONS, BELIEF_MEASURES

# top_k for the content-free prompts of bias=entropy: more than any vocabulary, so the backend
# returns every entry (hf_masked clips top_k to the vocabulary size).
WHOLE_VOCABULARY = 1 << 30
OBJECTS = ("single-token", "all")  # the paper's first
LEFT_OUT = "no single-token gold name"
CONTENT_FREE_CHUNK = 8  # content-free prompts per fill_mask call: each answer is a whole vocabulary


def ovconf_ties_option():
    """Ovconf's rule for tied confidences, one declaration for BELIEF and BELIEF-ICL."""
    return option("average", "Ovconf's prompts of equal confidence that a bin edge cuts apart: average (each "
                             "position holds the tied prompts' share of correct answers, so no file order "
                             "changes a bin) or file-order (tied prompts as the records list them, factprobe's "
                             "earlier default).", choices=TIE_RULES)


@dataclass(frozen=True)
class BeliefOptions:
    top_k: int = option(1, "candidates the masked LM returns per prompt (the prediction is the first).", minimum=1,
                        http_limit=1000)
    content_free: bool = option(True, "measure the bias level on content-free prompts.")
    bias: str = option("entropy", "the bias level: the paper's entropy over the relation's candidate objects, "
                                  "or factprobe's older top-1 agreement.", choices=BIAS_DEFINITIONS)
    content_free_subjects: tuple[str, ...] = option(PAPER_CONTENT_FREE, "bias=entropy: the content-free "
                                                                        "subjects (the paper's N/A, '' and ?).",
                                                    minimum=1, http_limit=20)
    content_free_token: str = option("N/A", "bias=top1: the content-free subject (not blank).")
    acc_draws: int = option(PAPER_ACC_DRAWS, "one-prompt-per-item draws behind Acc@1.", minimum=1,
                            http_limit=1_000_000)
    coverage_maximum: str = option("best-subject", "coverage per template: the best subject expression (the "
                                                   "paper's) or the mean over them.", choices=COVERAGE_MAXIMUM)
    objects: str = option("single-token", "single-token: only facts with a gold name of one token of the model "
                                          "are asked, and only such names count (MyriadLAMA's, whose objects "
                                          "are single BERT tokens); all: every fact (factprobe's earlier default).",
                          choices=OBJECTS)
    ovconf_bins: str = option("descending", "Ovconf's bins cut from the prompts sorted by confidence, descending "
                                            "(the paper's) or ascending (factprobe's earlier default): with a "
                                            "remainder the first bins hold one prompt more.", choices=BIN_ORDERS)
    ovconf_ties: str = ovconf_ties_option()


class Belief(Method):
    name = "belief"
    summary = "masked-LM top-1 over every prompt of an item: Acc@1, Consist, Ovconf, coverage, bias level"
    kinds = ("cloze",)
    reads = ("prompts", "gold")
    aggregate_extra = staticmethod(belief_measures)  # probes/measures/belief_records.py
    report_sections = (BELIEF_MEASURES, BELIEF_DEFINITIONS)
    Options = BeliefOptions

    @classmethod
    def check(cls, options: BeliefOptions) -> None:
        check_token(cls.name, options.content_free_token)

    def __init__(self, context) -> None:
        super().__init__(context)
        self._relation_bias: dict = {}  # relation -> its content_free_bias entry, once per run
        self._token_keys: dict[int, str] = {}  # vocabulary id -> answer_key of its text
        self._single = None  # name -> whether it is one token of the model (objects=single-token)

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        """A record per item, in order; under objects=single-token an item without a one-token
        gold name is not asked, its record unscored (correct None) and saying why (`left_out`)."""
        golds = [self._gold(scorer, item) for item in items]
        asked = [k for k, gold in enumerate(golds) if gold]
        records = iter(self._ask(scorer, [items[k] for k in asked], [golds[k] for k in asked]))
        kept = set(asked)
        return [next(records) if k in kept else base_record(
            item, predictions=[], prompt_correct=[], confidence=[], template_ids=[], unit=item.get("unit", "fact"),
            correct=None, left_out=LEFT_OUT) for k, item in enumerate(items)]

    def _gold(self, scorer, item: dict) -> list[str]:
        """The gold names the masked LM can answer: those of one token (every name under objects=all)."""
        if self.options["objects"] == "all":
            return list(item["gold"])
        if self._single is None:
            tokenizer = getattr(scorer, "tokenizer", None) or getattr(getattr(scorer, "inner", None), "tokenizer", None)
            if tokenizer is None:
                raise OptionError("objects", f"method belief: option objects: single-token needs the masked LM's "
                                             f"tokenizer, and {getattr(scorer, 'identity', scorer)} has none; "
                                             "objects=all asks every item")
            self._single = single_token_test(tokenizer)
        return [g for g in item["gold"] if self._single(g)]

    def _ask(self, scorer, items: Sequence[dict], golds: Sequence[list[str]]) -> list[dict]:
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
        top1 = entropy = None
        if self.options["content_free"]:
            if self.options["bias"] == "top1":
                top1 = self._content_free(scorer, items)
            else:
                entropy = self._entropy_bias(scorer, items)
        per_item: list[list] = [[] for _ in items]
        for k, candidates in zip(owners, answers):
            per_item[k].append(candidates[0])
        records = []
        for k, (item, tops) in enumerate(zip(items, per_item)):
            extra = {} if top1 is None else {"content_free_predictions": top1[k]}
            if entropy is not None:
                extra["content_free_bias"] = entropy[item.get("relation")]
            gold = {answer_key(g) for g in golds[k]}
            predictions = [top.token for top in tops]
            correct = [answer_key(p) in gold for p in predictions]
            records.append(base_record(
                item, predictions=predictions, prompt_correct=correct, confidence=[top.prob for top in tops],
                template_ids=[p["template_id"] for p in item["prompts"]], unit=item.get("unit", "fact"),
                correct=sum(correct) / len(correct) if correct else 0.0, **extra))
        return records

    # -- bias=entropy ------------------------------------------------------------------------

    def _entropy_bias(self, scorer, items: Sequence[dict]) -> dict:
        """Relation -> {bias_level, single_prompt, candidates, unmatched, prompts} for the relations
        of `items`; each relation is computed the first time one of its items is seen in this run."""
        for relation in dict.fromkeys(item.get("relation") for item in items):
            if relation not in self._relation_bias:
                pool = self.context.tests.get(relation) or [i for i in items if i.get("relation") == relation]
                self._relation_bias[relation] = self._bias_of(scorer, pool)
        return self._relation_bias

    def _bias_of(self, scorer, pool: Sequence[dict]) -> dict:
        candidates = list(dict.fromkeys(answer_key(g) for item in pool for g in item["gold"]))
        templates = list(dict.fromkeys(p["template"] for item in pool for p in item["prompts"]
                                       if (p.get("template") or "").count("[Y]") == 1))
        texts = [fill(t, subject).replace("[Y]", FillMaskRequest.PLACEHOLDER)
                 for t in templates for subject in self.options["content_free_subjects"]]
        column = {key: k for k, key in enumerate(candidates)}
        rows, seen = [], set()
        # A few prompts at a time, each answer reduced to the candidates at once: a whole-vocabulary
        # answer is tens of thousands of entries.
        for start in range(0, len(texts), CONTENT_FREE_CHUNK):
            chunk = texts[start:start + CONTENT_FREE_CHUNK]
            for answer in scorer.fill_mask([FillMaskRequest(t, top_k=WHOLE_VOCABULARY) for t in chunk]):
                row = [0.0] * len(candidates)
                for entry in answer:
                    k = column.get(self._key_of(entry))
                    if k is not None:
                        row[k] += entry.prob
                        seen.add(k)
                rows.append(row)
        kept = sorted(seen)  # candidates some vocabulary entry reads as
        restricted = [[row[k] for k in kept] for row in rows]
        # The rows are template-major: each template's content-free subjects in a run.
        per_template = [restricted[k:k + len(self.options["content_free_subjects"])]
                        for k in range(0, len(restricted), len(self.options["content_free_subjects"]))]
        asked = sum(1 for row in restricted if sum(row) > 0)  # a prompt with no mass on any candidate has no say
        multi = entropy_bias_level(restricted) if asked and len(kept) >= 2 else math.nan
        single = single_prompt_bias_level(per_template) if asked and len(kept) >= 2 else math.nan
        return {"bias_level": None if math.isnan(multi) else multi,
                "single_prompt": None if math.isnan(single) else single, "candidates": len(kept),
                "unmatched": len(candidates) - len(kept), "prompts": asked}

    def _key_of(self, entry) -> str:
        key = self._token_keys.get(entry.token_id)
        if key is None:
            key = self._token_keys[entry.token_id] = answer_key(entry.token)
        return key

    # -- bias=top1 ---------------------------------------------------------------------------

    def _content_free(self, scorer, items: Sequence[dict]) -> list[list[str | None]]:
        """Per item and prompt, the top-1 answer to its template with the content-free subject.
        Each distinct text is asked once: the facts of a relation share their templates."""
        texts = [[self._content_free_text(p) for p in item["prompts"]] for item in items]
        unique = list(dict.fromkeys(t for row in texts for t in row if t is not None))
        answers = scorer.fill_mask([FillMaskRequest(t, top_k=1) for t in unique]) if unique else []
        top = {text: candidates[0].token for text, candidates in zip(unique, answers)}
        return [[top.get(t) for t in row] for row in texts]

    def _content_free_text(self, prompt: dict) -> str | None:
        template = prompt.get("template")
        if template is None or template.count("[Y]") != 1:
            return None  # nothing to put a content-free subject into
        return fill(template, self.options["content_free_token"]).replace("[Y]", FillMaskRequest.PLACEHOLDER)


def check_token(method: str, token: str) -> None:
    """The content-free subject BELIEF and BELIEF-ICL put in a template: text, not blank."""
    if not token.strip():
        raise OptionError("content_free_token", f"method {method}: option content_free_token: a non-empty text, "
                                                f"got {token!r}")

"""BELIEF on masked LMs (Zhao et al.): every prompt of a multi-prompt cloze item is filled at the
mask; the prediction is the top-1 token, its probability the confidence, and it is correct when
it equals one of the gold names (casefolded). Records keep every prompt's answer, so the runner
can report Acc@1 over one-prompt-per-fact draws, consistency, overconfidence and coverage.

Bias level (`content_free`, default on): every prompt's template is also filled with a
content-free subject (`content_free_token`, default "N/A") and its top-1 answer is recorded
beside the real one (`content_free_predictions`, None for a prompt without a template). A
relation's templates are shared by all its facts, so this costs one request per distinct template
in a batch. The aggregate's `bias_level` (probes/metrics.py) is the share of prompts answered as
their content-free version is, averaged over relations."""

from __future__ import annotations

from typing import Sequence

from ..scoring.requests import FillMaskRequest
from ..templates import fill
from .base import Method, answer_key, base_record


class Belief(Method):
    name = "belief"
    kinds = ("cloze",)
    defaults = {"top_k": 1, "content_free": True, "content_free_token": "N/A"}

    def __init__(self, context) -> None:
        super().__init__(context)
        token = self.options["content_free_token"]
        if not isinstance(token, str) or not token.strip():
            raise ValueError(f"belief: content_free_token must be a non-empty text, got {token!r}")

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
        free = self._content_free(scorer, items) if self.options["content_free"] else None
        per_item: list[list] = [[] for _ in items]
        for k, candidates in zip(owners, answers):
            per_item[k].append(candidates[0])
        records = []
        for k, (item, tops) in enumerate(zip(items, per_item)):
            extra = {} if free is None else {"content_free_predictions": free[k]}
            gold = {answer_key(g) for g in item["gold"]}
            predictions = [top.token for top in tops]
            correct = [answer_key(p) in gold for p in predictions]
            records.append(base_record(
                item, predictions=predictions, prompt_correct=correct, confidence=[top.prob for top in tops],
                template_ids=[p["template_id"] for p in item["prompts"]],
                correct=sum(correct) / len(correct) if correct else 0.0, **extra))
        return records

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

"""The knowledge measures the distractor paper compares against (Ammar Khodja et al. 2025), on
distractor (or any fact-level) probe sets, one object-final cloze per fact:

- probability: P(" " + object label + EOS | cloze); known when above `threshold` (default 0.5);
- precision_at_n: `samples` sampled answers, ranked by how often they come up (ties: first seen);
  known when one of the top `n` equals a gold name (normalized);
- rouge_l: ROUGE-L F-measure of the greedy answer against the object label (the best over gold names);
- judge (when `judge_model` is set): an OpenAI-compatible model reads the question, the gold
  names and the greedy answer and says yes or no.

`correct` is the probability baseline's verdict so that the runner's breakdowns work; every
baseline's value is in the record and averaged in the aggregate.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

from .. import metrics
from ..scoring.requests import GenerateRequest
from ..templates import load_templates, prompt_before_object
from .base import Method, answer_key, base_record

JUDGE_PROMPT = ("Question: {question}\nReference answers: {gold}\nProposed answer: {answer}\n"
                "Is the proposed answer correct? Reply with yes or no only.")


class Baselines(Method):
    name = "baselines"
    kinds = ("distractor", "kdf", "icl-mc")
    defaults = {"threshold": 0.5, "samples": 10, "n": 3, "max_tokens": 8, "judge_model": None,
                "judge_base_url": None}

    def __init__(self, context) -> None:
        super().__init__(context)
        self.templates = load_templates()
        self.judge = None
        if self.options["judge_model"]:
            from ..scoring.openai_api import OpenAIScorer

            self.judge = OpenAIScorer(self.options["judge_model"], base_url=self.options["judge_base_url"], chat=True)

    def _templates(self, item: dict) -> tuple[str, str]:
        entry = self.templates.get(item["relation"])
        clozes = [t.text for t in entry.cloze if t.text.rstrip(" .!?").endswith("[Y]")] if entry else []
        if not clozes:
            raise ValueError(f"{item['id']}: no object-final cloze template for {item['relation']}")
        question = entry.qa[0].text if entry.qa else clozes[0].replace("[Y]", "___")
        return prompt_before_object(clozes[0], item["subject_label"]), question.replace("[X]", item["subject_label"])

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        from ...index.appropt import path_logprob, prompt_ids
        from ...index.label_trie import LabelTrie

        prompts = [self._templates(i) for i in items]
        stop = ("\n", ".", ",")
        # The cloze is continued as it ends, without a trailing space: BPE vocabularies put the
        # space inside the next word's token (" Paris"), so after "is " SmolLM2 answers
        # "21st-century Paris" or digits where after "is" it answers " Paris". Answers are stripped.
        greedy = scorer.generate([GenerateRequest(p, max_tokens=self.options["max_tokens"], stop=stop)
                                  for p, _ in prompts])
        sampled = scorer.generate([GenerateRequest(p, max_tokens=self.options["max_tokens"], stop=stop,
                                                   temperature=1.0, n=self.options["samples"], seed=self.context.seed)
                                   for p, _ in prompts])
        verdicts = [None] * len(items)
        if self.judge is not None:
            asks = [GenerateRequest(JUDGE_PROMPT.format(question=q, gold="; ".join(i["gold"]), answer=g.texts[0].strip()),
                                    max_tokens=3) for i, (_, q), g in zip(items, prompts, greedy)]
            verdicts = [a.texts[0].strip().lower().startswith("yes") for a in self.judge.generate(asks)]
        records = []
        for item, (cloze, question), first, many, verdict in zip(items, prompts, greedy, sampled, verdicts):
            trie = LabelTrie.for_scorer(scorer, {item["object"]: [item["object_label"]]})
            ids = prompt_ids(scorer, cloze)
            probability = sum(math.exp(path_logprob(scorer, ids, (*p.tokens, trie.eos_id))) for p in trie.paths)
            gold = {answer_key(g) for g in item["gold"]}
            counts = Counter(answer_key(t) for t in many.texts)
            ranked = [a for a, _ in sorted(counts.items(), key=lambda kv: -kv[1])]  # stable: first seen wins ties
            answer = first.texts[0].strip()
            records.append(base_record(
                item, cloze=cloze, answer=answer, probability=probability,
                correct=metrics.probability_known(probability, self.options["threshold"]),
                precision_at_n=metrics.precision_at_n(ranked, gold, self.options["n"]),
                rouge_l=max(metrics.rouge_l(answer_key(answer), answer_key(g)) for g in item["gold"]),
                judge=verdict))
        return records

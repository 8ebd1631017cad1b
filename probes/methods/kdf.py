"""KDF multiple choice: `shots` answered questions, then the test question with options A-D; the
answer is the letter whose first token the model finds most probable after "Answer:" (each letter
is one token, so this is the first-token logit comparison).

Which questions the demonstrations are and where the wrong options come from is the probe set's
(probes/builders.py, recorded in its sidecar): by default as the KDF paper, demonstrations of
other relations and wrong options drawn from the relation's tails (`--kdf-demonstrations
same-relation`, `--kdf-options type-pool` for factprobe's earlier construction).

`scoring=letters` (the paper's) compares the letters; `option-text` scores each option's own text
as the answer (demonstrations answered with their text), `option-text-norm` the same per token:
a model too small to follow A-D still ranks the options it finds plausible."""

from __future__ import annotations

from typing import Sequence

from ..scoring.requests import LoglikelihoodRequest
from .base import Method, base_record

LETTERS = "ABCD"
SCORINGS = ("letters", "option-text", "option-text-norm")


def render(question: dict, with_answer: bool, answer_as_text: bool = False) -> str:
    lines = [f"Question: {question['question']}"]
    lines += [f"{letter}. {option}" for letter, option in zip(LETTERS, question["options"])]
    answer = question["answer"]
    if answer_as_text:
        answer = question["options"][LETTERS.index(answer)]
    lines.append("Answer:" + (f" {answer}" if with_answer else ""))
    return "\n".join(lines)


class KDF(Method):
    name = "kdf"
    summary = ("A-D questions after the item's demonstrations, the letter with the most probable first token "
               "(scoring=option-text|option-text-norm: the option texts themselves)")
    kinds = ("kdf",)
    reads = ("question", "options", "answer")
    # shots None: every demonstration the item carries (5 by default)
    defaults = {"shots": None, "scoring": "letters"}

    def __init__(self, context) -> None:
        super().__init__(context)
        if self.options["scoring"] not in SCORINGS:
            raise ValueError(f"kdf: scoring {self.options['scoring']!r}: use one of {', '.join(SCORINGS)}")

    def prompt(self, item: dict) -> str:
        demos = item["demonstrations"]
        if self.options["shots"] is not None:
            demos = demos[: self.options["shots"]]
        as_text = self.options["scoring"] != "letters"
        return "\n\n".join([*(render(d, True, as_text) for d in demos), render(item, False)])

    def continuations(self, item: dict) -> tuple[str, ...]:
        if self.options["scoring"] == "letters":
            return tuple(f" {x}" for x in LETTERS[:len(item["options"])])
        return tuple(f" {option}" for option in item["options"])

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        requests = [LoglikelihoodRequest(self.prompt(i), self.continuations(i)) for i in items]
        per_token = self.options["scoring"] == "option-text-norm"
        records = []
        for item, request, scores in zip(items, requests, scorer.loglikelihood(requests)):
            logprobs = [s.logprob for s in scores]
            ranked = [s.logprob / max(1, s.n_tokens) for s in scores] if per_token else logprobs
            best = max(range(len(ranked)), key=lambda k: (ranked[k], -k))
            # The exact prompt scored goes into the record, so a run can be checked against
            # another scorer (or the reference path) without rebuilding it from options.
            extra = {"letter_logprobs": [round(x, 6) for x in logprobs]} if self.options["scoring"] == "letters" else {
                "option_logprobs": [round(x, 6) for x in logprobs], "option_tokens": [s.n_tokens for s in scores]}
            records.append(base_record(item, prediction=LETTERS[best], answer=item["answer"],
                                       correct=LETTERS[best] == item["answer"], prompt=request.context,
                                       scoring=self.options["scoring"], **extra))
        return records

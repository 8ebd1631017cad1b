"""KDF multiple choice: `shots` answered questions, then the test question with options A-D; the
answer is the letter whose first token the model finds most probable after "Answer:" (each letter
is one token, so this is the first-token logit comparison).

Which questions the demonstrations are and where the wrong options come from is the probe set's
(probes/builders.py, recorded in its sidecar): by default as the KDF paper, demonstrations of
other relations and wrong options drawn from the relation's tails (`--kdf-demonstrations
same-relation`, `--kdf-options type-pool` for factprobe's earlier construction)."""

from __future__ import annotations

from typing import Sequence

from ..scoring.requests import LoglikelihoodRequest
from .base import Method, base_record

LETTERS = "ABCD"


def render(question: dict, with_answer: bool) -> str:
    lines = [f"Question: {question['question']}"]
    lines += [f"{letter}. {option}" for letter, option in zip(LETTERS, question["options"])]
    lines.append("Answer:" + (f" {question['answer']}" if with_answer else ""))
    return "\n".join(lines)


class KDF(Method):
    name = "kdf"
    summary = "A-D questions after the item's demonstrations, the letter with the most probable first token"
    kinds = ("kdf",)
    reads = ("question", "options", "answer")
    defaults = {"shots": None}  # None: every demonstration the item carries (5 by default)

    def prompt(self, item: dict) -> str:
        demos = item["demonstrations"]
        if self.options["shots"] is not None:
            demos = demos[: self.options["shots"]]
        return "\n\n".join([*(render(d, True) for d in demos), render(item, False)])

    def run(self, scorer, items: Sequence[dict]) -> list[dict]:
        requests = [LoglikelihoodRequest(self.prompt(i), tuple(f" {x}" for x in LETTERS[:len(i["options"])]))
                    for i in items]
        records = []
        for item, request, scores in zip(items, requests, scorer.loglikelihood(requests)):
            logprobs = [s.logprob for s in scores]
            best = max(range(len(logprobs)), key=lambda k: (logprobs[k], -k))
            # The exact prompt scored goes into the record, so a run can be checked against
            # another scorer (or the reference path) without rebuilding it from options.
            records.append(base_record(item, prediction=LETTERS[best], answer=item["answer"],
                                       correct=LETTERS[best] == item["answer"], prompt=request.context,
                                       letter_logprobs=[round(x, 6) for x in logprobs]))
        return records

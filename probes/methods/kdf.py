"""KDF multiple choice: `shots` answered questions, then the test question with options A-D; the
answer is the letter whose first token the model finds most probable after the answer line (each
letter is one token, so this is the first-token logit comparison).

`frame=paper` (the default) writes the KDF paper's prompt (seed 003, Figure 3, line 188): the
question line, "A: option" lines, then "回答:" with the letter right after it in zh, "Answer: "
and the letter in English (the item's `language`); examples apart by a blank line. `frame=qa` is
factprobe's earlier "Question: ..." / "A. option" / "Answer: B" frame.

Which questions the demonstrations are and where the wrong options come from is the probe set's
(probes/kinds/kdf_kind.py, recorded in its sidecar): by default as the KDF paper, demonstrations of
other relations and wrong options drawn from the relation's tails (`--kdf-demonstrations
same-relation`, `--kdf-options type-pool` for factprobe's earlier construction).

`scoring=letters` (the paper's) compares the letters; `option-text` scores each option's own text
as the answer (demonstrations answered with their text), `option-text-norm` the same per token:
a model too small to follow A-D still ranks the options it finds plausible. A record keeps the
scores compared (`compared` names them) and the number of options (`choices`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..declare import option
from ..scoring.requests import LoglikelihoodRequest
from .base import Method, base_record

LETTERS = "ABCD"
SCORINGS = ("letters", "option-text", "option-text-norm")
FRAMES = ("paper", "qa")
# The paper frame's answer line per language, and what comes between it and the answer: Figure 3's
# "回答:A" (the letter is the first generated token, line 73); "Answer: A" as English writes it.
ANSWER_LINES = {"zh": ("回答:", ""), "en": ("Answer:", " ")}


def answer_line(language: str) -> tuple[str, str]:
    """The paper frame's answer line in `language` and the text between it and the answer."""
    if language not in ANSWER_LINES:
        raise ValueError(f"kdf: no answer line for language {language!r} (known: {', '.join(ANSWER_LINES)}); "
                         "use --option frame=qa for the English 'Question: ... Answer:' frame")
    return ANSWER_LINES[language]


def render(question: dict, with_answer: bool, answer_as_text: bool = False, frame: str = "qa",
           language: str = "en") -> str:
    """One question as the frame writes it, answered (demonstrations) or ending at the answer line."""
    answer = question["answer"]
    if answer_as_text:
        answer = question["options"][LETTERS.index(answer)]
    if frame == "qa":
        head, options, (word, gap) = f"Question: {question['question']}", "{}. {}", ("Answer:", " ")
    else:
        head, options, (word, gap) = question["question"], "{}: {}", answer_line(language)
    lines = [head, *(options.format(letter, option) for letter, option in zip(LETTERS, question["options"]))]
    lines.append(word + (f"{gap}{answer}" if with_answer else ""))
    return "\n".join(lines)


@dataclass(frozen=True)
class KDFOptions:
    shots: int | None = option(None, "demonstrations before the question, the first N the item carries "
                                     "(0: none; default every one, 5 as built).", minimum=0)
    scoring: str = option("letters", "compare the letters' first tokens (the paper's), or score each "
                                     "option's text, or its text per token.", choices=SCORINGS)
    frame: str = option("paper", "the paper's prompt frame, or factprobe's earlier 'Question: ... Answer:'.",
                        choices=FRAMES)


class KDF(Method):
    name = "kdf"
    summary = ("A-D questions after the item's demonstrations in the paper's frame, the letter with the most "
               "probable first token (scoring=option-text|option-text-norm: the option texts themselves; "
               "frame=qa: 'Question: ... Answer:')")
    kinds = ("kdf",)
    reads = ("question", "options", "answer")
    Options = KDFOptions

    def gap(self, item: dict) -> str:
        """What comes between the answer line and the answer: a letter or an option's text."""
        return " " if self.options["frame"] == "qa" else answer_line(item.get("language", "en"))[1]

    def prompt(self, item: dict) -> str:
        demos = item["demonstrations"]
        if self.options["shots"] is not None:
            demos = demos[: self.options["shots"]]
        as_text = self.options["scoring"] != "letters"
        # Probe sets built before items carried their language are English.
        frame, language = self.options["frame"], item.get("language", "en")
        return "\n\n".join([*(render(d, True, as_text, frame, language) for d in demos),
                            render(item, False, frame=frame, language=language)])

    def continuations(self, item: dict) -> tuple[str, ...]:
        gap = self.gap(item)
        if self.options["scoring"] == "letters":
            return tuple(f"{gap}{x}" for x in LETTERS[:len(item["options"])])
        return tuple(f"{gap}{option}" for option in item["options"])

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
            records.append(base_record(item, prediction=LETTERS[best], answer=item["answer"],
                                       correct=LETTERS[best] == item["answer"], prompt=request.context,
                                       scoring=self.options["scoring"], choices=len(scores),
                                       **_scores(self.options["scoring"], scores, ranked)))
        return records


def _scores(scoring: str, scores, ranked: list[float]) -> dict:
    """What a record keeps of the options' scores: the quantity compared, under the name the
    record's `compared` gives, and for option texts the token counts. option-text-norm compares
    the per-token means (kept unrounded, so the argmax reads back exactly) and keeps the sums
    beside them as `option_logprob_sums`; before issue 45 it kept only the sums, as
    `option_logprobs`."""
    if scoring == "letters":
        return {"letter_logprobs": [round(x, 6) for x in ranked], "compared": "letter_logprobs"}
    tokens = [s.n_tokens for s in scores]
    if scoring == "option-text":
        return {"option_logprobs": [round(x, 6) for x in ranked], "option_tokens": tokens,
                "compared": "option_logprobs"}
    return {"option_logprobs_per_token": ranked, "option_logprob_sums": [round(s.logprob, 6) for s in scores],
            "option_tokens": tokens, "compared": "option_logprobs_per_token"}

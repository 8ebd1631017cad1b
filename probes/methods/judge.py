"""DistFact's LLM-as-a-judge (seed 004 = ../shared/papers/004_9e1422d598bbbe4c.txt): Sun et al.'s
judge prompt "adapted to our data since we use declarative cloze sentences" (004:176), given in
its Appendix D (004:362), asked of every beam b of every cloze c; per cloze the best verdict
over the beams, then the mean over the clozes: (1/|C|) sum_c max_b LLMJudge(Λ(o), b) (Table 2,
004:207). The judge is any OpenAI-compatible chat model (the paper's: GPT-3.5, 004:176).

factprobe's earlier judge (`judge_prompt=yes-no`) asked its own yes/no question about the greedy
answer to the first cloze and is kept as that named option.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Sequence

from ..scoring.requests import GenerateRequest

JUDGE_PROMPTS = ("paper", "yes-no")  # the paper's first

# Appendix D's words, in its order. The extraction runs the prompt on one line (004:362); the
# layout here (instruction, a blank line, one field per line, a blank line between examples) is
# the usual few-shot layout and the one the authors' released code uses (Orange-OpenSource/
# DistFactAssessLM, src/know/generation.py). Three places differ from the extracted line, each
# where the extraction lost a character the prompt's own pattern needs: `["actor"]` is closed
# (the line reads `["actor"`), and the Maharashtra and Edward Tise queries end in "____" like the
# six others (the line reads "... is located is" and "... was is"); the authors' code has all three.
PAPER_INSTRUCTION = (
    'You need to check whether the prediction of a question-answering system to a query is correct. You should '
    'make the judgment based on a list of ground truth answers provided to you in a form of a list of aliases of '
    'the gold answer. Your response should be "correct" if the prediction is correct or "incorrect" if the '
    'prediction is wrong.')
SHREW = "The author of The Taming of the Shrew (published in 2002) is ____"
PAPER_EXAMPLES = (  # (query, ground truth, prediction, correctness)
    (SHREW, ("William Shakespeare", "Roma Gill"), "W Shakespeare", "correct"),
    (SHREW, ("William Shakespeare", "Roma Gill"), "Roma Gill and W Shakespeare", "correct"),
    (SHREW, ("William Shakespeare", "Roma Gill"), "Roma Shakespeare", "incorrect"),
    ("The country where Maharashtra Metro Rail Corporation Limited is located is ____", ("India",), "Maharashtra",
     "incorrect"),
    ("The job of Song Kang-ho in Parasite (2019) is ____", ("actor",),
     "He plays the role of Kim Ki-taek, the patriarch of the Kim family.", "correct"),
    ("The era to which Michael Oakeshott belongs is ____", ("20th-century philosophy",), "20th century.", "correct"),
    ("The department where Edward Tise (known for Full Metal Jacket (1987)) was is ____", ("sound department",),
     "2nd Infantry Division, United States Army", "incorrect"),
    ("The wine region to which Finger Lakes AVA belongs is ____", ("New York wine",), "Finger Lakes AVA",
     "incorrect"),
)
BLANK = "____"

# factprobe's own judge before issue 38 (`judge_prompt=yes-no`).
YES_NO_PROMPT = ("Question: {question}\nReference answers: {gold}\nProposed answer: {answer}\n"
                 "Is the proposed answer correct? Reply with yes or no only.")
REPLY_TOKENS = 8  # "correct", "incorrect" or "yes"/"no", with room for a leading label


def ground_truth(names: Sequence[str]) -> str:
    """Appendix D's list of aliases: a JSON list, as ["William Shakespeare", "Roma Gill"]."""
    return json.dumps(list(names), ensure_ascii=False)


def _block(query: str, names: Sequence[str], prediction: str) -> str:
    return f"Query: {query}\nGround truth: {ground_truth(names)}\nPrediction: {prediction}\nCorrectness:"


def paper_prompt(query: str, names: Sequence[str], prediction: str) -> str:
    """Appendix D's prompt with [QUERY], [LIST OF REFERENCES OF CORRECT OBJECT] and [LM
    PREDICTION] filled in: the cloze with its blank, o's names, one beam."""
    shots = "\n\n".join(f"{_block(q, g, p)} {c}" for q, g, p, c in PAPER_EXAMPLES)
    return f"{PAPER_INSTRUCTION}\n\n{shots}\n\n{_block(query, names, prediction)}"


def judge_query(cloze: str) -> str:
    """The declarative cloze as the prompt's examples write it: the text before the object, then
    a blank ("The capital of France is ____")."""
    return f"{cloze.rstrip()} {BLANK}"


def paper_verdict(reply: str) -> bool:
    """The prompt ends "Correctness:" and its examples answer one word, "correct" or
    "incorrect": the verdict is the reply's first word (after a repeated "Correctness:"). A reply
    that answers otherwise ("The correct answer is ...") is no verdict of correct."""
    words = reply.casefold().split()
    if words[:1] == ["correctness:"]:
        words = words[1:]
    return bool(words) and words[0].strip(".,;:!?\"'*") == "correct"


def yes_no_verdict(reply: str) -> bool:
    return reply.strip().casefold().startswith("yes")


@dataclass(frozen=True)
class Judged:
    """One fact's verdicts: per cloze, per answer (beam); the best per cloze; their mean. The
    judge's replies are kept beside them (blank where a blank answer was not asked)."""

    verdicts: tuple[tuple[bool, ...], ...]
    replies: tuple[tuple[str, ...], ...] = ()

    @property
    def per_cloze(self) -> list[float]:
        return [float(any(v)) for v in self.verdicts]  # max over beams of 0/1 verdicts

    @property
    def score(self) -> float:
        best = self.per_cloze
        return math.fsum(best) / len(best) if best else 0.0


class Judge:
    """An OpenAI-compatible chat model asked the paper's prompt (or the yes/no one), greedily."""

    def __init__(self, model: str, base_url: str | None, prompt: str) -> None:
        from ..scoring.openai_api import OpenAIScorer

        if prompt not in JUDGE_PROMPTS:
            raise ValueError(f"judge prompt {prompt!r}: use one of {', '.join(JUDGE_PROMPTS)}")
        self.prompt = prompt
        self.model = OpenAIScorer(model, base_url=base_url, chat=True)

    def ask(self, prompts: Sequence[str]) -> list[str]:
        """The judge's replies, each distinct prompt asked once."""
        unique = list(dict.fromkeys(prompts))
        replies = self.model.generate([GenerateRequest(p, max_tokens=REPLY_TOKENS) for p in unique])
        found = {p: r.texts[0] for p, r in zip(unique, replies)}
        return [found[p] for p in prompts]

    def beams(self, clozes: Sequence[Sequence[str]], names: Sequence[Sequence[str]],
              answers: Sequence[Sequence[Sequence[str]]]) -> list[Judged]:
        """Per fact: `clozes` its clozes (text before the object), `names` o's names, `answers`
        per cloze its beams. A blank answer is incorrect without asking (nothing was predicted)."""
        asked = [paper_prompt(judge_query(c), n, a.strip()) for cs, n, per in zip(clozes, names, answers)
                 for c, texts in zip(cs, per) for a in texts if a.strip()]
        replies = iter(self.ask(asked))
        out = []
        for per in answers:
            said = tuple(tuple(next(replies) if a.strip() else "" for a in texts) for texts in per)
            out.append(Judged(tuple(tuple(paper_verdict(r) for r in texts) for texts in said), said))
        return out

    def yes_no(self, questions: Sequence[str], golds: Sequence[Sequence[str]], answers: Sequence[str]) -> list[bool]:
        """factprobe's earlier judge: one greedy answer per fact against its question."""
        asked = [YES_NO_PROMPT.format(question=q, gold="; ".join(g), answer=a.strip())
                 for q, g, a in zip(questions, golds, answers)]
        return [yes_no_verdict(r) for r in self.ask(asked)]

"""Comparing free-text answers of generative models with gold names and with each other.

Answers are compared as sequences of casefolded lemmas (NFKC, word tokens, simplemma): `matches`
(accuracy) wants the gold's lemmas as a contiguous run in the prediction's, `same_answer`
(consistency) either answer's inside the other's. Examples and edge cases: docs/design/measures.md.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable

import simplemma

# Letters and digits in any script; "_" is excluded because \w would keep it.
_WORD = re.compile(r"[^\W_]+")


@lru_cache(maxsize=65536)
def answer_tokens(text: str, lang: str = "en") -> tuple[str, ...]:
    """The answer as a tuple of casefolded lemmas (see the module docstring)."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    # The lemma of a casefolded word can come back capitalized ("paris" -> "Paris"): fold again.
    return tuple(simplemma.lemmatize(word, lang=lang).casefold() for word in words)


def contains(tokens: tuple[str, ...], run: tuple[str, ...]) -> bool:
    """Whether `run` (non-empty) occurs as a contiguous sub-sequence of `tokens`."""
    if not run or len(run) > len(tokens):
        return False
    width = len(run)
    return any(tokens[k:k + width] == run for k in range(len(tokens) - width + 1))


def matches(prediction: str, gold: str, lang: str = "en") -> bool:
    """Accuracy's test: the gold name's lemmas appear, in order and adjacent, in the prediction."""
    return contains(answer_tokens(prediction, lang), answer_tokens(gold, lang))


def matches_any(prediction: str, golds: Iterable[str], lang: str = "en") -> bool:
    """`matches` against any of a fact's gold names (label and aliases of every true object)."""
    return any(matches(prediction, gold, lang) for gold in golds)


def same_answer(a: str, b: str, lang: str = "en") -> bool:
    """Consistency's test: one answer's lemmas appear contiguously in the other's. Two answers
    without words agree with each other and with nothing else."""
    ta, tb = answer_tokens(a, lang), answer_tokens(b, lang)
    if not ta or not tb:
        return not ta and not tb
    return contains(ta, tb) or contains(tb, ta)

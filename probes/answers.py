"""Comparing free-text answers of generative models with gold names and with each other.

A generated answer rarely equals a gold label character for character: "Paris.", "the city of
Paris", "cities" for "city". BELIEF-ICL therefore compares answers as sequences of lemmas:

- `answer_tokens(text)`: NFKC, casefold, word tokens (runs of letters and digits; punctuation,
  underscores and whitespace separate tokens and are dropped), each lemmatized with simplemma
  (a PyPI lemmatizer whose dictionaries ship inside the wheel), casefolded again.
- `matches(prediction, gold)`, for accuracy, is ONE-directional: the gold's tokens must appear
  as a contiguous run inside the prediction's. "the city of Paris" matches gold "Paris" (the
  model named the right entity with extra words, as in LAMA-style containment), while "Paris"
  does not match gold "Paris Hilton" (a part of a name is not the name).
- `same_answer(a, b)`, for consistency and sampling confidence, is BI-directional: either
  answer's tokens form a contiguous run inside the other's, so "Paris" and "Paris, France"
  count as the same answer whichever came first.

An answer with no word token (empty, blank, punctuation only) never matches a gold name; two
such answers are the same answer (the model consistently says nothing), and such an answer
differs from any answer that has words. All functions are pure; the tokenization is cached.
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

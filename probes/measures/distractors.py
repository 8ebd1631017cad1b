"""The distractor measure (Ammar Khodja et al. 2025): Min@n and Avg@n of the gold object against
its first n distractors, the per-fact aggregate, and the baselines it is compared with
(Probability, Precision@n, ROUGE-L: rouge-score's). Conventions: probes/measures/__init__.py.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from typing import Hashable, Sequence

from ._checks import _require_items, _require_same_length


# ---------------------------------------------------------------------------------------------
# Distractors: the gold object against its n most plausible distractors


def _first_n(distractor_plausibilities: Sequence[float], n: int) -> Sequence[float]:
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if len(distractor_plausibilities) < n:
        raise ValueError(f"n={n} but only {len(distractor_plausibilities)} distractors")
    return distractor_plausibilities[:n]


def min_at_n(gold_plausibility: float, distractor_plausibilities: Sequence[float], n: int) -> bool:
    """Min@n: the fact counts as known when the gold object's plausibility is strictly greater
    than that of each of the first n distractors (the distractors in the order the strategy
    ranked them). A tie means not known. Raises ValueError when n < 1 or fewer than n
    distractors are given."""
    return all(gold_plausibility > d for d in _first_n(distractor_plausibilities, n))


def avg_at_n(gold_plausibility: float, distractor_plausibilities: Sequence[float], n: int) -> float:
    """Avg@n: (1/n) * sum over the first n distractors d_i of 1[gold > d_i], strict (a tie scores
    0). Same errors as `min_at_n`."""
    first = _first_n(distractor_plausibilities, n)
    return sum(gold_plausibility > d for d in first) / n


def mean_over_facts(values: Sequence[float], fact_ids: Sequence[Hashable]) -> float:
    """Aggregate per-cloze scores (Min@n as 0/1, Avg@n, any baseline) over a probe set: first the
    mean over each fact's clozes, then the mean over facts, so that a fact with many templates
    weighs as much as a fact with one. Raises ValueError on empty or mismatched input."""
    means = fact_means(values, fact_ids)
    return math.fsum(means) / len(means)


def fact_means(values: Sequence[float], fact_ids: Sequence[Hashable]) -> list[float]:
    """Each fact's mean over its values, facts in order of first appearance: the units that
    `mean_over_facts` averages and that an interval over facts resamples."""
    _require_items(values, "values")
    _require_same_length(values, fact_ids, "values", "fact_ids")
    per_fact: dict[Hashable, list[float]] = {}
    for value, fact in zip(values, fact_ids):
        per_fact.setdefault(fact, []).append(float(value))
    return [math.fsum(v) / len(v) for v in per_fact.values()]


# ---------------------------------------------------------------------------------------------
# Distractors: baselines


def probability_known(gold_prob: float, threshold: float) -> bool:
    """Probability baseline: known when the gold object's probability is strictly above the
    threshold (works the same with log-probabilities and a log threshold)."""
    return gold_prob > threshold


def precision_at_n(ranked_answers: Sequence[str], gold_set: set[str] | frozenset[str], n: int) -> float:
    """Precision@n in LAMA's sense: 1.0 when any of the model's first n ranked answers is one of
    the gold answers (object labels and aliases, compared as given), else 0.0. Averaged over
    facts this is the usual P@n. Raises ValueError when n < 1 or the gold set is empty."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not gold_set:
        raise ValueError("gold_set is empty")
    return 1.0 if any(a in gold_set for a in ranked_answers[:n]) else 0.0


# Scripts written without spaces between words: each character is a token, as ROUGE is usually
# taken over Chinese and Japanese (Han ideographs, their extensions, kana).
_UNSPACED = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F))


def _unspaced(char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in _UNSPACED)


class UnicodeWords:
    """The tokenizer `rouge_l` gives rouge-score (which takes any object with a `tokenize` method):
    its default one keeps [a-z0-9] only, so "北京" has no tokens and "Zürich" becomes "z rich".
    This one takes the text NFKC-normalized and casefolded, and its tokens are the runs of letters,
    marks and digits (everything else separates them), with each Han or kana character a token of
    its own. On ASCII text it gives the default's tokens."""

    def tokenize(self, text: str) -> list[str]:
        tokens: list[str] = []
        word: list[str] = []
        for char in unicodedata.normalize("NFKC", text).casefold():
            if unicodedata.category(char)[0] in "LMN" and not _unspaced(char):
                word.append(char)
                continue
            if word:
                tokens.append("".join(word))
                word = []
            if _unspaced(char):
                tokens.append(char)
        if word:
            tokens.append("".join(word))
        return tokens


@functools.cache
def _scorer():
    from rouge_score.rouge_scorer import RougeScorer  # the `eval` extra; slow to import (nltk)

    return RougeScorer(["rougeL"], tokenizer=UnicodeWords())


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F-measure (beta = 1) as rouge-score's RougeScorer(["rougeL"]) computes it: with L the
    length of the longest common subsequence of the tokens, P = L / |candidate|,
    R = L / |reference|, F = 2PR / (P + R); 0.0 when L = 0, including an empty candidate or
    reference (an empty generation scores 0 rather than failing a whole evaluation).
    Normalizes only as `UnicodeWords` tokenizes: NFKC, case, punctuation and spaces between tokens
    ("Paris." and "paris" score 1.0); no stemming, no lemmas, no articles dropped, no aliases. The
    baselines method passes both sides through `answer_key` first and takes the best gold name."""
    return float(_scorer().score(reference, candidate)["rougeL"].fmeasure)

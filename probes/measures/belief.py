"""BELIEF / BELIEF-ICL and MyriadLAMA (Zhao et al.): Acc@1 and its fluctuation over random
one-prompt-per-unit draws, Consist, Ovconf and its reliability bins, the one-word ratio, the bias
level (the paper's entropy, and factprobe's older top-1 agreement), the sharing rates between two
models and average / maximum / oracle coverage. A "fact" here is whatever unit the probe set's items are (a subject-relation pair in the
paper). Conventions: probes/measures/__init__.py.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from ._checks import _require_items, _require_prompts, _require_same_length


# ---------------------------------------------------------------------------------------------
# BELIEF: accuracy and its fluctuation


@dataclass(frozen=True)
class AccAt1:
    """Acc@1 over `draws` random one-prompt-per-fact draws: the mean, the population standard
    deviation (ddof=0) and the extremes of the per-draw accuracies; range = max - min."""

    mean: float
    sd: float
    min: float
    max: float
    range: float
    draws: int


# BELIEF (Zhao et al.) estimates Acc@1 and its fluctuation from N = 50,000 one-prompt-per-pair draws.
PAPER_ACC_DRAWS = 50_000
# Random picks drawn at once at most (draws x units): 50,000 draws over MyriadLAMA's 34,048 units
# would be 1.7e9 int64 picks (13.6 GB) in one array; rows are drawn in chunks below this size.
_PICKS_PER_CHUNK = 1 << 22


def acc_at_1(correct: Sequence[Sequence[bool]], draws: int = PAPER_ACC_DRAWS, seed: int = 0) -> AccAt1:
    """BELIEF's Acc@1 and its fluctuation.

    `correct[f][p]` says whether the top-1 prediction of prompt p of fact f is correct. One draw
    picks, for every fact independently, one of its prompts uniformly at random (numpy
    `default_rng(seed)`) and scores the accuracy over facts. Over `draws` draws (default the
    paper's N = 50,000) this returns the mean, the SD with ddof=0 (the spread of the draws we
    made, not an estimate for a population of draws), min, max and range = max - min. The mean
    converges to `expected_acc_at_1`. Deterministic for a seed; draws are made in chunks of rows
    from one generator, so memory stays bounded whatever `draws` is. Raises ValueError when there
    are no facts, a fact has no prompts, or draws < 1.
    """
    _require_prompts(correct, "correct")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ValueError(f"draws must be a whole number >= 1, got {draws!r}")
    sizes = np.array([len(prompts) for prompts in correct], dtype=np.int64)
    flat = np.fromiter((bool(c) for prompts in correct for c in prompts), dtype=bool, count=int(sizes.sum()))
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    rng = np.random.default_rng(seed)
    rows = max(1, _PICKS_PER_CHUNK // len(sizes))
    per_draw = np.empty(draws, dtype=float)
    for start in range(0, draws, rows):
        count = min(rows, draws - start)
        # One row per draw, one column per fact: a prompt index in [0, size of that fact).
        picks = rng.integers(0, sizes, size=(count, len(sizes)))
        per_draw[start:start + count] = flat[offsets + picks].mean(axis=1)
    low, high = float(per_draw.min()), float(per_draw.max())
    return AccAt1(mean=float(per_draw.mean()), sd=float(per_draw.std(ddof=0)), min=low, max=high,
                  range=high - low, draws=draws)


def expected_acc_at_1(correct: Sequence[Sequence[bool]]) -> float:
    """The exact expectation of one random draw's Acc@1: the mean over facts of the share of the
    fact's prompts that are correct. This is also MyriadLAMA's "average coverage"."""
    _require_prompts(correct, "correct")
    return math.fsum(sum(map(bool, prompts)) / len(prompts) for prompts in correct) / len(correct)


# ---------------------------------------------------------------------------------------------
# BELIEF: consistency


def consistency(predictions: Sequence[Sequence[str]]) -> float:
    """BELIEF's Consist: per fact, the share of unordered pairs of its prompts whose (already
    normalized) predictions are equal strings; the mean of that share over the facts that have at
    least two prompts. Facts with one prompt have no pair and are left out. Raises ValueError when
    no fact has two prompts.
    """
    _require_items(predictions, "predictions")
    shares = []
    for answers in predictions:
        k = len(answers)
        if k < 2:
            continue
        # Pairs that agree: within each group of equal answers, every pair of its members.
        agreeing = sum(c * (c - 1) // 2 for c in Counter(answers).values())
        shares.append(agreeing / (k * (k - 1) // 2))
    if not shares:
        raise ValueError("consistency needs at least one fact with two or more prompts")
    return math.fsum(shares) / len(shares)


# ---------------------------------------------------------------------------------------------
# BELIEF: reliability


@dataclass(frozen=True)
class Bin:
    """One bin of a reliability diagram: mean confidence, accuracy and number of items."""

    confidence: float
    accuracy: float
    count: int


# BELIEF arranges the prompts "in descending order based on confidence" before it cuts the bins
# (000:76); factprobe sorted them ascending before issue 38.
BIN_ORDERS = ("descending", "ascending")
# Prompts of equal confidence, cut apart by a bin edge: the paper does not say which go where
# (000:76). `average`: every order of the tied prompts at once, each position holding their mean
# correctness; `file-order`: as the input lists them (factprobe's before issue 45).
TIE_RULES = ("average", "file-order")


def reliability_bins(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10,
                     order: str = "descending", ties: str = "average") -> list[Bin]:
    """Equal-size confidence bins, as BELIEF's Ovconf uses them (000:76).

    Items are sorted by confidence, descending as the paper arranges them (`order="ascending"`:
    factprobe's before issue 38), then cut into `bins` consecutive bins with numpy.array_split
    semantics: when the count does not divide evenly, the first (len % bins) bins hold one item
    more, the most confident ones (ascending: the least confident). A bin's confidence is the mean
    of its items'. Its accuracy, where a run of equal confidences straddles a bin edge, depends
    on which tied items land on which side: `ties="average"` gives every position of such a run
    the run's share of correct items, so each bin's accuracy is its expectation over every order
    of the ties and no input order changes it (confidences 0.5, 0.5, 0.5, 0.1 with answers right,
    wrong, wrong, wrong in 2 bins: accuracies 1/3 and 1/6 whatever the order); `ties="file-order"`
    keeps tied items in input order (a stable sort, factprobe's before issue 45). Confidences
    must lie in [0, 1]. Raises ValueError on empty or mismatched input, bins < 1, fewer items
    than bins (a bin would be empty), another order or another tie rule.
    """
    _require_items(confidence, "confidence")
    _require_same_length(confidence, correct, "confidence", "correct")
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if len(confidence) < bins:
        raise ValueError(f"{len(confidence)} items cannot fill {bins} bins")
    if order not in BIN_ORDERS:
        raise ValueError(f"order must be one of {', '.join(BIN_ORDERS)}, not {order!r}")
    if ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {', '.join(TIE_RULES)}, not {ties!r}")
    conf = np.asarray(confidence, dtype=float)
    if not np.all((conf >= 0.0) & (conf <= 1.0)):
        raise ValueError("confidence values must lie in [0, 1]")
    hits = np.fromiter(map(bool, correct), dtype=bool, count=len(correct))
    ranked = np.argsort(-conf if order == "descending" else conf, kind="stable")
    conf, hits = conf[ranked], hits[ranked].astype(float)
    if ties == "average":
        starts = np.flatnonzero(np.concatenate(([True], conf[1:] != conf[:-1])))
        sizes = np.diff(np.concatenate((starts, [len(conf)])))
        hits = np.repeat(np.add.reduceat(hits, starts) / sizes, sizes)
    return [Bin(confidence=float(conf[idx].mean()), accuracy=float(hits[idx].mean()), count=len(idx))
            for idx in np.array_split(np.arange(len(conf)), bins)]


def overconfidence(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10,
                   order: str = "descending", ties: str = "average") -> float:
    """BELIEF's Ovconf: the mean over the `reliability_bins` of (mean confidence - accuracy).

    Positive means over-confident, negative under-confident. Every bin has the same weight (the
    paper's |P(i)|/M, 000:76, with bins of one size). When the item count divides evenly by
    `bins` this equals mean(confidence) - accuracy over all items, whatever the order; otherwise
    the order decides which bins hold the extra items, and so the value: confidences 0.1, 0.5,
    0.9 with answers wrong, right, right in 2 bins give -0.1 descending, -0.15 ascending. Tied
    confidences as `reliability_bins`' `ties` says. Same errors as `reliability_bins`.
    """
    cells = reliability_bins(confidence, correct, bins, order, ties)
    return math.fsum(b.confidence - b.accuracy for b in cells) / len(cells)


# ---------------------------------------------------------------------------------------------
# BELIEF-ICL: answer format and bias


def answer_key(text: str) -> str:
    """How answers are compared when no lemmatizer is involved: casefolded, spaces collapsed,
    surrounding punctuation dropped."""
    return " ".join(text.casefold().split()).strip(" .,;:!?\"'()")


def one_word_ratio(answers: Sequence[str]) -> float:
    """Share of answers that are exactly one word: str.split() (runs of whitespace, after
    stripping) yields one token. An empty or blank answer has zero words and does not count.
    Raises ValueError on empty input."""
    _require_items(answers, "answers")
    return sum(len(a.split()) == 1 for a in answers) / len(answers)


BIAS_DEFINITIONS = ("entropy", "top1")  # the paper's first
# BELIEF's content-free subjects, whose output distributions are ensembled (averaged).
PAPER_CONTENT_FREE = ("N/A", "", "?")


def entropy_bias_level(distributions: Sequence[Sequence[float]]) -> float:
    """BELIEF's bias level of one relation in multi-prompt evaluation: 1 - H(P) / H_max
    (seed 000 = ../shared/papers/000_d5e47173cc9830b1.txt, lines 188-194).

    `distributions[i][c]` is the model's probability of candidate object c at the mask of
    content-free prompt i (one per template and content-free subject, e.g. "N/A", "" and "?"),
    read off its output distribution over the whole vocabulary; all rows list the same candidates
    in the same order. As the paper does, the output distributions are averaged first (the
    content-free subjects ensembled, then the templates: plain means, so one mean of all rows when
    every template has the same subjects), and P is that average over the candidates, normalized
    once; H(P) is its Shannon entropy (natural log, 0 log 0 = 0) and H_max = log(#candidates). A
    prompt that puts little mass on the candidates weighs little (factprobe before issue 28
    renormalized every row first, so each weighed alike). A uniform P gives 0, a one-hot P gives 1
    (the template alone decides the answer). NaN with fewer than 2 candidates (H_max = 0: nothing
    to prefer). Raises ValueError on empty input, rows of different lengths, a negative or
    non-finite value, or no mass on any candidate in any row.
    """
    _require_items(distributions, "distributions")
    if len({len(row) for row in distributions}) != 1:
        raise ValueError("distributions: rows of different lengths (every row lists the same candidates)")
    rows = np.asarray(distributions, dtype=float)
    if rows.shape[1] < 2:
        return math.nan
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise ValueError("distributions: probabilities must be finite and >= 0")
    mean = rows.mean(axis=0)
    if mean.sum() <= 0:
        raise ValueError("distributions: no row gives any probability to any candidate")
    p = mean / mean.sum()
    kept = p[p > 0]
    entropy = float(-(kept * np.log(kept)).sum())
    # Clamp rounding just outside [0, 1] (a uniform P can give H a hair above log n).
    return min(1.0, max(0.0, 1.0 - entropy / math.log(rows.shape[1])))


def single_prompt_bias_level(templates: Sequence[Sequence[Sequence[float]]]) -> float:
    """BELIEF's bias level in single-prompt evaluation (seed 000 line 194: "the average level
    across all relational templates"): `templates[t]` holds template t's content-free rows (one
    per content-free subject, as in `entropy_bias_level`); each template's level is
    `entropy_bias_level` of its own rows, and this is their mean. A template whose rows give no
    mass to any candidate has no level and is left out; NaN when none is left or with fewer than 2
    candidates. Raises ValueError on empty input and as `entropy_bias_level` does."""
    _require_items(templates, "templates")
    levels = [entropy_bias_level(rows) for rows in templates
              if any(v > 0 for row in rows for v in row)]
    levels = [v for v in levels if not math.isnan(v)]
    return math.fsum(levels) / len(levels) if levels else math.nan


def bias_level(predictions: Sequence[str], content_free_predictions: Sequence[str],
               groups: Sequence[Hashable]) -> float:
    """Bias level as top-1 agreement with a content-free prompt: factprobe's older definition
    (`bias=top1`), not the paper's (`entropy_bias_level`). A uniform content-free distribution,
    bias 0 in the paper, can score 1.0 here when its top-1 happens to be the real answer.

    Item i is a real prompt; `predictions[i]` is the model's answer to it,
    `content_free_predictions[i]` the answer to the same template with the subject replaced by a
    content-free token such as "N/A", and `groups[i]` its group (normally the relation). An item
    is "biased" when its answer equals the content-free answer: the model says what it says for
    this template regardless of the subject. The bias level is the share of biased items per
    group, averaged over groups with equal weight (pass one group for a plain item average).
    Raises ValueError on empty or mismatched input.
    """
    _require_items(predictions, "predictions")
    _require_same_length(predictions, content_free_predictions, "predictions", "content_free_predictions")
    _require_same_length(predictions, groups, "predictions", "groups")
    biased: dict[Hashable, list[bool]] = {}
    for answer, free, group in zip(predictions, content_free_predictions, groups):
        biased.setdefault(group, []).append(answer == free)
    return math.fsum(sum(flags) / len(flags) for flags in biased.values()) / len(biased)


# ---------------------------------------------------------------------------------------------
# BELIEF: how two models' covered facts overlap


def sharing_rates(covered_a: set, covered_b: set) -> tuple[float, float]:
    """BELIEF's knowledge sharing rates, asymmetric (seed 000 line 271): the facts both models
    cover (predict correctly, per template) as a share of A's covered facts, and as a share of
    B's: (|A ∩ B| / |A|, |A ∩ B| / |B|). A knows {1, 2}, B knows {1, 3, 4}: (0.5, 1/3). NaN on
    the side of a model that covers nothing (there is nothing to share a proportion of)."""
    both = len(set(covered_a) & set(covered_b))
    return (both / len(covered_a) if covered_a else math.nan, both / len(covered_b) if covered_b else math.nan)


# ---------------------------------------------------------------------------------------------
# MyriadLAMA: coverage


@dataclass(frozen=True)
class Coverage:
    """Knowledge coverage with many prompts per fact (all shares of facts, in [0, 1])."""

    average: float  # mean over facts of the share of its prompts that are correct
    maximum: float  # the same when every relation is probed with its single best template only
    oracle: float  # share of facts with at least one correct prompt


COVERAGE_MAXIMUM = ("best-subject", "mean")  # the paper's first


def coverage(correct: Sequence[Sequence[bool]], template_ids: Sequence[Sequence[Hashable]],
             relations: Sequence[Hashable], maximum: str = "best-subject") -> Coverage:
    """MyriadLAMA's average, maximum and oracle coverage.

    `correct[f][p]` and `template_ids[f][p]` describe prompt p of fact f (a fact may have several
    prompts per template, e.g. one per subject alias); `relations[f]` is the fact's relation.

    - average: mean over facts of the share of the fact's prompts that are correct (=
      `expected_acc_at_1`).
    - maximum: a fact's score under template t is, with `maximum="best-subject"` (the paper's:
      the prompt with the best subject expression is selected), 1 when any of its prompts with
      template t is correct, else 0; with `maximum="mean"` (factprobe's older definition) the
      share of those prompts that are correct. 0 when it has no prompt with t. Per relation, the
      best template is the one with the highest mean score over the relation's facts; maximum is
      the mean over all facts of their score under their relation's best template (relations
      weighted by their facts).
    - oracle: share of facts with at least one correct prompt.

    Raises ValueError on empty input, a fact without prompts, mismatched lengths, or an unknown
    `maximum`.
    """
    if maximum not in COVERAGE_MAXIMUM:
        raise ValueError(f"coverage maximum {maximum!r}: use one of {', '.join(COVERAGE_MAXIMUM)}")
    score = any if maximum == "best-subject" else (lambda flags: sum(flags) / len(flags))
    _require_prompts(correct, "correct")
    _require_same_length(correct, template_ids, "correct", "template_ids")
    _require_same_length(correct, relations, "correct", "relations")
    # Per relation and template: the sum over facts of the fact's score under that template;
    # per relation: the number of facts.
    template_sums: dict[Hashable, dict[Hashable, float]] = {}
    facts_in: Counter = Counter()
    shares, known = [], 0
    for f, (hits, templates, relation) in enumerate(zip(correct, template_ids, relations)):
        _require_same_length(hits, templates, f"correct[{f}]", f"template_ids[{f}]")
        hits = [bool(h) for h in hits]
        shares.append(sum(hits) / len(hits))
        known += any(hits)
        facts_in[relation] += 1
        per_template: dict[Hashable, list[bool]] = {}
        for hit, template in zip(hits, templates):
            per_template.setdefault(template, []).append(hit)
        sums = template_sums.setdefault(relation, {})
        for template, flags in per_template.items():
            sums[template] = sums.get(template, 0.0) + float(score(flags))
    # The best template's sum of fact scores is its relation's share of the maximum (a template
    # missing from a fact already contributes 0 to that sum).
    best_total = math.fsum(max(sums.values()) for sums in template_sums.values())
    n = len(correct)
    return Coverage(average=math.fsum(shares) / n, maximum=best_total / n, oracle=known / n)

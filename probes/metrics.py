"""Metrics of the four probing methods, as pure functions (no I/O, no model).

- BELIEF / BELIEF-ICL and MyriadLAMA (Zhao et al.): Acc@1 with its fluctuation over random
  one-prompt-per-unit draws (N = 50,000 as published), Consist, Ovconf and reliability bins,
  one-word ratio, bias level (the paper's entropy of the content-free distribution, and our older
  top-1 agreement share), average / maximum / oracle coverage (maximum with the best subject
  expression, as published, or the mean over subject expressions).
  A BELIEF "fact" below is whatever unit the probe set's items are: a subject-relation pair in
  the paper (probes/builders.py `build_cloze`, unit "pair"), or one (s, r, o) fact.
- IC-LKE (Wu et al. 2024): subsumption rate, sharing rate, Pearson and Kendall tau-b, accuracy
  over confident items (Accuracy@K) and the normalized choice probabilities it needs.
- Distractors (Ammar Khodja et al. 2025): Min@n, Avg@n, the per-fact aggregate, and the baselines
  Probability, Precision@n and ROUGE-L.
- KDF: accuracy per frequency bucket is `accuracy_by(records, "bucket")`.

Conventions shared by every function here:
- Empty input and sequences of different lengths raise ValueError, with a message naming the
  argument. A value that is defined but has nothing to average over (no variance for a
  correlation, no item above a threshold) is NaN, never an exception.
- "Correct" values are read with bool(); plausibilities and probabilities are plain floats.
- Comparisons that decide whether a model "knows" a fact are strict: a tie is not knowledge.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np

# ---------------------------------------------------------------------------------------------
# Input checks


def _require_items(values: Sequence, name: str) -> None:
    if len(values) == 0:
        raise ValueError(f"{name} is empty")


def _require_same_length(a: Sequence, b: Sequence, name_a: str, name_b: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"{name_a} and {name_b} differ in length ({len(a)} != {len(b)})")


def _require_prompts(per_fact: Sequence[Sequence], name: str) -> None:
    """Per-fact, per-prompt input: at least one fact, and every fact has at least one prompt."""
    _require_items(per_fact, name)
    for i, prompts in enumerate(per_fact):
        if len(prompts) == 0:
            raise ValueError(f"{name}[{i}] has no prompts")


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


def reliability_bins(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10) -> list[Bin]:
    """Equal-size confidence bins, as BELIEF's Ovconf uses them.

    Items are sorted by confidence, ascending, with a stable sort (tied confidences keep their
    input order), then cut into `bins` consecutive bins with numpy.array_split semantics: when
    the count does not divide evenly, the first (len % bins) bins, the least confident ones,
    hold one item more. Confidences must lie in [0, 1]. Raises ValueError on empty or
    mismatched input, bins < 1, or fewer items than bins (a bin would be empty).
    """
    _require_items(confidence, "confidence")
    _require_same_length(confidence, correct, "confidence", "correct")
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if len(confidence) < bins:
        raise ValueError(f"{len(confidence)} items cannot fill {bins} bins")
    conf = np.asarray(confidence, dtype=float)
    if not np.all((conf >= 0.0) & (conf <= 1.0)):
        raise ValueError("confidence values must lie in [0, 1]")
    hits = np.fromiter(map(bool, correct), dtype=bool, count=len(correct))
    order = np.argsort(conf, kind="stable")
    return [Bin(confidence=float(conf[idx].mean()), accuracy=float(hits[idx].mean()), count=len(idx))
            for idx in np.array_split(order, bins)]


def overconfidence(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10) -> float:
    """BELIEF's Ovconf: the mean over the `reliability_bins` of (mean confidence - accuracy).

    Positive means over-confident, negative under-confident. Every bin has the same weight; when
    the item count divides evenly by `bins` this equals mean(confidence) - accuracy over all
    items, and the binning only matters through the remainder. Same errors as `reliability_bins`.
    """
    cells = reliability_bins(confidence, correct, bins)
    return math.fsum(b.confidence - b.accuracy for b in cells) / len(cells)


# ---------------------------------------------------------------------------------------------
# BELIEF-ICL: answer format and bias


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
    """BELIEF's bias level of one relation: 1 - H(P) / H_max.

    `distributions[i][c]` is the model's probability of candidate object c at the mask of
    content-free prompt i (one per template and content-free subject, e.g. "N/A", "" and "?"),
    already restricted to the relation's candidate objects (all rows list the same candidates in
    the same order). Each row is renormalized over the candidates, P is the mean of the rows
    (ensembling the content-free subjects and averaging over templates, both plain means), H(P)
    its Shannon entropy (natural log, 0 log 0 = 0) and H_max = log(#candidates). So a uniform P
    gives 0 (no preference among the objects whatever the subject) and a one-hot P gives 1 (the
    template alone decides the answer). NaN with fewer than 2 candidates (H_max = 0: nothing to
    prefer). Raises ValueError on empty input, rows of different lengths, a negative or
    non-finite value, or a row with no mass on any candidate.
    """
    _require_items(distributions, "distributions")
    if len({len(row) for row in distributions}) != 1:
        raise ValueError("distributions: rows of different lengths (every row lists the same candidates)")
    rows = np.asarray(distributions, dtype=float)
    if rows.shape[1] < 2:
        return math.nan
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise ValueError("distributions: probabilities must be finite and >= 0")
    totals = rows.sum(axis=1)
    if np.any(totals <= 0):
        raise ValueError("distributions: a row gives no probability to any candidate")
    mean = (rows / totals[:, None]).mean(axis=0)
    kept = mean[mean > 0]
    entropy = float(-(kept * np.log(kept)).sum())
    # Clamp rounding just outside [0, 1] (a uniform P can give H a hair above log n).
    return min(1.0, max(0.0, 1.0 - entropy / math.log(rows.shape[1])))


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


# ---------------------------------------------------------------------------------------------
# Breakdowns (frequency bucket, relation, distractor strategy, ICL setting; KDF's buckets)


@dataclass(frozen=True)
class GroupAccuracy:
    correct: int
    total: int
    accuracy: float  # correct / total


def accuracy_by(records: Iterable[Mapping], key: str, correct_key: str = "correct") -> dict[str, GroupAccuracy]:
    """Accuracy per value of `records[i][key]`, keyed by str(value), in first-seen order.

    A record whose value is None, or that lacks `key`, falls into the group "none" (a probe set
    mixing kinds has records without, say, a distractor strategy). `record[correct_key]` is read
    with bool() and must be present. Raises ValueError when there are no records, when no record
    has `key` at all (almost surely a misspelt key), or when a record lacks `correct_key`.
    """
    groups: dict[str, list[int]] = {}
    seen_key = False
    count = 0
    for i, record in enumerate(records):
        count += 1
        if correct_key not in record:
            raise ValueError(f"record {i} has no {correct_key!r}")
        seen_key = seen_key or key in record
        value = record.get(key)
        tally = groups.setdefault("none" if value is None else str(value), [0, 0])
        tally[0] += bool(record[correct_key])
        tally[1] += 1
    if count == 0:
        raise ValueError("records is empty")
    if not seen_key:
        raise ValueError(f"no record has the key {key!r}")
    return {name: GroupAccuracy(correct=c, total=t, accuracy=c / t) for name, (c, t) in groups.items()}


# ---------------------------------------------------------------------------------------------
# IC-LKE: overlap between models and correlations


def subsumption_rate(known_a: set, known_b: set) -> float:
    """|A ∩ B| / |A|: the share of the facts model A knows that model B knows too. Not symmetric.
    When A knows nothing the rate is 1.0 (A ⊆ B holds vacuously)."""
    if not known_a:
        return 1.0
    return len(known_a & known_b) / len(known_a)


def sharing_rate(known_by: Mapping[Hashable, set]) -> float:
    """Share of the facts known by at least one model that are known by every model:
    |∩ K_m| / |∪ K_m| (for two models, the Jaccard index of their known facts). 1.0 when no model
    knows anything (vacuously shared). Raises ValueError when no model is given."""
    if not known_by:
        raise ValueError("known_by is empty")
    sets = list(known_by.values())
    union = set().union(*sets)
    if not union:
        return 1.0
    return len(set.intersection(*map(set, sets))) / len(union)


def shared_rate(known_by: Mapping[Hashable, set], probed: set) -> float:
    """Share of the probed units known by every model: |∩ K_m| / |probed|. Unlike
    `sharing_rate` (a Jaccard index over the units some model knows), the denominator is every
    unit all models were asked about, so two models that both know little share little. NaN
    when nothing was probed. Raises ValueError when no model is given or a model knows a unit
    outside `probed`."""
    if not known_by:
        raise ValueError("known_by is empty")
    for model, known in known_by.items():
        if not set(known) <= set(probed):
            raise ValueError(f"model {model!r} knows units that were not probed")
    if not probed:
        return math.nan
    return len(set.intersection(*map(set, known_by.values()))) / len(probed)


def mean_over_relations(relation_of: Mapping[Hashable, Hashable], rate: Callable[[set], float]) -> float:
    """IC-LKE compares models relation by relation: `rate(units)` is computed on the units of
    each relation (`relation_of[unit]` names a unit's relation; a unit is a fact, or one fact
    under one template and setting) and the rates are averaged with equal weight per relation.
    Relations whose rate is NaN (nothing to measure there, e.g. A knows none of its units for a
    subsumption rate) are left out; NaN when every relation is."""
    units_of: dict[Hashable, set] = {}
    for unit, relation in relation_of.items():
        units_of.setdefault(relation, set()).add(unit)
    rates = [r for r in (rate(units) for units in units_of.values()) if not math.isnan(r)]
    return math.fsum(rates) / len(rates) if rates else math.nan


def subsumption_rate_by_relation(known_a: set, known_b: set, relation_of: Mapping[Hashable, Hashable]) -> float:
    """The subsumption rate of A by B per relation, averaged over the relations in which A knows
    at least one unit (`mean_over_relations` of `subsumption_rate`); `relation_of` holds every
    probed unit. NaN when A knows nothing."""
    return mean_over_relations(
        relation_of, lambda units: subsumption_rate(known_a & units, known_b & units) if known_a & units else math.nan)


def _paired(x: Sequence[float], y: Sequence[float]) -> None:
    _require_same_length(x, y, "x", "y")
    if len(x) < 2:
        raise ValueError(f"a correlation needs at least 2 pairs, got {len(x)}")


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r = sum((x - mean x)(y - mean y)) / sqrt(sum((x - mean x)^2) sum((y - mean y)^2)).
    NaN when x or y is constant (r is undefined). Raises ValueError for fewer than 2 pairs or
    different lengths."""
    _paired(x, y)
    mx, my = math.fsum(x) / len(x), math.fsum(y) / len(y)
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = math.fsum((a - mx) ** 2 for a in x)
    syy = math.fsum((b - my) ** 2 for b in y)
    if sxx == 0.0 or syy == 0.0:
        return math.nan
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))  # clamp rounding just past +-1


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)), where over all n0 = n(n-1)/2 pairs C
    counts concordant and D discordant pairs, n1 the pairs tied in x and n2 the pairs tied in y
    (a pair tied in both counts in n1 and n2 and in neither C nor D). NaN when x or y is constant.
    Computed by scipy.stats.kendalltau (O(n log n)). Raises ValueError for fewer than 2 pairs or
    different lengths."""
    _paired(x, y)
    if len(set(x)) == 1 or len(set(y)) == 1:
        return math.nan  # scipy would also say NaN, with a warning
    from scipy.stats import kendalltau  # scipy is heavy to import and only this needs it

    return float(kendalltau(x, y, variant="b").statistic)


# ---------------------------------------------------------------------------------------------
# IC-LKE: confidence over multiple choices


def normalize_choice_probs(logprobs: Sequence[float]) -> list[float]:
    """Softmax over the choices' log-probabilities: p_i / sum_j p_j, computed as
    exp(l_i - max l) / sum_j exp(l_j - max l) so that large or very negative log-probs neither
    overflow nor underflow to 0/0. -inf entries get probability 0. Raises ValueError on empty
    input or when every entry is -inf (or any is NaN/+inf)."""
    _require_items(logprobs, "logprobs")
    top = max(logprobs)
    if not math.isfinite(top) or any(math.isnan(v) for v in logprobs):
        raise ValueError("logprobs need at least one finite entry and no NaN or +inf")
    weights = [math.exp(v - top) for v in logprobs]
    total = math.fsum(weights)
    return [w / total for w in weights]


@dataclass(frozen=True)
class AccuracyAtK:
    accuracy: float  # accuracy over the selected items; NaN when none is selected
    count: int  # how many items have a normalized probability above K


def accuracy_at_k(probability: Sequence[float], correct: Sequence[bool], k: float) -> AccuracyAtK:
    """IC-LKE's accuracy over confident items: among the items whose normalized probability of
    the predicted choice (see `normalize_choice_probs`) is strictly greater than `k`, the share
    whose prediction is correct, and how many such items there are. NaN accuracy when none is
    above `k`. Raises ValueError on empty or mismatched input."""
    _require_items(probability, "probability")
    _require_same_length(probability, correct, "probability", "correct")
    selected = [bool(c) for p, c in zip(probability, correct) if p > k]
    if not selected:
        return AccuracyAtK(accuracy=math.nan, count=0)
    return AccuracyAtK(accuracy=sum(selected) / len(selected), count=len(selected))


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
    _require_items(values, "values")
    _require_same_length(values, fact_ids, "values", "fact_ids")
    per_fact: dict[Hashable, list[float]] = {}
    for value, fact in zip(values, fact_ids):
        per_fact.setdefault(fact, []).append(float(value))
    return math.fsum(math.fsum(v) / len(v) for v in per_fact.values()) / len(per_fact)


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


def _lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    # Classic dynamic programme, one row at a time: row[j] = LCS of a[:i] and b[:j].
    row = [0] * (len(b) + 1)
    for token in a:
        diagonal = 0  # the previous row's value at j - 1
        for j, other in enumerate(b, start=1):
            above = row[j]
            row[j] = diagonal + 1 if token == other else max(row[j], row[j - 1])
            diagonal = above
    return row[-1]


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F-measure with beta = 1 over lowercased whitespace tokens (punctuation is not
    split off): with L = length of the longest common subsequence, P = L / |candidate|,
    R = L / |reference|, F = 2PR / (P + R). 0.0 when L = 0, including an empty candidate or
    reference (an empty generation scores 0 rather than failing a whole evaluation)."""
    cand, ref = candidate.lower().split(), reference.lower().split()
    common = _lcs_length(cand, ref) if cand and ref else 0
    if common == 0:
        return 0.0
    precision, recall = common / len(cand), common / len(ref)
    return 2 * precision * recall / (precision + recall)

"""Issue 30 item 4: the standard statistics are the standard libraries'. The bootstrap's resamples
and McNemar's test come from scipy.stats, ROUGE-L from rouge-score; Wilson's interval and Pearson's
r stay hand-written (faster, and the numbers already written keep their digits) and are checked
here against scipy on the same inputs, with the edge cases each keeps."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from factprobe.probes.measures import (UnicodeWords, bootstrap, kendall_tau, mcnemar, mcnemar_p, min_at_n, pearson,
                                      rouge_l, wilson)
from factprobe.probes.measures.uncertainty import Estimate

# ---------------------------------------------------------------------------------------------
# Wilson


def scipy_wilson(k: int, n: int, method: str = "wilson") -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method=method)
    return float(ci.low), float(ci.high)


@pytest.mark.parametrize("n", [*range(1, 21), 100, 1001, 12345, 10 ** 6])
def test_wilson_is_scipys_plain_wilson_interval(n):
    ks = range(n + 1) if n <= 20 else (0, 1, 2, n // 3, n // 2, n - 2, n - 1, n)
    for k in ks:
        mine, theirs = wilson(k, n), scipy_wilson(k, n)
        # the two formulas round differently: at most 3.3e-16 apart over every k <= n <= 300
        assert mine.low == pytest.approx(theirs[0], rel=0, abs=4e-16), (k, n)
        assert mine.high == pytest.approx(theirs[1], rel=0, abs=4e-16), (k, n)


def test_wilson_is_the_plain_interval_not_the_continuity_corrected_one():
    # scipy's "wilsoncc" is another interval: 9 of 10 would be [.5409, .9895], not [.5958, .9821]
    assert scipy_wilson(9, 10, "wilsoncc")[0] < wilson(9, 10).low - 0.05


def test_wilson_keeps_its_digits():
    # the values every aggregate.json already holds (the hand formula before issue 30, unchanged)
    assert (wilson(9, 10).low, wilson(9, 10).high) == (0.5958499732047615, 0.9821237869049271)
    assert (wilson(2, 3).low, wilson(2, 3).high) == (0.20765960080204765, 0.9385080552796037)


def test_wilson_ends_exactly_at_zero_and_one():
    # Corrected in issue 30: center -+ half rounded to 2.78e-17 (0 of 7, 0 of 9, ...: 486 totals
    # up to 2000) and to 0.9999999999999999 (10 of 10, 13 of 13, ...: 614 totals); scipy and the
    # formula say 0 and 1.
    assert wilson(0, 7).low == 0.0 and wilson(10, 10).high == 1.0
    assert all(wilson(0, n).low == 0.0 and wilson(n, n).high == 1.0 for n in range(1, 2001))
    assert scipy_wilson(0, 7)[0] == 0.0 and scipy_wilson(10, 10)[1] == 1.0


# ---------------------------------------------------------------------------------------------
# McNemar


def exact_mcnemar(a: int, b: int) -> Fraction:
    d = a + b
    return min(Fraction(1), Fraction(2 * sum(math.comb(d, k) for k in range(min(a, b) + 1)), 2 ** d))


def test_mcnemar_p_is_scipys_exact_binomial_test():
    for d in range(1, 21):
        for a in range(d + 1):
            p = mcnemar_p(a, d - a)
            assert p == stats.binomtest(min(a, d - a), d, 0.5).pvalue
            assert p == pytest.approx(float(exact_mcnemar(a, d - a)), rel=1e-13, abs=0)
    assert mcnemar_p(1, 6) == 0.125 and mcnemar_p(0, 6) == 2 / 64 and mcnemar_p(3, 3) == 1.0
    assert mcnemar_p(0, 0) == 1.0  # nothing discordant: no evidence of a difference
    assert mcnemar([1, 1, 0, 0], [1, 0, 1, 0]).p_value == 1.0


def test_mcnemar_p_on_large_runs_is_fast_and_exact_to_rounding():
    # The hand sum of binomial coefficients took 408 s here (41,000 discordant units) and 4 s at
    # 8,500; scipy takes milliseconds. Its value moved by 2.4e-14 relative from the exact one,
    # 8.058578026792959e-07 (Python's big-integer sum).
    assert mcnemar_p(20000, 21000) == pytest.approx(8.058578026792959e-07, rel=1e-13, abs=0)
    assert mcnemar_p(21000, 20000) == mcnemar_p(20000, 21000)


# ---------------------------------------------------------------------------------------------
# Pearson and Kendall


def scipy_pearson(x, y) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: scipy warns and says NaN
        return float(stats.pearsonr(np.asarray(x, dtype=float), np.asarray(y, dtype=float)).statistic)


def test_pearson_is_scipys_pearsonr():
    rng = np.random.default_rng(30)
    for _ in range(300):
        n = int(rng.integers(2, 50))
        x = rng.random(n)
        y = rng.random(n) + float(rng.normal()) * x
        assert pearson(list(x), list(y)) == pytest.approx(scipy_pearson(x, y), rel=0, abs=1e-15)
    # ties, two pairs (exactly +-1), and per-relation accuracies as the report passes them
    for x, y in (([1, 2, 2, 3], [1, 3, 2, 2]), ([1, 2], [5, 3]), ([0.5, 0.25, 0.75], [0.5, 0.5, 1.0])):
        assert pearson(x, y) == pytest.approx(scipy_pearson(x, y), rel=0, abs=1e-15)
    assert pearson([1, 2], [5, 3]) == -1.0


@pytest.mark.parametrize("x, y", [([1, 1, 1], [1, 2, 3]), ([1, 2, 3], [4, 4, 4]), ([1, 2, math.nan], [1, 2, 3]),
                                  ([1, 2, 3], [1, math.inf, 3])])
def test_pearson_is_nan_where_scipy_says_so(x, y):
    # NaN and infinity were clamped to 1.0 before issue 30 (min(1.0, nan) is 1.0)
    assert math.isnan(pearson(x, y)) and math.isnan(scipy_pearson(x, y))


def test_kendall_tau_is_scipys_tau_b():
    x, y = [1, 2, 2, 3, 4, 4], [1, 3, 2, 2, 5, 5]
    assert kendall_tau(x, y) == stats.kendalltau(x, y, variant="b").statistic
    assert kendall_tau(x, y) != pytest.approx(stats.kendalltau(x, y, variant="c").statistic)  # ties tell b from c
    assert math.isnan(kendall_tau([1, 2, 3], [1, math.nan, 3]))
    assert math.isnan(kendall_tau([2, 2, 2], [1, 2, 3]))  # constant: undefined, without scipy's warning


def test_correlations_need_two_pairs():
    for fn in (pearson, kendall_tau):
        with pytest.raises(ValueError, match="at least 2 pairs"):
            fn([1], [1])


# ---------------------------------------------------------------------------------------------
# Bootstrap


def loop_bootstrap(items, statistic, draws, seed) -> Estimate:
    """The resampling loop factprobe ran before issue 30: one draw of n indices at a time."""
    rng = np.random.default_rng(seed)
    n = len(items)
    value = float(statistic(items))
    boot = [float(statistic([items[k] for k in rng.integers(0, n, size=n)])) for _ in range(draws)]
    boot = np.asarray([v for v in boot if not math.isnan(v)])
    if len(boot) < 2:
        return Estimate(value, math.nan, math.nan, math.nan, n, "bootstrap")
    low, high = np.quantile(boot, [0.025, 0.975])
    return Estimate(value, float(boot.std(ddof=1)), float(low), float(high), n, "bootstrap")


def mean(xs):
    return sum(xs) / len(xs)


def above(xs):  # the mean of the values above .8: undefined (NaN) on resamples that hold none
    kept = [x for x in xs if x > 0.8]
    return sum(kept) / len(kept) if kept else math.nan


FACTS = [(0.5, [0.1, 0.2]), (0.1, [0.3]), (0.4, [0.2]), (0.9, [0.95]), (0.7, [0.1])]
CASES = [
    ("one fact", [0.25], mean, 50),
    ("two", [0.0, 1.0], mean, 200),
    ("odd count", list(np.random.default_rng(1).random(7)), mean, 300),
    ("shares", list(np.random.default_rng(2).random(101)), mean, 200),
    ("Min@1 over facts", FACTS * 3, lambda fs: mean([min_at_n(o, d, 1) for o, d in fs]), 200),
    ("NaN draws", [0.1, 0.2, 0.9, 0.3, 0.5], above, 300),
    ("all NaN", [0.1, 0.2], above, 50),
]


@pytest.mark.parametrize("name, items, statistic, draws", CASES, ids=[c[0] for c in CASES])
def test_bootstrap_is_the_same_as_before(name, items, statistic, draws):
    for seed in (0, 7):
        assert bootstrap(items, statistic, draws=draws, seed=seed) == loop_bootstrap(items, statistic, draws, seed)


@pytest.mark.parametrize("n", [2, 7, 101])
def test_bootstrap_is_scipys_percentile_bootstrap(n):
    items = list(np.random.default_rng(n).random(n))
    found = bootstrap(items, mean, draws=400, seed=3)
    theirs = stats.bootstrap((np.asarray(items),), mean, vectorized=False, n_resamples=400, method="percentile",
                             rng=np.random.default_rng(3))
    assert found.se == float(theirs.standard_error)
    # numpy's quantile and scipy's interpolate in other orders: one unit in the last place
    assert found.low == pytest.approx(float(theirs.confidence_interval.low), rel=0, abs=2e-16)
    assert found.high == pytest.approx(float(theirs.confidence_interval.high), rel=0, abs=2e-16)


# ---------------------------------------------------------------------------------------------
# ROUGE-L


def test_rouge_l_splits_off_punctuation():
    assert rouge_l("Paris.", "Paris") == 1.0  # 0.0 before issue 30: "paris." != "paris"
    assert rouge_l("Paris, the capital", "paris") == 0.5  # L 1, P 1/3, R 1: 2/3 / (4/3)
    assert rouge_l("Jean-Paul Sartre", "jean paul sartre") == 1.0


def test_rouge_l_of_multi_word_names_by_hand():
    # "new york" is the LCS: P = 2/3, R = 2/2, F = 2 * 2/3 * 1 / (2/3 + 1) = 0.8
    assert rouge_l("New York City", "New York") == pytest.approx(0.8, abs=1e-15)
    # LCS "united states america": P = 3/3, R = 3/5, F = 2 * 3/5 / (8/5) = 0.75
    assert rouge_l("United States America", "the United States of America") == pytest.approx(0.75, abs=1e-15)
    assert rouge_l("York New", "New York") == 0.5  # order matters: L = 1


def test_rouge_l_keeps_other_scripts():
    # rouge-score's default tokenizer keeps [a-z0-9] only: Chinese names have no tokens (0.0) and
    # "Zürich" becomes "z rich".
    from rouge_score.rouge_scorer import RougeScorer

    assert RougeScorer(["rougeL"]).score("北京", "北京")["rougeL"].fmeasure == 0
    assert UnicodeWords().tokenize("Zürich 東京都 हिन्दी") == ["zürich", "東", "京", "都", "हिन्दी"]
    assert rouge_l("北京", "北京") == 1.0
    assert rouge_l("北京市", "北京") == pytest.approx(0.8)  # a character each: L 2, P 2/3, R 1
    assert rouge_l("ZÜRICH", "Zürich") == 1.0 and rouge_l("Zurich", "Zürich") == 0.0  # no accent folding
    assert rouge_l("Ｐａｒｉｓ", "Paris") == 1.0  # NFKC


def test_rouge_l_on_ascii_is_rouge_scores_default():
    from rouge_score.rouge_scorer import RougeScorer

    reference = RougeScorer(["rougeL"])
    pairs = [("The capital of France is Paris", "paris is the capital of france"), ("a b c d", "a c e"),
             ("U.S. president", "president of the U.S."), ("x_y 1984", "1984"), ("Lyon", "Paris")]
    for candidate, gold in pairs:
        assert rouge_l(candidate, gold) == reference.score(gold, candidate)["rougeL"].fmeasure


def test_rouge_l_of_nothing_is_a_float_zero():
    # rouge-score answers an empty side with the integer 0; records and JSON keep 0.0
    for candidate, gold in (("", "Paris"), ("Paris", "   "), ("...", "Paris")):
        score = rouge_l(candidate, gold)
        assert score == 0.0 and isinstance(score, float)


# ---------------------------------------------------------------------------------------------
# Imports


def test_metrics_import_without_scipy_or_rouge_score():
    # an install without the eval extra still imports the metrics and has Wilson and Pearson
    code = ("import sys; sys.modules['scipy'] = sys.modules['rouge_score'] = None\n"
            "from factprobe.probes import measures as metrics\n"
            "print(metrics.wilson(9, 10).low, metrics.pearson([1, 2, 3], [1, 3, 2]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0.5958499732047615", "0.5"]

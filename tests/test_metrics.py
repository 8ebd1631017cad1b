"""The probing metrics against values worked out by hand (the arithmetic is in the comments), their
edge cases (ties, remainders, empty or mismatched input) and a few properties."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factprobe.probes.measures import (AccAt1, AccuracyAtK, Bin, Coverage, GroupAccuracy, acc_at_1, accuracy_at_k,
                                      accuracy_by, avg_at_n, bias_level, consistency, coverage, expected_acc_at_1,
                                      kendall_tau, mean_over_facts, min_at_n, normalize_choice_probs, one_word_ratio,
                                      overconfidence, pearson, precision_at_n, probability_known, reliability_bins,
                                      rouge_l, sharing_rate, subsumption_rate)

approx = pytest.approx

# Tiny per-fact, per-prompt correctness tables for the property tests: 1-3 facts of 1-3 prompts.
small_tables = st.lists(st.lists(st.booleans(), min_size=1, max_size=3), min_size=1, max_size=3)


# --- Acc@1 -----------------------------------------------------------------------------------


def test_expected_acc_at_1_by_hand():
    # Fact shares: 1/1, 0/1, 2/4 -> (1 + 0 + 0.5) / 3 = 0.5
    assert expected_acc_at_1([[True], [False], [True, False, True, False]]) == approx(0.5)


@settings(max_examples=60, deadline=None)
@given(small_tables)
def test_expected_acc_at_1_is_the_mean_over_every_possible_draw(correct):
    # Enumerate every way of picking one prompt per fact; each way is equally likely.
    draws = [sum(map(bool, pick)) / len(pick) for pick in itertools.product(*correct)]
    assert expected_acc_at_1(correct) == approx(sum(draws) / len(draws))


def test_acc_at_1_single_prompt_facts_have_no_fluctuation():
    # Every draw picks the only prompt: accuracy 2/3 every time, SD and range 0.
    result = acc_at_1([[True], [True], [False]], draws=7)
    assert result == AccAt1(mean=approx(2 / 3), sd=0.0, min=approx(2 / 3), max=approx(2 / 3), range=0.0, draws=7)


def test_acc_at_1_fluctuation_by_hand():
    # Facts: always right, always wrong, one right and one wrong prompt. A draw scores 2/3 when it
    # picks the right prompt of the third fact, else 1/3. If a share p of the draws score 2/3:
    # mean = 1/3 + p/3 and the ddof=0 SD of a two-valued sample 1/3 apart = (1/3) sqrt(p (1 - p)).
    result = acc_at_1([[True], [False], [True, False]], draws=200, seed=3)
    p = (result.mean - 1 / 3) * 3
    assert 0 < p < 1
    assert result.sd == approx(math.sqrt(p * (1 - p)) / 3)
    # 200 fair coin flips all landing the same way has probability 2^-199: both values occur.
    assert (result.min, result.max, result.range) == (approx(1 / 3), approx(2 / 3), approx(1 / 3))


def test_acc_at_1_is_seeded_and_converges_to_the_expectation():
    correct = [[True, False, False], [True, True], [False], [True, False, True, False]]
    # expected = (1/3 + 1 + 0 + 1/2) / 4 = 11/24
    assert acc_at_1(correct, seed=5) == acc_at_1(correct, seed=5)
    assert acc_at_1(correct, draws=4000, seed=1).mean == approx(11 / 24, abs=0.01)


def test_acc_at_1_rejects_empty_input():
    with pytest.raises(ValueError, match="empty"):
        acc_at_1([])
    with pytest.raises(ValueError, match="no prompts"):
        acc_at_1([[True], []])
    with pytest.raises(ValueError, match="draws"):
        acc_at_1([[True]], draws=0)
    with pytest.raises(ValueError, match="empty"):
        expected_acc_at_1([])


# --- Consist -----------------------------------------------------------------------------------


def test_consistency_by_hand_excludes_single_prompt_facts():
    # ["a","a","b"]: pairs (a,a) agree, (a,b) twice not -> 1/3.  ["x","x"]: 1/1.
    # ["y"] has no pair and is left out.  Mean (1/3 + 1) / 2 = 2/3.
    assert consistency([["a", "a", "b"], ["x", "x"], ["y"]]) == approx(2 / 3)


def test_consistency_counts_pairs_within_groups():
    # ["p","p","q","q"]: agreeing pairs 1 (p,p) + 1 (q,q) of C(4,2) = 6 -> 1/3.
    assert consistency([["p", "p", "q", "q"]]) == approx(1 / 3)


def test_consistency_needs_a_fact_with_two_prompts():
    with pytest.raises(ValueError, match="two or more prompts"):
        consistency([["a"], ["b"]])
    with pytest.raises(ValueError, match="empty"):
        consistency([])


# --- Ovconf and reliability bins ---------------------------------------------------------------


def test_overconfidence_by_hand_with_a_remainder_bin():
    # Sorted ascending (factprobe's order before issue 38; the paper's descending one is in
    # tests/test_paper_round3.py): 0.1 F, 0.3 F, 0.7 T | 0.8 F, 0.9 T  (5 items, 2 bins: 3 and 2).
    # Bin 1: confidence (0.1+0.3+0.7)/3 = 11/30, accuracy 1/3 -> 11/30 - 10/30 = 1/30.
    # Bin 2: confidence 0.85, accuracy 1/2 -> 0.35 = 21/60.
    # Ovconf = (1/30 + 21/60) / 2 = (2/60 + 21/60) / 2 = 23/120.
    conf = [0.9, 0.1, 0.8, 0.3, 0.7]
    hits = [True, False, False, False, True]
    assert reliability_bins(conf, hits, 2, "ascending") == [Bin(approx(11 / 30), approx(1 / 3), 3),
                                                            Bin(approx(0.85), 0.5, 2)]
    assert overconfidence(conf, hits, 2, "ascending") == approx(23 / 120)
    # Not the same as the unbinned mean(conf) - accuracy = 2.8/5 - 2/5 = 0.16: the remainder matters.
    assert overconfidence(conf, hits, 2, "ascending") != approx(0.16)


def test_reliability_bins_keep_input_order_among_tied_confidences_only_by_name():
    # All confidences tie. ties="file-order" (before issue 45): the stable sort keeps input order,
    # so the first bin holds the first two items (both right) and the second the last two (both
    # wrong). The default gives every place the run's share of right answers, 2/4.
    bins = reliability_bins([0.5] * 4, [True, True, False, False], bins=2, ties="file-order")
    assert [(b.accuracy, b.count) for b in bins] == [(1.0, 2), (0.0, 2)]
    assert [(b.accuracy, b.count) for b in reliability_bins([0.5] * 4, [True, True, False, False], bins=2)] == [
        (0.5, 2), (0.5, 2)]
    # Ovconf = ((0.5 - 1) + (0.5 - 0)) / 2 = 0
    assert overconfidence([0.5] * 4, [True, True, False, False], bins=2) == approx(0.0)


def test_reliability_bins_reject_bad_input():
    with pytest.raises(ValueError, match="empty"):
        overconfidence([], [])
    with pytest.raises(ValueError, match="differ in length"):
        overconfidence([0.5, 0.6], [True])
    with pytest.raises(ValueError, match="cannot fill"):
        overconfidence([0.5] * 3, [True] * 3, bins=10)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        overconfidence([1.5], [True], bins=1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=10, max_size=40))
def test_overconfidence_of_calibrated_predictions_is_zero(hits):
    # Confidence 1 on every right answer and 0 on every wrong one: each bin's mean confidence is
    # its accuracy.
    assert overconfidence([float(h) for h in hits], hits) == approx(0.0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4).flatmap(lambda k: st.lists(st.booleans(), min_size=10 * k, max_size=10 * k)))
def test_overconfidence_without_remainder_is_confidence_minus_accuracy(hits):
    # Constant confidence 0.5, item count a multiple of 10: Ovconf = 0.5 - overall accuracy, and 0
    # when exactly half are right (constant and calibrated).
    assert overconfidence([0.5] * len(hits), hits) == approx(0.5 - sum(hits) / len(hits))


# --- one-word ratio and bias level ------------------------------------------------------------


def test_one_word_ratio_by_hand():
    # One word: "Paris", "Tokyo\n". Not: " New York " (2), "" (0), "the  city of x" (4) -> 2/5.
    assert one_word_ratio(["Paris", " New York ", "Tokyo\n", "", "the  city of x"]) == approx(0.4)
    with pytest.raises(ValueError, match="empty"):
        one_word_ratio([])


def test_bias_level_by_hand_averages_over_groups():
    # r1: paris=paris yes, paris=paris yes, rome!=paris -> 2/3.  r2: x=x yes, y!=z -> 1/2.
    # Mean over relations: (2/3 + 1/2) / 2 = 7/12 (the item average would be 3/5).
    predictions = ["paris", "paris", "rome", "x", "y"]
    content_free = ["paris", "paris", "paris", "x", "z"]
    relations = ["r1", "r1", "r1", "r2", "r2"]
    assert bias_level(predictions, content_free, relations) == approx(7 / 12)
    assert bias_level(predictions, content_free, ["all"] * 5) == approx(3 / 5)


def test_bias_level_rejects_bad_input():
    with pytest.raises(ValueError, match="empty"):
        bias_level([], [], [])
    with pytest.raises(ValueError, match="differ in length"):
        bias_level(["a"], ["a", "b"], ["r"])
    with pytest.raises(ValueError, match="differ in length"):
        bias_level(["a"], ["a"], [])


# --- coverage -------------------------------------------------------------------------------


def test_coverage_by_hand():
    # The older maximum (coverage_maximum="mean": the mean over a template's subject expressions).
    # f1 (r1): t1 T, t1 F, t2 T -> share 2/3; per template t1 1/2, t2 1.
    # f2 (r1): t1 T, t2 F       -> share 1/2; t1 1, t2 0.
    # f3 (r2): t3 F, t4 F       -> share 0;   t3 0, t4 0.
    # average = (2/3 + 1/2 + 0) / 3 = 7/18
    # maximum: r1 best template t1 with mean (1/2 + 1)/2 = 3/4 (t2: (1 + 0)/2 = 1/2), r2 best 0
    #          -> (3/4 + 3/4 + 0) / 3 = 1/2
    # oracle = 2 of 3 facts have a correct prompt = 2/3
    correct = [[True, False, True], [True, False], [False, False]]
    templates = [["t1", "t1", "t2"], ["t1", "t2"], ["t3", "t4"]]
    result = coverage(correct, templates, ["r1", "r1", "r2"], maximum="mean")
    assert result == Coverage(average=approx(7 / 18), maximum=approx(1 / 2), oracle=approx(2 / 3))
    assert result.average == approx(expected_acc_at_1(correct))
    # The paper's (the default, "best-subject"): f1 scores 1 under t1 (one of its t1 prompts is
    # right), so r1's t1 scores (1 + 1)/2 = 1 -> maximum (1 + 1 + 0) / 3 = 2/3.
    assert coverage(correct, templates, ["r1", "r1", "r2"]).maximum == approx(2 / 3)


def test_coverage_counts_a_missing_template_as_zero():
    # f1 (r): t1 T, t2 T; f2 (r): t2 F only. t1: (1 + 0) / 2 = 1/2; t2: (1 + 0) / 2 = 1/2 -> maximum 1/2.
    # Were missing prompts skipped instead, t1 would score 1/1 and maximum would be 1.
    for maximum in ("best-subject", "mean"):
        assert coverage([[True, True], [False]], [["t1", "t2"], ["t2"]], ["r", "r"], maximum=maximum).maximum \
            == approx(0.5)


def test_coverage_rejects_bad_input():
    with pytest.raises(ValueError, match="empty"):
        coverage([], [], [])
    with pytest.raises(ValueError, match="differ in length"):
        coverage([[True]], [["t"]], ["r", "s"])
    with pytest.raises(ValueError, match=r"template_ids\[0\]"):
        coverage([[True, False]], [["t"]], ["r"])


@settings(max_examples=60, deadline=None)
@given(small_tables, st.data())
def test_coverage_is_bounded_by_the_oracle(correct, data):
    templates = [[data.draw(st.sampled_from("ab")) for _ in prompts] for prompts in correct]
    relations = [data.draw(st.sampled_from("rs")) for _ in correct]
    result = coverage(correct, templates, relations)
    older = coverage(correct, templates, relations, maximum="mean")
    assert 0.0 <= result.average <= result.oracle + 1e-12
    assert 0.0 <= result.maximum <= result.oracle + 1e-12
    # the best subject expression scores at least the mean over them
    assert older.maximum <= result.maximum + 1e-12 and older.average == result.average


# --- breakdowns ---------------------------------------------------------------------------------


def test_accuracy_by_groups_none_and_missing_keys_as_none():
    records = [
        {"bucket": "0", "correct": True},
        {"bucket": "0", "correct": False},
        {"bucket": "[1,10)", "correct": 1},
        {"bucket": None, "correct": False},
        {"correct": True},  # no bucket at all
        {"bucket": 7, "correct": False},  # non-string values become their str()
    ]
    assert accuracy_by(records, "bucket") == {
        "0": GroupAccuracy(1, 2, 0.5),
        "[1,10)": GroupAccuracy(1, 1, 1.0),
        "none": GroupAccuracy(1, 2, 0.5),
        "7": GroupAccuracy(0, 1, 0.0),
    }
    # Works on a one-shot iterator and with another name for the correctness field.
    generated = iter([{"relation": "P36", "ok": True}, {"relation": "P36", "ok": False}])
    assert accuracy_by(generated, "relation", correct_key="ok") == {"P36": GroupAccuracy(1, 2, 0.5)}


def test_accuracy_by_rejects_bad_input():
    with pytest.raises(ValueError, match="empty"):
        accuracy_by([], "bucket")
    with pytest.raises(ValueError, match="no record has the key 'bukcet'"):
        accuracy_by([{"bucket": "0", "correct": True}], "bukcet")
    with pytest.raises(ValueError, match="has no 'correct'"):
        accuracy_by([{"bucket": "0"}], "bucket")


# --- IC-LKE: overlap and correlation --------------------------------------------------------------


def test_subsumption_rate_by_hand():
    a, b = {1, 2, 3, 4}, {2, 4, 5}
    assert subsumption_rate(a, b) == approx(0.5)  # |{2,4}| / |A| = 2/4
    assert subsumption_rate(b, a) == approx(2 / 3)  # |{2,4}| / |B| = 2/3: not symmetric
    assert subsumption_rate(set(), b) == 1.0  # vacuous


def test_sharing_rate_by_hand():
    # Known by all: {3}; known by any: {1,2,3,4,5} -> 1/5.
    assert sharing_rate({"m1": {1, 2, 3}, "m2": {2, 3, 4}, "m3": {3, 4, 5}}) == approx(0.2)
    # Two models: Jaccard |{2,3}| / |{1,2,3,4}| = 1/2; frozensets work too.
    assert sharing_rate({"m1": frozenset({1, 2, 3}), "m2": frozenset({2, 3, 4})}) == approx(0.5)
    assert sharing_rate({"m1": set(), "m2": set()}) == 1.0
    with pytest.raises(ValueError, match="empty"):
        sharing_rate({})


def test_pearson_by_hand():
    # x = 1,2,3 and y = 1,3,2: deviations (-1,0,1) and (-1,1,0); sxy = 1, sxx = syy = 2 -> 1/2.
    assert pearson([1, 2, 3], [1, 3, 2]) == approx(0.5)
    assert pearson([1, 2, 3], [6, 4, 2]) == approx(-1.0)
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))


def test_kendall_tau_b_by_hand_with_ties():
    # x = 1,2,2,3; y = 1,3,2,2. The 6 pairs (i,j):
    # (1,2) C, (1,3) C, (1,4) C, (2,3) tied in x, (2,4) D (x up, y down), (3,4) tied in y.
    # C = 3, D = 1, n0 = 6, n1 = 1, n2 = 1 -> (3 - 1) / sqrt((6 - 1)(6 - 1)) = 2/5.
    assert kendall_tau([1, 2, 2, 3], [1, 3, 2, 2]) == approx(0.4)
    # No ties: x = 1,2,3, y = 1,3,2 -> C = 2, D = 1 -> 1/3.
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == approx(1 / 3)
    assert math.isnan(kendall_tau([1, 2, 3], [5, 5, 5]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=8))
def test_kendall_tau_matches_its_pair_counting_definition(pairs):
    # Small integer ranges make ties common. Count the pairs exactly as the docstring defines.
    x, y = [a for a, _ in pairs], [b for _, b in pairs]
    concordant = discordant = tied_x = tied_y = 0
    for (x1, y1), (x2, y2) in itertools.combinations(pairs, 2):
        tied_x += x1 == x2
        tied_y += y1 == y2
        sign = (x1 - x2) * (y1 - y2)
        concordant += sign > 0
        discordant += sign < 0
    n0 = len(pairs) * (len(pairs) - 1) // 2
    if tied_x == n0 or tied_y == n0:
        assert math.isnan(kendall_tau(x, y))
    else:
        expected = (concordant - discordant) / math.sqrt((n0 - tied_x) * (n0 - tied_y))
        assert kendall_tau(x, y) == approx(expected)


def test_correlations_reject_bad_input():
    for fn in (pearson, kendall_tau):
        with pytest.raises(ValueError, match="differ in length"):
            fn([1, 2], [1, 2, 3])
        with pytest.raises(ValueError, match="at least 2"):
            fn([1], [1])


# --- IC-LKE: normalized choice probabilities and Accuracy@K -----------------------------------


def test_normalize_choice_probs_by_hand_and_stable():
    # exp(log 1) : exp(log 3) = 1 : 3 -> 1/4, 3/4.
    assert normalize_choice_probs([math.log(1), math.log(3)]) == approx([0.25, 0.75])
    # Naive exp(1000) overflows and exp(-1000) underflows to 0/0; shifted by the max both are 1.
    assert normalize_choice_probs([1000.0, 1000.0]) == approx([0.5, 0.5])
    assert normalize_choice_probs([-1000.0, -1000.0 + math.log(3)]) == approx([0.25, 0.75])
    assert normalize_choice_probs([0.0, -math.inf]) == [1.0, 0.0]
    with pytest.raises(ValueError, match="empty"):
        normalize_choice_probs([])
    with pytest.raises(ValueError, match="finite"):
        normalize_choice_probs([-math.inf, -math.inf])


def test_accuracy_at_k_by_hand():
    probs = [0.9, 0.6, 0.8, 0.3]
    hits = [True, False, False, True]
    # Above 0.5: 0.9 T, 0.6 F, 0.8 F -> 1/3 of 3 items.
    assert accuracy_at_k(probs, hits, 0.5) == AccuracyAtK(approx(1 / 3), 3)
    # Strictly above 0.8: only 0.9 T (0.8 itself is not above) -> 1/1.
    assert accuracy_at_k(probs, hits, 0.8) == AccuracyAtK(1.0, 1)
    nothing = accuracy_at_k(probs, hits, 0.95)
    assert nothing.count == 0 and math.isnan(nothing.accuracy)
    with pytest.raises(ValueError, match="differ in length"):
        accuracy_at_k([0.5], [True, False], 0.1)
    with pytest.raises(ValueError, match="empty"):
        accuracy_at_k([], [], 0.1)


# --- Distractors: Min@n, Avg@n and the per-fact aggregate ------------------------------------------


def test_min_and_avg_at_n_by_hand():
    gold, distractors = -1.0, [-2.0, -0.5, -3.0]
    # n=1: -1 > -2. n=2: -1 > -0.5 fails. n=3: still fails.
    assert [min_at_n(gold, distractors, n) for n in (1, 2, 3)] == [True, False, False]
    # Avg@1 = 1/1, Avg@2 = (1 + 0)/2, Avg@3 = (1 + 0 + 1)/3.
    assert [avg_at_n(gold, distractors, n) for n in (1, 2, 3)] == approx([1.0, 0.5, 2 / 3])


def test_min_and_avg_at_n_count_ties_as_not_known():
    assert min_at_n(-1.0, [-1.0], 1) is False
    assert avg_at_n(-1.0, [-2.0, -1.0], 2) == approx(0.5)  # (1 + 0) / 2


def test_min_and_avg_at_n_reject_bad_n():
    for fn in (min_at_n, avg_at_n):
        with pytest.raises(ValueError, match="only 1 distractors"):
            fn(0.0, [-1.0], 2)
        with pytest.raises(ValueError, match="n must be >= 1"):
            fn(0.0, [-1.0], 0)


def test_mean_over_facts_weighs_facts_equally():
    # Fact a: clozes 1, 0, 1 -> 2/3. Fact b: 0.5. Mean over facts (2/3 + 1/2) / 2 = 7/12
    # (the plain cloze mean would be 2.5/4 = 5/8).
    assert mean_over_facts([1, 0, 1, 0.5], ["a", "a", "a", "b"]) == approx(7 / 12)
    assert mean_over_facts([True, False], [("Q1", "P36"), ("Q2", "P36")]) == approx(0.5)
    with pytest.raises(ValueError, match="empty"):
        mean_over_facts([], [])
    with pytest.raises(ValueError, match="differ in length"):
        mean_over_facts([1.0], ["a", "b"])


# --- Distractors: baselines ------------------------------------------------------------------


def test_probability_known_is_strict():
    assert probability_known(0.6, 0.5) is True
    assert probability_known(0.5, 0.5) is False
    assert probability_known(math.log(0.6), math.log(0.5)) is True


def test_precision_at_n_by_hand():
    ranked = ["paris", "lyon", "rome"]
    assert precision_at_n(ranked, {"rome", "roma"}, 2) == 0.0  # rome is third
    assert precision_at_n(ranked, {"rome", "roma"}, 3) == 1.0
    assert precision_at_n(ranked, {"rome"}, 10) == 1.0  # fewer answers than n is fine
    with pytest.raises(ValueError, match="n must be >= 1"):
        precision_at_n(ranked, {"rome"}, 0)
    with pytest.raises(ValueError, match="gold_set is empty"):
        precision_at_n(ranked, set(), 1)


def test_rouge_l_by_hand():
    # candidate a b c d, reference a c e: LCS "a c" = 2; P = 2/4, R = 2/3;
    # F = 2 (1/2)(2/3) / (1/2 + 2/3) = (2/3) / (7/6) = 4/7.
    assert rouge_l("a b c d", "a c e") == approx(4 / 7)
    # Reordered sentence, case ignored: LCS "the capital of france" = 4 of 6 both ways -> F = 4/6.
    assert rouge_l("The capital of France is Paris", "paris is the capital of france") == approx(2 / 3)
    # P = 1/1, R = 1/2 -> F = 2 (1/2) / (3/2) = 2/3.
    assert rouge_l("Paris", "Paris France") == approx(2 / 3)
    assert rouge_l("Paris", "paris") == 1.0
    assert rouge_l("Lyon", "Paris") == 0.0
    assert rouge_l("", "Paris") == 0.0 and rouge_l("Paris", "   ") == 0.0

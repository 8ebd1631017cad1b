"""Uncertainty of the figures (issue 19.1): Wilson intervals, the seeded bootstrap over facts,
McNemar's exact test, all against values worked out by hand."""

from __future__ import annotations

import math
import statistics

import pytest

from factprobe.probes.measures import min_at_n
from factprobe.probes.measures.uncertainty import (FEW_ITEMS, bootstrap, items_for_width, mcnemar, proportion,
                                                  wilson)


def test_wilson_nine_of_ten_by_hand():
    # p = .9, n = 10, z^2 = 3.8415: centre (.9 + .19207) / 1.38415 = .78898,
    # half 1.96 / 1.38415 * sqrt(.009 + .0096037) = .19314 -> (.5958, .9821)
    e = wilson(9, 10)
    assert e.value == 0.9
    assert e.se == pytest.approx(math.sqrt(0.09 / 10))
    assert (e.low, e.high) == (pytest.approx(0.59585, abs=1e-5), pytest.approx(0.98212, abs=1e-5))
    assert e.n == 10 and e.method == "wilson" and e.few


def test_wilson_stays_inside_zero_one_at_the_edges():
    zero = wilson(0, 20)  # centre z^2/2n / (1 + z^2/n) = .0960 / 1.1921, half the same: [0, .1611]
    assert zero.low == 0.0 and zero.high == pytest.approx(0.16113, abs=1e-5) and zero.se == 0.0
    full = wilson(20, 20)
    assert full.high == 1.0 and full.low == pytest.approx(1 - 0.16113, abs=1e-5)


def test_wilson_refuses_impossible_counts():
    with pytest.raises(ValueError, match="total"):
        wilson(0, 0)
    with pytest.raises(ValueError, match="correct"):
        wilson(11, 10)


def test_proportion_reads_outcomes_with_bool():
    assert proportion([1, 0, True, None]).value == 0.5


def test_bootstrap_of_a_constant_has_no_spread():
    e = bootstrap([1.0] * 12, statistics.mean, draws=200)
    assert (e.value, e.se, e.low, e.high) == (1.0, 0.0, 1.0, 1.0)


def test_bootstrap_is_seeded_and_matches_the_binomial_se_for_a_mean():
    outcomes = [1] * 60 + [0] * 40
    a = bootstrap(outcomes, statistics.mean, draws=2000, seed=3)
    assert a == bootstrap(outcomes, statistics.mean, draws=2000, seed=3)
    assert a != bootstrap(outcomes, statistics.mean, draws=2000, seed=4)
    # the bootstrap SE of a mean of 0/1 outcomes is close to sqrt(p(1-p)/n) = .049
    assert a.se == pytest.approx(math.sqrt(0.24 / 100), rel=0.1)
    assert a.low < 0.6 < a.high and a.n == 100 and not a.few


def test_bootstrap_over_facts_of_min_at_n():
    # per fact: the object's probability and its distractors'; Min@1 is whether it beats all
    facts = [(0.5, [0.1, 0.2]), (0.1, [0.3]), (0.4, [0.2])] * 10
    e = bootstrap(facts, lambda fs: statistics.mean(min_at_n(o, d, 1) for o, d in fs), draws=300)
    assert e.value == pytest.approx(2 / 3)
    assert 0.4 < e.low < e.value < e.high < 0.9


def test_mcnemar_exact_by_hand():
    # discordant: A only 1, B only 6 -> p = 2 * (C(7,0) + C(7,1)) / 2^7 = 16/128
    a = [1] * 10 + [1] + [0] * 6 + [0] * 3
    b = [1] * 10 + [0] + [1] * 6 + [0] * 3
    t = mcnemar(a, b)
    assert (t.only_a, t.only_b, t.both, t.neither) == (1, 6, 10, 3)
    assert t.p_value == 0.125


def test_mcnemar_without_discordant_items_is_one():
    assert mcnemar([1, 0, 1], [1, 0, 1]).p_value == 1.0
    assert mcnemar([1, 0], [0, 1]).p_value == 1.0  # 2 * (C(2,0) + C(2,1)) / 4 = 1.5, capped


def test_mcnemar_needs_pairs():
    with pytest.raises(ValueError, match="differ in length"):
        mcnemar([1, 0], [1])


def test_items_for_width():
    # (2 * 1.96)^2 * .25 / .1^2 = 384.1 -> 385 items for +-0.05 at p = .5
    assert items_for_width(0.1) == 385
    assert items_for_width(0.2, p=0.9) == 35  # 15.366 * .09 / .04 = 34.6
    assert FEW_ITEMS == 30


def test_mcnemar_p_from_the_discordant_counts():
    from factprobe.probes.measures import mcnemar_p

    assert mcnemar_p(0, 6) == 2 / 64  # 2 * C(6,0) / 2^6: six items all favour B
    assert mcnemar_p(6, 0) == mcnemar_p(0, 6) and mcnemar_p(0, 0) == 1.0


def test_accuracy_at_k_carries_its_wilson_interval():
    from factprobe.probes.methods.ic_lke import icl_measures

    # probabilities .9/.8/.6/.4 with verdicts T/F/T/T: above .5 are 3 items, 2 right -> Wilson(2, 3)
    records = [{"probability": p, "correct": c} for p, c in ((0.9, True), (0.8, False), (0.6, True), (0.4, True))]
    at = icl_measures(records)["accuracy_at_k"]
    assert at["0.5"]["items"] == 3 and at["0.5"]["interval"]["low"] == pytest.approx(wilson(2, 3).low)
    assert at["0.9"] == {"accuracy": None, "items": 0, "interval": None}  # strictly above k: none


def test_baselines_carry_intervals_over_facts():
    from factprobe.probes.methods.baselines import baseline_measures

    # f1 has two clozes: ROUGE-L 1 and 1 (fact mean 1), Precision@n 1 and 0 (fact mean 0.5);
    # f2: 1 and 1; f3: 0 and 0. ROUGE-L per fact (1, 1, 0): Wilson(2, 3) = [0.2077, 0.9385].
    records = [{"id": "a", "fact": "f1", "rouge_l": 1.0, "precision_at_n": 1.0, "probability": 0.9, "correct": True},
               {"id": "b", "fact": "f1", "rouge_l": 1.0, "precision_at_n": 0.0, "probability": 0.5, "correct": False},
               {"id": "c", "fact": "f2", "rouge_l": 1.0, "precision_at_n": 1.0, "probability": 0.6, "correct": True},
               {"id": "d", "fact": "f3", "rouge_l": 0.0, "precision_at_n": 0.0, "probability": 0.1, "correct": False}]
    out = baseline_measures(records)["baselines"]
    rouge = out["rouge_l_interval"]
    assert out["rouge_l"] == pytest.approx(2 / 3) and (rouge["method"], rouge["n"], rouge["few"]) == ("wilson", 3, True)
    assert (rouge["low"], rouge["high"]) == pytest.approx((0.2077, 0.9385), abs=1e-4)
    # Precision@n per fact (0.5, 1, 0): a share, so bootstrapped over the 3 facts; its mean is 0.5
    precision = out["precision_at_n_interval"]
    assert out["precision_at_n"] == 0.5 and precision["method"] == "bootstrap" and precision["value"] == 0.5
    assert 0 <= precision["low"] <= 0.5 <= precision["high"] <= 1
    # probability_known per fact (0.5, 1, 0) likewise; the judge did not run: no interval
    assert out["probability_known_interval"]["value"] == 0.5 and out["judge_interval"] is None

"""Issue 38 items 7, 8, 9 and 11: the last definitions read against the papers
(../shared/papers/00N_*.txt, cited 00N:line), each case worked out by hand from the paper's text,
each failing on the definitions factprobe used before.

7. BELIEF asks every subject expression (000:324, 2.47 per subject on average, 000:368), and a
   masked LM answers one token, so only facts with a single-token object are asked (000:114,
   footnote 6).
8. KDF counts the documents that mention a fact's two Chinese names (003:227-238), whatever their
   length: a one-character Chinese name counts.
9. T-REx-MC keeps the relations with >= 500 facts and >= 100 distinct objects (002:531-534).
11. Ovconf's prompts are "arranged in descending order based on confidence" before the bins are
   cut (000:76).
"""

from __future__ import annotations

import pytest

from factprobe.probes import measures as metrics
from factprobe.probes.aggregate import aggregate
from factprobe.probes.measures.belief import Bin


# -- 11. Ovconf's bins in descending order of confidence -------------------------------------------

def test_ovconf_bins_are_cut_in_descending_order_of_confidence():
    """000:76: "all of the prompts are arranged in descending order based on confidence and
    segmented into M bins ... with the same amount of data points in each bin"; Ovconf averages
    (mean confidence - accuracy) over the bins.

    Three prompts, confidences 0.9, 0.5, 0.1, answers right, right, wrong, M = 2: three do not
    split evenly, so the first bin holds two. Descending: {0.9, 0.5} (confidence 0.7, accuracy
    1.0) and {0.1} (0.1, 0.0): Ovconf = (-0.3 + 0.1) / 2 = -0.1. Ascending, as factprobe sorted:
    {0.1, 0.5} (0.3, 0.5) and {0.9} (0.9, 1.0): (-0.2 - 0.1) / 2 = -0.15."""
    confidence, correct = [0.1, 0.9, 0.5], [False, True, True]
    assert metrics.reliability_bins(confidence, correct, bins=2) == [Bin(pytest.approx(0.7), 1.0, 2),
                                                                     Bin(pytest.approx(0.1), 0.0, 1)]
    assert metrics.overconfidence(confidence, correct, bins=2) == pytest.approx(-0.1)
    assert metrics.overconfidence(confidence, correct, bins=2, order="ascending") == pytest.approx(-0.15)
    # Four prompts split evenly: the order only reverses the bins, Ovconf is mean(conf) - accuracy.
    four, hits = [0.2, 0.4, 0.6, 0.8], [False, True, False, True]
    down = metrics.reliability_bins(four, hits, bins=2)
    assert down == list(reversed(metrics.reliability_bins(four, hits, bins=2, order="ascending")))
    assert metrics.overconfidence(four, hits, bins=2) == metrics.overconfidence(four, hits, 2, "ascending") == \
        pytest.approx(0.0)


def test_belief_aggregate_names_the_bins_order_and_the_option_gives_the_older_one():
    # One item, three prompts as above: 10 bins would be empty, so min(10, prompts) = 3 bins of one,
    # where the order cannot change Ovconf; two items of 3 and 2 prompts, 5 prompts in 5 bins too.
    # The order still shows in the bins as listed.
    records = [{"id": "a", "relation": "P36", "correct": 2 / 3, "prompt_correct": [False, True, True],
                "confidence": [0.1, 0.9, 0.5], "predictions": ["x", "y", "y"], "template_ids": [0, 1, 2]}]
    paper = aggregate("belief", records, {"acc_draws": 10})
    assert [b["confidence"] for b in paper["reliability"]] == [0.9, 0.5, 0.1]
    assert paper["definitions"]["ovconf_bins"] == "descending"
    older = aggregate("belief", records, {"acc_draws": 10, "ovconf_bins": "ascending"})
    assert [b["confidence"] for b in older["reliability"]] == [0.1, 0.5, 0.9]
    assert older["definitions"]["ovconf_bins"] == "ascending"
    assert paper["overconfidence"] == pytest.approx(older["overconfidence"])

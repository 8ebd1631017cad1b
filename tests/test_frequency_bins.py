"""Log-spaced frequency bins (probes/measures/frequency_bins.py): edges, counts, accuracy per bin
and the interval, each worked out by hand in the comments."""

from __future__ import annotations

import math

import pytest

from factprobe.probes.measures.frequency_bins import bin_edges, frequency_bins

Z = 1.959963984540054  # the 95% normal quantile the project's Wilson interval uses


def test_edges_are_powers_of_the_base_and_0_is_its_own_bin():
    assert bin_edges(0) == (0, 1)
    # base 2: 1 | 2 3 | 4..7 | 8..15 | ... | 64..127
    assert [bin_edges(f) for f in (1, 2, 3, 4, 7, 8, 15, 16, 100, 127, 128)] == [
        (1, 2), (2, 4), (2, 4), (4, 8), (4, 8), (8, 16), (8, 16), (16, 32), (64, 128), (64, 128), (128, 256)]
    # decades: an edge belongs to the bin it opens
    assert [bin_edges(f, 10) for f in (1, 9, 10, 99, 100, 999_999, 1_000_000)] == [
        (1, 10), (1, 10), (10, 100), (10, 100), (100, 1000), (100_000, 1_000_000), (1_000_000, 10_000_000)]
    # whole-number arithmetic: no logarithm rounds 2**49 into the bin below
    assert bin_edges(2 ** 49) == (2 ** 49, 2 ** 50) and bin_edges(2 ** 49 - 1) == (2 ** 48, 2 ** 49)
    with pytest.raises(ValueError):
        bin_edges(-1)
    with pytest.raises(ValueError):
        bin_edges(5, 1)


def test_counts_accuracy_and_centers_per_bin():
    pairs = [(0, True), (0, False), (1, True), (2, False), (3, True), (4, True), (7, True), (8, False), (100, True)]
    bins = frequency_bins(pairs)
    # 0: 1 of 2 | [1,2): 1 of 1 | [2,4): 2 wrong, 3 right | [4,8): 4 and 7 right | [8,16): 8 wrong |
    # [64,128): 100 right; the empty bins between ([16,32), [32,64)) are not drawn
    assert [(b.label, b.low, b.high, b.n, b.correct, b.accuracy) for b in bins] == [
        ("0", 0, 1, 2, 1.0, 0.5), ("[1,2)", 1, 2, 1, 1.0, 1.0), ("[2,4)", 2, 4, 2, 1.0, 0.5),
        ("[4,8)", 4, 8, 2, 2.0, 1.0), ("[8,16)", 8, 16, 1, 0.0, 0.0), ("[64,128)", 64, 128, 1, 1.0, 1.0)]
    # drawn at the geometric mean of the smallest and largest whole count: 1; sqrt(2*3); sqrt(4*7); ...
    assert bins[0].center is None
    assert [b.center for b in bins[1:]] == [1.0, math.sqrt(6), math.sqrt(28), math.sqrt(120), math.sqrt(64 * 127)]
    assert frequency_bins([]) == []
    # shares (multi-prompt methods) average as they are: 0.5 and 0.25 in [2,4)
    (shared,) = frequency_bins([(2, 0.5), (3, 0.25)])
    assert (shared.n, shared.correct, shared.accuracy) == (2, 0.75, 0.375)


def test_the_interval_is_wilsons_on_exact_cases():
    bins = {b.label: b for b in frequency_bins([(0, 1), (0, 0), (5, 1), (6, 1), (9, 0)])}
    # 1 of 2: Wilson's centre (p + z^2/2n)/(1 + z^2/n) is 1/2; half-width z/(1 + z^2/2) * sqrt(1/8 + z^2/16)
    half = Z / (1 + Z * Z / 2) * math.sqrt(1 / 8 + Z * Z / 16)
    zero = bins["0"].interval
    assert zero["method"] == "wilson" and zero["n"] == 2 and zero["few"] is True
    assert zero["low"] == pytest.approx(0.5 - half, abs=1e-12) and zero["high"] == pytest.approx(0.5 + half, abs=1e-12)
    assert (round(zero["low"], 4), round(zero["high"], 4)) == (0.0945, 0.9055)
    # 2 of 2: the interval ends at 1 and starts at n/(n + z^2) = 2/(2 + z^2)
    both = bins["[4,8)"].interval
    assert both["high"] == 1.0 and both["low"] == pytest.approx(2 / (2 + Z * Z), abs=1e-12)
    # 0 of 1: from 0 to z^2/(1 + z^2)
    none = bins["[8,16)"].interval
    assert none["low"] == 0.0 and none["high"] == pytest.approx(Z * Z / (1 + Z * Z), abs=1e-12)

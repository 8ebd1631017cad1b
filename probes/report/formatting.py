"""Formatting numbers for tables and text: rates with 4 decimals ("n/a" when missing), signed
differences, counts, "accuracy (correct/total) [95% interval]" cells and Acc@1 mean ± SD. Used by the
document blocks and by `comparison_text`.
"""

from __future__ import annotations

from .compute import _number


def fmt(value) -> str:
    """A rate or score: 4 decimals, "n/a" when missing."""
    number = _number(value)
    return "n/a" if number is None else f"{number:.4f}"


def fmt_signed(value) -> str:
    number = _number(value)
    return "n/a" if number is None else f"{number:+.4f}"


def fmt_count(value) -> str:
    """A count: whole, except sums of shares (share-scored methods count correct items so)."""
    number = _number(value)
    if number is None:
        return "?"
    return str(int(number)) if number.is_integer() else f"{number:.4f}"


def fmt_cell(entry) -> str:
    """A breakdown entry as "accuracy (correct/total) [low–high]", "few" under 30 items."""
    if not isinstance(entry, dict):
        return "–"
    cell = f"{fmt(entry.get('accuracy'))} ({fmt_count(entry.get('correct'))}/{fmt_count(entry.get('total'))})"
    return cell + interval_suffix(entry.get("interval"))


def fmt_interval(interval) -> str:
    """A 95% interval as "low–high" (2 decimals), "few" when it rests on under 30 items."""
    if not isinstance(interval, dict) or _number(interval.get("low")) is None:
        return "–"
    return f"{interval['low']:.2f}–{interval['high']:.2f}" + (" few" if interval.get("few") else "")


def with_interval(value, interval) -> str:
    """A figure and its 95% interval: "0.8333 [0.64–0.93]"."""
    return fmt(value) + interval_suffix(interval)


def interval_suffix(interval) -> str:
    """" [low–high]" to follow a figure, nothing when there is no interval."""
    shown = fmt_interval(interval)
    return "" if shown == "–" else f" [{shown}]"


def fmt_acc_at_1(value) -> str:
    if not isinstance(value, dict):
        return "n/a"
    return f"{fmt(value.get('mean'))} ± {fmt(value.get('sd'))}"

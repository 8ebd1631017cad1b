"""Formatting numbers for tables and text: rates with 4 decimals ("n/a" when missing), signed
differences, counts, "accuracy (correct/total)" cells and Acc@1 mean ± SD. Used by the
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
    """A breakdown entry as "accuracy (correct/total)"."""
    if not isinstance(entry, dict):
        return "–"
    return f"{fmt(entry.get('accuracy'))} ({fmt_count(entry.get('correct'))}/{fmt_count(entry.get('total'))})"


def fmt_acc_at_1(value) -> str:
    if not isinstance(value, dict):
        return "n/a"
    return f"{fmt(value.get('mean'))} ± {fmt(value.get('sd'))}"

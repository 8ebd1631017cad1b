"""How numbers and labels read in the report: rates with 4 decimals ("n/a" when missing), signed
differences, counts, "accuracy (correct/total) [95% interval]" cells, Acc@1 mean ± SD, the columns
of the measures methods share (`measure_columns`), and the order of relations and frequency
buckets. Used by the report's sections, the methods' own sections and `comparison_text`.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Sequence


def number(value) -> float | None:
    """A float for tables and JSON; None for missing values and NaN (JSON has no NaN)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def natural_key(text: str) -> tuple:
    """P17 before P36 before P1376: digit runs compare as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def bucket_key(label: str) -> tuple:
    """Frequency buckets by their lower edge ("0", "[1,10)", "[100,inf)"); labels that are not
    buckets after them, alphabetically; "none" (unannotated items) last."""
    if label == "none":
        return (2, 0.0, label)
    match = re.fullmatch(r"\[?\s*([0-9.]+)\s*(,.*)?", label)
    if match:
        try:
            return (0, float(match.group(1)), label)
        except ValueError:
            pass
    return (1, 0.0, label)


def fmt(value) -> str:
    """A rate or score: 4 decimals, "n/a" when missing."""
    x = number(value)
    return "n/a" if x is None else f"{x:.4f}"


def fmt_signed(value) -> str:
    x = number(value)
    return "n/a" if x is None else f"{x:+.4f}"


def fmt_count(value) -> str:
    """A count: whole, except sums of shares (share-scored methods count correct items so)."""
    x = number(value)
    if x is None:
        return "?"
    return str(int(x)) if x.is_integer() else f"{x:.4f}"


def fmt_cell(entry) -> str:
    """A breakdown entry as "accuracy (correct/total) [low–high]", "few" under 30 items."""
    if not isinstance(entry, dict):
        return "–"
    cell = f"{fmt(entry.get('accuracy'))} ({fmt_count(entry.get('correct'))}/{fmt_count(entry.get('total'))})"
    return cell + interval_suffix(entry.get("interval"))


def fmt_interval(interval) -> str:
    """A 95% interval as "low–high" (2 decimals), "few" when it rests on under 30 items."""
    if not isinstance(interval, dict) or number(interval.get("low")) is None:
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
    """BELIEF's Acc@1 and its fluctuation over the one-prompt draws (000:62-66): "mean ± SD (range
    R)", R = max - min of the draws' accuracies; an aggregate without them says n/a."""
    if not isinstance(value, dict):
        return "n/a"
    spread = number(value.get("range"))
    if spread is None and number(value.get("max")) is not None and number(value.get("min")) is not None:
        spread = value["max"] - value["min"]
    return f"{fmt(value.get('mean'))} ± {fmt(value.get('sd'))} (range {fmt(spread)})"


def measure_columns(entries: Sequence[dict]) -> list[tuple[str, Callable[[dict], str]]]:
    """The BELIEF-style measures present in any of `entries` (a run's aggregate, or one entry of
    a breakdown such as BELIEF-ICL's settings), as (column header, formatter) pairs; absent ones
    get no column."""
    candidates = [
        ("acc_at_1", "Acc@1 mean ± SD (range) [95% bootstrap]",
         lambda d: fmt_acc_at_1(d.get("acc_at_1")) + interval_suffix(d.get("acc_at_1_interval"))),
        ("consistency", "Consistency [95%]", lambda d: with_interval(d.get("consistency"), d.get("consistency_interval"))),
        ("overconfidence", "Overconfidence [95%]",
         lambda d: with_interval(d.get("overconfidence"), d.get("overconfidence_interval"))),
        ("one_word_ratio", "One-word ratio", lambda d: fmt(d.get("one_word_ratio"))),
        ("coverage", "Coverage avg / max / oracle",
         lambda d: " / ".join(fmt((d.get("coverage") or {}).get(k)) for k in ("average", "maximum", "oracle"))),
        ("bias_level", "Bias level", lambda d: fmt(d.get("bias_level"))),
        ("bias_level_single_prompt", "Bias level, single prompt", lambda d: fmt(d.get("bias_level_single_prompt"))),
    ]
    return [(header, get) for key, header, get in candidates if any(key in e for e in entries)]

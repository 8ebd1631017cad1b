"""The report's PNG plots: accuracy by frequency bucket and against frequency on a log axis, the reliability diagram, IC-LKE's
per-position curve, the relation heatmap and the overlap between runs. matplotlib's object API on the Agg canvas: no pyplot
state, no display needed; each `plot_*` returns False or None (and draws nothing) when it has no data, and
the bucket plot and the heatmap return their Figure (the tests read its axes and artists). Colours
are per model (`model_colors`), the same in every figure of one report.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Sequence

from ..document import breakdown, bucket_key, fmt_count, natural_key, number
from ..measures.uncertainty import wilson
from .comparison import PairRow, entry_accuracy, position_curve
from .frequency import all_series, axis_label, POPULARITY_AXIS
from .labels import Names
from .loading import Run
from .sections import bin_interval, reliability_series
from .views import chance_level, chance_text, measure_name


def _figure(width: float, height: float):
    import matplotlib
    from matplotlib.figure import Figure

    # A text's usetex is read from rcParams when it is made: off here whatever a matplotlibrc says,
    # so no label from a run goes to LaTeX.
    matplotlib.rcParams["text.usetex"] = False
    return Figure(figsize=(width, height), layout="constrained")


def _plain(text: object) -> str:
    """A text from the runs (a model, a relation, a bucket) as matplotlib shows it literally:
    every `$` escaped, so no mathtext is parsed (`$\\frac{$` would raise while the figure is drawn)."""
    return str(text).replace("$", r"\$")


def _save(fig, path: Path) -> None:
    # No "Software" entry: PNG metadata then holds nothing that changes between versions.
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None})


def _wrap(text: str, width: int = 32) -> str:
    # wrapped first, escaped after: a line break never parts a `\\$` from its backslash
    return _plain("\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or text)


def _nan(value) -> float:
    x = number(value)
    return math.nan if x is None else x


# Annotations and tick labels at 9 pt or more: what a reviewer reads on a printed page.
FONT = 9
# Runs of one model in one panel: told apart by hatching, their colour being the model's.
HATCHES = ("", "//", "..", "xx", "\\\\", "++")
LINES, MARKERS = ("-", "--", ":", "-."), ("o", "^", "D", "v")


def model_colors(runs: Sequence[Run]) -> dict[str, str]:
    """One colour per model, the same in every panel and figure of a report: models in sorted
    order take matplotlib's default cycle (tab:blue, tab:orange, ...)."""
    return {model: f"C{k % 10}" for k, model in enumerate(sorted({r.model for r in runs}))}


def entry_bounds(entry: dict) -> tuple[float, float] | None:
    """A plotted value's 95% interval: the aggregate's, else Wilson's over correct/total (an
    aggregate from before intervals), None where neither can be had."""
    interval = entry.get("interval") if isinstance(entry.get("interval"), dict) else {}
    low, high = number(interval.get("low")), number(interval.get("high"))
    if low is not None and high is not None:
        return low, high
    correct, total = number(entry.get("correct")), number(entry.get("total"))
    if correct is not None and total and float(correct).is_integer():
        w = wilson(int(correct), int(total))
        return w.low, w.high
    return None


def by_method(runs: Sequence[Run]) -> dict[str, list[Run]]:
    """The runs per panel: one per method, in the order the runs come."""
    panels: dict[str, list[Run]] = {}
    for run in runs:
        panels.setdefault(run.method, []).append(run)
    return panels


def plot_buckets(runs: Sequence[Run], path: Path, colors: dict[str, str] | None = None):
    """One panel per method (IC-LKE's 20-way and KDF's 4-way accuracies share no axis), each
    with its chance line where its items have choices, bars coloured by model (`colors`, the
    report's) with their 95% intervals and values. Returns the Figure, None when no run has a
    bucket value."""
    runs = [r for r in runs if any(entry_accuracy(v) is not None for v in breakdown(r, "by_bucket").values())]
    if not runs:
        return None
    colors = colors or model_colors(runs)
    panels = by_method(runs)
    fig = _figure(12.5, 3.4 * len(panels) + 0.4)
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (method, members) in zip(axes, panels.items()):
        buckets = sorted({b for r in members for b in breakdown(r, "by_bucket")}, key=bucket_key)
        width = 0.8 / len(members)
        seen: dict[str, int] = {}
        for k, run in enumerate(members):
            variant = seen[run.model] = seen.get(run.model, -1) + 1
            entries = [breakdown(run, "by_bucket").get(b) or {} for b in buckets]
            heights = [_nan(entry_accuracy(e)) for e in entries]
            bounds = [entry_bounds(e) for e in entries]
            below = [0.0 if b is None or math.isnan(h) else max(0.0, h - b[0]) for h, b in zip(heights, bounds)]
            above = [0.0 if b is None or math.isnan(h) else max(0.0, b[1] - h) for h, b in zip(heights, bounds)]
            bars = ax.bar([i - 0.4 + width * (k + 0.5) for i in range(len(buckets))], heights, width,
                          color=colors.get(run.model, "C0"), hatch=HATCHES[variant % len(HATCHES)], edgecolor="white",
                          label=_wrap(run.label, 40), yerr=[below, above], capsize=3,
                          error_kw={"elinewidth": 1, "ecolor": "black"})
            # the value and its items: 0 reads apart from a missing bucket, 0.22 of 9 from 0.22 of 900
            ax.bar_label(bars, ["" if math.isnan(h) else f"{h:.2f}\nn={fmt_count(e.get('total'))}"
                                for h, e in zip(heights, entries)], fontsize=FONT, padding=2)
        for level, text in sorted({(chance_level(r), chance_text(r)) for r in members if chance_level(r) is not None}):
            ax.axhline(level, color="grey", linestyle="--", linewidth=1.2, label=f"chance {text}")
        ax.set_xticks(range(len(buckets)), [_plain(b) for b in buckets], fontsize=FONT + 1)
        ax.tick_params(axis="y", labelsize=FONT)
        ax.set_ylabel(measure_name(members[0]), fontsize=FONT + 1)
        ax.set_ylim(0, 1.25)
        ax.set_title(_plain(f"{method}: {measure_name(members[0])} by frequency bucket"), fontsize=FONT + 2)
        ax.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.01, 1))
    axes[-1].set_xlabel("frequency bucket (bars: 95% intervals; n: items)", fontsize=FONT + 1)
    _save(fig, path)
    return fig


def plot_frequency(runs: Sequence[Run], path: Path, field: str = "frequency",
                   colors: dict[str, str] | None = None) -> bool:
    """Accuracy against frequency (or popularity, `field`) on a log x axis (report/frequency.py):
    a point per log bin with its 95% interval and n; the 0 bin left of the axis's first count,
    apart from the line. Runs are nudged sideways by a few percent of a bin, so their bars do not
    hide each other."""
    series = all_series(runs, field)
    if not series:
        return False
    centers = [b.center for s in series for b in s.bins if b.center is not None]
    # the 0 bin one bin (a factor 2) below the lowest drawn count, so it reads as "less"
    zero_at = min(centers, default=1.0) / 2
    fig = _figure(10, 5)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    # n beside the points of the first run with its items per bin: runs of one probe set share
    # them, and one label each is what stays readable
    labelled: set[tuple] = set()
    seen: dict[str, int] = {}
    for k, s in enumerate(series):
        profile = tuple((b.label, b.n) for b in s.bins)
        show_n, _ = profile not in labelled, labelled.add(profile)
        color = (colors or model_colors([x.run for x in series])).get(s.run.model, "C0")  # the model's
        variant = seen[s.run.model] = seen.get(s.run.model, -1) + 1  # a model's runs told apart by line
        line, mark = LINES[variant % len(LINES)], MARKERS[variant % len(MARKERS)]
        nudge = 2 ** (0.08 * (k - (len(series) - 1) / 2))
        for drawn in ([b for b in s.bins if b.center is not None], [b for b in s.bins if b.center is None]):
            if not drawn:
                continue
            x = [(zero_at if b.center is None else b.center) * nudge for b in drawn]
            y = [b.accuracy for b in drawn]
            below = [max(0.0, b.accuracy - _nan((b.interval or {}).get("low"))) if b.interval else 0.0 for b in drawn]
            above = [max(0.0, _nan((b.interval or {}).get("high")) - b.accuracy) if b.interval else 0.0 for b in drawn]
            zero = drawn[0].center is None
            ax.errorbar(x, y, yerr=[[0.0 if math.isnan(v) else v for v in below],
                                    [0.0 if math.isnan(v) else v for v in above]],
                        marker="s" if zero else mark, linestyle="none" if zero else line, color=color, capsize=3,
                        elinewidth=0.8, label=None if zero and len(drawn) < len(s.bins) else _wrap(s.run.label, 48))
            if show_n:
                for xi, yi, b in zip(x, y, drawn):
                    ax.annotate(f"n={b.n}", (xi, yi), textcoords="offset points", xytext=(4, 4),
                                fontsize=FONT, color=color)
    ax.axvline(zero_at * 1.41, color="lightgrey", linewidth=0.8)  # the 0 bin stands apart from the log axis
    chances = {chance_level(run) for run in (s.run for s in series)}
    if len(chances) == 1 and None not in chances:
        ax.axhline(chances.pop(), color="grey", linestyle="--", linewidth=1, label="chance")
    high = max(max(centers, default=1.0) * 2, zero_at * 8)
    ax.set_xlim(zero_at / 1.6, high)
    ticks = [zero_at] + [10.0 ** e for e in range(0, int(math.log10(high)) + 1)]
    ax.set_xticks(ticks, ["0"] + [f"{int(t):,}" for t in ticks[1:]])
    ax.minorticks_off()
    ax.set_xlabel(_wrap(axis_label(series) if field == "frequency" else POPULARITY_AXIS, 100))
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.03, 1.1)  # a bin at 0 shows its marker whole
    ax.set_title(f"Accuracy by {field} (bars: 95% intervals; n: items, per probe set)")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    _save(fig, path)
    return True


def plot_reliability(runs: Sequence[Run], path: Path, colors: dict[str, str] | None = None) -> bool:
    series = [s for r in runs for s in reliability_series(r)]
    if not series:
        return False
    fig = _figure(6.5, 5)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    for s in series:
        accuracy = [_nan(b.get("accuracy")) for b in s.bins]
        intervals = [bin_interval(b) or {} for b in s.bins]
        below = [max(0.0, a - i["low"]) if "low" in i else 0.0 for a, i in zip(accuracy, intervals)]
        above = [max(0.0, i["high"] - a) if "high" in i else 0.0 for a, i in zip(accuracy, intervals)]
        ax.errorbar([_nan(b.get("confidence")) for b in s.bins], accuracy, yerr=[below, above], marker="o",
                    color=(colors or model_colors(runs)).get(s.run.model, "C0"),
                    capsize=3, elinewidth=0.8, label=_wrap(s.label(s.run.label), 48))
    ax.set_xlim(-0.02, 1.02)  # room for the markers of bins at 0 or 1
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("mean confidence")
    ax.set_ylabel("accuracy")
    ax.set_title("Reliability diagram (bars: 95% intervals)")
    ax.legend(fontsize="small")
    _save(fig, path)
    return True


def plot_positions(runs: Sequence[Run], path: Path, colors: dict[str, str] | None = None) -> bool:
    curves = [(r, c) for r in runs for c in (position_curve(r),) if c]
    if not curves:
        return False
    fig = _figure(7, 4.5)
    ax = fig.add_subplot()
    for run, curve in curves:
        x = [p.position for p in curve]
        color = (colors or model_colors(runs)).get(run.model, "C0")
        ax.plot(x, [p.estimate.value for p in curve], marker=".", color=color, label=_wrap(run.label, 48))
        ax.fill_between(x, [p.estimate.low for p in curve], [p.estimate.high for p in curve], color=color, alpha=0.2)
    ax.set_xlabel("demonstration position")
    ax.set_ylabel("mean log-probability of the object")
    ax.set_title("IC-LKE: log-probability by position (bands: 95% intervals)")
    ax.legend(fontsize="small")
    _save(fig, path)
    return True


def plot_relations(runs: Sequence[Run], path: Path, names: Names | None = None):
    """Relations (labelled "capital (P36)" where `names` knows them) against runs; each cell its
    value and 95% interval, "–" where the run has no such relation. Returns the Figure, None when
    no run has a relation."""
    relations = sorted({n for r in runs for n in breakdown(r, "by_relation")}, key=natural_key)
    if not relations:
        return None
    import numpy as np

    names = names or Names()
    values = np.array([[_nan(entry_accuracy(breakdown(r, "by_relation").get(rel))) for r in runs]
                       for rel in relations], dtype=float)
    fig = _figure(min(13.0, max(5.0, 1.15 * len(runs) + 3.5)), min(60.0, max(3.0, 0.6 * len(relations) + 2.5)))
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=1, aspect="auto")
    # the run's id upright, its view (setting, strategy) on a line below; the runs table is the
    # legend (long rotated labels ran into each other)
    ax.set_xticks(range(len(runs)), [_plain(r.rid.replace(" ", "\n", 1)) for r in runs], fontsize=FONT)
    ax.set_yticks(range(len(relations)), [_plain(names.relation(r)) for r in relations], fontsize=FONT)
    if len(relations) <= 80:  # beyond that the numbers no longer fit their cells
        for i, rel in enumerate(relations):
            for j, run in enumerate(runs):
                value = values[i, j]
                bounds = entry_bounds(breakdown(run, "by_relation").get(rel) or {})
                text = "–" if math.isnan(value) else f"{value:.2f}" + (
                    f"\n[{bounds[0]:.2f}, {bounds[1]:.2f}]" if bounds else "")
                ax.text(j, i, text, ha="center", va="center", fontsize=FONT,
                        color="white" if not math.isnan(value) and value < 0.6 else "black")
    fig.colorbar(image, ax=ax, label="accuracy (Min@n for distractor strategies)")
    ax.set_title("Accuracy by relation (cells: value [95% interval])", fontsize=FONT + 2)
    _save(fig, path)
    return fig


def plot_overlap(pairs: Sequence[PairRow], path: Path) -> bool:
    if not pairs:
        return False
    fig = _figure(7.5, max(3.0, 0.9 * len(pairs) + 1.5))
    ax = fig.add_subplot()
    measures = [("subsumption A→B", lambda o: o.subsumption_ab), ("subsumption B→A", lambda o: o.subsumption_ba)]
    if pairs[0].overlap.asymmetric:  # BELIEF's sharing: a rate per run
        measures += [("sharing of A's", lambda o: o.sharing_a), ("sharing of B's", lambda o: o.sharing_b)]
    else:
        measures.append(("sharing", lambda o: o.sharing))
    height = 0.8 / len(measures)
    for k, (name, get) in enumerate(measures):
        positions = [i - 0.4 + height * (k + 0.5) for i in range(len(pairs))]
        ax.barh(positions, [_nan(get(p.overlap)) for p in pairs], height, label=name)
    ax.set_yticks(range(len(pairs)), [_plain(f"A={p.a.rid}, B={p.b.rid}") for p in pairs])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("rate")
    ax.set_title("Known items shared between runs")
    ax.legend(fontsize="small", loc="lower right")
    _save(fig, path)
    return True

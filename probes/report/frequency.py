"""The report's accuracy against frequency on a log axis (Kandpal et al. 2023's figures): each
run's items binned by their `frequency` (probes/measures/frequency_bins.py), the axis named after
the annotator that counted them (run.json's `frequency_annotator`, from the probe set's sidecar),
and the numbers behind the plot as a table and a CSV file the reader can check. The same against
the subject's `popularity` (PopQA's figures: its page views), where the items carry one.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ...index.corpus_jobs import COUNTED, annotator_line
from ..document import Block, Heading, Image, Text, fmt, fmt_count, fmt_interval, table
from ..measures.frequency_bins import FrequencyBin, frequency_bins
from .loading import Run

PLOT = "accuracy_by_frequency.png"
CSV = "accuracy_by_frequency.csv"
POPULARITY_PLOT = "accuracy_by_popularity.png"
POPULARITY_CSV = "accuracy_by_popularity.csv"
POPULARITY_AXIS = ("subject popularity (PopQA: its Wikipedia page views; a built set's --popularity-bins: its "
                   "statements), log scale")


@dataclass(frozen=True)
class FrequencySeries:
    run: Run
    bins: tuple[FrequencyBin, ...]
    unannotated: int  # scored items without a frequency

    @property
    def annotator(self) -> dict | None:
        found = self.run.config.get("frequency_annotator")
        return found if isinstance(found, dict) else None


def frequency_series(run: Run, field: str = "frequency") -> FrequencySeries | None:
    """The run's scored items in log bins of `field` (frequency, or popularity); None when no item
    has one."""
    pairs, unannotated = [], 0
    for item in run.items:
        correct, frequency = item.get("correct"), item.get(field)
        if correct is None or isinstance(correct, str):
            continue
        if isinstance(frequency, int) and not isinstance(frequency, bool) and frequency >= 0:
            pairs.append((frequency, float(correct)))
        else:
            unannotated += 1
    return FrequencySeries(run, tuple(frequency_bins(pairs)), unannotated) if pairs else None


def all_series(runs: Sequence[Run], field: str = "frequency") -> list[FrequencySeries]:
    return [s for s in (frequency_series(r, field) for r in runs) if s is not None]


def axis_label(series: Sequence[FrequencySeries]) -> str:
    """What the x axis counts: "documents with head and tail, SmolLM2-135M tokens (infini-gram
    pile)" or "... (embedded sample.sqlite)"; said to differ, or to be unrecorded, where it is."""
    found = {json.dumps(s.annotator, sort_keys=True): s.annotator for s in series}
    if len(found) > 1:
        return f"{COUNTED} (annotators differ between runs: see the table), log scale"
    record = next(iter(found.values()), None)
    if record is None:
        return f"{COUNTED} (annotator not recorded), log scale"
    # a hub id or a local folder: its last part names the model ("SmolLM2-135M")
    tokens = f", {Path(str(record['tokenizer']).rstrip('/')).name} tokens" if record.get("tokenizer") else ""
    where = Path(str(record.get("index", "?")).rstrip("/")).name or str(record.get("index"))
    return f"{record.get('counts') or COUNTED}{tokens} ({record.get('backend', '?')} {where}), log scale"


def frequency_rows(series: Sequence[FrequencySeries]) -> list[dict]:
    """One row per run and bin: the numbers the plot draws."""
    rows = []
    for s in series:
        for b in s.bins:
            interval = b.interval or {}
            rows.append({"run": s.run.rid, "label": s.run.name, "bin": b.label, "low": b.low, "high": b.high,
                         "x": "" if b.center is None else round(b.center, 6), "items": b.n,
                         "correct": b.correct, "accuracy": round(b.accuracy, 6),
                         "interval_low": "" if interval.get("low") is None else round(interval["low"], 6),
                         "interval_high": "" if interval.get("high") is None else round(interval["high"], 6),
                         "interval_method": interval.get("method", ""), "annotator": annotator_line(s.annotator)})
    return rows


def frequency_csv(series: Sequence[FrequencySeries]) -> str:
    rows = frequency_rows(series)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["run"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def frequency_section(runs: Sequence[Run], images: set[str], note: str = "") -> list[Block]:
    """`runs` as the accuracy tables show them (views.accuracy_runs); `note` says what their
    accuracy is where it is not a paper's (views.accuracy_note)."""
    series = all_series(runs)
    if not series:
        return []
    by_annotator: dict[str, list[str]] = {}
    for s in series:
        by_annotator.setdefault(annotator_line(s.annotator), []).append(s.run.rid)
    counted = "; ".join(f"{', '.join(rids)}: {line}" for line, rids in by_annotator.items())
    return _log_binned_section(
        series, "frequency",
        "Accuracy against the fact's frequency, as Kandpal et al. 2023 plot it: the number of documents "
        "that mention both the subject and the object, in log-spaced bins (0 | [1,2) | [2,4) | [4,8) | ...; "
        "0 is a bin of its own, drawn at the left). Each point is a bin's accuracy with its 95% interval "
        "(Wilson's for right/wrong items) and its number of items; it sits at the geometric mean of the "
        f"bin's smallest and largest count. Counted by {counted}.",
        CSV, PLOT, images, note)


def popularity_section(runs: Sequence[Run], images: set[str], note: str = "") -> list[Block]:
    """Accuracy against the subject's popularity, binned and drawn as frequency is, where the
    runs' items carry one."""
    series = all_series(runs, "popularity")
    if not series:
        return []
    return _log_binned_section(
        series, "popularity",
        "Accuracy against the subject's popularity, as PopQA (Mallen et al. 2023) plots it: a PopQA "
        "import's items carry their subject's Wikipedia page views (`s_pop`), a built set's with "
        "--popularity-bins the subject's number of statements; log-spaced bins as the frequency's, 0 "
        "a bin of its own, each point a bin's accuracy with its 95% interval and its number of items.",
        POPULARITY_CSV, POPULARITY_PLOT, images, note)


def _log_binned_section(series: Sequence[FrequencySeries], axis: str, prose: str, csv: str, plot: str,
                        images: set[str], note: str) -> list[Block]:
    """A log-binned accuracy section: heading, `prose` with what was left out and where the numbers
    are, the plot where it was drawn, the bins' table."""
    left_out = ", ".join(f"{s.run.rid} {s.unannotated}" for s in series if s.unannotated)
    blocks: list[Block] = [
        Heading(f"Accuracy by {axis} (log scale)"),
        Text(prose + (f" Items without a {axis}, left out: {left_out}." if left_out else "")
             + f" The same numbers: {csv}." + (" " + note if note else ""))]
    if plot in images:
        blocks.append(Image(plot, f"Accuracy by {axis}, log scale"))
    return [*blocks, bins_table(series, f"{axis.capitalize()} bin")]


def bins_table(series: Sequence[FrequencySeries], bin_heading: str) -> Block:
    """The numbers a log-binned plot draws, one row per run and bin."""
    rows = [(row["run"], row["bin"], "left (0)" if b.center is None else f"{b.center:.3g}", str(row["items"]),
             f"{fmt(row['accuracy'])} ({fmt_count(row['correct'])}/{row['items']})", fmt_interval(b.interval))
            for s in series for b, row in zip(s.bins, frequency_rows([s]))]
    return table(("Run", bin_heading, "Drawn at", "Items", "Accuracy (correct/items)", "95% interval"), rows)

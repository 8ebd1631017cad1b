"""The report on disk and the text of `factprobe compare`: `write_report` draws the plots, builds
the document and writes report.md and report.html beside the PNGs, and the item view, items.html
(items_data.py, items_page.py); `comparison_text` lays out a `Comparison.as_dict()` as aligned
columns for people.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from ...kg.outputs import replace_file
from ..document import fmt, fmt_signed
from .comparison import Definitions, comparable_pairs, correlation_text
from .items_data import ItemViewOptions, items_payload, missing_probe_sets, probe_sets_found, report_names
from .items_page import items_html
from .loading import Run
from .frequency import CSV, POPULARITY_CSV, POPULARITY_PLOT, all_series, frequency_csv
from .plots import (model_colors, plot_buckets, plot_frequency, plot_overlap, plot_positions, plot_relations,
                    plot_reliability)
from .render import GENERATOR, to_html, to_markdown
from .sections import build_document
from .views import accuracy_runs, figure_runs


# Every file a report writes into its folder (`report --out` checks each is no link first).
REPORT_FILES = ("report.md", "report.html", "items.html", "accuracy_by_bucket.png", "accuracy_by_frequency.png",
                "accuracy_by_frequency.csv", POPULARITY_PLOT, POPULARITY_CSV, "reliability.png", "positions.png", "relation_heatmap.png", "overlap.png")


# What report.html holds until the report is written: the generator line from the first byte
# on, so a report killed midway (PNGs drawn, no page yet) is still known as factprobe's own and
# a rerun writes over it, and a reader who opens the page is told it is not finished.
UNFINISHED = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" + GENERATOR + "\n"
              "<title>factprobe report (not finished)</title>\n</head>\n<body>\n<p>This report is being written, "
              "or its writer was stopped before it ended: run <code>factprobe report</code> again to finish it.</p>\n"
              "</body>\n</html>\n")


def is_report_folder(folder: str | Path) -> bool:
    """`folder` holds a report factprobe wrote, finished or not: report.html with the generator line."""
    try:
        with open(Path(folder) / "report.html", "rb") as page:
            return GENERATOR.encode("utf-8") in page.read(2000)
    except OSError:
        return False


@dataclass
class ReportFiles:
    markdown: Path
    html: Path
    images: list[Path] = field(default_factory=list)
    items: Path | None = None  # items.html, the item view
    warnings: list[str] = field(default_factory=list)  # what the report lacks (probe sets not found)


def write_report(runs: Sequence[Run], out: str | Path, title: str = "factprobe report",
                 definitions: Definitions = Definitions(), items: ItemViewOptions = ItemViewOptions()) -> ReportFiles:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if not is_report_folder(out):  # before any other byte: whatever a kill leaves is known as ours
        replace_file(out / "report.html", UNFINISHED)
    shown = accuracy_runs(runs)  # BELIEF-ICL per setting, baselines by their verdict (views.py)
    figures = figure_runs(runs)  # and distractor runs per strategy, by Min@n
    found = probe_sets_found(runs, items.probes)
    names = report_names(runs, found)
    warnings = missing_probe_sets(runs, found)
    colors = model_colors(runs)  # a model's colour, the same in every figure
    plots = {"accuracy_by_bucket.png": lambda p: plot_buckets(figures, p, colors),
             "accuracy_by_frequency.png": lambda p: plot_frequency(shown, p, colors=colors),
             POPULARITY_PLOT: lambda p: plot_frequency(shown, p, "popularity", colors),
             "reliability.png": lambda p: plot_reliability(runs, p, colors),
             "positions.png": lambda p: plot_positions(runs, p, colors),
             "relation_heatmap.png": lambda p: plot_relations(figures, p, names),
             "overlap.png": lambda p: plot_overlap(comparable_pairs(runs, definitions), p)}
    drawn = []
    for name, draw in plots.items():
        target = out / name
        if draw(target) not in (None, False):
            drawn.append(target)
        elif target.exists():
            target.unlink()  # left from an earlier report over other runs: it would mislead
    for name, field in ((CSV, "frequency"), (POPULARITY_CSV, "popularity")):
        series = all_series(shown, field)  # the numbers behind the plot, for the reader to check
        if series:
            replace_file(out / name, frequency_csv(series))
        elif (out / name).exists():
            (out / name).unlink()
    payload = items_payload(runs, items.probes, items.rows, items.seed, names)
    blocks = build_document(runs, title, {p.name for p in drawn}, definitions, items_page="items.html",
                            warnings=warnings, names=names)
    files = ReportFiles(out / "report.md", out / "report.html", drawn, out / "items.html", warnings)
    replace_file(files.markdown, to_markdown(blocks))
    replace_file(files.html, to_html(blocks, title, out))
    replace_file(files.items, items_html(payload, f"{title}: item by item"))
    return files


def comparison_text(result: Mapping) -> str:
    """`factprobe compare` for people: aligned columns, differences as B - A."""
    a, b, o = result["a"], result["b"], result["overlap"]
    lines = [f"A: {a['folder']}  {a['model']} / {a['method']}  probes {a['probes']}  ({a['items']} items)",
             f"B: {b['folder']}  {b['model']} / {b['method']}  probes {b['probes']}  ({b['items']} items)", ""]
    overall = result["accuracy"]
    rows = ([("accuracy", fmt(overall["a"]), fmt(overall["b"]), _difference(overall))]
            if overall["a"] is not None or overall["b"] is not None else [])
    rows += [(f"accuracy ({setting})", fmt(v["a"]), fmt(v["b"]), _difference(v))
             for setting, v in result.get("accuracy_by_setting", {}).items()]
    for key, prefix in (("by_relation", "relation"), ("by_bucket", "bucket")):
        rows += [(f"{prefix} {name}", fmt(v["a"]), fmt(v["b"]), _difference(v))
                 for name, v in result[key].items()]
    drawn = next((v["difference_interval"] for v in [overall, *result.get("accuracy_by_setting", {}).values(),
                                                      *result["by_relation"].values(), *result["by_bucket"].values()]
                  if v.get("difference_interval")), None)
    lines += _aligned(("", "A", "B", "B - A [95%]"), rows)
    if drawn:
        lines.append(f"[95%]: a paired bootstrap over the items both runs scored ({drawn['resamples']} resamples, "
                     f"seed {drawn['seed']})")
    definitions = o["definitions"]
    sharing = o["sharing"]  # BELIEF's asymmetric rates are one per run
    sharing = (f"of A's {fmt(sharing['a'])}  of B's {fmt(sharing['b'])}" if isinstance(sharing, dict)
               else fmt(sharing))
    lines += ["", f"over {o['shared_units']} units of {o['shared_items']} items in both runs (matched by id; "
                  f"--known {definitions['known']}): both know {o['both']}, only A {o['only_a']}, "
                  f"only B {o['only_b']}, neither {o['neither']}",
              f"McNemar exact test, A and B know as much: p = {o['mcnemar_p']:.3g}"
              + (" (a difference this large is rare by chance)" if o["mcnemar_p"] < 0.05 else
                 " (no evidence of a difference)"),
              f"subsumption A->B {fmt(o['subsumption_a_to_b'])}  B->A {fmt(o['subsumption_b_to_a'])}  "
              f"sharing ({definitions['sharing']}) {sharing}",
              _correlations(result.get("correlations") or {}, o),
              result["known_rule"].replace("`", "")]
    return "\n".join(lines)


def _difference(row: Mapping) -> str:
    """B - A and, where drawn, its interval: "+0.1667 [-0.3333, +0.6667]"."""
    interval = row.get("difference_interval")
    text = fmt_signed(row.get("difference"))
    return f"{text} [{fmt_signed(interval['low'])}, {fmt_signed(interval['high'])}]" if interval else text


def _correlations(correlations: Mapping, o: Mapping) -> str:
    """Pearson's and Kendall's correlation of per-relation accuracies with n and a 95% interval, or n/a."""
    return (f"per-relation accuracy over n = {correlations.get('relations', o['relations'])} relations "
            f"(95% interval by Fisher's z): Pearson {correlation_text(correlations.get('pearson'))}  "
            f"Kendall tau-b {correlation_text(correlations.get('kendall_tau'))}")


def _aligned(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]
    def line(cells):
        first, *rest = cells
        return "  ".join([str(first).ljust(widths[0]), *(str(c).rjust(w) for c, w in zip(rest, widths[1:]))]).rstrip()
    return [line(headers), *(line(r) for r in rows)]

"""Reports over finished `factprobe eval` runs: tables and plots across runs, and a side-by-side
comparison of two. Everything here reads run folders only; no model is loaded. Output is
deterministic: runs are sorted, keys are sorted, numbers have 4 decimals.

Modules, each depending only on those before it: loading (run folders), compute (overlap,
comparisons), formatting (numbers), blocks (the document model and its sections), render
(Markdown, HTML), plots (PNGs), write (the report on disk, `factprobe compare`'s text). The
public names are re-exported here, so `from factprobe.probes.report import ...` keeps working.
"""

from .blocks import (BELIEF_BIAS, BELIEF_MAXIMUM, BELIEF_UNITS, HANDLED_BREAKDOWNS, Block, Heading, Image,
                     Reliability, Table, Text, build_document, reliability_series)
from .compute import (KNOWN_DEFINITIONS, KNOWN_RULE, SHARING_DEFINITIONS, Comparison, Definitions, Overlap,
                      PairRow, bucket_key, comparable_pairs, compare, is_known, known_units, natural_key, overlap,
                      relation_means, same_probe_set)
from .formatting import fmt, fmt_acc_at_1, fmt_cell, fmt_count, fmt_signed
from .loading import RUN_FILES, Run, RunError, load_run, load_runs
from .plots import plot_buckets, plot_overlap, plot_relations, plot_reliability
from .render import md_escape, to_html, to_markdown
from .write import ReportFiles, comparison_text, write_report

__all__ = [
    # loading
    "RUN_FILES", "RunError", "Run", "load_run", "load_runs",
    # compute
    "KNOWN_RULE", "is_known", "natural_key", "bucket_key", "same_probe_set", "KNOWN_DEFINITIONS",
    "SHARING_DEFINITIONS", "Definitions", "Overlap", "known_units", "overlap", "relation_means", "PairRow",
    "comparable_pairs", "Comparison", "compare",
    # formatting
    "fmt", "fmt_signed", "fmt_count", "fmt_cell", "fmt_acc_at_1",
    # blocks
    "HANDLED_BREAKDOWNS", "Heading", "Text", "Table", "Image", "Block", "BELIEF_UNITS", "BELIEF_BIAS",
    "BELIEF_MAXIMUM", "Reliability", "reliability_series", "build_document",
    # render
    "md_escape", "to_markdown", "to_html",
    # plots
    "plot_buckets", "plot_reliability", "plot_relations", "plot_overlap",
    # write
    "ReportFiles", "write_report", "comparison_text",
]

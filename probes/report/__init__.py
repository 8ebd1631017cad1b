"""Reports over finished `factprobe eval` runs: tables and plots across runs, and a side-by-side
comparison of two. Everything here reads run folders only; no model is loaded. Output is
deterministic: runs are sorted, keys are sorted, numbers have 4 decimals.

Modules, each depending only on those before it: loading (run folders), comparison (pairs of
runs side by side; the overlap measures are probes/measures/overlap.py), sections (the report's sections, each method's own from the method registry),
labels (relation and entity names from the probe sets and records), render (Markdown,
HTML), plots (PNGs), the item view (items_shape: every method's records in one
shape; items_filter: what its filters mean; items_data: the rows with their probe items;
items_script and items_page: items.html), write (the report on disk, `factprobe compare`'s text),
tidy (every run's measures as one table's rows: `factprobe results`, factprobe.results) and
tidy_files (that table as CSV, JSON lines, Parquet).
The blocks and number formats are probes/document's. The public names are re-exported here, so
`from factprobe.probes.report import ...` keeps working.
"""

from ..document import (Block, Heading, Image, Table, Text, bucket_key, fmt, fmt_acc_at_1, fmt_cell, fmt_count,
                        fmt_signed, natural_key)
from ..measures.overlap import (ICL_SETTINGS, KNOWN_DEFINITIONS, KNOWN_RULE, SHARING_DEFINITIONS, Definitions, Overlap,
                               in_setting, is_known, known_units, overlap, relation_means)
from .comparison import (Comparison, PairRow, across_methods, comparable_pairs, compare, icl_settings, missing_setting,
                         same_probe_set)
from .loading import RUN_FILES, Run, RunError, load_run, load_runs
from .plots import plot_buckets, plot_overlap, plot_relations, plot_reliability
from .render import md_escape, to_html, to_markdown
from .sections import (SHARED_BREAKDOWNS, Reliability, build_document, method_sections, reliability_series,
                       shown_breakdowns)
from .write import ReportFiles, comparison_text, write_report

__all__ = [
    # loading
    "RUN_FILES", "RunError", "Run", "load_run", "load_runs",
    # comparison (the overlap measures: probes/measures/overlap.py)
    "KNOWN_RULE", "is_known", "natural_key", "bucket_key", "same_probe_set", "KNOWN_DEFINITIONS",
    "SHARING_DEFINITIONS", "Definitions", "Overlap", "known_units", "overlap", "relation_means", "PairRow",
    "comparable_pairs", "Comparison", "compare", "ICL_SETTINGS", "in_setting", "across_methods", "icl_settings",
    "missing_setting",
    # formatting
    "fmt", "fmt_signed", "fmt_count", "fmt_cell", "fmt_acc_at_1",
    # blocks (probes/document) and sections
    "Heading", "Text", "Table", "Image", "Block", "SHARED_BREAKDOWNS", "Reliability", "build_document",
    "method_sections", "reliability_series", "shown_breakdowns",
    # render
    "md_escape", "to_markdown", "to_html",
    # plots
    "plot_buckets", "plot_reliability", "plot_relations", "plot_overlap",
    # write
    "ReportFiles", "write_report", "comparison_text",
]

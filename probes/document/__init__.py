"""The report as a document that methods add to: blocks (blocks.py: headings, text, tables,
images, and `Section`, a method's part of "Method measures") and how numbers read in it
(formatting.py). It imports no method and reads no run folder, so a method's module can declare
its report sections with it; probes/report/ assembles the document and writes it.
"""

from .blocks import Block, Heading, Image, Link, ReportRun, Section, Table, Text, breakdown, table
from .formatting import (bucket_key, fmt, fmt_acc_at_1, fmt_cell, fmt_count, fmt_interval, fmt_signed,
                         interval_suffix, measure_columns, natural_key, number, with_interval)

__all__ = ["Block", "Heading", "Image", "Link", "ReportRun", "Section", "Table", "Text", "breakdown", "table",
           "bucket_key", "fmt", "fmt_acc_at_1", "fmt_cell", "fmt_count", "fmt_interval", "fmt_signed",
           "interval_suffix", "measure_columns", "natural_key", "number", "with_interval"]

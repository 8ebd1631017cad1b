"""The results table (tidy.py) in the files other tools read: CSV (an empty field for null),
JSON lines (null), Parquet through pyarrow with one type per column (text as string, value, low
and high as float64, n as int64, nulls as nulls), and the types pandas gets (`FRAME_TYPES`).
Each writer takes the rows as dicts under the columns given, so a column is named once."""

from __future__ import annotations

import csv
import io
import json
from typing import Iterable, Sequence

from .tidy import COLUMNS

FLOATS = ("value", "low", "high")
WHOLE = ("n",)
# pandas' dtype of each column (a breakdown column is text): nullable where a value may be missing.
FRAME_TYPES = {**{name: "string" for name in COLUMNS}, **{name: "float64" for name in FLOATS},
               **{name: "Int64" for name in WHOLE}}
FORMATS = ("csv", "jsonl", "parquet")


class ParquetUnavailable(ImportError):
    """pyarrow is not installed: the message says how to install it."""


def csv_text(rows: Iterable[dict], columns: Sequence[str]) -> str:
    """The rows as CSV with a header line; None is an empty field, numbers as Python writes
    them (every float read back exactly)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row[c] for c in columns])
    return out.getvalue()


def jsonl_text(rows: Iterable[dict], columns: Sequence[str]) -> str:
    """One JSON object a line, the columns in order, null where a row has no value."""
    return "".join(json.dumps({c: row.get(c) for c in columns}, ensure_ascii=False) + "\n" for row in rows)


def parquet_bytes(rows: Sequence[dict], columns: Sequence[str]) -> bytes:
    """The rows as one Parquet file, each column of its own type (`arrow_schema`)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ParquetUnavailable("Parquet output needs pyarrow: pip install 'factprobe[results]' "
                                 "(or --format csv / jsonl)") from None
    schema = arrow_schema(columns)
    table = pa.Table.from_pylist([{c: row.get(c) for c in columns} for row in rows], schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def arrow_schema(columns: Sequence[str]):
    import pyarrow as pa

    kinds = {**{name: pa.float64() for name in FLOATS}, **{name: pa.int64() for name in WHOLE}}
    return pa.schema([pa.field(name, kinds.get(name, pa.string())) for name in columns])

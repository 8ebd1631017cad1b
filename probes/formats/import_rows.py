"""The rows an importer reads (JSONL or CSV) and its report: a row that does not fit is named by
file, line and field, counted and skipped, never the end of the import (probes/formats/importers.py,
probes/formats/import_lama.py).

`csv_records` is every CSV reader's (imports, fact lists, judgements): csv raises on a cell over
its field_size_limit (131,072 characters) and a text file raises on bytes that are not UTF-8,
both ending the file; here each is the one record's fault, named by its line and cell, and the
records after it are read on."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator

from ...kg.jsonl import jsonl_lines


class ImportRowError(ValueError):
    pass


@dataclass
class ImportReport:
    rows: int = 0
    items: int = 0
    rejected: list[str] = field(default_factory=list)  # "file:line: field: why"
    # what a user should know of items that were kept: "what they are" -> how many
    notes: dict[str, int] = field(default_factory=dict)
    # files besides the rows that the items were made from (X-FACTR's prompts, mLAMA's templates)
    resources: list[Path] = field(default_factory=list)

    def note(self, what: str) -> None:
        self.notes[what] = self.notes.get(what, 0) + 1

    def to_dict(self) -> dict:
        counts = {"rows": self.rows, "items": self.items, "rejected": len(self.rejected)}
        return {**counts, "notes": self.notes} if self.notes else counts


@dataclass(frozen=True)
class CsvRecord:
    line: int  # the line it starts on, from 1
    cells: list[str]  # [] for a blank line, or a record csv could not read
    bad: tuple[int, str] | None = None  # (cell index, why) when a cell cannot be read

    def problem(self, header: list[str] | None = None) -> str | None:
        """"NAME: why" for the bad cell (the header's name for it, else its column), or None."""
        if self.bad is None:
            return None
        index, why = self.bad
        name = header[index] if header and index < len(header) and header[index] else f"column {index + 1}"
        return f"{name}: {why}"


def open_csv(path: str | Path) -> IO[str]:
    """A CSV file as csv reads it (newline=""), a byte order mark read past and bytes that are
    not UTF-8 kept as surrogate escapes, for `csv_records` to name in their cell."""
    return open(path, encoding="utf-8-sig", errors="surrogateescape", newline="")


_UNDECODED = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of a byte that is not UTF-8


def csv_records(stream: Iterable[str], delimiter: str = ",") -> Iterator[CsvRecord]:
    """Every record of `stream` (lines as `open_csv` gives them), a record whose cell cannot be
    read (over csv's field_size_limit, not UTF-8) with `bad` set instead of ending the file."""
    held: list[str] = []  # the lines of the record being read
    consumed = 0

    def feed() -> Iterator[str]:
        nonlocal consumed
        for text in stream:
            consumed += 1
            held.append(text)
            yield text

    lines = feed()
    reader = csv.reader(lines, delimiter=delimiter)
    while True:
        start = consumed + 1
        held.clear()
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            column, quoted = _cell_at_fault(held, delimiter)
            while quoted:  # csv gave up inside a quoted cell that goes on: the rest is this record's too
                rest = next(lines, None)
                if rest is None:
                    break
                quoted = _still_quoted(rest, delimiter)
            limit = csv.field_size_limit()
            why = f"over {limit:,} characters (csv's field_size_limit)" if "field limit" in str(error) else str(error)
            yield CsvRecord(start, [], (column, why))
            continue
        undecoded = next((k for k, cell in enumerate(cells) if _UNDECODED.search(cell)), None)
        if undecoded is not None:
            byte = ord(_UNDECODED.search(cells[undecoded]).group()) - 0xDC00
            yield CsvRecord(start, [], (undecoded, f"not UTF-8 (byte 0x{byte:02x})"))
        else:
            yield CsvRecord(start, cells)


def _tokens(delimiter: str) -> re.Pattern:
    d = re.escape(delimiter)
    return re.compile(f'"(?:[^"]|"")*("?)|[^"{d}]+|{d}|"')


def _cell_at_fault(held: list[str], delimiter: str) -> tuple[int, bool]:
    """(the index of the record's first cell over csv's limit, or of its last cell; whether the
    record's text ends inside a quoted cell), from the record's lines as read so far."""
    limit, column, length, found = csv.field_size_limit(), 0, 0, None
    token = None
    for token in _tokens(delimiter).finditer("".join(held)):
        if token.group() == delimiter:
            column, length = column + 1, 0
            continue
        length += len(token.group())
        if found is None and length > limit:
            found = column
    quoted = token is not None and token.group().startswith('"') and len(token.group()) > 1 and not token.group(1)
    return (column if found is None else found), quoted


def _still_quoted(line: str, delimiter: str) -> bool:
    """Whether a line read inside a quoted cell leaves the record still inside one."""
    closing = re.match(r'(?:[^"]|"")*+"', line)  # possessive: a doubled quote is never a closing one
    if closing is None:
        return True
    after = line[closing.end():]
    return bool(after) and _cell_at_fault([after], delimiter)[1]


def file_rows(path: Path) -> Iterator[tuple[str, dict]]:
    """("file:line", row) for every row; a line that is not a JSON object, or a CSV record with
    a cell that cannot be read, comes as a row holding only `__error__`, for `row_field` to
    reject."""
    if path.suffix.lower() == ".csv":
        with open_csv(path) as handle:
            header: list[str] | None = None
            for record in csv_records(handle):
                if header is None:
                    if record.bad:
                        raise ValueError(f"{path}:{record.line}: the header's {record.problem()}")
                    header = record.cells or None  # blank lines before it: not a header
                    continue
                if record.cells or record.bad:
                    where = f"{path}:{record.line}"
                    yield where, ({"__error__": record.problem(header)} if record.bad else
                                  dict(zip(header, record.cells + [None] * (len(header) - len(record.cells)))))
        return
    for line in jsonl_lines(path, finite=True):  # NaN is no label, no id: not JSON, as RFC 8259 says
        row = {"__error__": line.error} if line.error else line.value
        # Rows are read by field name: a list or a number on a line is a bad row, not a crash.
        if not isinstance(row, dict):
            row = {"__error__": f"not a JSON object (a {type(row).__name__})"}
        yield line.where(path), row


def row_field(row: dict, name: str) -> object:
    if "__error__" in row:
        raise ImportRowError(row["__error__"])
    value = row.get(name)
    if value in (None, ""):
        raise ImportRowError(f"{name}: missing")
    return value


def row_text(row: dict, name: str) -> str:
    """A field that must be a string: a label, an id."""
    value = row_field(row, name)
    if not isinstance(value, str):
        raise ImportRowError(f"{name}: not a string (a {type(value).__name__})")
    return value


def guarded_items(rows: Iterable[tuple[str, Any]], report: ImportReport,
                  convert: Callable[[Any], dict | None]) -> Iterator[dict | None]:
    """`convert` over the rows (a row, or what the importer pairs with it), a row it refuses
    reported by place; so is an item whose id an earlier row's item took (`convert` returning
    None adds to an earlier item instead)."""
    first: dict[str, str] = {}
    for where, row in rows:
        report.rows += 1
        try:
            item = convert(row)
            if item is not None and item["id"] in first:
                raise ImportRowError(f"id {item['id']!r} is also the id of the row at {first[item['id']]}")
        except ImportRowError as error:
            report.rejected.append(f"{where}: {error}")
            continue
        if item is not None:
            first[item["id"]] = where
        yield item

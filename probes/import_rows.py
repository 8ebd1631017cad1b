"""The rows an importer reads (JSONL or CSV) and its report: a row that does not fit is named by
file, line and field, counted and skipped, never the end of the import (probes/importers.py,
probes/import_lama.py)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..kg.jsonl import jsonl_lines


class ImportRowError(ValueError):
    pass


@dataclass
class ImportReport:
    rows: int = 0
    items: int = 0
    rejected: list[str] = field(default_factory=list)  # "file:line: field: why"
    # what a user should know of items that were kept: "what they are" -> how many
    notes: dict[str, int] = field(default_factory=dict)

    def note(self, what: str) -> None:
        self.notes[what] = self.notes.get(what, 0) + 1

    def to_dict(self) -> dict:
        counts = {"rows": self.rows, "items": self.items, "rejected": len(self.rejected)}
        return {**counts, "notes": self.notes} if self.notes else counts


def file_rows(path: Path) -> Iterator[tuple[str, dict]]:
    """("file:line", row) for every row; a line that is not a JSON object comes as a row holding
    only `__error__`, for `row_field` to reject."""
    if path.suffix.lower() == ".csv":
        with open(path, encoding="utf-8", newline="") as handle:
            for number, row in enumerate(csv.DictReader(handle), start=2):
                yield f"{path}:{number}", row
        return
    for line in jsonl_lines(path):
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

"""JSON Lines, read one way everywhere: probe sets, evaluation records, pages of results,
imported rows. Lines are numbered from 1 as an editor shows them; blank lines are skipped; a
line that is not JSON is reported with its file and line, never silently dropped."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator


@dataclass(frozen=True)
class JsonLine:
    number: int  # 1-based line number in the file
    value: Any  # the parsed value; None when the line is not JSON
    error: str | None = None  # "not JSON (...)" when it is not

    def where(self, path: str | Path) -> str:
        return f"{path}:{self.number}"


def jsonl_lines(path: str | Path, *, start: int = 0, stop: int | None = None) -> Iterator[JsonLine]:
    """Every non-blank line of the file from line index `start` (0-based) up to `stop`, parsed;
    a line that is not JSON comes with `error` set instead of raising, for callers that reject
    and go on. Streams: a page from the middle of a large file reads no more than it needs. A byte
    order mark that starts the file is not part of its first line."""
    with open(path, encoding="utf-8-sig") as lines:
        for number, line in enumerate(itertools.islice(lines, start, stop), start=start + 1):
            if not line.strip():
                continue
            try:
                yield JsonLine(number, json.loads(line))
            except json.JSONDecodeError as error:
                yield JsonLine(number, None, f"not JSON ({error.msg})")


def read_jsonl(path: str | Path, *, start: int = 0, stop: int | None = None) -> Iterator[Any]:
    """The values of the file's lines; ValueError "PATH:LINE: not JSON (...)" at the first bad one."""
    for line in jsonl_lines(path, start=start, stop=stop):
        if line.error:
            raise ValueError(f"{line.where(path)}: {line.error}")
        yield line.value

"""JSON Lines, read one way everywhere: probe sets, evaluation records, pages of results,
imported rows. Lines are numbered from 1 as an editor shows them; blank lines are skipped; a
line that cannot be read is reported with its file and line, never silently dropped, and never
the end of the lines after it.

A line may come from anyone, so every way it can fail is one reason on that line, not an
exception out of the reader: not UTF-8 (each line is decoded on its own, so one bad byte costs
its line only), not JSON, nested deeper than MAX_DEPTH (json raises RecursionError at ~1,000;
a value a few levels below that still breaks whatever recurses over it later), an integer of
more digits than Python converts (ValueError "Exceeds the limit (4300 digits)"), a string
holding a lone surrogate (an `\\ud800` escape: no UTF-8 writer can write it back), and, where
the caller asks for standard JSON (`finite=True`), NaN, Infinity or a number that overflows to
it (1e999)."""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

# No probe set, record or imported row comes near this; a value past it is hostile or broken.
# Half json's own limit (~1,000, the interpreter's recursion limit): what recurses over a value
# later (json.dumps as a record is written) has 500 frames to spare.
MAX_DEPTH = 500
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class JsonLine:
    number: int  # 1-based line number in the file
    value: Any  # the parsed value; None when the line cannot be read
    error: str | None = None  # why it cannot: "not JSON (...)", "not UTF-8 (...)", ...

    def where(self, path: str | Path) -> str:
        return f"{path}:{self.number}"


class _NotFinite(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotFinite(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _NotFinite(f"{text[:40]} overflows to infinity")
    return value


class JsonRefused(ValueError):
    """Why a JSON text is refused (`reason`), and the line of a whole file it is on where known
    (`line`); `syntax`: it is not JSON at all, rather than JSON no reader here takes."""

    def __init__(self, reason: str, line: int | None = None, syntax: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.line, self.syntax = reason, line, syntax


def parse_json(text: str | bytes, *, finite: bool = False) -> Any:
    """One JSON text's value; JsonRefused for every reason the module names. `bytes` are
    decoded as UTF-8 first."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            line = text.count(b"\n", 0, error.start) + 1
            column = error.start - text.rfind(b"\n", 0, error.start)
            raise JsonRefused(f"not UTF-8 (byte 0x{text[error.start]:02x} at column {column})", line) from None
    hooks = {"parse_constant": _refuse_constant, "parse_float": _finite_float} if finite else {}
    try:
        value = json.loads(text, **hooks)
    except json.JSONDecodeError as error:
        raise JsonRefused(f"not JSON ({error.msg})", error.lineno, syntax=True) from None
    except RecursionError:
        raise JsonRefused(f"nested over {MAX_DEPTH} deep") from None
    except _NotFinite as error:
        raise JsonRefused(f"not JSON ({error})") from None
    except ValueError as error:  # int('1' * 5000): "Exceeds the limit (4300 digits) ..."
        raise JsonRefused(f"a number too long to read ({str(error).split(':')[0]})") from None
    if _deeper_than(value, text, MAX_DEPTH):
        raise JsonRefused(f"nested over {MAX_DEPTH} deep")
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        raise JsonRefused("a string holds a lone surrogate (an \\ud800-\\udfff escape outside a pair): not text")
    return value


def json_value(text: str | bytes, *, finite: bool = False) -> tuple[Any, str | None]:
    """One line's JSON: (value, None), or (None, why it is refused)."""
    try:
        return parse_json(text, finite=finite), None
    except JsonRefused as refused:
        return None, refused.reason


def _deeper_than(value: Any, text: str, limit: int) -> bool:
    """Whether a parsed value nests deeper than `limit`. A value is as deep as its text has
    brackets at most, so a line of fewer is never walked (a walk costs about what the parse
    does: the cap is set high enough that records factprobe writes stay below it)."""
    if type(value) not in (dict, list) or text.count("[") + text.count("{") <= limit:
        return False  # (a string's brackets are text)
    level = [value]
    for _ in range(limit):
        below = []
        for node in level:
            children = node.values() if type(node) is dict else node
            below += [c for c in children if type(c) is dict or type(c) is list]
        if not below:
            return False
        level = below
    return True


def _has_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_json_file(path: str | Path, *, finite: bool = False) -> Any:
    """A whole JSON file's value (a byte order mark read past); ValueError "PATH: WHY", one line,
    for any reason the module names. OSError as open raises it."""
    try:
        return parse_json(Path(path).read_bytes().removeprefix(_BOM), finite=finite)
    except JsonRefused as refused:
        where = f"{path}:{refused.line}" if refused.line else str(path)
        raise ValueError(f"{where}: {refused.reason}") from None


def jsonl_lines(path: str | Path, *, start: int = 0, stop: int | None = None,
                finite: bool = False) -> Iterator[JsonLine]:
    """Every non-blank line of the file from line index `start` (0-based) up to `stop`, parsed;
    a line that cannot be read comes with `error` set instead of raising, for callers that
    reject and go on (`finite`: refuse NaN and Infinity, as JSON does). Streams: a page from the
    middle of a large file reads no more than it needs. A byte order mark that starts the file
    is not part of its first line."""
    with open(path, "rb") as lines:
        yield from _parsed(itertools.islice(lines, start, stop), start + 1, finite)


def jsonl_bytes(data: bytes, *, finite: bool = False) -> Iterator[JsonLine]:
    """As `jsonl_lines`, over bytes read already (those a caller hashed, so that what it
    parses is what it names)."""
    return _parsed(data.split(b"\n"), 1, finite)  # lines as a binary file's iteration cuts them


def _parsed(lines, first: int, finite: bool) -> Iterator[JsonLine]:
    for number, raw in enumerate(lines, start=first):
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM):]
        if not raw.strip():
            continue
        value, error = json_value(raw, finite=finite)
        yield JsonLine(number, value, error)


def read_jsonl(path: str | Path, *, start: int = 0, stop: int | None = None, finite: bool = False) -> Iterator[Any]:
    """The values of the file's lines; ValueError "PATH:LINE: WHY" at the first bad one."""
    for line in jsonl_lines(path, start=start, stop=stop, finite=finite):
        if line.error:
            raise ValueError(f"{line.where(path)}: {line.error}")
        yield line.value

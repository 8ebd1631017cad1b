"""Reading inputs: compressed files, chunks of whole lines, resume positions, fingerprints.

Chunks carry raw bytes and are decoded by the parsing workers, so the reading process does
nothing but decompress and find line ends.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CHUNK_BYTES = 4 << 20


class InputError(Exception):
    """An input that cannot be read at all (missing, unreadable, not a file)."""


class TruncatedInput(Exception):
    """A compressed input that ends early: everything before `line` was read."""

    def __init__(self, path: str, line: int, detail: str):
        super().__init__(f"{path}: truncated or corrupt compressed data after line {line - 1} ({detail})")
        self.line = line


@dataclass(frozen=True)
class Chunk:
    """Consecutive records of one input.

    `first` is the 1-based number of the first record (the line number for line formats);
    `position` is the resume position after the chunk (decompressed byte offset for line
    formats); `progress` is how far into the file on disk the reader was, for progress bars.
    """

    first: int
    count: int
    data: bytes
    position: int
    progress: int


def check_readable(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if not p.is_file():
        raise InputError(f"{p}: not a file")
    if not os.access(p, os.R_OK):
        raise InputError(f"{p}: permission denied")
    return p


def open_binary(path: str | os.PathLike) -> io.BufferedIOBase:
    """Open a possibly compressed file (by extension) for binary reading."""
    p = check_readable(path)
    name = p.name.lower()
    try:
        if name.endswith(".gz"):
            return gzip.open(p, "rb")  # type: ignore[return-value]
        if name.endswith(".bz2"):
            return bz2.open(p, "rb")  # type: ignore[return-value]
        if name.endswith(".xz"):
            return lzma.open(p, "rb")  # type: ignore[return-value]
        return open(p, "rb")
    except OSError as exc:
        raise InputError(f"{p}: {exc.strerror or exc}") from exc


def disk_position(stream: io.BufferedIOBase) -> int:
    """How many bytes of the file on disk a (possibly decompressing) stream has consumed."""
    raw = getattr(stream, "fileobj", None) or getattr(stream, "_fp", None)
    inner = getattr(stream, "_buffer", None)
    for candidate in (raw, getattr(getattr(inner, "raw", None), "_fp", None), stream):
        try:
            if candidate is not None:
                return candidate.tell()
        except (OSError, ValueError, AttributeError):
            continue
    return 0


_TRUNCATION_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError, OSError)


def line_chunks(
    path: str | os.PathLike,
    *,
    start_line: int = 0,
    start_position: int = 0,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Chunk]:
    """Whole-line chunks of a (possibly compressed) text file, resuming after `start_line`
    lines / `start_position` decompressed bytes. Raises TruncatedInput at a corrupt tail
    after yielding every complete line before it."""
    p = check_readable(path)
    stream = open_binary(p)
    try:
        line = start_line
        position = start_position
        if start_position:
            if isinstance(stream, io.BufferedReader):
                stream.seek(start_position)
            else:
                _skip(stream, start_position, p, line)
        carry = b""
        while True:
            try:
                block = stream.read(chunk_bytes)
            except _TRUNCATION_ERRORS as exc:
                # Lines completed before the damage are still good; the partial one is not.
                raise TruncatedInput(str(p), line + 1, str(exc) or type(exc).__name__) from exc
            if not block:
                if carry:
                    position += len(carry)
                    yield Chunk(line + 1, 1, carry, position, disk_position(stream))
                return
            data = carry + block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            whole, carry = data[:cut], data[cut:]
            n = whole.count(b"\n")
            position += len(whole)
            yield Chunk(line + 1, n, whole, position, disk_position(stream))
            line += n
    finally:
        stream.close()


def _skip(stream: io.BufferedIOBase, nbytes: int, path: Path, line: int) -> None:
    remaining = nbytes
    while remaining:
        try:
            block = stream.read(min(remaining, CHUNK_BYTES))
        except _TRUNCATION_ERRORS as exc:
            raise TruncatedInput(str(path), line + 1, str(exc)) from exc
        if not block:
            raise InputError(f"{path}: shorter than the recorded resume position; use --restart")
        remaining -= len(block)


def split_lines(chunk: Chunk) -> Iterator[tuple[int, bytes]]:
    """(line number, line without its newline) for every line of a chunk."""
    number = chunk.first
    for raw in chunk.data.split(b"\n"):
        if number >= chunk.first + chunk.count:
            break
        yield number, raw.rstrip(b"\r")
        number += 1


def fingerprint(path: str | os.PathLike) -> str:
    """Content identity of an input (size + head + tail), so a moved file still resumes and
    a changed file starts over."""
    p = check_readable(path)
    size = p.stat().st_size
    h = hashlib.sha1(str(size).encode())
    with open(p, "rb") as f:
        h.update(f.read(1 << 20))
        if size > 2 << 20:
            f.seek(size - (1 << 20))
            h.update(f.read())
    return h.hexdigest()[:24]


def excerpt(raw: bytes | str, limit: int = 160) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return text if len(text) <= limit else text[:limit] + "..."

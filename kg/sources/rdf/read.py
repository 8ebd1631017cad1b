"""Turtle read in blocks: Wikidata's Turtle is a prefix header and one block per subject, so
chunks end at a blank line and carry the directives seen before them; each parses on its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


from ...identity import InputDigest
from ...readers import CHUNK_BYTES, MAX_RECORD_BYTES, Chunk, InputError, excerpt, line_chunks, too_long, without_bom


# -- reading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurtleChunk(Chunk):
    """A chunk of Turtle blocks plus the directives (`@prefix`...) declared before it."""

    header: bytes = b""


_BLANK_LINE = re.compile(rb"\n[ \t\r]*\n")
_DIRECTIVE = re.compile(
    rb"^[ \t]*(?:(?:@prefix|prefix)[ \t]+([^ \t:]*:)|(@base|base)[ \t])[^\n]*", re.M | re.I)


def collect_directives(directives: dict[bytes, bytes], data: bytes) -> None:
    """Add the `@prefix`/`@base` directives of data to directives (by prefix; a later one wins)."""
    if b"prefix" not in data.lower() and b"base" not in data.lower():
        return
    for m in _DIRECTIVE.finditer(data):
        directives[m.group(1) or b"@base"] = m.group(0).rstrip(b"\r") + b"\n"


def declared_prefix(header: bytes, name: bytes) -> str | None:
    """The IRI a Turtle header declares for prefix `name` (b"wd:"), or None."""
    m = re.search(rb"^[ \t]*@?prefix[ \t]+" + re.escape(name) + rb"[ \t]*<([^>]*)>", header, re.M | re.I)
    return m.group(1).decode("utf-8", "replace") if m else None


class _Skipped:
    """A Turtle block over the cap, counted as it streams past (its first bytes kept to name it)
    until the blank line that ends it."""

    def __init__(self, held: bytes, end: int):
        self.head, self.lines, self.end = excerpt(held), held.count(b"\n"), end

    def take(self, lc: Chunk) -> bytes | None:
        """What of the chunk follows the block's end (None: the block goes on past it). A line
        over the cap inside the block (line_chunks' reject) is part of it."""
        end = None if lc.rejects else _BLANK_LINE.search(b"\n" + lc.data)  # a chunk ends at a line end
        if end is None:
            self.lines, self.end = self.lines + lc.count, lc.position
            return None
        part = lc.data[:end.end() - 1]
        self.lines, self.end = self.lines + part.count(b"\n"), lc.position - (len(lc.data) - len(part))
        return lc.data[len(part):]

    def chunk(self, first: int, progress: int, cap: int) -> TurtleChunk:
        reject = (first, too_long("Turtle block", cap), self.head)
        return TurtleChunk(first, self.lines, b"", self.end, progress, (reject,))


def _last_blank_line(buf: bytes) -> int:
    """Offset just after the last blank line of buf, or 0 if it has none."""
    size = 1 << 16
    while True:
        start = max(0, len(buf) - size)
        last = None
        for last in _BLANK_LINE.finditer(buf, start):
            pass
        if last is not None:
            return last.end()
        if start == 0:
            return 0
        size <<= 2


def turtle_chunks(path: str | Path, *, start_line: int = 0, start_position: int = 0,
                  chunk_bytes: int = CHUNK_BYTES, digest: InputDigest | None = None,
                  max_line_bytes: int = MAX_RECORD_BYTES) -> Iterator[TurtleChunk]:
    """Chunks of whole blank-line-separated Turtle blocks, each with the directives declared
    before it. A resumed read re-reads the skipped part for its directives. `digest` is fed
    the file's bytes as read (kg/identity.py). A line over `max_line_bytes` is rejected by
    line_chunks, named in the rejects of the chunk holding its (empty) place; so is a block that
    runs on past `max_line_bytes` with no blank line (passed over unkept up to its end: what the
    reader holds stays one record plus one chunk, however long the block)."""
    directives: dict[bytes, bytes] = {}
    pending = b""
    first, position, progress = start_line + 1, start_position, 0
    skipping: _Skipped | None = None  # the block over the cap being passed over
    for lc in line_chunks(path, chunk_bytes=chunk_bytes, digest=digest, max_line_bytes=max_line_bytes):
        data, progress = lc.data, lc.progress
        if skipping is not None:
            rest = skipping.take(lc)
            if rest is None:
                continue
            yield skipping.chunk(first, progress, max_line_bytes)
            first, position, skipping = first + skipping.lines, skipping.end, None
            data = rest  # the blocks after it are read as any others
        if lc.rejects:  # a line over the cap, let go unread: it ends the block in progress
            if lc.position <= start_position:
                continue
            if pending.strip():
                yield TurtleChunk(first, pending.count(b"\n"), pending, position + len(pending), progress,
                                  header=b"".join(directives.values()))
                collect_directives(directives, pending)
            first, pending = first + pending.count(b"\n"), b""
            yield TurtleChunk(first, lc.count, b"", lc.position, progress, lc.rejects)
            first, position = first + lc.count, lc.position
            continue
        begin = lc.position - len(data)
        if begin == 0:  # a byte order mark is no part of the first block, nor of its first directive
            data = without_bom(data)
            begin = lc.position - len(data)
            position = max(position, begin)
        if begin < start_position:
            skip = min(len(data), start_position - begin)
            collect_directives(directives, data[:skip])
            data = data[skip:]
            if not data:
                continue
        pending += data
        cut = _last_blank_line(pending)
        if cut:
            piece, pending = pending[:cut], pending[cut:]
            n = piece.count(b"\n")
            yield TurtleChunk(first, n, piece, position + cut, progress,
                              header=b"".join(directives.values()))
            collect_directives(directives, piece)
            first, position = first + n, position + cut
        elif len(pending) > max_line_bytes:
            skipping, pending = _Skipped(pending, position + len(pending)), b""
    if skipping is not None:
        yield skipping.chunk(first, progress, max_line_bytes)
        return
    if position < start_position:
        raise InputError(f"{path}: shorter than the recorded resume position; use --restart")
    if pending.strip():
        n = pending.count(b"\n") + (0 if pending.endswith(b"\n") else 1)
        yield TurtleChunk(first, n, pending, position + len(pending), progress,
                          header=b"".join(directives.values()))

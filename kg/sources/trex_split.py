"""Cutting a T-REx release (one big JSON array, or JSON lines) into whole documents in one
streaming pass: a structural walk over strings and brackets that never parses a document, so
memory stays one block plus one document, and a document over the cap is passed over unkept
(TooLong stands for it). kg/sources/trex.py parses what this cuts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..identity import InputDigest
from ..readers import BOM, Chunk, InputError, decompressed_blocks

# One token of the structural walk: a complete string literal (escapes included), a bracket,
# or a lone quote, which means a string that does not end inside the bytes seen so far.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}"]', re.DOTALL)
# JSON whitespace, plus the bytes of a UTF-8 byte order mark (never part of a scalar).
_BLANK = b" \t\r\n\xef\xbb\xbf"
_QUOTE, _LBRACE, _LBRACKET = 0x22, 0x7B, 0x5B


@dataclass(frozen=True)
class DocumentChunk(Chunk):
    """A chunk of whole documents; `ends[i]` is where document i ends inside `data`."""

    ends: tuple[int, ...] = ()


_STRING_STOP = re.compile(rb'["\\]')  # what ends or escapes inside a string
_STRUCTURE = re.compile(rb'[\[\]{}"]')


class TooLong(bytes):
    """The first bytes of a document over the cap, standing for it (it was not kept)."""


class DocumentSplitter:
    """Cuts a stream of JSON bytes into top-level documents, one block at a time.

    Elements of a top-level array are documents; so is every top-level value outside an
    array (JSON Lines). Scalars between documents (`42`, `null`) come out as documents of
    their own, to be rejected by the parser with their index.
    """

    def __init__(self, offset: int = 0, in_array: bool = False, cap: int | None = None):
        self.cap = cap  # a document longer than this is let go as it streams past (TooLong)
        self.skipping: list | None = None  # [depth, in a string, after a backslash, head] while it does
        self.buf = b""
        self.base = offset  # absolute offset of buf[0]
        self.pos = 0  # where the walk resumes inside buf
        self.in_array = in_array
        self.depth = 1 if in_array else 0
        self.elem = -1  # start of the document being read (in buf), -1 between documents
        self.gap = 0  # start of the bytes between documents not looked at yet

    def _code(self, end: int, in_array: bool) -> int:
        return (self.base + end) * 2 + (1 if in_array else 0)

    def _scalars(self, buf: bytes, a: int, b: int, in_array: bool, out: list) -> None:
        segment = buf[a:b]
        if self.base + a == 0 and segment.startswith(BOM):  # a byte order mark starts the file
            segment, a = segment[len(BOM):], a + len(BOM)
        if not segment.strip(_BLANK + b","):
            return
        offset = a
        for piece in segment.split(b","):
            text = piece.strip(_BLANK)
            if text:
                out.append((text, self._code(offset + len(piece), in_array)))
            offset += len(piece) + 1

    def _whole(self, buf: bytes, start: int, end: int) -> bytes:
        """The document buf[start:end], or a TooLong when it is over the cap (however the
        blocks fell, so the same documents are rejected whatever the read size)."""
        if self.cap is not None and end - start > self.cap:
            return TooLong(buf[start:min(end, start + 160)])
        return buf[start:end]

    def _skip(self, data: bytes) -> int:
        """Walk `data` through the over-long document being let go: where it ends in `data`,
        or -1 when it goes on past it. Only its nesting and string state are kept."""
        state = self.skipping
        depth, in_string, escaped = state[0], state[1], state[2]
        outer = 1 if self.in_array else 0
        i, n = 0, len(data)
        while i < n:
            if in_string:
                if escaped:
                    i, escaped = i + 1, False
                    continue
                m = _STRING_STOP.search(data, i)
                if m is None:
                    break
                i = m.end()
                if m.group(0) == b"\\":
                    escaped = True
                else:
                    in_string = False
                continue
            m = _STRUCTURE.search(data, i)
            if m is None:
                break
            c, i = data[m.start()], m.end()
            if c == _QUOTE:
                in_string = True
            elif c == _LBRACE or c == _LBRACKET:
                depth += 1
            else:
                depth -= 1
                if depth == outer:
                    return i
        state[0], state[1], state[2] = depth, in_string, escaped
        return -1

    def feed(self, data: bytes, final: bool = False) -> list[tuple[bytes, int]]:
        """The documents completed by `data` (all remaining ones when `final`), each with the
        resume position after it. A document over `cap` comes out as a TooLong of its first
        bytes, never held whole."""
        out: list[tuple[bytes, int]] = []
        if self.skipping is not None:
            end = self._skip(data)
            if end < 0 and not final:
                self.base += len(data)
                return out
            end = len(data) if end < 0 else end
            out.append((TooLong(self.skipping[3]), self._code(end, self.in_array)))
            self.skipping, data, self.base = None, data[end:], self.base + end
        buf = self.buf + data if self.buf else data
        depth, in_array, elem, gap, pos = self.depth, self.in_array, self.elem, self.gap, self.pos
        open_string = -1
        for m in _TOKEN.finditer(buf, pos):
            s = m.start()
            c = buf[s]
            if c == _QUOTE:
                e = m.end()
                if e - s == 1:  # the string goes on past this block
                    open_string = s
                    break
                if elem < 0:  # a bare string between documents is a document of its own
                    self._scalars(buf, gap, s, in_array, out)
                    out.append((buf[s:e], self._code(e, in_array)))
                    gap = e
                continue
            if c == _LBRACE or c == _LBRACKET:
                if elem < 0:
                    self._scalars(buf, gap, s, in_array, out)
                    if depth == 0 and c == _LBRACKET:  # a top-level array: its elements are documents
                        in_array, depth, gap = True, 1, s + 1
                        continue
                    elem = s
                depth += 1
                continue
            # a closing bracket
            if elem < 0:
                self._scalars(buf, gap, s, in_array, out)
                if in_array:  # end of the top-level array
                    in_array, depth = False, 0
                else:  # a stray closer at top level
                    out.append((buf[s:s + 1], self._code(s + 1, in_array)))
                gap = s + 1
                continue
            depth -= 1
            if depth == (1 if in_array else 0):
                out.append((self._whole(buf, elem, s + 1), self._code(s + 1, in_array)))
                elem, gap = -1, s + 1
        pos = open_string if open_string >= 0 else len(buf)

        if final:
            end = len(buf)
            if elem >= 0:  # the input stops inside a document
                out.append((self._whole(buf, elem, end), self._code(end, in_array)))
            else:
                stop = open_string if open_string >= 0 else end
                self._scalars(buf, gap, stop, in_array, out)
                if open_string >= 0:
                    out.append((buf[open_string:], self._code(end, in_array)))
                elif in_array:  # the array was never closed: a cut file
                    out.append((b"", self._code(end, in_array)))
            self.buf, self.base = b"", self.base + end
            self.pos = self.gap = 0
            self.elem, self.depth, self.in_array = -1, 0, False
            return out

        if elem >= 0 and self.cap is not None and len(buf) - elem > self.cap:  # let it go from here
            tail = buf[open_string + 1:] if open_string >= 0 else b""
            escaped = (len(tail) - len(tail.rstrip(b"\\"))) % 2 == 1
            self.skipping = [depth, open_string >= 0, escaped, buf[elem:elem + 160]]
            self.base += len(buf)
            self.buf, self.pos, self.elem, self.gap = b"", 0, -1, 0
            self.depth, self.in_array = (1 if in_array else 0), in_array
            return out
        keep = elem if elem >= 0 else gap
        self.buf = buf[keep:]
        self.base += keep
        self.pos = pos - keep
        self.elem = elem - keep if elem >= 0 else -1
        self.gap = gap - keep if elem < 0 else 0
        self.depth, self.in_array = depth, in_array
        return out


_COMPRESSED = (".gz", ".bz2", ".xz")


def document_blocks(path: Path, offset: int, block: int,
                 digest: InputDigest | None = None) -> Iterator[tuple[bytes, int]]:
    """(decompressed bytes, bytes of the file on disk consumed) from decompressed `offset` on.
    An uncompressed file seeks there; a compressed one is decompressed and the head dropped.
    `digest` is fed the file's bytes as read (kg/identity.py)."""
    if not path.name.lower().endswith(_COMPRESSED):
        with open(path, "rb") as f:
            if offset > path.stat().st_size:
                raise InputError(f"{path}: shorter than the recorded resume position; use --restart")
            f.seek(offset)
            while data := f.read(block):
                if digest is not None:
                    digest.feed(data, f.tell())
                yield data, f.tell()
        return
    to_skip = offset
    for data, disk in decompressed_blocks(path, digest=digest):
        if to_skip:
            if len(data) <= to_skip:
                to_skip -= len(data)
                continue
            data, to_skip = data[to_skip:], 0
        for i in range(0, len(data), block):
            yield data[i:i + block], disk
    if to_skip:
        raise InputError(f"{path}: shorter than the recorded resume position; use --restart")

"""Reading inputs: compressed files, chunks of whole lines, resume positions, fingerprints.

Chunks carry raw bytes and are decoded by the parsing workers, so the reading process does
nothing but decompress and find line ends.
"""

from __future__ import annotations

import bz2
import hashlib
import json
import lzma
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from .identity import InputDigest

CHUNK_BYTES = 4 << 20
# The longest record (a dump line, a pretty-printed EntityData object) read whole. The largest
# entities of a real Wikidata dump are lines of 10-20 MB; a longer one is rejected by its line
# while it streams past, so reading holds at most this much plus a chunk and a block, however
# long a line a few MB of gzip may expand to. Sources take it as `max_record_bytes`.
MAX_RECORD_BYTES = 64 << 20
# The most bytes one decompression step hands back: a small compressed input can expand to
# gigabytes, and without this bound one step would hold all of them at once.
DECOMPRESSED_BLOCK = 4 << 20


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
    # Records the reader left out of `data`, each (line, reason, excerpt): a line over the cap
    # on one record stands in `data` as an empty line. A source's parse adds them to its rejects.
    rejects: tuple[tuple[int, str, str], ...] = ()


def size_text(n: int) -> str:
    """A byte count as a person reads it: "64 MiB", else "5,000 bytes"."""
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n:,} bytes"


def too_long(what: str, cap: int) -> str:
    """The reason a record over the cap is rejected (`what`: "line", "object")."""
    return f"{what} longer than {size_text(cap)} (the cap on one record; --max-record-bytes)"


def check_readable(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if not p.is_file():
        raise InputError(f"{p}: not a file")
    if not os.access(p, os.R_OK):
        raise InputError(f"{p}: permission denied")
    return p


class DamagedInput(Exception):
    """Raised by decompressed_blocks at a corrupt or cut compressed tail, after all good data."""


def _decompressor_factory(name: str):
    if name.endswith(".gz"):
        return lambda: zlib.decompressobj(wbits=31)
    if name.endswith(".bz2"):
        return bz2.BZ2Decompressor
    if name.endswith(".xz"):
        return lzma.LZMADecompressor
    return None


def decompressed_blocks(path: Path, raw_block: int = 1 << 20,
                        digest: InputDigest | None = None) -> Iterator[tuple[bytes, int]]:
    """(decompressed bytes, bytes of the file consumed) blocks of a possibly compressed file;
    `digest` is fed every byte read from the file (kg/identity.py).

    Decompression is driven here rather than through gzip/bz2 file objects so that the output
    produced before a corrupt or truncated tail is still delivered (file objects lose the whole
    read that hits the damage), and so progress can be measured on the file on disk. Multi-member
    gzip and multi-stream bz2 files (pbzip2, concatenated dumps) continue across members.
    """
    make = _decompressor_factory(path.name.lower())
    with open(path, "rb") as f:
        if make is None:
            while block := f.read(raw_block * 4):
                if digest is not None:
                    digest.feed(block, f.tell())
                yield block, f.tell()
            return
        d = make()
        fed = False  # whether the current member has received input
        consumed = 0
        while raw := f.read(raw_block):
            consumed += len(raw)
            if digest is not None:
                digest.feed(raw, consumed)
            while raw:
                try:
                    for out in _bounded_output(d, raw):
                        yield out, consumed
                except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
                    raise DamagedInput(str(exc)) from exc
                fed = True
                if d.eof:
                    raw = d.unused_data
                    d, fed = make(), False
                else:
                    raw = b""
        if fed and not d.eof:
            raise DamagedInput("compressed stream ends before its end marker")


_ZLIB = type(zlib.decompressobj())


def _bounded_output(d, raw: bytes) -> Iterator[bytes]:
    """What decompressor `d` makes of `raw`, in pieces of at most DECOMPRESSED_BLOCK bytes.
    zlib keeps the input it has not used in `unconsumed_tail` (and may hold output back when a
    piece came out full); bz2 and lzma keep it inside and say so with `needs_input`."""
    limit = DECOMPRESSED_BLOCK
    out = d.decompress(raw, limit)
    if out:
        yield out
    if isinstance(d, _ZLIB):
        while not d.eof:
            tail = d.unconsumed_tail
            if not tail and len(out) < limit:
                return
            out = d.decompress(tail, limit)
            if out:
                yield out
            elif d.unconsumed_tail == tail:  # nothing more comes out of it (no step is lost)
                return
    else:
        while not d.eof and not d.needs_input:
            out = d.decompress(b"", limit)
            if out:
                yield out


def line_chunks(
    path: str | os.PathLike,
    *,
    start_line: int = 0,
    start_position: int = 0,
    chunk_bytes: int = CHUNK_BYTES,
    digest: InputDigest | None = None,
    max_line_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[Chunk]:
    """Whole-line chunks of a (possibly compressed) text file, resuming after `start_line`
    lines / `start_position` decompressed bytes; `digest` is fed the file's bytes as read. At a
    corrupt or truncated tail it yields every complete line before the damage, then raises
    TruncatedInput. A line longer than `max_line_bytes` is dropped as it streams past (never
    held whole) and comes out as a chunk of its own: one empty line, with the reject naming it
    in `rejects`; line numbers and positions count it as it was."""
    p = check_readable(path)
    line, position = start_line, start_position
    to_skip = start_position
    pending: list[bytes] = []
    pending_size = 0
    tail = 0  # bytes of the line not ended yet, at the end of pending
    head = b""  # that line's first bytes, for the excerpt should it be too long
    dropping: list[int] | None = None  # [bytes dropped] while an over-long line streams past
    disk = 0

    def make(whole: bytes) -> Chunk:
        nonlocal line, position
        n = whole.count(b"\n") + (0 if whole.endswith(b"\n") else 1)
        position += len(whole)
        chunk = Chunk(line + 1, n, whole, position, disk)
        line += n
        return chunk

    def cut(tail_rule: str) -> Iterator[Chunk]:
        """Chunks of about chunk_bytes, ending at line ends, from the pending data. What is
        left under chunk_bytes stays pending (tail_rule="keep"), goes out up to its last
        complete line ("lines": the input is damaged after it) or entirely ("all": the end)."""
        nonlocal pending, pending_size
        data = b"".join(pending)
        offset = 0
        while len(data) - offset >= chunk_bytes:
            end = data.rfind(b"\n", offset, offset + chunk_bytes) + 1
            if end == 0:  # a line longer than a chunk travels whole
                end = data.find(b"\n", offset + chunk_bytes) + 1
                if end == 0:
                    break
            yield make(data[offset:end])
            offset = end
        end = {"keep": offset, "lines": data.rfind(b"\n", offset) + 1, "all": len(data)}[tail_rule]
        if end > offset:
            yield make(data[offset:end])
            offset = end
        rest = data[offset:]
        pending, pending_size = ([rest], len(rest)) if rest else ([], 0)

    def start_dropping(seen: int) -> Iterator[Chunk]:
        """The line in progress (`seen` bytes so far, the last `tail` of them pending) is over
        the cap: let it go, and send out the complete lines before it."""
        nonlocal pending_size, tail, dropping
        while tail:
            last = pending[-1]
            if len(last) <= tail:
                pending.pop()
                pending_size -= len(last)
                tail -= len(last)
            else:
                pending[-1] = last[:-tail]
                pending_size -= tail
                tail = 0
        if pending_size:
            yield from cut("all")
        dropping = [seen]

    def dropped(ended: bool) -> Chunk:
        """The chunk standing for the over-long line just let go (`ended`: by a newline)."""
        nonlocal line, position, dropping, head
        size, dropping = dropping[0] + ended, None
        line += 1
        position += size
        why = too_long("line", max_line_bytes)
        chunk = Chunk(line, 1, b"\n" if ended else b"", position, disk, rejects=((line, why, excerpt(head)),))
        head = b""
        return chunk

    def take(block: bytes) -> Iterator[Chunk]:
        """Add a block to the pending lines, letting go of any line over the cap."""
        nonlocal pending_size, tail, head
        at = 0
        while at < len(block):
            if dropping is not None:
                nl = block.find(b"\n", at)
                if nl < 0:
                    dropping[0] += len(block) - at
                    return
                dropping[0] += nl - at
                yield dropped(True)
                at = nl + 1
                continue
            nl = block.find(b"\n", at)
            stop = nl if nl >= 0 else len(block)
            if tail + stop - at > max_line_bytes:
                if not tail:
                    head = block[at:at + 160]
                elif len(head) < 160:
                    head += block[at:at + 160 - len(head)]
                yield from start_dropping(tail + stop - at)
                at = stop
                continue
            if nl < 0:  # the line goes on into the next block
                if len(head) < 160:
                    head += block[at:at + 160 - len(head)]
                pending.append(block[at:] if at else block)
                pending_size += len(block) - at
                tail += len(block) - at
                return
            # Every line after this one fits when the rest of the block does; else (a cap under
            # a block) they are looked at one by one.
            whole = len(block) - nl - 1 <= max_line_bytes
            last = block.rfind(b"\n") if whole else nl
            pending.append(block[at:last + 1] if at or last + 1 < len(block) else block)
            pending_size += last + 1 - at
            tail, head, at = 0, b"", last + 1
            if whole and at < len(block):  # the line going on into the next block
                rest = block[at:]
                pending.append(rest)
                pending_size += len(rest)
                tail, head = len(rest), rest[:160]
                return

    if to_skip and _decompressor_factory(p.name.lower()) is None:
        blocks = _plain_blocks_from(p, to_skip, digest=digest)
        to_skip = 0
    else:
        blocks = decompressed_blocks(p, digest=digest)
    try:
        for block, disk in blocks:
            if to_skip:
                if len(block) <= to_skip:
                    to_skip -= len(block)
                    continue
                block, to_skip = block[to_skip:], 0
            yield from take(block)
            # Only complete lines can go out: a long line in progress is not joined again per block.
            if pending_size >= chunk_bytes and pending_size > tail:
                yield from cut("keep")
    except DamagedInput as exc:
        # Lines completed before the damage are good; the partial one after them is not.
        yield from cut("lines")
        raise TruncatedInput(str(p), line + 1, str(exc)) from exc
    if to_skip:
        raise InputError(f"{p}: shorter than the recorded resume position; use --restart")
    if dropping is not None:
        yield dropped(False)
    elif pending_size:
        yield from cut("all")


def _plain_blocks_from(path: Path, offset: int, block: int = 4 << 20,
                       digest: InputDigest | None = None) -> Iterator[tuple[bytes, int]]:
    with open(path, "rb") as f:
        f.seek(offset)
        while data := f.read(block):
            if digest is not None:
                digest.feed(data, f.tell())
            yield data, f.tell()


BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark: some editors and tools write it first in a file


def without_bom(data: bytes) -> bytes:
    """data less the byte order mark it starts with, if any: for the first bytes of a file."""
    return data[len(BOM):] if data.startswith(BOM) else data


def split_lines(chunk: Chunk) -> Iterator[tuple[int, bytes]]:
    """(line number, line without its newline) for every line of a chunk; a byte order mark
    that starts the file is not part of its first line."""
    number = chunk.first
    for raw in chunk.data.split(b"\n"):
        if number >= chunk.first + chunk.count:
            break
        if number == 1:
            raw = without_bom(raw)
        yield number, raw.rstrip(b"\r")
        number += 1


def fingerprint(path: str | os.PathLike) -> str:
    """The store's slot for an input (size + head + tail): cheap, so a moved file finds its
    earlier run at once. Whether the file is still the one read there is decided by the hash
    of its bytes (kg/identity.py)."""
    p = check_readable(path)
    size = p.stat().st_size
    h = hashlib.sha1(str(size).encode())
    with open(p, "rb") as f:
        h.update(f.read(1 << 20))
        if size > 2 << 20:
            f.seek(size - (1 << 20))
            h.update(f.read())
    return h.hexdigest()[:24]


# The deepest nesting of objects and arrays a record may have. orjson writes no deeper (it
# reads 1,024 levels), and the duplicate-key check below writes every record back; a real
# Wikidata entity is nested about 10 levels (claims.P.[i].qualifiers.P.[j].datavalue.value).
MAX_DEPTH = 254
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"


# A string (a key when a colon follows it) or a bracket: all that says where a value is nested.
_NESTING = re.compile(rb'"(?:[^"\\]|\\.)*"(\s*:)?|[\[\]{}]', re.DOTALL)


def too_deep(raw: bytes) -> str:
    """TOO_DEEP, after the keys leading to the first value nested deeper ("labels: nested
    deeper than 254 levels"). Read only for a record already rejected, by a scan that keeps no
    more than the keys."""
    keys: list[str | None] = []  # per open bracket: the key it was opened under (None in an array)
    key = None
    for m in _NESTING.finditer(raw):
        token = m.group(0)
        if m.group(1):  # a key
            key = token[:token.rindex(b'"') + 1][1:-1].decode("utf-8", "replace")
        elif token in (b"{", b"["):
            keys.append(key)
            key = None
            if len(keys) > MAX_DEPTH:
                path = ".".join(k for k in keys if k)
                return f"{path[:80]}: {TOO_DEEP}" if path else TOO_DEEP
        elif token in (b"}", b"]"):
            if keys:
                keys.pop()
            key = None
    return TOO_DEEP


def json_record(raw: bytes) -> tuple[dict | None, str | None]:
    """One JSON object record of a dump: (the object, None), or (None, why it is rejected). A
    byte order mark before it is skipped; an object with a key twice is rejected, naming the
    key and where it is (a JSON parser would silently keep the last value); so is one nested
    deeper than MAX_DEPTH levels, before anything recursive (Python's json, orjson's writer)
    meets it."""
    raw = without_bom(raw)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        why = str(exc)
        if "depth limit" in why or "recursion limit" in why.lower():  # orjson reads 1,024 levels
            return None, too_deep(raw)
        return None, "invalid UTF-8" if "utf-8" in why.lower() else f"malformed JSON ({why})"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    try:
        written = orjson.dumps(value)
    except orjson.JSONEncodeError:  # what orjson.loads gives back it writes, nested at most MAX_DEPTH
        return None, too_deep(raw)
    # The cheap proof that no key was dropped, on the bulk path: every key is followed by one
    # colon outside strings, and orjson writes the colons inside strings as they are, so the
    # parsed object written back holds as many colons as the record unless a duplicate went
    # (fewer) or the record escaped a colon as \u003a (more, or hiding a duplicate). It costs
    # ~0.7x the orjson parse: the Wikidata parse's CPU +30%, where json's object_pairs_hook on
    # every record would cost +110%. A record it does not clear is parsed again to find the key.
    if raw.count(b":") != written.count(b":") or b"\\u003" in raw:
        duplicate = duplicate_key(raw)
        if duplicate:
            return None, duplicate
    return value, None


class _Members(dict):
    """A JSON object as json's object_pairs_hook builds it, with the first key it has twice."""

    twice: str | None = None


def _members(pairs: list[tuple[str, object]]) -> _Members:
    obj = _Members(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        obj.twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return obj


def duplicate_key(raw: bytes) -> str:
    """'duplicate key "K" in PATH' for the first object of the record that has a key twice
    (PATH as the record spells it, e.g. claims.P31[0].mainsnak); "" when none has."""
    try:
        value = json.loads(raw, object_pairs_hook=_members)
    except ValueError:
        return "duplicate key (the record cannot be read again to say which)"
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, _Members):
            if node.twice is not None:
                return f"duplicate key {json.dumps(node.twice)[:60]} in {path or 'the record'}"
            stack.extend((f"{path}.{k}" if path else k, v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(node))))
    return ""


def excerpt(raw: bytes | str, limit: int = 160) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return text if len(text) <= limit else text[:limit] + "..."

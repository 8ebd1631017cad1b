"""Wikidata's JSON for one entity or a few, as Special:EntityData and the wbgetentities API serve
it: one object whose "entities" member maps each id to an entity record written as a dump line
writes it (`{"entities": {"Q8646": {...}}, "success": 1}`).

Served as it comes, the object is one line, and the dump reader meets it as a record without an
id that holds "entities": `records_of` gives its entities, each with that line. Saved
pretty-printed it spans many lines; `opens_document` tells such a file from a dump by its first
line (one that opens an object and does not close it: a dump's is "[", a record line ends with
"}"), `document_chunks` reads it as one chunk, and `records_of` gives each entity with the line
its member starts on, so a reject still names a line of the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..readers import (MAX_RECORD_BYTES, Chunk, DamagedInput, TruncatedInput, check_readable, decompressed_blocks,
                       excerpt, too_long, without_bom)

if TYPE_CHECKING:
    from ..identity import InputDigest

_PEEK = 1 << 16
_OPENING_LINE = 200  # a pretty-printed object's first line is short: "{" or '{"entities": {'


def peek(path: Path) -> bytes:
    """The first decompressed bytes of a file: enough for its first line, or 64 KiB."""
    head = b""
    blocks = decompressed_blocks(path)
    try:
        for block, _ in blocks:
            head += block
            if len(head) >= _PEEK or b"\n" in head.lstrip():
                break
    except DamagedInput:
        pass
    finally:
        blocks.close()
    return head


def opens_document(head: bytes) -> bool:
    """Whether data starting with `head` is one JSON object over several lines."""
    first = without_bom(head).lstrip().split(b"\n", 1)[0].strip()
    return first[:1] == b"{" and first[-1:] != b"}" and len(first) <= _OPENING_LINE


def document_chunks(path: str | Path, digest: InputDigest | None = None,
                    max_bytes: int = MAX_RECORD_BYTES) -> Iterator[Chunk]:
    """The whole (decompressed) file as one chunk of all its lines; `digest` is fed its bytes.
    A file over `max_bytes` is one record too long to read: it is streamed to its end unkept
    (its lines counted, its bytes hashed) and comes out as an empty chunk naming it in its
    rejects."""
    p = check_readable(path)
    parts: list[bytes] = []
    size = lines = disk = 0
    head = last = b""
    try:
        for block, disk in decompressed_blocks(p, digest=digest):
            if not size:
                head = block[:160]
            size += len(block)
            lines += block.count(b"\n")
            last = block[-1:]
            if size <= max_bytes:
                parts.append(block)
            elif parts:  # over the cap: let go of what was kept, the rest is only counted
                parts = []
    except DamagedInput as exc:  # a cut object cannot be read at all
        raise TruncatedInput(str(p), 1, str(exc)) from exc
    if size > max_bytes:
        why = too_long("object", max_bytes)
        yield Chunk(1, lines + (last != b"\n"), b"", size, disk, rejects=((1, why, excerpt(head)),))
        return
    data = b"".join(parts)
    if data:
        yield Chunk(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1), data, len(data), disk)


def entity_members(record: dict) -> dict | None:
    """The "entities" object of an EntityData / wbgetentities response, None for anything else."""
    if "id" in record:
        return None
    members = record.get("entities")
    return members if type(members) is dict else None


def records_of(members: dict, data: bytes, first_line: int) -> Iterator[tuple[int, str, object]]:
    """(line, id, record) of each member of an "entities" object found in `data` (the file's
    text from line `first_line`): the line its member's key stands on, searched in order. A
    member's value is an object, which no key inside a record maps an entity id to (claims map
    property ids to arrays), so the search cannot stop inside the member before."""
    line, at = first_line, 0
    for key, record in members.items():
        found = re.compile(b'"' + re.escape(key.encode("utf-8", "replace")) + rb'"\s*:\s*\{').search(data, at)
        if found:
            line += data.count(b"\n", at, found.start())
            at = found.start()
        yield line, key, record

"""Wikipedia text as WikiExtractor writes it by default: files of `<doc id=".." url=".."
title="..">` elements, the page's text between the opening line and `</doc>`, its first line the
title again (plain or compressed; `--json` output is JSONL and read as such).

A document that cannot be read costs only itself, named by the line its `<doc>` opens on: an
opening line without an id, text that is not UTF-8, a `<doc>` never closed, or one longer than
the reader holds (it is streamed past, never held)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..kg.readers import MAX_RECORD_BYTES, TruncatedInput, excerpt, line_chunks, split_lines
from .corpus import Document, ReadReport, Reject

OPENING = re.compile(rb"^<doc(?:\s[^>]*)?>$")
CLOSING = b"</doc>"
_ATTRIBUTE = re.compile(r'([A-Za-z_][\w-]*)="([^"]*)"')


def looks_like_wikiextractor(head: bytes) -> bool:
    """Whether a file's first bytes open a WikiExtractor `<doc>` element."""
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].strip()
    return bool(OPENING.match(first))


@dataclass
class _Open:
    line: int
    head: bytes
    parts: list[bytes] = field(default_factory=list)
    size: int = 0
    too_long: bool = False


def wikiextractor_documents(path: str | Path, report: ReadReport, on_progress: Callable[[int], None] | None = None,
                            max_bytes: int = MAX_RECORD_BYTES) -> Iterator[Document]:
    """The documents of one WikiExtractor file; its rejects go to `report`."""
    name = str(path)
    current: _Open | None = None

    def reject(line: int, why: str, text: bytes) -> None:
        report.rejects.append(Reject(name, line, why, excerpt(text)))

    try:
        for chunk in line_chunks(path):
            report.rejects.extend(Reject(name, *r) for r in chunk.rejects)  # lines over the reader's cap
            for number, raw in split_lines(chunk):
                line = raw.strip()
                if OPENING.match(line):
                    if current is not None:
                        reject(current.line, "<doc> not closed before the next <doc>", current.head)
                    current = _Open(number, line)
                elif current is None:
                    if line:
                        reject(number, "text outside a <doc> element", raw)
                elif line == CLOSING:
                    document, why = _document(current)
                    if why:
                        reject(current.line, why, current.head)
                    else:
                        report.documents += 1
                        yield document
                    current = None
                elif not current.too_long:
                    current.size += len(raw) + 1
                    if current.size > max_bytes:  # let go of it; the rest is only skipped
                        current.too_long, current.parts = True, []
                    else:
                        current.parts.append(raw)
            if on_progress:
                on_progress(chunk.progress)
    except TruncatedInput as error:
        report.truncated = True
        report.rejects.append(Reject(name, 0, f"truncated input: {error}", ""))
        return
    if current is not None:
        reject(current.line, "<doc> not closed at the end of the file", current.head)


def _document(element: _Open) -> tuple[Document | None, str]:
    if element.too_long:
        return None, f"document longer than {element.size - 1:,} bytes read so far (the reader holds at most " \
                     f"{MAX_RECORD_BYTES:,})"
    try:
        attributes = {k: html.unescape(v) for k, v in _ATTRIBUTE.findall(element.head.decode("utf-8"))}
        lines = [p.decode("utf-8").rstrip("\r") for p in element.parts]
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 ({error.reason} at byte {error.start})"
    if not attributes.get("id"):
        return None, "<doc> without an id attribute"
    title = attributes.get("title", "")
    if lines and title and lines[0].strip() == title:  # WikiExtractor repeats the title as the text's first line
        lines = lines[1:]
    text = "\n".join(lines).strip("\n")
    return Document(attributes["id"], title, text, url=attributes.get("url", "")), ""

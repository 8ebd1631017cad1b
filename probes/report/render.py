"""Rendering document blocks to Markdown and to a self-contained HTML page, from the same blocks
so that the two never disagree. Labels are escaped (backslashes in Markdown, entities in HTML);
backticks in texts mark inline code on purpose.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path
from typing import Sequence

from ..document import Block, Heading, Image, Link, Text


# Every character that starts inline markup anywhere in a line: emphasis (* _), code (`), links,
# images and reference definitions (all need [ ]: with the brackets escaped, "!" and "( )" are
# plain text, and a table of numbers and intervals keeps reading as one), raw HTML and autolinks
# (< >), a table cell's end (|), strikethrough (~). An underscore inside a word ("top_k") and an
# "@" that starts no domain ("Acc@1") make nothing, so they stay as they are.
_MD_SPECIAL = re.compile(r"([\\`*\[\]|<>~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|@(?=[\w-]+\.))")
# What GFM's extended autolinks start from (http://, www.): the "://" and "www." kept as text.
_MD_AUTOLINK = re.compile(r"(?<=[A-Za-z0-9])(:)(?=//)|(?<=\b[wW]{3})(\.)")
# What makes a block where a line starts: a heading (#), a list item (- + * or 1. 1)), a quote
# (>), a thematic break or setext underline (- = _), indented code (four spaces).
_MD_LINE_START = re.compile(r"^\s*(?:([#+\-=])|(\d+)([.)]))?")


def md_escape(text: str) -> str:
    """`text` as literal Markdown inside a line: no link, image, HTML, emphasis or code
    from a label (a task name `![px](http://127.0.0.1:9/track.png)` is `!\\[px\\](http\\://...)`:
    text, not an image)."""
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _MD_AUTOLINK.sub(lambda m: "\\" + (m.group(1) or m.group(2)), text).replace("\n", " ").replace("\r", " ")


def _md_line_start(text: str) -> str:
    # A paragraph's first characters are where a block begins: "1. x" would be a list, "# x" a heading.
    # Leading blanks dropped: four of them would make the line a code block.
    match = _MD_LINE_START.match(text)
    mark, digits, dot = match.groups()
    lead = f"\\{mark}" if mark else f"{digits}\\{dot}" if digits else ""
    return lead + text[match.end():]


def _md_text(text: str) -> str:
    parts = text.split("`")
    # Odd parts sit between backticks: code spans, kept verbatim but on one line (a newline
    # inside one would let the next line start a block of its own).
    line = "".join(f"`{' '.join(p.splitlines()) or ' '}`" if k % 2 else md_escape(p) for k, p in enumerate(parts))
    return _md_line_start(line)


def to_markdown(blocks: Sequence[Block]) -> str:
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            lines += ["#" * block.level + " " + md_escape(block.text), ""]
        elif isinstance(block, Text):
            lines += [_md_text(block.text), ""]
        elif isinstance(block, Image):
            lines += [f"![{md_escape(block.alt)}]({block.file})", ""]
        elif isinstance(block, Link):
            lines += [f"[{md_escape(block.text)}]({block.file})", ""]
        else:
            lines.append("| " + " | ".join(md_escape(h) for h in block.headers) + " |")
            lines.append("|" + "|".join("---" for _ in block.headers) + "|")
            lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in block.rows]
            lines.append("")
    return "\n".join(lines)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
/* long model ids, folders and option lists wrap after their / - _ = , (<wbr>), so a wide table fits the
   page (issue 39.3), and never inside a word ("Ru n", "Scor ed": issue 48.3) */
th, td { overflow-wrap: break-word; min-width: 2em; }
th { background: #f2f2f2; }
/* a table whose whole words need more than the page (the overlap table's 17 columns) scrolls in its own box */
.table-box { overflow-x: auto; max-width: 100%; }
tr:nth-child(even) td { background: #fafafa; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0 1em; }
code { background: #f2f2f2; padding: 0 0.2em; }
""".strip()


# Where a long id or path may break in a table cell: after a slash, a run of dashes, an underscore,
# an equals sign, a comma, a colon or a dot before a letter ("smollm2-135m-instruct--kdf--kdf/").
_BREAK_AFTER = re.compile(r"(/|-+|_|=|,|:|\.(?=[A-Za-z]))")


def _cell(text: str) -> str:
    """A table cell's text, escaped, with <wbr> where a long token (over 16 characters: a model id,
    a folder) may wrap; its words stay whole, and a short token is left as it is."""
    return "".join(html.escape(token) if len(token) <= 16 else
                   "".join(html.escape(part) + ("<wbr>" if k % 2 else "")
                           for k, part in enumerate(_BREAK_AFTER.split(token)) if part)
                   for token in re.split(r"(\s+)", text))


def _html_text(text: str) -> str:
    parts = text.split("`")
    return "".join(f"<code>{html.escape(p)}</code>" if k % 2 else html.escape(p) for k, p in enumerate(parts))


# The line that tells a report folder factprobe wrote (`report --out` rewrites only such a folder).
GENERATOR = '<meta name="generator" content="factprobe report">'


def to_html(blocks: Sequence[Block], title: str, images: Path | None = None) -> str:
    """The page, self-contained: each image is embedded as a data URI read from the folder
    `images` (the report's), so the HTML can be mailed or archived alone."""
    body: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Text):
            body.append(f"<p>{_html_text(block.text)}</p>")
        elif isinstance(block, Image):
            source = block.file
            if images is not None and (images / block.file).is_file():
                source = "data:image/png;base64," + base64.b64encode((images / block.file).read_bytes()).decode("ascii")
            body.append(f'<img src="{html.escape(source)}" alt="{html.escape(block.alt)}" title="{html.escape(block.file)}">')
        elif isinstance(block, Link):
            body.append(f'<p><a href="{html.escape(block.file)}">{html.escape(block.text)}</a></p>')
        else:
            head = "".join(f"<th>{_cell(h)}</th>" for h in block.headers)
            rows = "\n".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>"
                             for row in block.rows)
            body.append(f"<div class=\"table-box\"><table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n"
                        "</tbody>\n</table></div>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" + GENERATOR + "\n"
            f"<title>{html.escape(title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")

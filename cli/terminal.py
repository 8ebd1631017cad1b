"""What the `factprobe` command writes to a terminal: every line goes through `echo`, which shows
the control characters a label, a file name or a model's answer may carry as visible escapes.

A graph label is anyone's text: one holding OSC 52 (`ESC ] 52 ; c ; ... BEL`) writes the
reader's clipboard, OSC 0 retitles the window, `ESC [ 2 J` or `ESC c` clears the screen, and the
bidi overrides (U+202A-202E, U+2066-2069) reorder what is shown. click strips only colours.
So every C0 control but newline and tab, DEL, every C1 control (U+0080-009F, 8-bit CSI U+009B
among them) and the bidi overrides become `\\uXXXX`: the same escape JSON uses, so a line of
`--json` output stays JSON and decodes to the very value the input held.
"""

from __future__ import annotations

from typing import Any

import click

_CONTROLS = [*(c for c in range(0x20) if chr(c) not in "\n\t"), 0x7F, *range(0x80, 0xA0),
             *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_VISIBLE = {c: f"\\u{c:04x}" for c in _CONTROLS}


def terminal_text(text: str) -> str:
    """`text` with each control character (above) written as its `\\uXXXX` escape."""
    return text.translate(_VISIBLE)


def echo(message: Any = None, err: bool = False, nl: bool = True) -> None:
    """click.echo of `message` as `terminal_text` shows it: the one way a command writes text."""
    click.echo(None if message is None else terminal_text(str(message)), err=err, nl=nl)

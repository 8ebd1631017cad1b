"""How much a sandboxed lm-eval template may build, reckoned before it is built
(probes/formats/lm_eval_templates.py calls these from the sandbox's hooks).

A value's size is its `weight`: about the characters str() would write for it, every repetition
counted (`[x] * 1000` weighs a thousand x; a collection's texts each with its quotes and
separator, and at most what repr's escapes make of them), found without writing it. Every value a binop, call or filter
makes weighs at most MAX_TEXT, and where a few bytes could ask for gigabytes at once the result
is reckoned first, or built piece by piece and stopped at the cap: `*` and `+` from their
operands, printf `%` and the `format` filter from the format and its values, str.format and
format_map through a formatter that counts each field as it is made, join with its separator,
translate in slices, replace, split, widths, indents, wrap strings, pretty-printing, padding of
batch and slice; an iterator a filter returns counts its items together as they come. So a
template's peak memory stays within a small multiple of MAX_TEXT (reprs' escapes, at most ~10x).
"""

from __future__ import annotations

import functools
import re
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView

MAX_TEXT = 1 << 20
MAX_BITS = 4096
_SEQUENCES = (list, tuple, set, frozenset, KeysView, ValuesView, ItemsView)
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines splits at
_WRAP_BREAKS = " \t\n\r\x0b\x0c-"  # where textwrap may end a line
_END = object()


class TooLarge(Exception):
    """A bound reached: the document is rejected with this line."""


def asks(what: str) -> TooLarge:
    return TooLarge(f"the template's {what} would make more than {MAX_TEXT:,} characters (refused before it is made)")


def _repr_bound(text: str | bytes) -> int:
    """At most how long repr() writes a text inside a collection: itself where nothing in it is
    escaped, else up to 10 characters a character (\\U0001f600) or 4 a byte (\\xff)."""
    if isinstance(text, bytes):
        return len(text) if text.isascii() and text.decode("ascii").isprintable() and b"\\" not in text \
            and b"'" not in text else 4 * len(text)
    return len(text) if text.isprintable() and "\\" not in text and "'" not in text else 10 * len(text)


def measure(value, limit: int = MAX_TEXT) -> tuple[int, int]:
    """(weight, nesting depth) of `value`, counting stopped once the weight passes `limit`. An
    iterator is never advanced (it weighs what its name does); each item costs at least one, so
    the walk takes at most `limit` steps however the value repeats itself."""
    if isinstance(value, (str, bytes)):
        return len(value), 0
    total, depth, stack = 0, 0, [iter((value,))]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            continue
        nested = 4 if len(stack) > 1 else 0  # quotes and ", " inside a collection
        if isinstance(item, (str, bytes)):
            total += (_repr_bound(item) if nested else len(item)) + nested
        elif isinstance(item, bool) or item is None:
            total += 5
        elif isinstance(item, int):
            total += item.bit_length() * 3 // 10 + 2
        elif isinstance(item, float):
            total += 24
        elif isinstance(item, (Mapping, *_SEQUENCES)):
            total += 2 + nested
            stack.append(iter(item.items() if isinstance(item, Mapping) else item))
            depth = max(depth, len(stack) - 1)
        else:  # a range, a generator, a loop, a macro: its kind's name
            total += 32
        if total > limit:
            break
    return total, depth


def weight(value, limit: int = MAX_TEXT) -> int:
    return measure(value, limit)[0]


def bounded(value):
    """`value`, once made, within the bounds (what no hook could reckon before is caught here)."""
    size = weight(value)
    if size > MAX_TEXT:
        raise TooLarge(f"the template makes a value of more than {MAX_TEXT:,} characters or items")
    if isinstance(value, int) and value.bit_length() > MAX_BITS:
        raise TooLarge(f"the template makes a number past {MAX_BITS} bits")
    return value


class Counted(Iterator):
    """An iterator a call or filter returned (map, select, batch, ...), whose items count
    against MAX_TEXT together as they come: what a list or join of it would hold."""

    def __init__(self, items) -> None:
        self._items, self._total = iter(items), 0

    def __next__(self):
        item = next(self._items)
        self._total += weight(item) + 2
        if self._total > MAX_TEXT:
            raise TooLarge(f"the template iterates over more than {MAX_TEXT:,} characters or items")
        return item


def counted(value):
    return Counted(value) if isinstance(value, Iterator) and not isinstance(value, Counted) else value


def bounded_join(items, separator: str = "", convert: bool = False) -> list:
    """The items a join takes, in a list, while the text it makes, separators included, stays
    within MAX_TEXT; `convert`: each item as its text first (the join filter and `~` write str())."""
    kept, total = [], 0
    for item in items:
        if convert and not isinstance(item, str):
            item = str(item)
        total += (len(item) if isinstance(item, (str, bytes)) else 1) + (len(separator) if kept else 0)
        if total > MAX_TEXT:
            raise TooLarge(f"the template joins more than {MAX_TEXT:,} characters")
        kept.append(item)
    return kept


def translated(value: str, table) -> str:
    """value.translate(table), made slice by slice so that no slice can make more than MAX_TEXT,
    and stopped once the whole passes it."""
    if isinstance(table, Mapping):
        entries = table.values()
    elif isinstance(table, (list, tuple)):
        entries = table
    else:  # a text (one character for each) or what translate refuses
        return value.translate(table)
    longest = max((len(entry) for entry in entries if isinstance(entry, str)), default=1)
    if longest <= 1:
        return value.translate(table)
    step = max(1, MAX_TEXT // longest)
    pieces, total = [], 0
    for start in range(0, len(value), step):
        piece = value[start:start + step].translate(table)
        total += len(piece)
        if total > MAX_TEXT:
            raise asks("translate")
        pieces.append(piece)
    return "".join(pieces)


@functools.cache
def formatters() -> tuple[type, type]:
    """str.format's sandboxed formatters (plain, and escaping for Markup) that count what they
    make, each literal and each field as it is formatted, and stop past MAX_TEXT: a field reused
    2,000 times is refused at the cap, not joined first. A width or precision above MAX_TEXT is
    refused before its field is made."""
    from jinja2.sandbox import SandboxedEscapeFormatter, SandboxedFormatter

    class Bounded(SandboxedFormatter):
        def __init__(self, env, **kwargs) -> None:
            super().__init__(env, **kwargs)
            self.made = 0

        def _add(self, size: int) -> None:
            self.made += size
            if self.made > MAX_TEXT:
                raise asks("str.format")

        def parse(self, format_string):
            for literal, *field in super().parse(format_string):
                self._add(len(literal))
                yield (literal, *field)

        def format_field(self, value, format_spec):
            if any(len(digits) > 7 or int(digits) > MAX_TEXT for digits in re.findall(r"\d+", format_spec)):
                raise asks("str.format")
            text = super().format_field(value, format_spec)
            self._add(len(text))
            return text

    class BoundedEscape(Bounded, SandboxedEscapeFormatter):
        pass

    return Bounded, BoundedEscape


def as_text(value):
    """Bytes as the text of as many characters (latin-1), for reckoning sizes; anything else as it is."""
    return value.decode("latin-1") if isinstance(value, bytes) else value


def printf_size(fmt: str | bytes, values, escaping: bool = False) -> int:
    """At most how many characters `fmt % values` makes (a printf format, text or bytes),
    reckoned from each conversion's width, precision and value, as CPython reads the format; what
    the real `%` would refuse (a missing key, too few values) ends the reckoning, and `%` then
    says so itself."""
    key_of = (lambda key: key.encode("latin-1")) if isinstance(fmt, bytes) else (lambda key: key)
    fmt = as_text(fmt)
    positional = values if isinstance(values, tuple) else (values,)
    mapping = values if isinstance(values, Mapping) else None
    total, used, at, end = len(fmt), 0, 0, len(fmt)

    def number(start: int) -> tuple[int | None, int]:
        nonlocal used
        if start < end and fmt[start] == "*":
            if used >= len(positional) or not isinstance(positional[used], int):
                raise LookupError
            used += 1
            return abs(positional[used - 1]), start + 1
        stop = start
        while stop < end and fmt[stop].isdigit():
            stop += 1
        if stop == start:
            return None, start
        return (MAX_TEXT + 1 if stop - start > 7 else int(fmt[start:stop])), stop

    try:
        while (at := fmt.find("%", at)) >= 0:
            at += 1
            key = None
            if at < end and fmt[at] == "(":
                depth, stop = 1, at + 1
                while depth and stop < end:
                    depth += {"(": 1, ")": -1}.get(fmt[stop], 0)
                    stop += 1
                key, at = fmt[at + 1:stop - 1], stop
            while at < end and fmt[at] in "-+ #0":
                at += 1
            width, at = number(at)
            precision = None
            if at < end and fmt[at] == ".":
                precision, at = number(at + 1)
                precision = precision or 0
            while at < end and fmt[at] in "hlL":
                at += 1
            if at >= end:
                break
            kind = fmt[at]
            at += 1
            if kind == "%":
                size = 1
            else:
                if key is not None:
                    if mapping is None:
                        raise TypeError("format requires a mapping")
                    value = mapping[key_of(key)]
                else:
                    value = positional[used]
                    used += 1
                size = _conversion_size(kind, value, precision)
            total += max(size, width or 0)
            if total > MAX_TEXT * 4:
                break
    except (LookupError, TypeError):
        pass
    return total * 6 if escaping else total  # Markup % escapes each value (& becomes &amp;)


def _conversion_size(kind: str, value, precision: int | None) -> int:
    if kind == "c":
        return 1
    if kind in "ra":
        # repr escapes what is not printable, ascii() also every character past ASCII (€ is \u20ac)
        kept = isinstance(value, str) and value.isprintable() and (kind == "r" or value.isascii())
        size = (2 * len(value) if kept else 10 * len(value)) + 2 if isinstance(value, str) \
            else 10 * weight(value) + 3
    elif kind == "s":
        size = weight(value)
    else:  # a number: its digits (a float's integer part too) and the precision's zeros
        return weight(value) + 400 + (precision or 0)
    return size if precision is None else min(size, precision)


def _given(args: tuple, kwargs: dict, at: int, key: str, default=None):
    return args[at] if len(args) > at else kwargs.get(key, default)


def _count(args: tuple, kwargs: dict, at: int, key: str, default: int = 0) -> int:
    given = _given(args, kwargs, at, key, default)
    return given if isinstance(given, int) and not isinstance(given, bool) else len(str(given))


def _pieces(value: str, separator) -> int:
    if isinstance(separator, str) and separator:
        return value.count(separator) + 1
    return len(value) // 2 + 1  # on whitespace: each piece and each gap at least one character


def method_growth(name: str, value: str | bytes, args: tuple, kwargs: dict) -> int:
    """The characters a str (or bytes) method that could multiply its text would make (0 for the rest)."""
    value, args = as_text(value), tuple(as_text(given) for given in args)
    kwargs = {key: as_text(given) for key, given in kwargs.items()}
    if name in ("center", "ljust", "rjust", "zfill"):
        return _count(args, kwargs, 0, "width")
    if name == "expandtabs":
        return len(value) + _count(args, kwargs, 0, "tabsize", 8) * value.count("\t")
    if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        return len(value) + value.count(args[0]) * len(args[1])
    if name in ("split", "rsplit"):
        return len(value) + 4 * _pieces(value, _given(args, kwargs, 0, "sep"))
    if name == "splitlines":
        return len(value) + 4 * (sum(map(value.count, _LINE_BREAKS)) + 1)
    return 0


def filter_growth(name: str, value, args: tuple, kwargs: dict) -> int:
    """The characters (or items) a filter that could multiply its input would make (0 for the rest)."""
    if name == "format" and isinstance(value, str):
        return printf_size(value, kwargs or args)
    if name == "pprint":  # one line per item, each indented by its depth
        size, depth = measure(value)
        return size * (depth + 1)
    if name == "tojson":
        size, depth = measure(value)
        return size * (6 + _count(args, kwargs, 0, "indent") * (depth + 1))
    if name in ("batch", "slice"):  # slice(n) makes n lists; both pad with fill_with
        fill = _given(args, kwargs, 1, "fill_with")
        count = _count(args, kwargs, 0, "linecount" if name == "batch" else "slices")
        padding = count * (weight(fill) + 4) if fill is not None or name == "slice" else 0
        return padding + (5 * len(value) if isinstance(value, str) else 0)
    if not isinstance(value, str):
        return 0
    if name in ("list", "sort"):  # a text becomes its characters, each quoted
        return 5 * len(value)
    if name == "center":
        return _count(args, kwargs, 0, "width", 80)
    if name == "indent":
        return len(value) + _count(args, kwargs, 0, "width", 4) * (value.count("\n") + 1)
    if name == "replace":
        return method_growth(name, value, args, kwargs)
    if name == "wordwrap":
        wrap = _given(args, kwargs, 2, "wrapstring") or "\n"
        width = max(1, _count(args, kwargs, 0, "width", 79))
        lines = sum(map(value.count, _WRAP_BREAKS)) + len(value) // width + 1
        return len(value) + lines * len(str(wrap))
    if name == "urlize":  # every word may become a link carrying the target and rel given
        extra = sum(len(str(_given(args, kwargs, at, key) or "")) for at, key in ((2, "target"), (3, "rel")))
        return 4 * len(value) + (sum(map(value.count, _WRAP_BREAKS)) + 1) * (extra + 64)
    return 0


def check_binop(operator: str, left, right) -> None:
    """TooLarge before `left OPERATOR right` is made, where it would pass the bounds."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
    if operator == "**" and numbers and right > 0 and abs(left) > 1:
        import math

        if right * math.log2(abs(left)) > MAX_BITS:
            raise TooLarge(f"the template asks for a number past {MAX_BITS} bits")
    if operator == "*":
        if numbers and isinstance(left, int) and isinstance(right, int) \
                and left.bit_length() + right.bit_length() > MAX_BITS:
            raise TooLarge(f"the template asks for a number past {MAX_BITS} bits")
        times, sequence = (left, right) if isinstance(left, int) else (right, left)
        if isinstance(times, int) and isinstance(sequence, (str, bytes, list, tuple)):
            size = weight(sequence) * times
            if size > MAX_TEXT:
                raise TooLarge(f"the template asks for {size:,} characters or items (at most {MAX_TEXT:,})")
    if operator == "+" and not numbers:
        size = weight(left) + weight(right)
        if size > MAX_TEXT:
            raise asks("+")
    if operator == "%" and isinstance(left, (str, bytes)):
        from markupsafe import Markup

        size = printf_size(left, right, isinstance(left, Markup))
        if size > MAX_TEXT:
            raise asks("%")

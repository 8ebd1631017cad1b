"""What one T-REx-style mention's `uri` names: a Wikidata entity, a date, a number, or
nothing that can be read (`Unreadable`, with the reason the rejects file gives).

Forms read, as the two pipelines write them:
* entities: `Q42`, `P17` (REBEL), `http://www.wikidata.org/entity/Q42` and its prop/direct
  forms (T-REx), `wd:`/`wdt:` prefixes;
* dates, datatype dateTime/date/gYear/gYearMonth (full IRI, `<IRI>` or `xsd:`), the value
  optionally quoted: T-REx's Date_Linker writes the parts it did not read as `00`
  (`1952-00-00T00:00:00Z`) or leaves them off (`1952^^<...#dateTime>`); REBEL's (cRocoDiLe's)
  fills them with `01` (`1952-01-01T00:00:00Z` from "1952"). The precision stored is what the
  file states, value and mention text together: `date` says how;
* numbers, datatype decimal/integer/double/float (REBEL's Value_Linker: `+4^^...#decimal`):
  a quantity whose unit the file does not state;
* `None` and `""`: REBEL's mark for a mention its linker found no entity for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from ..model import PRECISION_DAY, PRECISION_MONTH, PRECISION_YEAR

ENTITY_URI = re.compile(
    r"^(?:https?://www\.wikidata\.org/(?:entity|prop/direct|prop|wiki)/|wd:|wdt:)?([QPL][1-9][0-9]*)$"
)
_DATE = re.compile(
    r"^([+-]?)(\d{1,16})(?:-(\d{2})(?:-(\d{2}))?)?(?:T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?)?$"
)
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_DATE_TYPES = {"datetime": None, "date": None, "gyear": PRECISION_YEAR, "gyearmonth": PRECISION_MONTH}
_NUMBER_TYPES = frozenset({"decimal", "integer", "int", "long", "double", "float"})
_XSD = ("http://www.w3.org/2001/xmlschema#", "xsd:")
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_NO_ENTITY = frozenset({"None", ""})


class Unreadable(ValueError):
    """A uri that names nothing this reader can store; the message says why."""


@dataclass(frozen=True)
class Literal:
    """A literal a mention names, as a fact's value_type, value and extra JSON."""

    value_type: str  # "time" or "quantity"
    value: str
    extra: str | None = None


def read_uri(uri: object, surface: str | None) -> str | Literal:
    """The entity id (`Q42`) or the Literal a mention's uri names; `surface` is the
    mention's text (for a date's precision). Raises Unreadable."""
    if uri is None or (isinstance(uri, str) and uri.strip() in _NO_ENTITY):
        raise Unreadable(f"uri {uri!r} names no entity (the linker found none)")
    if not isinstance(uri, str):
        raise Unreadable(f"uri is not a string: {uri!r:.60}")
    text = uri.strip()
    if text.startswith("<") and text.endswith(">") and "^^" not in text:
        text = text[1:-1]
    if "^^" in text:
        lexical, _, datatype = text.rpartition("^^")
        return _literal(lexical.strip().strip('"'), datatype.strip().strip("<>"), surface)
    m = ENTITY_URI.match(text)
    if m:
        return m.group(1)
    raise Unreadable(f"unknown uri form {uri[:80]!r}")


def _literal(lexical: str, datatype: str, surface: str | None) -> Literal:
    lower = datatype.lower()
    kind = next((lower[len(p):] for p in _XSD if lower.startswith(p)), None)
    if kind in _DATE_TYPES:
        time, precision = date(lexical, surface, _DATE_TYPES[kind])
        return Literal("time", time, f'{{"precision":{precision}}}')
    if kind in _NUMBER_TYPES:
        return Literal("quantity", amount(lexical))
    raise Unreadable(f"unknown datatype {datatype[:80]!r}")


def date(lexical: str, surface: str | None, typed: int | None = None) -> tuple[str, int]:
    """(Wikidata time string, precision) of a date literal; `typed`: the precision its
    datatype states (gYear, gYearMonth). Raises Unreadable.

    The precision is the coarsest of what the value, the datatype and the mention's text
    (`surface`: its surfaceform, else the text at its boundaries) state:
    * the value: a `00` or missing month is year precision, a `00` or missing day month, else day;
    * the text (`stated_precision`): `年`/`月`/`日` (or `号`) in it: year / month / day; else two or
      more numbers ("8 October 1951", "10/08/1951", "13June 1852"): day; one number and a word
      of three or more letters ("January 1937", "marzo de 1990"): month; one number alone
      ("1952"): year; no number, or no text: it states nothing and the value decides.
    So REBEL's `1952-01-01` from "1952" is `+1952-00-00T00:00:00Z` at year precision, as Wikidata
    writes a year, and the same fact as T-REx's `1952-00-00`. Parts below the precision are
    written `00`; the year with a sign and at least four digits."""
    m = _DATE.match(lexical)
    if not m:
        raise Unreadable(f"unreadable date {lexical[:40]!r}")
    sign, year = m.group(1) or "+", int(m.group(2))
    month, day = int(m.group(3) or 0), int(m.group(4) or 0)
    if month > 12 or (month == 0 and day) or (month and day > _MONTH_DAYS[month - 1]):
        raise Unreadable(f"no such date {lexical[:40]!r}")
    precision = PRECISION_YEAR if month == 0 else PRECISION_MONTH if day == 0 else PRECISION_DAY
    if typed is not None:
        precision = min(precision, typed)
    stated = stated_precision(surface)
    if stated is not None:
        precision = min(precision, stated)
    if precision <= PRECISION_YEAR:
        month = day = 0
    elif precision == PRECISION_MONTH:
        day = 0
    if year == 0 and sign == "-":
        sign = "+"
    return f"{sign}{year:04d}-{month:02d}-{day:02d}T00:00:00Z", precision


_NUMBERS = re.compile(r"\d+")
_WORD = re.compile(r"[^\W\d_]{3,}")


def stated_precision(surface: str | None) -> int | None:
    """The precision a date mention's text states (module docstring), None when it states
    none (no text, or no number in it)."""
    if not surface or not _NUMBERS.search(surface):
        return None
    if "日" in surface or "号" in surface:
        return PRECISION_DAY
    if "月" in surface:
        return PRECISION_MONTH
    if "年" in surface:
        return PRECISION_YEAR
    numbers = len(_NUMBERS.findall(surface))
    if numbers >= 2:
        return PRECISION_DAY
    return PRECISION_MONTH if _WORD.search(surface) else PRECISION_YEAR


def amount(lexical: str) -> str:
    """A number as Wikidata writes an amount: signed, no leading or trailing zeros."""
    if not _NUMBER.match(lexical):
        raise Unreadable(f"unreadable number {lexical[:40]!r}")
    try:
        d = Decimal(lexical)
    except InvalidOperation:
        raise Unreadable(f"unreadable number {lexical[:40]!r}") from None
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text.lstrip("-") in ("0", ""):
        return "+0"
    return text if text.startswith("-") else "+" + text

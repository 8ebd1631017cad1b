"""Typed reading of the fields a Wikidata JSON record gives the store.

Every value the ingest takes is checked where it is taken: its JSON type, and its range where the
store or a reader relies on one (dates with real months and days, 64-bit time keys, coordinates
on the globe, decimal amounts, entity ids, text without NUL). A wrong value raises BadField,
whose message names the field's path as the record spells it, e.g.
`claims.P569[0].mainsnak.datavalue.value.time: expected a string, got an object`; callers add
the outer part of the path as the exception passes through them (`BadField.within`), so the
happy path builds no strings. Fields the ingest does not read (other languages, references,
other qualifiers) are not checked: they are never stored.
"""

from __future__ import annotations

import re

from ..model import TimeValue

_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "an integer",
          float: "a number", type(None): "null"}


class BadField(ValueError):
    """A field whose value cannot be stored as written: `path` (dotted, as in the record) and
    what is wrong with it."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem

    def within(self, prefix: str) -> BadField:
        if not self.path:
            return BadField(prefix, self.problem)
        return BadField(prefix + self.path if self.path[0] == "[" else f"{prefix}.{self.path}", self.problem)


def json_kind(value: object) -> str:
    return _NAMES.get(type(value), type(value).__name__)


def expected(what: str, value: object) -> str:
    return f"expected {what}, got {json_kind(value)}"


def text(value: object, path: str) -> str:
    """A string the store keeps as text: no NUL (SQLite and every reader would cut it there)."""
    if type(value) is not str:
        raise BadField(path, expected("a string", value))
    if "\x00" in value:
        raise BadField(path, "contains a NUL character")
    return value


def optional_text(obj: dict, key: str, default: str | None = None) -> str | None:
    """obj[key] as text, `default` when absent (a null that is there is wrong, not absent)."""
    return text(obj[key], key) if key in obj else default


def mapping(obj: dict, key: str) -> dict:
    """A JSON object field; absent, null and the empty array (how Wikidata's PHP writes an empty
    object) are an empty one."""
    value = obj.get(key)
    if type(value) is dict:
        return value
    if value is None or value == []:
        return {}
    raise BadField(key, expected("an object", value))


def obj_field(obj: dict, key: str) -> dict:
    value = obj.get(key)
    if type(value) is not dict:
        raise BadField(key, "missing" if value is None else expected("an object", value))
    return value


def array(obj: dict, key: str) -> list:
    value = obj.get(key)
    if type(value) is not list:
        raise BadField(key, "missing" if key not in obj else expected("an array", value))
    return value


def integer(value: object, path: str, low: int, high: int) -> int:
    if type(value) is not int:
        raise BadField(path, expected("an integer", value))
    if not low <= value <= high:
        raise BadField(path, f"{value} is out of range ({low} to {high})")
    return value


def number(value: object, path: str, limit: float) -> int | float:
    if type(value) is not int and type(value) is not float:
        raise BadField(path, expected("a number", value))
    if not -limit <= value <= limit:
        raise BadField(path, f"{value} is out of range (-{limit:g} to {limit:g})")
    return value


# -- the formats of typed strings ---------------------------------------------------------------

_ENTITY_ID = re.compile(r"[A-Z][1-9][0-9]*(?:-[A-Z][1-9][0-9]*)?")
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# Wikidata's time: signed year of up to 16 digits, month and day 00 when below that precision.
_TIME = re.compile(r"([+-]?)([0-9]{1,16})-([0-9]{2})-([0-9]{2})T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # 29 Feb: Julian dates have more leap years
# A time key is year * 10000 + MMDD in a 64-bit column: 14 digits of year keep it well inside.
KEY_YEAR_DIGITS = 14
_INT64 = (1 << 63) - 1


is_entity_id = _ENTITY_ID.fullmatch


def _matching(value: object, path: str, pattern: re.Pattern, what: str) -> str:
    """`value`, a string that `pattern` matches whole; BadField naming `path` otherwise."""
    if type(value) is not str:
        raise BadField(path, expected("a string", value))
    if not pattern.fullmatch(value):
        raise BadField(path, f"not {what}: {value[:40]!r}")
    return value


def entity_id(value: object, path: str) -> str:
    return _matching(value, path, _ENTITY_ID, "an entity id")


def property_id(value: str, path: str) -> str:
    if not _PROPERTY_ID.fullmatch(value):
        raise BadField(path, f"not a property id: {value[:40]!r}")
    return value


def decimal(value: object, path: str) -> str:
    return _matching(value, path, _DECIMAL, "a decimal number")


def time_value(v: object, *, keyed: bool = False) -> TimeValue:
    """A time datavalue's value (an object with `time` and `precision`). `keyed`: its time key
    is stored too (qualifiers), so the year must fit one."""
    if type(v) is not dict:
        raise BadField("", expected("an object", v))
    time = v.get("time")
    if type(time) is not str:
        raise BadField("time", "missing" if time is None else expected("a string", time))
    m = _TIME.fullmatch(time)
    if not m:
        raise BadField("time", f"not a Wikidata time (+YYYY-MM-DDT00:00:00Z): {time[:40]!r}")
    month, day = int(m.group(3)), int(m.group(4))
    if month > 12 or (month == 0 and day) or (month and day > _MONTH_DAYS[month - 1]):
        raise BadField("time", f"no such date: {time[:40]!r}")
    if keyed and len(m.group(2).lstrip("0")) > KEY_YEAR_DIGITS:
        raise BadField("time", f"year too large for a time key (at most {KEY_YEAR_DIGITS} digits): {time[:40]!r}")
    precision = v.get("precision", 11)
    return TimeValue(time, integer(precision, "precision", 0, 14))


def revision(entity: dict) -> tuple[str | None, int | None]:
    """(modified, lastrevid) of an entity record, each None when absent."""
    modified = entity.get("modified")
    if modified is not None:
        if type(modified) is not str:
            raise BadField("modified", expected("a string", modified))
        if not _TIMESTAMP.fullmatch(modified):
            raise BadField("modified", f"not a timestamp (YYYY-MM-DDThh:mm:ssZ): {modified[:40]!r}")
    lastrevid = entity.get("lastrevid")
    if lastrevid is not None:
        integer(lastrevid, "lastrevid", 0, _INT64)
    return modified, lastrevid

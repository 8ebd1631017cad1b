"""Options declared once. A probe-set kind's options, the fact selection's and a method's are
fields of a frozen dataclass made with `option(...)`: name, type, default, bounds, choices, help
and who may set them live in that one field. `option_specs` reads them back as `OptionSpec`s,
from which the CLI's click options and help, the service's request model and the pipeline's
keys are all derived, and `coerce` turns what any of the three received into the dataclass,
with the same checks for each.
"""

from __future__ import annotations

import math
import re
import types
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from typing import Any, Mapping

# Where an option may be set from. Anything but EVERYWHERE names something the server would load
# or call: over HTTP such a value must be one its operator allowed (`serve --models` and
# `--allow-model`), as the service checks at the door. LOCAL: a path on the server's disk;
# SERVED_MODEL: a model (a spec, a hub name or an API model's name); URL: a place to call out to.
EVERYWHERE, LOCAL, SERVED_MODEL, URL = "everywhere", "local", "served-model", "url"
EXPOSURES = (EVERYWHERE, LOCAL, SERVED_MODEL, URL)


@dataclass(frozen=True)
class OptionSpec:
    name: str  # the dataclass field, the pipeline key and the service's field
    type: str  # "int", "float", "str", "bool" or "list" (of text)
    default: Any
    help: str
    minimum: float | None = None  # a list: its fewest elements
    maximum: float | None = None
    choices: tuple[str, ...] | None = None  # an int or float option: words it takes besides numbers ("all")
    pattern: str | None = None  # every value (each element of a list) matches it
    flag: str = ""  # the CLI spelling, `--per-relation`
    comma: bool = False  # a list written as one comma-separated value (`--languages en,de`)
    exposure: str = EVERYWHERE
    http_limit: int | None = None  # over HTTP: at most this value (a number) or this many elements (a list)
    metavar: str | None = None

    @property
    def optional(self) -> bool:
        return self.default is None


def option(default: Any, help: str, *, minimum: float | None = None, maximum: float | None = None,
           choices: tuple[str, ...] | None = None, pattern: str | None = None, flag: str | None = None,
           comma: bool = False, exposure: str = EVERYWHERE, http_limit: int | None = None,
           metavar: str | None = None):
    """A dataclass field carrying its option's declaration (a tuple default stays immutable)."""
    if exposure not in EXPOSURES:
        raise ValueError(f"exposure {exposure!r}: use one of {', '.join(EXPOSURES)}")
    meta = {"help": help, "minimum": minimum, "maximum": maximum, "choices": choices, "pattern": pattern,
            "flag": flag, "comma": comma, "exposure": exposure, "http_limit": http_limit, "metavar": metavar}
    return field(default=default, metadata={"option": meta})


def option_specs(cls: type) -> tuple[OptionSpec, ...]:
    """The declared options of a dataclass, in field order."""
    if not is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass of options")
    hints = typing.get_type_hints(cls)
    specs = []
    for f in fields(cls):
        meta = f.metadata.get("option")
        if meta is None:
            raise TypeError(f"{cls.__name__}.{f.name}: declare it with option(...)")
        default = f.default if f.default is not MISSING else None
        specs.append(OptionSpec(f.name, _type_name(hints[f.name], f"{cls.__name__}.{f.name}"), default,
                                meta["help"], meta["minimum"], meta["maximum"], meta["choices"], meta["pattern"],
                                meta["flag"] or "--" + f.name.replace("_", "-"), meta["comma"], meta["exposure"],
                                meta["http_limit"], meta["metavar"]))
    return tuple(specs)


def _type_name(hint: Any, where: str) -> str:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    base = args[0] if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1 else hint
    if typing.get_origin(base) is tuple:
        return "list"
    for python, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str")):
        if base is python:
            return name
    raise TypeError(f"{where}: options are int, float, str, bool or tuple[str, ...]; got {hint!r}")


def coerce(cls: type, mapping: Mapping[str, Any], where: str = "") -> Any:
    """`mapping` (option name -> value, from a command line, a config or a request) as an
    instance of the options dataclass `cls`: lists become tuples, text becomes numbers, and every
    value is checked against its declaration. ValueError names the option and what is wrong."""
    specs = {s.name: s for s in option_specs(cls)}
    prefix = f"{where}: " if where else ""
    unknown = [key for key in mapping if key not in specs]
    if unknown:
        raise ValueError(f"{prefix}unknown option {unknown[0]!r} (allowed: {', '.join(specs)})")
    return cls(**{key: check_value(specs[key], value, prefix) for key, value in mapping.items()})


def check_value(spec: OptionSpec, value: Any, prefix: str = "", *, strict: bool = False) -> Any:
    """One value as its option's type, within its bounds, choices and pattern; a number finite
    (no inf or NaN, however spelled). `strict`: text is never read as a number (a method's
    options arrive typed, as JSON or YAML; "2" is a typo)."""
    name = f"{prefix}option {spec.name}"
    if value is None:
        if spec.optional:
            return None
        raise ValueError(f"{name}: a value is required")
    if spec.type == "list":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()] if spec.comma else [value]
        if not isinstance(value, (list, tuple)) or any(isinstance(v, (dict, list, tuple)) for v in value):
            raise ValueError(f"{name}: expected a list of values, got {value!r}")
        value = tuple(str(v) for v in value)
        if spec.minimum is not None and len(value) < spec.minimum:
            raise ValueError(f"{name}: give at least {spec.minimum:g} value(s)")
        for element in value:
            _check_choice_and_pattern(spec, element, name)
        return value
    if spec.type == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{name}: expected true or false, got {value!r}")
        return value
    if spec.type in ("int", "float"):
        if spec.choices and isinstance(value, str) and value in spec.choices:
            return value
        try:
            if strict and isinstance(value, str):
                raise TypeError(value)
            number = _number(value, spec.type)
        except (TypeError, ValueError):
            words = f" nor {' / '.join(spec.choices)}" if spec.choices else ""
            kind = "an int" if spec.type == "int" else "a float"
            raise ValueError(f"{name}: {value!r} is not {kind}{words}") from None
        if not math.isfinite(number):  # however spelled: 1e999, .inf, Infinity, -inf, nan
            raise ValueError(f"{name}: {value!r} is not a finite number")
        if spec.minimum is not None and number < spec.minimum:
            raise ValueError(f"{name}: {number} is below its minimum {spec.minimum:g}")
        if spec.maximum is not None and number > spec.maximum:
            raise ValueError(f"{name}: {number} is above its maximum {spec.maximum:g}")
        return number
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected text, got {value!r}")
    _check_choice_and_pattern(spec, value, name)
    return value


def _number(value: Any, kind: str) -> int | float:
    if isinstance(value, bool):
        raise TypeError(value)
    if kind == "int":
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        return int(value)
    return float(value)


def _check_choice_and_pattern(spec: OptionSpec, text: str, name: str) -> None:
    if spec.choices is not None and text not in spec.choices:
        raise ValueError(f"{name}: {text!r} is not one of {', '.join(spec.choices)}")
    if spec.pattern is not None and not re.fullmatch(spec.pattern, text):
        raise ValueError(f"{name}: {text!r} is not of the form {spec.pattern}")


def as_dict(options: Any) -> dict:
    """An options dataclass as JSON-ready data (tuples as lists), in field order."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(options).items()}

"""The HTTP service's checks at the door: what a job would only fail on later (a date that is not
a calendar date, a corpus name that is not a plain name or is not in the store, a language the
store has no names in, an option value of the wrong type) is refused when the job is asked for,
with 422 and the field named as FastAPI names a field its models refuse:
`{"detail": [{"type": "value_error", "loc": ["body", FIELD], "msg": ..., "input": ...}]}`.
The checks of one value are pydantic validators (the request models use them); the checks
against the store or a method's declaration run in the routes (`refuse`).
"""

from __future__ import annotations

import datetime
import re
from typing import Any, NoReturn

from fastapi import HTTPException

from ..probes.methods.base import OptionError, check_option_types

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
BUCKET = re.compile(r"0|\[[0-9]+,([0-9]+|inf)\)")  # index.corpus.bucket_of's labels


def calendar_date(text: str | None) -> str | None:
    """YYYY (0001-9999) or a YYYY-MM-DD that is a day of the calendar: `9999-99-99` would pass
    the pattern and be read as no date at all."""
    if text is None:
        return None
    try:
        if len(text) == 4:
            datetime.date(int(text), 1, 1)
        else:
            datetime.date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a calendar date (YYYY or YYYY-MM-DD)") from None
    return text


def plain_name(text: str) -> str:
    """A name the server looks up, never a path: letters, digits and _ . : - from a letter or
    digit on, no `..`."""
    if not SAFE_NAME.fullmatch(text) or ".." in text:
        raise ValueError(f"{text!r} is not a plain name (letters, digits, _ . : -; no '..')")
    return text


def bucket_label(text: str) -> str:
    if not BUCKET.fullmatch(text):
        raise ValueError(f"{text!r} is not a frequency bucket (0, [1,10), [10,100), [100,inf), ...)")
    return text


VALUE_CHECKS = {"at": calendar_date, "corpus": plain_name, "buckets": bucket_label}  # option -> each value's check


def refuse(loc: tuple[str | int, ...], message: str, value: Any) -> NoReturn:
    """422 naming the field, in the shape of FastAPI's own validation errors."""
    raise HTTPException(422, [{"type": "value_error", "loc": ["body", *loc], "msg": message, "input": value}])


def check_against_store(values: dict, kg) -> None:
    """A probe-set request's values against the store the server reads (KnowledgeGraph `kg`)."""
    relations = values.get("relations") or ()
    if relations:
        present = {r for r, _, _ in kg.relations()}
        missing = [r for r in relations if r not in present]
        if missing:
            refuse(("relations",), f"no entity-valued facts of {', '.join(missing)} in the store", relations)
    corpus = values.get("corpus")
    for name in ("per_bucket", "buckets"):
        if values.get(name) and not corpus:
            refuse((name,), f"{name} needs frequencies: name the corpus counted into the store", values[name])
    if corpus and not kg.has_frequencies(corpus):
        refuse(("corpus",), f"the store holds no frequencies for corpus {corpus!r}", corpus)
    unknown = [lang for lang in values.get("languages") or () if lang not in kg.languages]
    if unknown:
        refuse(("languages",), f"the store has no names in {', '.join(unknown)} (it has "
                               f"{', '.join(kg.languages)})", values["languages"])


def check_method_options(method, options: dict) -> None:
    """An evaluation's options against its method's (`method`: the class, with its `defaults`):
    known names, no option naming a place the server would call out to, and a value of the
    default's type (a default of None takes any)."""
    unknown = sorted(set(options) - set(method.defaults))
    if unknown:
        refuse(("options", unknown[0]), f"method {method.name} has no option {', '.join(unknown)} "
                                        f"(it takes {', '.join(sorted(method.defaults)) or 'none'})", options)
    remote = sorted(k for k in options if k.startswith("judge") or k.endswith(("_url", "_path", "_dir")))
    if remote:
        refuse(("options", remote[0]), f"option(s) {', '.join(remote)} are not allowed over HTTP", options)
    try:  # the check `factprobe eval` makes before its model loads
        check_option_types(method, {k: v for k, v in options.items() if v is not None})
    except OptionError as error:
        refuse(("options", error.key), str(error), options[error.key])

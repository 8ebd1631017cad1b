"""The HTTP service's checks at the door: what a job would only fail on later (a date that is not
a calendar date, a corpus name that is not a plain name or is not in the store, a language the
store has no names in, a method option its declaration refuses) is refused when the job is asked
for, with 422 and the field named as FastAPI names a field its models refuse:
`{"detail": [{"type": "value_error", "loc": ["body", FIELD], "msg": ..., "input": ...}]}`.
So is every value that names a model, a file or a URL (an option declared with another exposure
than EVERYWHERE, probes/declare.py) unless the operator allowed it when starting the server
(`serve --models`, `--allow-model`): a client never makes the server load or call anything else.
The checks of one value are pydantic validators (the request models use them); the checks
against the store, the allowed names or a method's declaration run in the routes (`refuse`).
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Iterable, Mapping, NoReturn

from fastapi import HTTPException

from ...probes.declare import EVERYWHERE, OptionSpec, option_specs
from ...probes.methods.base import OptionError, read_options

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
    """A probe-set request's values against the store the server reads (KnowledgeGraph `kg`); its
    relations, P-ids or labels, are replaced by their ids (what the job records and builds)."""
    from ..relations import relation_id

    relations = values.get("relations") or ()
    for k, text in enumerate(relations):
        try:
            relations[k] = relation_id(kg, text)
        except ValueError as error:
            refuse(("relations", k), str(error), text)
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


def not_allowed(values: Mapping[str, Any], specs: Mapping[str, OptionSpec],
                allowed: Iterable[str]) -> tuple[str, str] | None:
    """The first (option, value) of `values` that names a model, a file or a URL (its declared
    exposure is not EVERYWHERE) the operator did not allow (`allowed`, compared as written: a
    path is allowed only as the operator spelled it); None when there is none."""
    allowed = set(allowed)
    for name, value in values.items():
        spec = specs.get(name)
        if spec is None or spec.exposure == EVERYWHERE or value is None:
            continue
        for each in (value if isinstance(value, (list, tuple)) else [value]):
            if str(each) not in allowed:
                return name, str(each)
    return None


def refuse_not_allowed(values: Mapping[str, Any], specs: Mapping[str, OptionSpec], allowed: tuple[str, ...],
                       loc: tuple[str, ...] = ()) -> None:
    """422 naming the first option of `values` that names what the server may not load (not_allowed)."""
    found = not_allowed(values, specs, allowed)
    if found is not None:
        name, value = found
        refuse((*loc, name), f"{name} {value!r} is not allowed: this server loads only the models, files and URLs "
                             f"its operator allowed (GET /models; `factprobe serve --allow-model`)", values[name])


def checked_options() -> dict:
    """The options a request may set that name a model, a file or a URL, and what each names
    (its declared exposure): those of probe-set jobs by name, those of evaluations by method."""
    from ...probes.methods import registered
    from ..build_options import merged_options

    return {"probeset": {name: merged.spec.exposure for name, merged in merged_options().items()
                         if merged.spec.exposure != EVERYWHERE},
            "eval": {method: named for method, cls in registered().items()
                     if (named := {spec.name: spec.exposure for spec in option_specs(cls.Options)
                                   if spec.exposure != EVERYWHERE})}}


def check_method_options(method, options: dict, allowed: tuple[str, ...]) -> None:
    """An evaluation's options against its method's declaration (`method`: the class, with its
    `Options`): each option that names a model, a file or a URL one the operator allowed, then
    every value as `factprobe eval --option` checks it (probes/methods/base.read_options), in the
    same words. 422 naming `options.KEY`."""
    specs = {spec.name: spec for spec in option_specs(method.Options)}
    refuse_not_allowed({k: v for k, v in options.items() if k in specs}, specs, allowed, ("options",))
    try:
        read_options(method, options)
    except OptionError as error:
        refuse(("options", error.key), str(error), options.get(error.key))

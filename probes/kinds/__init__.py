"""Probe-set kinds: the registry below is the one list of them. `probeset build` (its --kind and
options), the pipeline's `probesets:`, the service's probe-set jobs, the methods' `kinds` and
`build_probeset` all read `registered()`. A new kind is one `ProbeSetKind` subclass (base.py)
with its options dataclass, added by `register`, or for other processes by a module named in
FACTPROBE_PLUGINS (tests/toy_kind.py shows one)."""

from __future__ import annotations

from dataclasses import is_dataclass

from ..plugins import load_plugins
from .base import BuildContext, KindOptions, ProbeSetKind
from .belief_icl import BeliefIcl
from .cloze import Cloze
from ..declare import option_specs
from .distractor import Distractor
from .icl_mc import IclMc
from .kdf import Kdf

# name -> kind class; filled by register() only (the built-ins just below, plugins later).
KINDS: dict[str, type[ProbeSetKind]] = {}


def register(kind: type[ProbeSetKind], *, replace: bool = False) -> type[ProbeSetKind]:
    """Add a kind to the registry (and return it: this works as a class decorator). Its
    declarations are checked here, so a mistake shows at registration, not mid-build."""
    if not (isinstance(kind, type) and issubclass(kind, ProbeSetKind)):
        raise TypeError(f"register: {kind!r} is not a ProbeSetKind subclass")
    where = f"probe-set kind {kind.__module__}.{kind.__qualname__}"
    name = getattr(kind, "name", None)
    if not isinstance(name, str) or not name or name != name.strip() or "," in name or " " in name:
        raise ValueError(f"{where}: `name` must be a non-empty string without spaces or commas")
    summary = getattr(kind, "summary", None)
    if not isinstance(summary, str) or not summary.strip() or "\n" in summary:
        raise ValueError(f"{where}: `summary` must be one line of text (it is the kind's --help entry)")
    options = kind.options
    if not (isinstance(options, type) and is_dataclass(options) and issubclass(options, KindOptions)):
        raise ValueError(f"{where}: `options` must be a dataclass subclassing KindOptions")
    option_specs(options)  # every field declared with option(...), of a supported type
    fields = kind.item_fields
    if not isinstance(fields, tuple) or not all(isinstance(f, str) and f for f in fields):
        raise ValueError(f"{where}: `item_fields` must be a tuple of item field names")
    held = KINDS.get(name)
    if held is not None and held is not kind and not replace:
        raise ValueError(f"probe-set kind {name!r} is registered already ({held.__module__}.{held.__qualname__}); "
                         "pass replace=True to override it")
    KINDS[name] = kind
    return kind


def unregister(name: str) -> type[ProbeSetKind] | None:
    """Remove a kind from the registry (tests, a plugin that replaces itself); returns it."""
    return KINDS.pop(name, None)


def registered() -> dict[str, type[ProbeSetKind]]:
    """The registry, plugins included: what every caller reads (name -> kind class)."""
    load_plugins()
    return KINDS


def get_kind(name: str) -> type[ProbeSetKind]:
    """The kind registered under `name`; ValueError naming the registered ones otherwise."""
    kinds = registered()
    if name not in kinds:
        raise ValueError(f"kind {name!r}: use one of {', '.join(kinds)}")
    return kinds[name]


for _kind in (Cloze, IclMc, Kdf, Distractor, BeliefIcl):
    register(_kind)
del _kind

__all__ = ["KINDS", "BuildContext", "KindOptions", "ProbeSetKind", "get_kind", "register", "registered",
           "unregister"]

"""Probing methods: each turns probe-set items into per-item records through a scorer.

The registry below is the one list of methods; the runner, the aggregator, the CLI, the pipeline,
the report and the service all read `registered()`. A new method is one `Method` subclass (base.py), added
by `register`, or for other processes by a module named in FACTPROBE_PLUGINS (docs/design-notes.md).
"""

from __future__ import annotations

from ..document import Section
from ..kinds import KINDS as KIND_REGISTRY
from ..plugins import load_plugins
from .base import Method, MethodContext
from .baselines import Baselines
from .belief import Belief
from .belief_icl import BeliefICL
from .distractor import DistractorMeasure
from .eic_lke import EICLKE
from .ic_lke import ICLKE
from .kdf import KDF

# name -> method class; filled by register() only (the built-ins just below, plugins later).
METHODS: dict[str, type[Method]] = {}


def register(method: type[Method], *, replace: bool = False) -> type[Method]:
    """Add a method class to the registry (and return it, so this works as a class decorator).
    Its declarations are checked here, so a mistake shows at registration, not mid-run.
    Registering the same class twice is a no-op; another class under a taken name is refused
    unless `replace`."""
    if not (isinstance(method, type) and issubclass(method, Method)):
        raise TypeError(f"register: {method!r} is not a Method subclass")
    where = f"method class {method.__module__}.{method.__qualname__}"
    name = getattr(method, "name", None)
    if not isinstance(name, str) or not name or name != name.strip() or "," in name:
        raise ValueError(f"{where}: `name` must be a non-empty string without spaces at its ends or commas")
    summary = getattr(method, "summary", None)
    if not isinstance(summary, str) or not summary.strip() or "\n" in summary:
        raise ValueError(f"{where}: `summary` must be one line of text (it is the method's --help entry)")
    kinds, known = getattr(method, "kinds", None), KIND_REGISTRY
    if not isinstance(kinds, tuple) or not kinds or any(k not in known for k in kinds):
        raise ValueError(f"{where}: `kinds` must be a non-empty tuple of probe-set kinds "
                         f"({', '.join(known)}); got {kinds!r}")
    reads = getattr(method, "reads", None)
    if not isinstance(reads, tuple) or not all(isinstance(f, str) and f for f in reads):
        raise ValueError(f"{where}: `reads` must be a tuple of item field names; got {reads!r}")
    if not isinstance(getattr(method, "defaults", None), dict):
        raise ValueError(f"{where}: `defaults` must be a dict of option -> default")
    if not callable(getattr(method, "aggregate_extra", None)):
        raise ValueError(f"{where}: `aggregate_extra` must be callable (records, options) -> dict")
    if not callable(getattr(method, "headline", None)):
        raise ValueError(f"{where}: `headline` must be callable (aggregate, probes) -> str")
    sections = getattr(method, "report_sections", None)
    if not isinstance(sections, tuple) or not all(isinstance(s, Section) for s in sections):
        raise ValueError(f"{where}: `report_sections` must be a tuple of probes.document.Section; got {sections!r}")
    held = METHODS.get(name)
    if held is not None and held is not method and not replace:
        raise ValueError(f"method {name!r} is registered already ({held.__module__}.{held.__qualname__}); "
                         "pass replace=True to override it")
    METHODS[name] = method
    return method


def unregister(name: str) -> type[Method] | None:
    """Remove a method from the registry (tests, a plugin that replaces itself); returns it."""
    return METHODS.pop(name, None)


def registered() -> dict[str, type[Method]]:
    """The registry, plugins included: what every caller reads (name -> method class)."""
    load_plugins()
    return METHODS


def get_method(name: str) -> type[Method]:
    """The method registered under `name`; ValueError naming the registered ones otherwise."""
    methods = registered()
    if name not in methods:
        raise ValueError(f"method {name!r}: use one of {', '.join(sorted(methods))}")
    return methods[name]


for _method in (ICLKE, EICLKE, KDF, Belief, BeliefICL, DistractorMeasure, Baselines):
    register(_method)
del _method

__all__ = ["METHODS", "Method", "MethodContext", "get_method", "load_plugins", "register", "registered",
           "unregister"]

"""Probing methods: each turns probe-set items into per-item records through a scorer.

The registry below is the one list of methods; the runner, the aggregator, the CLI, the pipeline,
the report and the service all read `registered()`. A new method is one `Method` subclass (base.py), added
by `register`, or for other processes by a module named in FACTPROBE_PLUGINS (docs/design/methods.md).
"""

from __future__ import annotations

from ..declare import option_specs
from ..document import Section
from ..kinds import KINDS
from ..plugins import load_plugins
from ..registry import Registry
from .base import Method, MethodContext
from .baselines import Baselines
from .belief import Belief
from .belief_icl import BeliefICL
from .distractor import DistractorMeasure
from .eic_lke import EICLKE
from .ic_lke import ICLKE
from .kdf import KDF
from .mc import PromptedChoice


def _checks(method: type[Method], where: str) -> None:
    """What a method declares besides its name and summary (probes/registry.py checks those)."""
    kinds = getattr(method, "kinds", None)
    if not isinstance(kinds, tuple) or not kinds or any(k not in KINDS for k in kinds):
        raise ValueError(f"{where}: `kinds` must be a non-empty tuple of probe-set kinds "
                         f"({', '.join(KINDS)}); got {kinds!r}")
    reads = getattr(method, "reads", None)
    if not isinstance(reads, tuple) or not all(isinstance(f, str) and f for f in reads):
        raise ValueError(f"{where}: `reads` must be a tuple of item field names; got {reads!r}")
    try:  # Method.__init_subclass__ checked this much of a subclass; a class made otherwise may not be
        option_specs(getattr(method, "Options", None))
    except TypeError as error:
        raise ValueError(f"{where}: `Options` must be a frozen dataclass of option(...) fields ({error})") from None
    if not callable(getattr(method, "aggregate_extra", None)):
        raise ValueError(f"{where}: `aggregate_extra` must be callable (records, options) -> dict")
    if not callable(getattr(method, "headline", None)):
        raise ValueError(f"{where}: `headline` must be callable (aggregate, probes) -> str")
    sections = getattr(method, "report_sections", None)
    if not isinstance(sections, tuple) or not all(isinstance(s, Section) for s in sections):
        raise ValueError(f"{where}: `report_sections` must be a tuple of probes.document.Section; got {sections!r}")


REGISTRY: Registry[type[Method]] = Registry("method", Method, _checks)
METHODS = REGISTRY.entries  # name -> method class: the built-ins just below, plugins later
register, unregister, registered = REGISTRY.register, REGISTRY.unregister, REGISTRY.registered


def get_method(name: str) -> type[Method]:
    """The method registered under `name`; ValueError naming the registered ones otherwise."""
    return REGISTRY.get(name, sorted)


for _method in (ICLKE, EICLKE, KDF, Belief, BeliefICL, DistractorMeasure, Baselines, PromptedChoice):
    register(_method)
del _method

__all__ = ["METHODS", "Method", "MethodContext", "get_method", "load_plugins", "register", "registered",
           "unregister"]

"""Probe-set kinds: the registry below is the one list of them. `probeset build` (its --kind and
options), the pipeline's `probesets:`, the service's probe-set jobs, the methods' `kinds` and
`build_probeset` all read `registered()`. A new kind is one `ProbeSetKind` subclass (base.py)
with its options dataclass, added by `register`, or for other processes by a module named in
FACTPROBE_PLUGINS (tests/toy_kind.py shows one)."""

from __future__ import annotations

from dataclasses import is_dataclass

from ..declare import option_specs
from ..registry import Registry
from .base import BuildContext, KindOptions, ProbeSetKind
from .belief_icl_kind import BeliefIclKind
from .cloze_kind import ClozeKind
from .distractor_kind import DistractorKind
from .icl_mc_kind import IclMcKind
from .kdf_kind import KdfKind

def _checks(kind: type[ProbeSetKind], where: str) -> None:
    """What a kind declares besides its name and summary (probes/registry.py checks those)."""
    options = kind.options
    if not (isinstance(options, type) and is_dataclass(options) and issubclass(options, KindOptions)):
        raise ValueError(f"{where}: `options` must be a dataclass subclassing KindOptions")
    option_specs(options)  # every field declared with option(...), of a supported type
    fields = kind.item_fields
    if not isinstance(fields, tuple) or not all(isinstance(f, str) and f for f in fields):
        raise ValueError(f"{where}: `item_fields` must be a tuple of item field names")


REGISTRY: Registry[type[ProbeSetKind]] = Registry("probe-set kind", ProbeSetKind, _checks)
KINDS = REGISTRY.entries  # name -> kind class: the built-ins just below, plugins later
register, unregister, registered = REGISTRY.register, REGISTRY.unregister, REGISTRY.registered


def get_kind(name: str) -> type[ProbeSetKind]:
    """The kind registered under `name`; ValueError naming the registered ones otherwise."""
    return REGISTRY.get(name)


for _kind in (ClozeKind, IclMcKind, KdfKind, DistractorKind, BeliefIclKind):
    register(_kind)
del _kind

__all__ = ["KINDS", "BuildContext", "KindOptions", "ProbeSetKind", "get_kind", "register", "registered",
           "unregister"]

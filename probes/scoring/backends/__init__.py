"""Model backends: the registry below is the one list of them. parse_spec and check_spec
(scoring/specs.py), load_scorer (scoring/loader.py) and `factprobe model --help` all read
`registered()`. A new backend is one `Backend` subclass (base.py) in one file, added by
`register`, or for other processes by a module named in FACTPROBE_PLUGINS
(tests/toy_backend.py shows one)."""

from __future__ import annotations

from ...registry import Registry
from .base import Backend, LoadOptions, ModelSpec, SpecError
from .gguf import GGUF
from .hf import HF, HFMasked
from .openai_compatible import OpenAI, OpenAIChat


def _checks(backend: type[Backend], where: str) -> None:
    """What a backend declares besides its name and summary (probes/registry.py checks those)."""
    if ":" in backend.name or any(c.isspace() for c in backend.name):
        raise ValueError(f"{where}: `name` is a spec's prefix: no ':' and no spaces; got {backend.name!r}")
    target = getattr(backend, "target", None)
    if not isinstance(target, str) or not target or any(c.isspace() for c in target):
        raise ValueError(f"{where}: `target` must say in one word how a spec's target is written "
                         f"(PATH_OR_NAME, FILE, MODEL); got {target!r}")
    if getattr(backend.load, "__func__", None) is Backend.load.__func__:
        raise ValueError(f"{where}: `load` must be defined (spec, LoadOptions) -> Scorer")


REGISTRY: Registry[type[Backend]] = Registry("model backend", Backend, _checks)
BACKENDS = REGISTRY.entries  # name -> backend class: the built-ins just below, plugins later
register, unregister, registered = REGISTRY.register, REGISTRY.unregister, REGISTRY.registered

for _backend in (HF, HFMasked, GGUF, OpenAI, OpenAIChat):
    register(_backend)
del _backend

__all__ = ["BACKENDS", "Backend", "LoadOptions", "ModelSpec", "SpecError", "register", "registered", "unregister"]

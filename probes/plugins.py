"""Plugins: modules named in FACTPROBE_PLUGINS (comma-separated) are imported before a registry
is read, and register their probe-set kinds (probes/kinds), probing methods (probes/methods) and
model backends (probes/scoring/backends) when imported, so another process (`factprobe eval`,
the service) sees them too."""

from __future__ import annotations

import importlib
import os
import sys

PLUGINS_ENV = "FACTPROBE_PLUGINS"


def load_plugins(modules: str | None = None) -> list[str]:
    """Import the modules named in FACTPROBE_PLUGINS (or `modules`), comma-separated. A module
    imported before is not imported again. Returns the names imported now."""
    spec = os.environ.get(PLUGINS_ENV, "") if modules is None else modules
    imported = []
    for module in (m.strip() for m in spec.split(",")):
        if not module or module in sys.modules:
            continue
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise ImportError(f"{PLUGINS_ENV}: cannot import {module!r}: {error}") from error
        imported.append(module)
    return imported

"""The old name of probes/measures/ (before issue 36), kept for one release: importing it warns
and gives the same names."""

from __future__ import annotations

import warnings

from .measures import *  # noqa: F403
from .measures import __all__  # noqa: F401

warnings.warn("factprobe.probes.metrics is now factprobe.probes.measures; the old name goes in the next release",
              DeprecationWarning, stacklevel=2)

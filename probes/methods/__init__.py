"""Probing methods: each turns probe-set items into per-item records through a scorer.

A method names the probe-set kinds it reads and the scorer call it needs; `run` takes a batch
of items (and the whole probe set, for demonstrations) and returns one JSON-ready record per
item, with at least `id`, `relation`, `bucket` and `correct`. Aggregates are computed from the
records by the runner (probes/runner.py) with the pure functions of probes/metrics.py.
"""

from __future__ import annotations

from .base import Method, MethodContext
from .baselines import Baselines
from .belief import Belief
from .belief_icl import BeliefICL
from .distractor import DistractorMeasure
from .eic_lke import EICLKE
from .icl_mc import ICLKE
from .kdf import KDF

METHODS: dict[str, type[Method]] = {m.name: m for m in (ICLKE, EICLKE, KDF, Belief, BeliefICL,
                                                                  DistractorMeasure, Baselines)}

__all__ = ["METHODS", "Method", "MethodContext"]

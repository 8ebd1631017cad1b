"""The loaded model, kept for the next evaluation that asks for the same spec: one model at a
time (models are the big memory). The pipeline, the service and `factprobe eval` load through
it, so every one of them honours FACTPROBE_DEVICE and FACTPROBE_DTYPE the same way."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from .scorer import Scorer

DEVICE_ENV, DTYPE_ENV = "FACTPROBE_DEVICE", "FACTPROBE_DTYPE"

# Models every ModelCache of this process shares, when keep_models() asked for it: None, each
# cache loads its own (a process serves one model at a time and lets it go).
_kept: dict[tuple, Scorer] | None = None
_kept_lock = threading.Lock()


def keep_models(keep: bool = True) -> None:
    """Keep every model a ModelCache loads from weights on disk for the rest of this process, and
    hand it to any ModelCache that asks for the same spec, device and dtype (a test session that
    runs many commands in one process loads each model once). A local model is known by its
    files' paths, sizes and times, so one rewritten in place loads again. keep=False lets go."""
    global _kept
    with _kept_lock:
        _kept = {} if keep else None


def _on_disk(spec: str) -> tuple | None:
    """What names a spec's weights on disk: a shipped name as itself, a local file or folder by
    its absolute path and its files' sizes and times; None for a hub name or an API model."""
    if ":" not in spec:
        return (spec,)
    target = Path(spec.partition(":")[2])
    if not target.exists():
        return None
    files = sorted(target.iterdir()) if target.is_dir() else [target]
    return (str(target.resolve()), *((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files if f.is_file()))


class ModelCache:
    """`get(spec)` loads a spec once and keeps it until another spec is asked for. Device and
    dtype: as given, else the environment's FACTPROBE_DEVICE / FACTPROBE_DTYPE, else "auto".

    Args:
        device: As loader.load_scorer takes it ("cpu", "cuda", "cuda:1", "auto").
        dtype: As loader.load_scorer takes it ("float32", "bfloat16", "auto").
    """

    def __init__(self, device: str | None = None, dtype: str | None = None) -> None:
        self.device = device or os.environ.get(DEVICE_ENV) or "auto"
        self.dtype = dtype or os.environ.get(DTYPE_ENV) or "auto"
        self.spec: str | None = None
        self.scorer: Scorer | None = None
        self.lock = threading.Lock()

    def get(self, spec: str) -> Scorer:
        """The Scorer of `spec` (a model spec, as loader.load_scorer takes it): the kept one when
        the spec is the last one asked for, else loaded after the kept model is let go.
        SpecError / ValueError as load_scorer raises them."""
        with self.lock:
            if spec != self.spec or self.scorer is None:
                self.spec, self.scorer = None, None  # the old model goes before the new one loads
                self.scorer = self._load(spec)
                self.spec = spec
            return self.scorer

    def holds(self, spec: str) -> bool:
        """`get(spec)` returns the kept model, without a load (a caller says "loading" otherwise)."""
        return spec == self.spec and self.scorer is not None

    def _load(self, spec: str) -> Scorer:
        from .loader import load_scorer  # torch loads with the first model, not with the caller

        weights = _on_disk(spec) if _kept is not None else None
        if weights is None:
            return load_scorer(spec, device=self.device, dtype=self.dtype)
        key = (weights, self.device, self.dtype)
        with _kept_lock:
            if key not in _kept:
                _kept[key] = load_scorer(spec, device=self.device, dtype=self.dtype)
            return _kept[key]

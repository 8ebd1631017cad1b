"""The loaded model, kept for the next evaluation that asks for the same spec: one model at a
time (models are the big memory). The pipeline, the service and `factprobe eval` load through
it, so every one of them honours FACTPROBE_DEVICE and FACTPROBE_DTYPE the same way."""

from __future__ import annotations

import os
import threading

from .scorer import Scorer

DEVICE_ENV, DTYPE_ENV = "FACTPROBE_DEVICE", "FACTPROBE_DTYPE"


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
                from .loader import load_scorer  # torch loads with the first model, not with the caller

                self.spec, self.scorer = None, None  # the old model goes before the new one loads
                self.scorer = load_scorer(spec, device=self.device, dtype=self.dtype)
                self.spec = spec
            return self.scorer

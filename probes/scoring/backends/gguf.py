"""Backend `gguf:FILE`: a GGUF file, dequantized once and cached (gguf_cache.py), then loaded
through transformers as an `hf:` folder is."""

from __future__ import annotations

from pathlib import Path

from ..gguf_cache import converted_gguf, is_gguf
from ..scorer import Scorer
from .base import Backend, LoadOptions, ModelSpec, SpecError
from .hf import from_pretrained, load_errors, placement


class GGUF(Backend):
    name = "gguf"
    target = "FILE"
    summary = "GGUF file, dequantized once and cached ($FACTPROBE_CACHE)"

    @classmethod
    def parse(cls, spec: ModelSpec) -> None:
        if not Path(spec.target).is_file():
            raise SpecError(f"model spec {spec.raw!r}: no such GGUF file {spec.target}")

    @classmethod
    def check(cls, spec: ModelSpec) -> None:
        if not is_gguf(Path(spec.target)):
            raise SpecError(f"model spec {spec.raw!r}: {spec.target} is not a GGUF file (it does not begin with GGUF)")

    @classmethod
    def load(cls, spec: ModelSpec, options: LoadOptions) -> Scorer:
        device, dtype = placement(options)
        with load_errors(spec):
            folder, digest = converted_gguf(spec.target, options.cache_dir)
            return from_pretrained(str(folder), f"gguf:{Path(spec.target).name}@{digest[:12]}", device, dtype, options)

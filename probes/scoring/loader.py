"""From a model spec to a ready Scorer: read and check the spec (specs.py), then its registered
backend loads it (scoring/backends). A model that cannot be loaded is a SpecError of one line."""

from __future__ import annotations

from pathlib import Path

from .backends import LoadOptions, ModelSpec, registered
from .scorer import Scorer
from .specs import check_spec, parse_spec

DEFAULTS = LoadOptions()


def load_scorer(spec: str | ModelSpec, *, device: str | None = DEFAULTS.device, dtype: str | None = DEFAULTS.dtype,
                batch_size: int = DEFAULTS.batch_size, memory_budget: int | None = DEFAULTS.memory_budget,
                cache_dir: str | Path | None = DEFAULTS.cache_dir) -> Scorer:
    """Load a model as a Scorer (ModelCache.get loads through this, keeping the model).

    Args:
        spec: A model spec: "hf:PATH_OR_NAME", "hf-mlm:...", "gguf:FILE", "openai:MODEL",
            "openai-chat:MODEL", a plugin backend's, or a shipped name ("smollm2-135m-instruct",
            "gemma3-270m").
        device: "cpu", "cuda", "cuda:1", ...; None or "auto": CUDA when present, else CPU.
        dtype: "float32", "bfloat16", "float16"; None or "auto": bf16 on a GPU that has it,
            else fp32.
        batch_size: Most sequences (or packed pieces) a forward pass takes; halved on
            out-of-memory.
        memory_budget: Bytes of activations a causal model's pass may use; None: half the
            GPU's free memory, or a fixed CPU budget.
        cache_dir: Where a GGUF file is kept dequantized; None: $FACTPROBE_CACHE/gguf/.

    Returns:
        The Scorer (HF causal or masked, an OpenAI-compatible client, or a plugin's); its
        `identity` names the weights and the dtype, as run.json records them.

    Raises:
        SpecError: The spec names nothing loadable (no such file or folder, no config or
            weights, not a model), in one line.
        ValueError: An unknown dtype, or CUDA asked for where torch sees none.
    """
    spec = check_spec(parse_spec(spec) if isinstance(spec, str) else spec)
    options = LoadOptions(device, dtype, batch_size, memory_budget, cache_dir)
    return registered()[spec.kind].load(spec, options)

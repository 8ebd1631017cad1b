"""Backends `hf:PATH_OR_NAME` (a transformers checkpoint, causal or masked as its config says)
and `hf-mlm:PATH_OR_NAME` (masked whatever the config says), and the loading through
transformers that the gguf backend shares."""

from __future__ import annotations

import hashlib
import re
import struct
from contextlib import contextmanager
from pathlib import Path

from ..gguf_cache import is_gguf
from ..scorer import Scorer
from .base import Backend, LoadOptions, ModelSpec, SpecError

# A Hugging Face hub id: NAME or OWNER/NAME of letters, digits, "-", "_" and "." (what
# transformers asks of a name that is not a folder here).
HUB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?")
WEIGHTS = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.bin.index.json")


class HF(Backend):
    name = "hf"
    target = "PATH_OR_NAME"
    summary = "transformers checkpoint (causal or masked, from its config)"
    masked = False  # True: a masked LM whatever its config says

    @classmethod
    def check(cls, spec: ModelSpec) -> None:
        """A target that is here is a model folder (config.json and weights); one that looks
        like a path must be here; anything else must be a hub name."""
        path = Path(spec.target)
        if path.is_dir():
            if not (path / "config.json").is_file():
                raise SpecError(f"model spec {spec.raw!r}: {spec.target} is not a model folder (no config.json)")
            if not any(next(path.glob(pattern), None) for pattern in WEIGHTS):
                raise SpecError(f"model spec {spec.raw!r}: {spec.target} has a config.json but no weights "
                                f"({', '.join(WEIGHTS)})")
        elif path.exists():
            hint = f"; for a GGUF file write gguf:{spec.target}" if is_gguf(path) else ""
            raise SpecError(f"model spec {spec.raw!r}: {spec.target} is a file, not a model folder "
                            f"({spec.kind}: takes a folder with config.json{hint})")
        elif spec.target.startswith(("/", ".", "~")) or "\\" in spec.target or spec.target.count("/") > 1:
            raise SpecError(f"model spec {spec.raw!r}: no such model folder {spec.target}")
        elif not HUB_NAME.fullmatch(spec.target):
            raise SpecError(f"model spec {spec.raw!r}: {spec.target} is neither a folder here nor a hub name "
                            "(NAME or OWNER/NAME)")

    @classmethod
    def load(cls, spec: ModelSpec, options: LoadOptions) -> Scorer:
        device, dtype = placement(options)
        with load_errors(spec):
            return from_pretrained(spec.target, f"hf:{spec.target}@{fingerprint(spec.target)}", device, dtype,
                                   options, masked=cls.masked)


class HFMasked(HF):
    name = "hf-mlm"
    summary = "force the masked-LM backend"
    masked = True


def placement(options: LoadOptions):
    """(device, dtype) for torch, as options ask or the machine offers (scoring/device.py):
    ValueError for an unknown dtype or a device not here."""
    from transformers.utils import logging as hf_logging

    from ..device import choose_device, choose_dtype

    hf_logging.disable_progress_bar()  # a bar per weight file is noise next to our own progress
    device = choose_device(options.device)
    return device, choose_dtype(device, options.dtype)


@contextmanager
def load_errors(spec: ModelSpec):
    """transformers' "not a model", "no such repo", "bad file" and a GGUF file cut short
    (struct.error) as a SpecError of one line naming the spec."""
    try:
        yield
    except (OSError, ValueError, struct.error) as error:
        if isinstance(error, SpecError):
            raise
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if isinstance(error, struct.error):
            first = f"the file is cut short or not a model ({first})"
        raise SpecError(f"model spec {spec.raw!r}: cannot load it: {first}") from error


def from_pretrained(source: str, identity: str, device, dtype, options: LoadOptions, *, masked: bool = False) -> Scorer:
    """The checkpoint in `source` (a folder or hub name) as a causal or masked scorer; `identity`
    names the weights, and the dtype is added to it."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    from ..device import dtype_name

    config = AutoConfig.from_pretrained(source)
    masked = masked or any(a.endswith("ForMaskedLM") for a in (config.architectures or []))
    model_class = AutoModelForMaskedLM if masked else AutoModelForCausalLM
    model = model_class.from_pretrained(source, dtype=dtype).to(device)
    tokenizer = AutoTokenizer.from_pretrained(source)
    identity = f"{identity}/{dtype_name(dtype)}"
    if masked:
        from ..hf_masked import HFMaskedScorer

        return HFMaskedScorer(model, tokenizer, identity=identity, device=device, batch_size=options.batch_size)
    from ..hf_causal import HFCausalScorer

    return HFCausalScorer(model, tokenizer, identity=identity, device=device, batch_size=options.batch_size,
                          memory_budget=options.memory_budget)


def fingerprint(target: str) -> str:
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

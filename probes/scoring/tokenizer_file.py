"""A model's tokenizer as one `tokenizer.json` file, for indexes that count in the model's own tokens.

index/ reads tokens with the `tokenizers` library only and never loads a model, so the model
spec is resolved here: a GGUF's tokenizer is assembled by transformers (as the scorer loads it,
`AutoTokenizer.from_pretrained(folder, gguf_file=...)`) and saved once under
`<cache>/tokenizers/<stem>-<sha256 prefix>/`, without converting the weights; a converted GGUF
folder that already holds one is used as it is; an hf: folder's own file is used.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ...kg.identity import file_sha256
from .gguf_cache import default_cache_dir, is_gguf
from .specs import SpecError, check_spec, parse_spec

TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class TokenizerFile:
    path: Path  # a tokenizer.json
    name: str  # what indexes record: the spec's model name (the GGUF's or folder's stem)


def tokenizer_file(spec_text: str, cache_dir: str | Path | None = None) -> TokenizerFile:
    """The tokenizer.json of the model `spec_text` names. SpecError (one line) when the spec is
    not understood, names no file, or its tokenizer cannot be saved as one file."""
    spec = check_spec(parse_spec(spec_text))
    target = Path(spec.target)
    if spec.kind == "gguf" or is_gguf(target):
        return TokenizerFile(_from_gguf(target, Path(cache_dir) if cache_dir else default_cache_dir()),
                             target.stem)
    if spec.kind in ("hf", "hf-mlm") and target.is_dir():
        found = target / TOKENIZER_FILE
        if not found.is_file():
            raise SpecError(f"{target}: no {TOKENIZER_FILE} (a fast tokenizer is needed to count in tokens)")
        return TokenizerFile(found, target.name)
    raise SpecError(f"model spec {spec_text!r}: counting in tokens needs a local GGUF file or model folder")


def _from_gguf(path: Path, cache: Path) -> Path:
    digest = file_sha256(path)
    converted = cache / "gguf" / f"{path.stem}-{digest[:16]}" / TOKENIZER_FILE
    if converted.is_file() and (converted.parent / ".factprobe-complete").exists():
        return converted
    folder = cache / "tokenizers" / f"{path.stem}-{digest[:16]}"
    saved = folder / TOKENIZER_FILE
    if saved.is_file():
        return saved
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    staging = folder.with_name(folder.name + ".partial")  # renamed in whole: a kill leaves no half file
    shutil.rmtree(staging, ignore_errors=True)
    tokenizer.save_pretrained(staging)
    if not (staging / TOKENIZER_FILE).is_file():
        shutil.rmtree(staging, ignore_errors=True)
        raise SpecError(f"{path}: its tokenizer has no fast form to save as {TOKENIZER_FILE}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    return saved

"""Which tokenizer built an index folder, and refusing one that does not match.

Our own folders record the tokenizer in a manifest (`factprobe-index.json`, written by the token
backend); infini-gram's published folders say it only in their name, its last part:
v4_dolma-v1_7_llama, v4_rpj_llama_s4 (a shard-count suffix after it), v4_pileval_gpt2.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .files import LayoutError

MANIFEST = "factprobe-index.json"
TOKENS = "tokens"  # our folders keep the model-token shards here, beside the manifest
_PUBLISHED = re.compile(r"^v\d+_(?P<body>.+)$")
_SHARDS = re.compile(r"^s\d+$")
# A family's name as infini-gram uses it, and names of tokenizers in that family that share the
# family's word but not its vocabulary.
_NOT_IN_FAMILY = {"llama": ("llama3", "llama31", "llama32", "llama33", "llama4")}


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _manifest(folder: Path) -> dict | None:
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise LayoutError(f"{path}: not readable JSON ({error})") from None
    if not isinstance(record, dict):
        raise LayoutError(f"{path}: not a JSON object")
    return record


def _manifest_tokenizer(folder: Path) -> tuple[str | None, str | None] | None:
    """(name, sha256) from our manifest, or None where the folder has none."""
    record = _manifest(folder)
    if record is None:
        return None
    tokenizer = record.get("tokenizer")
    if isinstance(tokenizer, str):
        return tokenizer, record.get("tokenizer_sha256")
    if isinstance(tokenizer, dict) and isinstance(tokenizer.get("name"), str):
        return tokenizer["name"], tokenizer.get("sha256")
    raise LayoutError(f"{folder / MANIFEST}: no tokenizer name recorded")


def token_folder(folder: str | Path) -> Path:
    """Where the model-token shards of an index folder lie: `tokens/` in one of ours, the folder
    itself in one of infini-gram's."""
    folder = Path(folder)
    if (folder / MANIFEST).is_file() and (folder / TOKENS).is_dir():
        return folder / TOKENS
    return folder


def tokenizer_family(folder: str | Path) -> str | None:
    """The tokenizer the folder was built with: the manifest's name for our folders, the last part
    of the name (a trailing _sN shard count aside) for infini-gram's published ones, else None."""
    folder = Path(folder)
    recorded = _manifest_tokenizer(folder)
    if recorded is not None:
        return recorded[0]
    return published_family(folder.resolve().name)


def published_family(name: str) -> str | None:
    """The tokenizer family in the name of one of infini-gram's indexes (a folder or an API
    index name: v4_pileval_gpt2 -> gpt2, v4_rpj_llama_s4 -> llama), or None."""
    match = _PUBLISHED.match(name)
    if match is None:
        return None
    parts = match.group("body").split("_")
    while parts and _SHARDS.match(parts[-1]):
        parts.pop()
    return parts[-1] if len(parts) >= 2 else None


def family_matches(family: str, tokenizer_name: str) -> bool:
    """A tokenizer's name (a hub id, a file, a model spec) belongs to a published family."""
    want, name = _squash(family), _squash(tokenizer_name)
    if not want or want not in name:
        return False
    return not any(other in name for other in _NOT_IN_FAMILY.get(want, ()))


def check_tokenizer(folder: str | Path, tokenizer_name: str,
                    tokenizer_sha256: str | None = None) -> None:
    """LayoutError unless `tokenizer_name` is the one that built the folder: the manifest's name
    (and hash, where both are known) for our folders, the family in a published folder's name."""
    folder = Path(folder)
    recorded = _manifest_tokenizer(folder)
    if recorded is not None:
        name, sha = recorded
        if name != tokenizer_name:
            raise LayoutError(f"{folder}: built with tokenizer {name!r}, not {tokenizer_name!r}")
        if tokenizer_sha256 and sha and sha != tokenizer_sha256:
            raise LayoutError(f"{folder}: built with tokenizer {name!r} of sha256 {sha[:12]}..., "
                              f"not this one ({tokenizer_sha256[:12]}...)")
        return
    family = tokenizer_family(folder)
    if family is None:
        raise LayoutError(f"{folder}: no {MANIFEST} and a name that does not end in a tokenizer "
                          f"family (infini-gram's folders are named like v4_pileval_gpt2)")
    if not family_matches(family, tokenizer_name):
        raise LayoutError(f"{folder}: built with the {family} tokenizer (by its name), not "
                          f"{tokenizer_name!r}")

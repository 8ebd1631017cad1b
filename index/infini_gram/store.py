"""Building a token index folder: the corpus in the model's own tokens, a shard at a time.

DIR holds `tokens/` (every document's searchable text in the model's tokens, infini-gram's
layout), `text/` (the normalized text, one byte a token, of the documents the tokens cannot
count exactly: vocabulary.token_regular says which; Chinese, Japanese, Thai text, odd casing,
normalization that is more than lowering), a copy of the tokenizer.json, `shard-N.json` per
shard (its document ids, and which of them `text/` counts) and `factprobe-index.json`, the
manifest: settings, tokenizer name and sha256, token width, shards and documents. A shard's
files are written first and the manifest last, so an interrupted build resumes at the next
shard; files the manifest does not account for make the folder refused, never used or deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..corpus import Document
from ..text import normalize
from .layout import LayoutError, write_shard
from .vocabulary import Vocabulary, token_regular

MANIFEST = "factprobe-index.json"
TOKENIZER = "tokenizer.json"
FORMAT = "factprobe-infini-gram-1"
SHARD_TOKENS = 50_000_000  # a shard is cut at this many tokens, or at `batch` documents
ENCODE_CHARS = 4_000_000  # characters encoded in one encode_batch call


class TokenIndexError(LayoutError):
    """A token index folder that cannot be used as asked (half-written, other tokenizer, other settings)."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _write_json(path: Path, data: dict) -> None:
    temp = path.with_name(path.name + ".partial")
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


@dataclass(frozen=True)
class Manifest:
    folder: Path
    data: dict

    @property
    def shards(self) -> list[dict]:
        return self.data["shards"]

    @property
    def documents(self) -> int:
        return sum(s["documents"] for s in self.shards)


def read_manifest(folder: Path) -> Manifest | None:
    """The folder's manifest, checked against its files; None where the folder holds nothing
    of ours. TokenIndexError (one line) for a folder in any other state."""
    path = folder / MANIFEST
    if not path.exists():
        if folder.is_dir() and any(folder.iterdir()):
            raise TokenIndexError(f"{folder}: no {MANIFEST} but the folder is not empty; "
                                  "use an empty or new folder for a token index")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}")
        shards = data["shards"]
    except (ValueError, KeyError, TypeError) as error:
        raise TokenIndexError(f"{path}: not a factprobe token index manifest ({error})") from None
    manifest = Manifest(folder, data)
    texts = sum(1 for s in shards if s.get("text_shard") is not None)
    expected = {"tokens": len(shards), "text": texts}
    for part, count in expected.items():
        for shard in range(count + 1):
            names = [f"tokenized.{shard}", f"offset.{shard}", f"table.{shard}"]
            present = [(folder / part / n).exists() for n in names]
            if shard < count and not all(present):
                raise TokenIndexError(f"{folder / part}: shard {shard} is missing a file the manifest "
                                      "counts on; the index is damaged")
            if shard == count and any(present):
                raise TokenIndexError(f"{folder / part}: shard {shard} was written but the manifest "
                                      f"lists {count}: a build was interrupted; remove those files "
                                      "or use a new folder")
    for n in range(len(shards) + 1):
        side = folder / f"shard-{n}.json"
        if (n < len(shards)) != side.exists():
            raise TokenIndexError(f"{side}: does not match the manifest's {len(shards)} shards; "
                                  "a build was interrupted or the folder damaged")
    if not (folder / TOKENIZER).is_file():
        raise TokenIndexError(f"{folder}: no {TOKENIZER}; the index is damaged")
    return manifest


class TokenIndexWriter:
    """The FrequencyIndex methods `corpus index` uses, for a token index folder."""

    def __init__(self, folder: str | Path, tokenizer: str | Path, tokenizer_name: str,
                 convert=None) -> None:
        self.folder = Path(folder).absolute()  # the indexer runs in a folder of its own: no relative paths
        self.tokenizer_path = Path(tokenizer)
        self.convert = convert
        self.manifest = read_manifest(self.folder)
        digest = sha256_of(self.tokenizer_path)
        self.tokenizer = {"name": tokenizer_name, "sha256": digest, "file": TOKENIZER}
        if self.manifest is not None:
            recorded = self.manifest.data["tokenizer"]
            if recorded.get("sha256") != digest:
                raise TokenIndexError(f"{self.folder} was built with {recorded.get('name')}'s tokenizer "
                                      f"(sha256 {str(recorded.get('sha256'))[:12]}); {tokenizer_name}'s "
                                      f"is another ({digest[:12]}): use a new folder")
        self.vocabulary = Vocabulary(self.tokenizer_path)
        self._settings: dict | None = self.manifest.data["settings"] if self.manifest else None
        self._ids: set[str] | None = None

    def settings(self) -> dict | None:
        return self._settings

    def bind_settings(self, settings: dict) -> None:
        from ..embedded import IndexSettingsError

        if self._settings is None:
            self._settings = json.loads(json.dumps(settings))
        elif self._settings != json.loads(json.dumps(settings)):
            raise IndexSettingsError(f"{self.folder} was built with {self._settings}; refusing to add "
                                     f"documents with {settings}. Use a new folder for other settings")

    def track_pairs(self, pairs) -> int:
        return 0  # pairs are intersected at query time; nothing is tracked while indexing

    def document_count(self) -> int:
        return self.manifest.documents if self.manifest else 0

    def _known(self) -> set[str]:
        if self._ids is None:
            self._ids = set()
            for n in range(len(self.manifest.shards) if self.manifest else 0):
                side = json.loads((self.folder / f"shard-{n}.json").read_text(encoding="utf-8"))
                self._ids.update(side["ids"])
        return self._ids

    def add_documents(self, documents: Iterable[Document], *, batch: int = 1_000_000) -> Iterator[int]:
        """Yields the documents added after each shard is written (a document id already indexed
        is skipped)."""
        known = self._known()
        pending: list[Document] = []
        chars = 0
        shard_docs: list[Document] = []
        shard_tokens: list[np.ndarray] = []
        shard_text: list[int] = []
        tokens = 0

        def encode() -> None:
            nonlocal tokens
            texts = [d.searchable for d in pending]
            for document, text, encoding in zip(pending, texts, self.vocabulary.encode_batch(texts)):
                ids = np.array(encoding.ids, dtype=np.int64)
                if not token_regular(text, np.array(encoding.offsets, dtype=np.int64), self.convert):
                    shard_text.append(len(shard_docs))
                shard_docs.append(document)
                shard_tokens.append(ids)
                tokens += len(ids)
            pending.clear()

        for document in documents:
            if document.id in known:
                continue
            known.add(document.id)
            pending.append(document)
            chars += len(document.text) + len(document.title)
            if chars >= ENCODE_CHARS or len(shard_docs) + len(pending) >= batch:
                encode()
                chars = 0
            if shard_docs and (tokens >= SHARD_TOKENS or len(shard_docs) >= batch):
                yield self._write(shard_docs, shard_tokens, shard_text)
                shard_docs, shard_tokens, shard_text, tokens = [], [], [], 0
        if pending:
            encode()
        if shard_docs:
            yield self._write(shard_docs, shard_tokens, shard_text)

    def _write(self, documents: list[Document], tokens: list[np.ndarray], text: list[int]) -> int:
        if self.manifest is not None:
            return self._write_shard(documents, tokens, text)
        existed = self.folder.exists()
        try:
            return self._write_shard(documents, tokens, text)
        except BaseException:
            # the first shard failed: what this run made goes, so no half folder is left (a folder
            # that was there stays, emptied of our files only)
            if self.manifest is None:
                for part in ("tokens", "text"):
                    shutil.rmtree(self.folder / part, ignore_errors=True)
                for name in (TOKENIZER, "shard-0.json", MANIFEST + ".partial"):
                    (self.folder / name).unlink(missing_ok=True)
                if not existed:
                    try:
                        self.folder.rmdir()
                    except OSError:
                        pass
            raise

    def _write_shard(self, documents: list[Document], tokens: list[np.ndarray], text: list[int]) -> int:
        shards = list(self.manifest.shards) if self.manifest else []
        number = len(shards)
        first = sum(s["documents"] for s in shards)
        if self.manifest is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.tokenizer_path, self.folder / TOKENIZER)
        width = self.vocabulary.token_width
        text_shard = None
        if text:
            text_shard = sum(1 for s in shards if s.get("text_shard") is not None)
            convert = self.convert or (lambda t: t)
            normalized = (np.frombuffer(normalize(convert(documents[i].searchable)).encode("utf-8", "surrogatepass"),
                                        dtype=np.uint8) for i in text)
            write_shard(self.folder / "text", text_shard, normalized, 1)
        info = write_shard(self.folder / "tokens", number, tokens, width, cpus=max(1, min(2, os.cpu_count() or 1)))
        _write_json(self.folder / f"shard-{number}.json",
                    {"first": first, "ids": [d.id for d in documents], "text_shard": text_shard,
                     "text_documents": text})
        shards.append({"documents": len(documents), "tokens": info.tokens, "text_shard": text_shard,
                       "text_documents": len(text), "bytes": info.bytes})
        data = {"format": FORMAT, "settings": self._settings, "tokenizer": self.tokenizer, "token_width": width,
                "shards": shards, "documents": first + len(documents),
                "tokens": sum(s["tokens"] for s in shards),
                "counted": {"tokens": "documents whose text is token-regular (index/infini_gram/vocabulary.py): "
                                      "each name's surface forms in the model's tokens",
                            "text": "every other document (scripts without spaces, odd casing, normalization "
                                    "beyond lowering, words split inside a token): the name key on the "
                                    "normalized text's UTF-8 bytes in text/"}}
        _write_json(self.folder / MANIFEST, data)
        self.manifest = Manifest(self.folder, data)
        return len(documents)

    def close(self) -> None:
        pass

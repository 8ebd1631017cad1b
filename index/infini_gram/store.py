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

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ...kg.identity import file_sha256
from ..corpus import Document
from ..text import normalize
from .layout import LayoutError, write_shard
from .vocabulary import Vocabulary, token_regular

MANIFEST = "factprobe-index.json"
TOKENIZER = "tokenizer.json"
FORMAT = "factprobe-infini-gram-1"
SHARD_TOKENS = 50_000_000  # a shard is cut at this many tokens, or at `batch` documents
ENCODE_CHARS = 1_000_000  # characters encoded in one encode_batch call
PIECE_CHARS = 200_000  # a longer text is encoded in pieces of about this many characters
PENDING_TEXT = ".pending-text"  # where a shard's text part waits for its token part


@dataclass
class _Pending:
    """A shard being gathered: document ids, token ids, and the text-counted documents (their
    positions in the shard and normalized UTF-8 bytes)."""

    ids: list[str]
    tokens: list[np.ndarray]
    text: list[int]
    normalized: list[np.ndarray]

    @property
    def size(self) -> int:
        return sum(len(t) for t in self.tokens)


def piece_cuts(text: str, size: int) -> list[tuple[int, int]]:
    """(begin, end) pieces of `text` of about `size` characters, each cut just before a space
    that has a non-space character on both sides; a piece with no such space is cut where it
    reaches 2 * size (its document is then likely counted on its text: vocabulary.token_regular)."""
    if len(text) <= size:
        return [(0, len(text))]
    out, begin = [], 0
    while len(text) - begin > size:
        at = begin + size
        cut = -1
        while at < min(len(text) - 1, begin + 2 * size):
            at = text.find(" ", at, begin + 2 * size)
            if at == -1:
                break
            if not text[at - 1].isspace() and not text[at + 1].isspace():
                cut = at
                break
            at += 1
        if cut <= begin:
            cut = min(len(text), begin + 2 * size)
        out.append((begin, cut))
        begin = cut
    out.append((begin, len(text)))
    return out


class TokenIndexError(LayoutError):
    """A token index folder that cannot be used as asked (half-written, other tokenizer, other settings)."""


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
        digest = file_sha256(self.tokenizer_path)
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
        is skipped). A shard holds `batch` documents or SHARD_TOKENS tokens, whichever comes first;
        only token ids (and the normalized text of the documents the tokens cannot count) are kept
        until it is written."""
        known = self._known()
        pending: list[Document] = []
        chars = 0
        shard = _Pending([], [], [], [])
        dtype = np.uint16 if self.vocabulary.token_width == 2 else np.uint32

        def encode() -> None:
            texts = [d.searchable for d in pending]
            for document, text, (ids, offsets) in zip(pending, texts, self._encode(texts)):
                if not token_regular(text, offsets, self.convert):
                    converted = self.convert(text) if self.convert else text
                    shard.text.append(len(shard.ids))
                    shard.normalized.append(np.frombuffer(normalize(converted).encode("utf-8", "surrogatepass"),
                                                          dtype=np.uint8))
                shard.ids.append(document.id)
                shard.tokens.append(ids.astype(dtype))
            pending.clear()

        for document in documents:
            if document.id in known:
                continue
            known.add(document.id)
            pending.append(document)
            chars += len(document.text) + len(document.title)
            if chars >= ENCODE_CHARS or len(shard.ids) + len(pending) >= batch:
                encode()
                chars = 0
            if shard.ids and (shard.size >= SHARD_TOKENS or len(shard.ids) >= batch):
                yield self._write(shard)
                shard = _Pending([], [], [], [])
        if pending:
            encode()
        if shard.ids:
            yield self._write(shard)

    def _encode(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Token ids and character offsets per text. A long text is encoded in pieces cut before
        a single space between two other characters (where every pre-tokenizer here starts a
        new word), so memory stays bounded by PIECE_CHARS, not by the longest document."""
        pieces, owners, shifts = [], [], []
        for k, text in enumerate(texts):
            for begin, end in piece_cuts(text, PIECE_CHARS):
                pieces.append(text[begin:end])
                owners.append(k)
                shifts.append(begin)
        ids: list[list[np.ndarray]] = [[] for _ in texts]
        offsets: list[list[np.ndarray]] = [[] for _ in texts]
        start = 0
        while start < len(pieces):
            stop, size = start, 0
            while stop < len(pieces) and (stop == start or size + len(pieces[stop]) <= ENCODE_CHARS):
                size += len(pieces[stop])
                stop += 1
            for i, encoding in zip(range(start, stop), self.vocabulary.encode_batch(pieces[start:stop])):
                ids[owners[i]].append(np.array(encoding.ids, dtype=np.int64))
                offsets[owners[i]].append(np.array(encoding.offsets, dtype=np.int64).reshape(-1, 2) + shifts[i])
            start = stop
        return [(np.concatenate(i) if i else np.zeros(0, np.int64),
                 np.concatenate(o) if o else np.zeros((0, 2), np.int64)) for i, o in zip(ids, offsets)]

    def _write(self, shard: _Pending) -> int:
        if self.manifest is not None:
            return self._write_shard(shard)
        existed = self.folder.exists()
        try:
            return self._write_shard(shard)
        except BaseException:
            # the first shard failed: what this run made goes, so no half folder is left (a folder
            # that was there stays, emptied of our files only)
            if self.manifest is None:
                for part in ("tokens", "text", PENDING_TEXT):
                    shutil.rmtree(self.folder / part, ignore_errors=True)
                for name in (TOKENIZER, "shard-0.json", MANIFEST + ".partial"):
                    (self.folder / name).unlink(missing_ok=True)
                if not existed:
                    try:
                        self.folder.rmdir()
                    except OSError:
                        pass
            raise

    def _write_shard(self, shard: _Pending) -> int:
        shards = list(self.manifest.shards) if self.manifest else []
        number = len(shards)
        first = sum(s["documents"] for s in shards)
        if self.manifest is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.tokenizer_path, self.folder / TOKENIZER)
        width = self.vocabulary.token_width
        text_shard = None
        staged = self.folder / PENDING_TEXT  # the text shard waits here until the token shard is in
        shutil.rmtree(staged, ignore_errors=True)
        if shard.text:
            text_shard = sum(1 for s in shards if s.get("text_shard") is not None)
            write_shard(staged, text_shard, shard.normalized, 1)
        info = write_shard(self.folder / "tokens", number, shard.tokens, width,
                           cpus=max(1, min(2, os.cpu_count() or 1)))
        if shard.text:
            (self.folder / "text").mkdir(exist_ok=True)
            for name in (f"tokenized.{text_shard}", f"offset.{text_shard}", f"table.{text_shard}"):
                os.replace(staged / name, self.folder / "text" / name)
            shutil.rmtree(staged, ignore_errors=True)
        _write_json(self.folder / f"shard-{number}.json",
                    {"first": first, "ids": shard.ids, "text_shard": text_shard, "text_documents": shard.text})
        shards.append({"documents": len(shard.ids), "tokens": info.tokens, "text_shard": text_shard,
                       "text_documents": len(shard.text), "bytes": info.bytes})
        data = {"format": FORMAT, "settings": self._settings, "tokenizer": self.tokenizer, "token_width": width,
                "shards": shards, "documents": first + len(shard.ids),
                "tokens": sum(s["tokens"] for s in shards),
                "counted": {"tokens": "documents whose text is token-regular (index/infini_gram/vocabulary.py): "
                                      "each name's surface forms in the model's tokens",
                            "text": "every other document (scripts without spaces, odd casing, normalization "
                                    "beyond lowering, words split inside a token): the name key on the "
                                    "normalized text's UTF-8 bytes in text/"}}
        _write_json(self.folder / MANIFEST, data)
        self.manifest = Manifest(self.folder, data)
        return len(shard.ids)

    def close(self) -> None:
        pass

"""Which input an ingest is reading: every byte of the file, hashed as it is read.

An ingest records with each checkpoint the SHA-256 of the file's first N bytes (N: how far its
reader had read; for a compressed dump, the compressed bytes as they are on disk), and with a
complete run the hash of the whole file. So:
- an input is "already ingested" only when a complete run read a file of the very same bytes:
  the file is hashed whole before it is skipped;
- a resume continues only once the file's first N bytes hash to what the checkpoint recorded:
  the bytes the rest is read from are the bytes the earlier run stopped in. Otherwise (and when
  an earlier run recorded no hash) the input is read again from its start, and the report says
  why (`IngestReport.changed`).
A new input costs no extra read: its reader feeds every block it reads to an InputDigest.
Size is the cheap first check: the store's slot for an input is keyed by its size, head and
tail (readers.fingerprint), so a file of another size never costs a hash up front. The
modification time decides nothing: a copy changes it without changing a byte, while cp -p,
tar, rsync and touch -r put it back after an edit.
SHA-256, not blake2b: with the CPU's SHA instructions (x86 SHA-NI, ARMv8) OpenSSL hashes it
about twice as fast (bench/input_hash.py), and `sha256sum FILE` shows the same hex digest.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .store import IngestState, Store

ALGORITHM = "sha256"
_BLOCK = 4 << 20


def file_sha256(path: str | Path) -> str:
    """The hex SHA-256 of a whole file's bytes, as `sha256sum` prints it: the one hash of a file
    that every layer records (a probe set, a tokenizer, a GGUF file, an index's tokenizer copy)."""
    digest = hashlib.new(ALGORITHM)
    with open(path, "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


class InputDigest:
    """A running hash of a file's bytes from its start. Readers `feed` each block as they read
    it, with the file offset after it; bytes already hashed are skipped, so a resume whose
    prefix was verified may read from anywhere inside it. A block that starts past the bytes
    hashed so far leaves a gap: the digest then covers no prefix (`at` gives "") and `finish`
    hashes the file again. `at(offset)` is the digest of the first `offset` bytes, kept for
    each block end until the writer has taken it (the reader runs ahead in its own thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._start_over()

    def _start_over(self) -> None:
        self._hash = hashlib.new(ALGORITHM)
        self.bytes = 0
        self.gap = False
        self._marks: dict[int, str] = {}

    def feed(self, block: bytes | memoryview, end: int) -> None:
        if self._update(block, end):
            mark = self.hexdigest()
            with self._lock:
                self._marks[end] = mark

    def _update(self, block: bytes | memoryview, end: int) -> bool:
        start = end - len(block)
        if self.gap or end <= self.bytes:
            return False
        if start > self.bytes:
            self.gap = True
            return False
        self._hash.update(memoryview(block)[self.bytes - start:])
        self.bytes = end
        return True

    def hexdigest(self) -> str:
        return f"{ALGORITHM}:{self._hash.hexdigest()}"

    def at(self, offset: int) -> str:
        """The digest of the file's first `offset` bytes if a block ended there ("" if not);
        marks before `offset` are dropped (the writer takes them in order)."""
        with self._lock:
            mark = "" if self.gap else self._marks.get(offset, "")
            for end in [e for e in self._marks if e < offset]:
                del self._marks[end]
        return mark

    def read(self, path: Path, limit: int | None = None, progress: Callable[[int], None] | None = None) -> None:
        """Hash the file on from `bytes` (from its start after a gap), up to `limit` bytes or
        its end."""
        if self.gap:  # the prefix was never seen whole
            self._start_over()
        with open(path, "rb") as f:
            f.seek(self.bytes)
            while limit is None or self.bytes < limit:
                block = f.read(_BLOCK if limit is None else min(_BLOCK, limit - self.bytes))
                if not block:
                    break
                self._update(block, self.bytes + len(block))
                if progress:
                    progress(self.bytes)
        with self._lock:  # where a resumed reader's first chunk may end
            self._marks[self.bytes] = self.hexdigest()

    def finish(self, path: Path) -> str:
        """The whole file's digest: what the reader left unread (or skipped) is read here."""
        self.read(path)
        return self.hexdigest()


@dataclass(frozen=True)
class Recognised:
    """What an ingest is to do with an input: `done` (a complete run read these very bytes),
    else read from `state`'s position with `digest` fed on by the reader. `changed` says why an
    earlier run's records of this slot were dropped and the input is read from its start."""

    state: IngestState
    digest: InputDigest
    done: bool = False
    changed: str = ""


def recognise(store: Store, key: str, source: str, path: Path, *, restart: bool = False,
              progress: Callable[[int], None] | None = None) -> Recognised:
    """Look the input up in the store under `key` and check its bytes against the record:
    the whole file against a complete run's digest, the prefix against a checkpoint's. A
    mismatch starts the slot over (as --restart does). `progress` gets the bytes hashed."""
    state = store.begin_ingest(key, source, str(path.resolve()), restart=restart)
    digest = InputDigest()
    if not (state.complete or state.records_done or state.position):
        return Recognised(state, digest)
    why = mismatch(state, path, digest, progress)
    if not why:
        return Recognised(state, digest, done=state.complete)
    state = store.begin_ingest(key, source, str(path.resolve()), restart=True)
    return Recognised(state, InputDigest(), changed=why)


def mismatch(state: IngestState, path: Path, digest: InputDigest,
             progress: Callable[[int], None] | None = None) -> str:
    """Why `path` is not the input `state` recorded ("" when it is): a complete state's file
    is hashed whole, a partial one's up to its checkpoint. `digest` is left fed that far."""
    if not state.digest:
        return "no hash of its bytes was recorded by the earlier run"
    size = path.stat().st_size
    if state.digest_bytes > size:
        return f"it is shorter than the {state.digest_bytes} bytes the earlier run read"
    digest.read(path, None if state.complete else state.digest_bytes, progress)
    if state.complete and digest.bytes != state.digest_bytes:
        return f"its size is not the {state.digest_bytes} bytes the earlier run read"
    if digest.hexdigest() != state.digest:
        where = "its bytes" if state.complete else f"its first {state.digest_bytes} bytes"
        return f"{where} differ from those the earlier run read"
    return ""

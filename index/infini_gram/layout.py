"""Reading an index folder in infini-gram's layout: n-gram counts, their positions by document,
and the tokens around them.

Positions come from the suffix-array range read with numpy and mapped to documents by a binary
search in the offsets, never from infini-gram's windowed AND (`count_cnf`), which drops matches
whose window crosses a document boundary.
"""

from __future__ import annotations

import mmap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .files import (
    LayoutError,
    ShardFiles,
    check_offsets,
    check_sizes,
    decode_pointers,
    detect_width,
    offset_path,
    separator,
    shard_count,
    table_path,
    token_dtype,
    tokenized_path,
)
from .naming import check_tokenizer, token_folder, tokenizer_family
from .suffix_array import ShardInfo, discard_unfinished_shard, verify_suffix_array, write_shard

__all__ = [
    "LayoutError", "Occurrences", "ShardInfo", "TokenIndexFolder", "check_tokenizer",
    "discard_unfinished_shard", "token_folder", "tokenizer_family", "verify_suffix_array", "write_shard",
]


@dataclass(frozen=True)
class Occurrences:
    """Where an n-gram occurs: global document ordinal (shard 0's documents first) and the token
    index of its first token inside that document (0 = first token after the separator), sorted
    by (doc, at)."""

    doc: np.ndarray
    at: np.ndarray

    def __len__(self) -> int:
        return int(self.doc.shape[0])

    def documents(self) -> np.ndarray:
        """The distinct documents, ascending."""
        return np.unique(self.doc)


def _map(path: Path) -> mmap.mmap:
    with open(path, "rb") as handle:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


class _Shard:
    def __init__(self, folder: Path, shard: int, token_width: int, first_doc: int) -> None:
        self.files: ShardFiles = check_sizes(folder, shard, token_width)
        self.width = token_width
        self.first_doc = first_doc
        self.ptr = self.files.pointer_width
        self.data = _map(tokenized_path(folder, shard))
        self.table = _map(table_path(folder, shard))
        self.offsets_map = _map(offset_path(folder, shard))
        self.tokens = np.frombuffer(self.data, dtype=token_dtype(token_width))
        self.offsets = np.frombuffer(self.offsets_map, dtype="<u8")
        self.table_bytes = np.frombuffer(self.table, dtype=np.uint8)
        check_offsets(offset_path(folder, shard), self.offsets, self.tokens, token_width)
        self.positions = self.files.data_bytes // token_width
        self.documents = self.files.documents

    # Offsets stay on disk (a published shard holds hundreds of millions of documents): each
    # lookup reads only the offsets it needs.
    def document_of(self, positions: np.ndarray) -> np.ndarray:
        """The document (ordinal in this shard) holding each token index."""
        at = (np.asarray(positions, dtype=np.int64) * self.width).astype(np.uint64)
        return np.searchsorted(self.offsets, at, side="right").astype(np.int64) - 1

    def starts(self, local: np.ndarray) -> np.ndarray:
        """Token index of each document's first token (just past its separator)."""
        return self.offsets[local].astype(np.int64) // self.width + 1

    def ends(self, local: np.ndarray) -> np.ndarray:
        """Token index just past each document's last token."""
        local = np.asarray(local, dtype=np.int64)
        following = np.minimum(local + 1, self.documents - 1)
        nexts = self.offsets[following].astype(np.int64) // self.width
        return np.where(local + 1 < self.documents, nexts, self.positions)

    def pointer(self, rank: int) -> int:
        return int.from_bytes(self.table[rank * self.ptr:(rank + 1) * self.ptr], "little")

    def rank_range(self, needle: bytes) -> tuple[int, int]:
        """Suffix-array ranks [lo, hi) whose suffix starts with `needle` (byte order, as the
        indexer sorts: a suffix that is a prefix of the needle sorts before it)."""
        span = len(needle)
        lo, hi = 0, self.positions
        above = self.positions  # the lowest rank seen past every match: bounds the second search
        while lo < hi:
            mid = (lo + hi) // 2
            at = self.pointer(mid)
            prefix = self.data[at:at + span]
            if prefix < needle:
                lo = mid + 1
            else:
                if prefix != needle:
                    above = mid
                hi = mid
        first, hi = lo, above
        while lo < hi:
            mid = (lo + hi) // 2
            at = self.pointer(mid)
            if self.data[at:at + span] <= needle:
                lo = mid + 1
            else:
                hi = mid
        return first, lo

    def token_positions(self, lo: int, hi: int) -> np.ndarray:
        raw = self.table_bytes[lo * self.ptr:hi * self.ptr]
        return decode_pointers(raw, self.ptr) // self.width

    def close(self) -> None:
        del self.tokens, self.offsets, self.table_bytes
        for handle in (self.data, self.table, self.offsets_map):
            handle.close()


def _load_engine(folder: Path, token_width: int):
    """infini-gram's C++ engine over the folder, or None where it is not installed or refuses."""
    try:
        from infini_gram.engine import InfiniGramEngine
    except ImportError:
        return None
    dtype = {1: "u8", 2: "u16", 4: "u32"}[token_width]
    try:
        return InfiniGramEngine(index_dir=str(folder), eos_token_id=0,
                                vocab_size=separator(token_width), token_dtype=dtype)
    except Exception:  # noqa: BLE001 - any refusal leaves the numpy search, which is exact too
        return None


class TokenIndexFolder:
    """One folder of shards 0..N-1 in infini-gram's layout, opened read-only."""

    def __init__(self, folder: str | Path, token_width: int | None = None, *,
                 engine: bool = False) -> None:
        """`engine`: count with infini-gram's C++ engine instead of the binary search here. Both
        are exact; the search here measured 0.024 ms a count on the Gutenberg texts where the
        engine took 0.27 ms, so it is the default."""
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise LayoutError(f"{self.folder}: not a folder")
        self.shards = shard_count(self.folder)
        if self.shards == 0:
            raise LayoutError(f"{self.folder}: no tokenized.0 (not an infini-gram index folder)")
        if token_width is None:
            token_width = detect_width(self.folder, 0)
        elif token_width not in (1, 2, 4):
            raise LayoutError(f"{self.folder}: token width {token_width} is not 1, 2 or 4")
        self.token_width = token_width
        self._shards: list[_Shard] = []
        try:
            first = 0
            for shard in range(self.shards):
                opened = _Shard(self.folder, shard, token_width, first)
                self._shards.append(opened)
                first += opened.documents
        except Exception:
            self.close()
            raise
        self.documents = first
        self.tokens = sum(s.positions - s.documents for s in self._shards)
        self._bases = np.array([s.first_doc for s in self._shards], dtype=np.int64)
        self._token_bases = np.cumsum([0] + [s.positions for s in self._shards])[:-1].astype(np.int64)
        self._separator = separator(token_width)
        self._dtype = token_dtype(token_width)
        self._engine = _load_engine(self.folder, token_width) if engine else None

    @property
    def uses_engine(self) -> bool:
        return self._engine is not None

    def __enter__(self) -> TokenIndexFolder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _needle(self, ids: Sequence[int]) -> bytes | None:
        """The query's bytes, or None when no document can hold it (an id past the width)."""
        values = [int(i) for i in ids]
        if not values:
            raise ValueError("an n-gram needs at least one token id")
        if min(values) < 0:
            raise ValueError(f"token ids are not negative: {min(values)}")
        if max(values) >= self._separator:
            return None
        return np.asarray(values, dtype=self._dtype).tobytes()

    def count(self, ids: Sequence[int]) -> int:
        """Occurrences of the n-gram `ids` across all documents."""
        needle = self._needle(ids)
        if needle is None:
            return 0
        if self._engine is not None:
            result = self._engine.count([int(i) for i in ids])
            if "count" in result:
                return int(result["count"])
        total = 0
        for shard in self._shards:
            lo, hi = shard.rank_range(needle)
            total += hi - lo
        return total

    def segments(self, ids: Sequence[int]) -> list[tuple[int, int]]:
        """Per shard, the suffix-array ranks [lo, hi) of the n-gram (infini-gram's `find`)."""
        needle = self._needle(ids)
        if needle is None:
            return [(0, 0) for _ in self._shards]
        return [shard.rank_range(needle) for shard in self._shards]

    def counts(self, queries: Sequence[Sequence[int]]) -> list[int]:
        return [self.count(query) for query in queries]

    def occurrences(self, ids: Sequence[int]) -> Occurrences:
        needle = self._needle(ids)
        docs, ats = [], []
        if needle is not None:
            for shard in self._shards:
                lo, hi = shard.rank_range(needle)
                if hi == lo:
                    continue
                positions = shard.token_positions(lo, hi)
                local = shard.document_of(positions)
                docs.append(local + shard.first_doc)
                ats.append(positions - shard.starts(local))
        if not docs:
            empty = np.zeros(0, dtype=np.int64)
            return Occurrences(empty, empty.copy())
        doc, at = np.concatenate(docs), np.concatenate(ats)
        order = np.lexsort((at, doc))
        return Occurrences(doc[order], at[order])

    def _locate(self, doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per document ordinal: shard number and ordinal inside the shard."""
        doc = np.asarray(doc, dtype=np.int64)
        if doc.size and (doc.min() < 0 or doc.max() >= self.documents):
            raise IndexError(f"document ordinals lie in [0, {self.documents})")
        shard = np.searchsorted(self._bases, doc, side="right") - 1
        return shard, doc - self._bases[shard]

    def _spans(self, doc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per document ordinal: shard, first token index, end token index (in that shard)."""
        shard, local = self._locate(doc)
        starts = np.empty(doc.shape[0], dtype=np.int64)
        ends = np.empty(doc.shape[0], dtype=np.int64)
        for number in np.unique(shard):
            mask = shard == number
            opened = self._shards[int(number)]
            starts[mask] = opened.starts(local[mask])
            ends[mask] = opened.ends(local[mask])
        return shard, starts, ends

    def spans(self, occ: Occurrences) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per occurrence, in one token coordinate across all shards (separators included, so
        documents never touch): where it starts, and where its document's tokens start and end."""
        shard, starts, ends = self._spans(occ.doc)
        base = self._token_bases[shard]
        first = starts + np.asarray(occ.at, dtype=np.int64)
        return base + first, base + starts, base + ends

    def document(self, doc: int) -> np.ndarray:
        shard, starts, ends = self._spans(np.array([doc], dtype=np.int64))
        tokens = self._shards[int(shard[0])].tokens
        return np.array(tokens[int(starts[0]):int(ends[0])], dtype=np.int64)

    def document_lengths(self) -> np.ndarray:
        lengths = []
        for shard in self._shards:
            local = np.arange(shard.documents, dtype=np.int64)
            lengths.append(shard.ends(local) - shard.starts(local))
        return np.concatenate(lengths)

    def neighbours(self, occ: Occurrences, length: int) -> tuple[np.ndarray, np.ndarray]:
        """The token before each occurrence (-1 at its document's start) and the token after its
        `length` tokens (-1 at its document's end)."""
        shard, starts, ends = self._spans(occ.doc)
        first = starts + np.asarray(occ.at, dtype=np.int64)
        before = np.full(first.shape[0], -1, dtype=np.int64)
        after = np.full(first.shape[0], -1, dtype=np.int64)
        for number in np.unique(shard):
            mask = shard == number
            tokens = self._shards[int(number)].tokens
            has_before = mask & (first > starts)
            before[has_before] = tokens[first[has_before] - 1]
            has_after = mask & (first + length < ends)
            after[has_after] = tokens[first[has_after] + length]
        return before, after

    def windows(self, occ: Occurrences, length: int, before: int,
                after: int) -> tuple[list[np.ndarray], np.ndarray]:
        """Up to `before` tokens, the occurrence's `length` tokens and up to `after` tokens, clipped
        to the occurrence's document; and the occurrence's offset inside each window."""
        shard, starts, ends = self._spans(occ.doc)
        first = starts + np.asarray(occ.at, dtype=np.int64)
        lo = np.maximum(starts, first - before)
        hi = np.minimum(ends, first + length + after)
        out = [np.array(self._shards[int(s)].tokens[a:b], dtype=np.int64)
               for s, a, b in zip(shard.tolist(), lo.tolist(), hi.tolist())]
        return out, first - lo

    def close(self) -> None:
        self._engine = None
        for shard in self._shards:
            shard.close()
        self._shards = []

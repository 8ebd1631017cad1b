"""The files of one shard in infini-gram's layout, and the checks every reader and writer shares.

A shard N is three files: `tokenized.N` (each document a separator of 0xFF bytes, one token wide,
then its token ids, little-endian), `offset.N` (u64 byte offset of each document's separator) and
`table.N` (the suffix array: the byte offset of every token position, ordered by the bytes from
there to the end of the file, each pointer `pointer_width(size)` bytes little-endian).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TOKEN_WIDTHS = (1, 2, 4)
OFFSET_WIDTH = 8
# Decoding a table in slices keeps memory flat on a shard of billions of positions.
DECODE_CHUNK = 1 << 22


class LayoutError(ValueError):
    """An index folder (or a shard about to be written) that does not hold infini-gram's layout."""


def tokenized_path(folder: Path, shard: int) -> Path:
    return folder / f"tokenized.{shard}"


def offset_path(folder: Path, shard: int) -> Path:
    return folder / f"offset.{shard}"


def table_path(folder: Path, shard: int) -> Path:
    return folder / f"table.{shard}"


def shard_paths(folder: Path, shard: int) -> tuple[Path, Path, Path]:
    return tokenized_path(folder, shard), offset_path(folder, shard), table_path(folder, shard)


def pointer_width(size: int) -> int:
    """Bytes per suffix-array entry, computed as infini-gram's indexer and engine compute it
    (their float formula, so a size at a power of two rounds the way theirs does)."""
    if size < 2:
        return 1
    return max(1, int(np.ceil(np.log2(size) / 8)))


def separator(token_width: int) -> int:
    return (1 << (8 * token_width)) - 1


def token_dtype(token_width: int) -> np.dtype:
    return np.dtype({1: "u1", 2: "<u2", 4: "<u4"}[token_width])


def decode_pointers(raw: np.ndarray, width: int) -> np.ndarray:
    """Little-endian pointers of `width` bytes (a flat uint8 array) as int64."""
    raw = np.asarray(raw, dtype=np.uint8)
    out = np.zeros(raw.shape[0] // width, dtype=np.int64)
    for k in range(width):  # one byte column at a time: memory stays at two int64 arrays
        out |= raw[k::width].astype(np.int64) << (8 * k)
    return out


def encode_pointers(values: np.ndarray, width: int) -> np.ndarray:
    values = np.asarray(values, dtype=np.uint64)
    return values.view(np.uint8).reshape(-1, 8)[:, :width].reshape(-1).copy()


@dataclass(frozen=True)
class ShardFiles:
    """Sizes of one shard's files, checked against each other."""

    shard: int
    token_width: int
    data_bytes: int
    documents: int
    pointer_width: int


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        raise LayoutError(f"{path}: missing") from None


def detect_width(folder: Path, shard: int) -> int:
    """The token width the table's size implies: it holds one pointer per token position."""
    data, _, table = shard_paths(folder, shard)
    size, table_size = _size(data), _size(table)
    if size == 0:
        raise LayoutError(f"{data}: empty (a shard holds at least one document separator)")
    ptr = pointer_width(size)
    for width in TOKEN_WIDTHS:
        if size % width == 0 and table_size == size // width * ptr:
            return width
    # No width fits: the nearest one says which file is short, and check_sizes names it.
    nearest = min(TOKEN_WIDTHS, key=lambda width: abs(table_size - size // width * ptr))
    check_sizes(folder, shard, nearest)
    raise LayoutError(f"{table}: {table_size} bytes fits no token width of 1, 2 or 4 for "
                      f"{data} of {size} bytes ({ptr}-byte pointers)")


def check_sizes(folder: Path, shard: int, token_width: int) -> ShardFiles:
    """Sizes of the three files agree: whole tokens, whole offsets, one pointer per position."""
    data, offsets, table = shard_paths(folder, shard)
    size, offsets_size, table_size = _size(data), _size(offsets), _size(table)
    if size == 0:
        raise LayoutError(f"{data}: empty (a shard holds at least one document separator)")
    if size % token_width:
        raise LayoutError(f"{data}: {size} bytes is not a whole number of {token_width}-byte "
                          f"tokens (truncated?)")
    if offsets_size == 0 or offsets_size % OFFSET_WIDTH:
        raise LayoutError(f"{offsets}: {offsets_size} bytes is not a whole, nonzero number of "
                          f"8-byte offsets (truncated?)")
    ptr = pointer_width(size)
    expected = size // token_width * ptr
    if table_size > expected:
        raise LayoutError(f"{data}: {size} bytes, shorter than the {table_size // ptr} positions "
                          f"{table.name} indexes (truncated, or another token width?)")
    if table_size < expected:
        raise LayoutError(f"{table}: {table_size} bytes where {size // token_width} positions "
                          f"of {ptr} bytes need {expected} (truncated, or another token width?)")
    return ShardFiles(shard, token_width, size, offsets_size // OFFSET_WIDTH, ptr)


# Offsets files up to this many entries are checked whole; past it (a published index), in
# a fixed sample of neighbouring pairs plus both ends, so opening stays seconds, not minutes.
CHECK_ALL_OFFSETS = 1 << 27
OFFSET_SAMPLE = 1 << 20


def check_offsets(path: Path, offsets: np.ndarray, tokens: np.ndarray, token_width: int) -> None:
    """Offsets start at 0, rise strictly, stay inside the data, and each lands on a separator."""
    size = tokens.shape[0] * token_width
    count = offsets.shape[0]
    if int(offsets[0]) != 0:
        raise LayoutError(f"{path}: the first document starts at byte {int(offsets[0])}, not 0")
    last = int(offsets[-1])
    if last >= size:
        raise LayoutError(f"{path}: offset {count - 1} ({last}) lies outside the "
                          f"{size}-byte data file")
    # A separator after the last offset means offsets are missing (the file cut at an entry).
    tail = tokens[last // token_width + 1:]
    if (tail == separator(token_width)).any():
        raise LayoutError(f"{path}: {count} offsets, but the data holds a document "
                          f"after the last one (truncated?)")
    if count <= CHECK_ALL_OFFSETS:
        chunks = [np.arange(start, min(count, start + DECODE_CHUNK), dtype=np.int64)
                  for start in range(0, count, DECODE_CHUNK)]
    else:
        rng = np.random.default_rng(count)
        chunks = [np.unique(np.concatenate([rng.integers(0, count, OFFSET_SAMPLE),
                                            np.array([0, count - 1])]))]
    for index in chunks:
        values = offsets[index].astype(np.int64)
        inside = values < size
        if not inside.all():
            bad = int(index[int(np.argmin(inside))])
            raise LayoutError(f"{path}: offset {bad} ({int(offsets[bad])}) lies outside the "
                              f"{size}-byte data file")
        following = offsets[np.minimum(index + 1, count - 1)].astype(np.int64)
        rising = (index + 1 >= count) | (following - values >= token_width)
        if not rising.all():
            bad = int(index[int(np.argmin(rising))]) + 1
            raise LayoutError(f"{path}: offset {bad} ({int(offsets[bad])}) does not rise past the "
                              f"previous one ({int(offsets[bad - 1])})")
        aligned = values % token_width == 0
        if not aligned.all():
            bad = int(index[int(np.argmin(aligned))])
            raise LayoutError(f"{path}: offset {bad} ({int(offsets[bad])}) is not on a token "
                              f"boundary")
        heads = tokens[values // token_width] == separator(token_width)
        if not heads.all():
            bad = int(index[int(np.argmin(heads))])
            raise LayoutError(f"{path}: offset {bad} ({int(offsets[bad])}) does not point at a "
                              f"document separator")


def shard_count(folder: Path) -> int:
    """Shards 0..N-1 present as tokenized.N; a gap or a stray number is an error."""
    numbers = []
    for path in folder.glob("tokenized.*"):
        suffix = path.name.split(".", 1)[1]
        if suffix.isdigit():
            numbers.append(int(suffix))
    numbers.sort()
    if numbers != list(range(len(numbers))):
        missing = next(n for n in range(len(numbers) + 1) if n not in numbers)
        raise LayoutError(f"{folder}: shards {numbers} leave out tokenized.{missing}")
    return len(numbers)


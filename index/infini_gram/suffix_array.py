"""Writing one shard in infini-gram's layout with its bundled `rust_indexing`, and checking the
suffix array it builds before the shard counts as written.

The bundled indexer silently writes an array with entries out of order when a worker's share of
the data is under its 100,000-byte merge overlap (issue 43 measured 35,986 misordered neighbours
at 96,758 bytes per worker), so the CPUs are capped to keep every share above it and every array
is verified; a bad one is refused and nothing of the shard is left behind.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .files import (
    DECODE_CHUNK,
    OFFSET_WIDTH,
    TOKEN_WIDTHS,
    LayoutError,
    check_sizes,
    decode_pointers,
    encode_pointers,
    pointer_width,
    shard_paths,
    separator,
    token_dtype,
)

# The indexer's merge assumes every part overlaps the next by this many bytes.
OVERLAP = 100_000
MIN_SHARE = OVERLAP + 1
WRITE_BUFFER = 1 << 24


class IndexerError(RuntimeError):
    """The bundled indexer is missing or failed (an environment problem, not bad input)."""


@dataclass(frozen=True)
class ShardInfo:
    documents: int
    tokens: int
    bytes: int
    seconds: float
    suffix_array_seconds: float = 0.0


def indexer_path() -> Path:
    spec = importlib.util.find_spec("infini_gram")
    if spec is None or spec.origin is None:
        raise IndexerError("infini-gram is not installed (pip install 'factprobe[tokens]')")
    path = Path(spec.origin).parent / "rust_indexing"
    if not os.access(path, os.X_OK):
        raise IndexerError(f"{path}: infini-gram's rust_indexing is missing or not executable")
    return path


def worker_count(data_bytes: int, requested: int) -> int:
    """CPUs for the indexer: as asked, but never a share under the merge overlap."""
    return max(1, min(int(requested), data_bytes // MIN_SHARE))


# -- verification ---------------------------------------------------------------------------


def _first_tokens(data: np.ndarray, token_index: np.ndarray, width: int) -> np.ndarray:
    """Each position's token as a big-endian integer of its bytes: the indexer sorts bytes, so
    little-endian ids compare in this order, not by value."""
    key = np.zeros(token_index.shape[0], dtype=np.uint64)
    for k in range(width):
        key = (key << np.uint64(8)) | data[token_index * width + k].astype(np.uint64)
    return key


def verify_suffix_array(folder: str | Path, shard: int, token_width: int | None = None) -> None:
    """LayoutError unless table.N holds every token position once, in suffix order.

    Every neighbouring pair is checked in linear time: suffix a sorts before suffix b exactly when
    a's first token sorts before b's, or the tokens are equal and the suffix after a ranks before
    the suffix after b (ranks read from the table itself, the empty suffix lowest).
    """
    folder = Path(folder)
    data_path, _, table_path = shard_paths(folder, shard)
    widths = (token_width,) if token_width else TOKEN_WIDTHS
    files = None
    for width in widths:
        try:
            files = check_sizes(folder, shard, width)
            break
        except LayoutError:
            if width == widths[-1]:
                raise
    assert files is not None
    width, ptr = files.token_width, files.pointer_width
    data = np.memmap(data_path, dtype=np.uint8, mode="r")
    table = np.memmap(table_path, dtype=np.uint8, mode="r")
    positions = files.data_bytes // width
    index_type = np.int32 if positions < (1 << 31) - 1 else np.int64
    order = np.empty(positions, dtype=index_type)
    for start in range(0, positions, DECODE_CHUNK):
        stop = min(positions, start + DECODE_CHUNK)
        values = decode_pointers(np.asarray(table[start * ptr:stop * ptr]), ptr)
        bad = (values % width != 0) | (values >= files.data_bytes)
        if bad.any():
            rank = start + int(np.argmax(bad))
            raise LayoutError(f"{table_path}: entry {rank} ({int(values[rank - start])}) is not a "
                              f"token position of {data_path.name}")
        order[start:stop] = values // width
    # rank[p] = where position p sits in the table; rank[positions] stands for the empty suffix.
    rank = np.full(positions + 1, -2, dtype=index_type)
    rank[order] = np.arange(positions, dtype=index_type)
    rank[positions] = -1
    if (rank[:positions] == -2).any():
        missing = int(np.argmax(rank[:positions] == -2))
        raise LayoutError(f"{table_path}: not a permutation of the {positions} token positions "
                          f"(position {missing * width} missing, another repeated)")
    for start in range(0, positions - 1, DECODE_CHUNK):
        stop = min(positions - 1, start + DECODE_CHUNK)
        a, b = order[start:stop].astype(np.int64), order[start + 1:stop + 1].astype(np.int64)
        ka, kb = _first_tokens(data, a, width), _first_tokens(data, b, width)
        ordered = (ka < kb) | ((ka == kb) & (rank[a + 1] < rank[b + 1]))
        if not ordered.all():
            at = start + int(np.argmin(ordered))
            wrong = int((~ordered).sum())
            raise LayoutError(f"{table_path}: entries {at} and {at + 1} are out of suffix order "
                              f"({wrong} of {stop - start} neighbours in entries {start}..{stop})")


# -- writing --------------------------------------------------------------------------------


def _write_tokens(temp: Path, shard: int, documents: Iterable[np.ndarray],
                  token_width: int) -> tuple[int, int, int]:
    data_path, offsets_path, _ = shard_paths(temp, shard)
    dtype, sep = token_dtype(token_width), separator(token_width)
    head = np.array([sep], dtype=dtype).tobytes()
    count = tokens = size = 0
    pending: list[int] = []
    with open(data_path, "wb", buffering=WRITE_BUFFER) as data, \
            open(offsets_path, "wb", buffering=1 << 20) as offsets:
        for doc in documents:
            ids = np.asarray(doc)
            if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
                raise LayoutError(f"document {count}: token ids must be a 1-d integer array, "
                                  f"not {ids.dtype} of shape {ids.shape}")
            if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= sep):
                worst = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
                raise LayoutError(f"document {count}: token id {worst} does not fit "
                                  f"{token_width}-byte tokens ({sep} is the separator)")
            pending.append(size)
            data.write(head)
            data.write(ids.astype(dtype, copy=False).tobytes())
            size += token_width * (1 + ids.size)
            tokens += int(ids.size)
            count += 1
            if len(pending) >= 65536:
                offsets.write(np.array(pending, dtype="<u8").tobytes())
                pending.clear()
        offsets.write(np.array(pending, dtype="<u8").tobytes())
        for handle in (data, offsets):
            handle.flush()
            os.fsync(handle.fileno())
    assert os.path.getsize(offsets_path) == count * OFFSET_WIDTH
    return count, tokens, size


def _run(step: str, args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([str(indexer_path()), step, *args], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait(step: str, processes: list[subprocess.Popen]) -> None:
    failures = []
    for process in processes:
        _, err = process.communicate()
        if process.returncode != 0:
            lines = err.decode("utf-8", "replace").strip().splitlines()
            failures.append(f"exit {process.returncode}: {lines[-1] if lines else 'no message'}")
    if failures:
        raise IndexerError(f"rust_indexing {step} failed ({len(failures)} of {len(processes)}), "
                           f"{failures[0]}")


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError):
        return 4 << 30


def _build_table(temp: Path, shard: int, token_width: int, size: int, cpus: int,
                 parallel: bool | None = None) -> None:
    """table.N for tokenized.N in `temp`. For 4-byte tokens the indexer allocates a bucket per
    possible token (2**35 bytes: refused here, where the machine has 23 GB, and a risk of the
    kernel's OOM killer where it is promised), so those shards are sorted as bytes and the
    token-aligned entries kept: both orders compare bytes, so those entries are the token array,
    in order (verified like every array)."""
    data_path, _, table_path = shard_paths(temp, shard)
    if token_width != 4:
        _run_indexer(temp, data_path, table_path, token_width, size, cpus, parallel)
        return
    byte_table = temp / "bytes.table"
    _run_indexer(temp, data_path, byte_table, 1, size, cpus, parallel)
    _keep_aligned(byte_table, table_path, token_width, pointer_width(size))
    byte_table.unlink()


def _keep_aligned(source: Path, target: Path, token_width: int, ptr: int) -> None:
    table = np.memmap(source, dtype=np.uint8, mode="r")
    entries = table.shape[0] // ptr
    with open(target, "wb", buffering=WRITE_BUFFER) as out:
        for start in range(0, entries, DECODE_CHUNK):
            stop = min(entries, start + DECODE_CHUNK)
            values = decode_pointers(np.asarray(table[start * ptr:stop * ptr]), ptr)
            out.write(encode_pointers(values[values % token_width == 0], ptr).tobytes())
    del table


def _run_indexer(temp: Path, data_path: Path, table_path: Path, token_width: int, size: int,
                 cpus: int, parallel: bool | None) -> None:
    """rust_indexing's steps: parts sorted (in parallel), merged, concatenated; or, where the
    shard fits in memory and no parallel build is asked for, one part over the whole shard, which
    is the suffix array itself (byte for byte what merge and concat make of it). The merge is
    what costs: on the Gutenberg texts, whose duplicated plays give suffixes sharing 100 KB, one
    part took 0.8 s where two parts took 0.9 s and their merge 14.5 s."""
    ratio = str(pointer_width(size))
    workers = worker_count(size, cpus) if parallel is not False else 1
    batches = 1
    per_byte = 12 if token_width == 1 else 8
    while batches * (_memory_bytes() // per_byte) < size:
        batches *= 2
    common = ["--ratio", ratio, "--token-width", str(token_width)]
    if batches == 1 and (workers == 1 or not parallel):
        whole = temp / "whole"
        whole.mkdir()
        _wait("make-part", [_run("make-part", ["--data-file", str(data_path), "--parts-dir",
                                               str(whole), "--start-byte", "0", "--end-byte",
                                               str(size), *common], temp)])
        built = list(whole.iterdir())
        if len(built) != 1:
            raise IndexerError(f"rust_indexing make-part wrote {len(built)} files, not one")
        os.replace(built[0], table_path)
        whole.rmdir()
        return
    jobs = batches * workers
    while jobs > 1 and size // jobs < MIN_SHARE:
        jobs -= 1
    share = size // jobs
    share += (-share) % token_width
    parts, merged = temp / "parts", temp / "merged"
    parts.mkdir()
    merged.mkdir()
    for first in range(0, jobs, workers):
        batch = []
        for job in range(first, min(jobs, first + workers)):
            start, end = job * share, min((job + 1) * share + OVERLAP, size)
            batch.append(_run("make-part", ["--data-file", str(data_path), "--parts-dir",
                                            str(parts), "--start-byte", str(start),
                                            "--end-byte", str(end), *common], temp))
        _wait("make-part", batch)
    _wait("merge", [_run("merge", ["--data-file", str(data_path), "--parts-dir", str(parts),
                                   "--merged-dir", str(merged), "--num-threads", str(workers),
                                   "--hacksize", str(OVERLAP), *common], temp)])
    shutil.rmtree(parts)
    _wait("concat", [_run("concat", ["--data-file", str(data_path), "--merged-dir", str(merged),
                                     "--merged-file", str(table_path), "--num-threads",
                                     str(workers), *common], temp)])
    shutil.rmtree(merged)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def partial_dir(folder: Path, shard: int) -> Path:
    """Where a shard is built before it is renamed in; a leftover one is a killed build."""
    return folder / f".partial-shard-{shard}"


def write_shard(folder: str | Path, shard: int, documents: Iterable[np.ndarray], token_width: int,
                *, cpus: int = 1, parallel: bool | None = None) -> ShardInfo:
    """tokenized.N, offset.N and table.N for `documents` (each an array of token ids), built in a
    temporary folder inside `folder` and renamed in, table last, only once the suffix array has
    been verified: a kill leaves no shard whose table exists.

    `parallel`: None builds the array in one piece where the shard fits in half the memory (the
    fastest, see _run_indexer) and in parts over `cpus` (capped above the indexer's overlap)
    where it does not; True always in parts; False always in one piece per memory batch."""
    folder = Path(folder)
    if token_width not in TOKEN_WIDTHS:
        raise LayoutError(f"{folder}: token width {token_width} is not 1, 2 or 4")
    if shard < 0:
        raise LayoutError(f"{folder}: shard number {shard} is negative")
    finals = shard_paths(folder, shard)
    for path in finals:
        if path.exists():
            raise LayoutError(f"{path}: exists already; shard {shard} is not written over")
    folder.mkdir(parents=True, exist_ok=True)
    temp = partial_dir(folder, shard)
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir()
    began = time.perf_counter()
    try:
        documents_written, tokens, size = _write_tokens(temp, shard, documents, token_width)
        if documents_written == 0:
            raise LayoutError(f"{folder}: shard {shard} has no documents; an empty corpus shard "
                              f"is not indexed")
        sa_began = time.perf_counter()
        _build_table(temp, shard, token_width, size, cpus, parallel)
        sa_seconds = time.perf_counter() - sa_began
        try:
            verify_suffix_array(temp, shard, token_width)
        except LayoutError as error:
            detail = str(error).split(": ", 1)[-1]
            raise LayoutError(f"{finals[2]}: rust_indexing built a bad suffix array ({detail}); "
                              f"shard {shard} not written") from None
        built = shard_paths(temp, shard)
        for path in built:
            _fsync(path)
        for source, target in zip(built, finals):
            os.replace(source, target)
        _fsync(folder)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return ShardInfo(documents_written, tokens, size, time.perf_counter() - began, sa_seconds)


def discard_unfinished_shard(folder: str | Path, shard: int) -> bool:
    """Remove what a build killed before table.N was renamed in left of shard N (its partial
    folder; tokenized.N and offset.N without a table). A finished shard (table.N present) is
    never touched: LayoutError. True when something was removed."""
    folder = Path(folder)
    data, offsets, table = shard_paths(folder, shard)
    if table.exists():
        raise LayoutError(f"{table}: shard {shard} is finished; not discarded")
    removed = False
    temp = partial_dir(folder, shard)
    if temp.exists():
        shutil.rmtree(temp)
        removed = True
    for path in (offsets, data):
        if path.exists():
            path.unlink()
            removed = True
    return removed

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
# Every neighbouring pair is compared up to this many positions; beyond it, a fixed-seed sample.
CHECK_ALL = 4_000_000
SAMPLE = 1_000_000
VECTOR_ROUNDS = 32
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


def _keys(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Eight bytes from each position as a big-endian integer, zero past the end of the data."""
    size = data.shape[0]
    key = np.zeros(at.shape[0], dtype=np.uint64)
    for k in range(8):
        index = at + k
        inside = index < size
        byte = data[np.minimum(index, size - 1)].astype(np.uint64)
        key = (key << np.uint64(8)) | np.where(inside, byte, np.uint64(0))
    return key


def _slow_less(data, a: int, b: int) -> bool:
    """Suffix a sorts before suffix b (bytes, shorter first), for a long shared prefix."""
    step, offset = 4096, 0
    while True:
        x, y = bytes(data[a + offset:a + offset + step]), bytes(data[b + offset:b + offset + step])
        if x != y or len(x) < step:
            return x < y
        offset += step
        step = min(step * 2, 1 << 24)


def suffixes_in_order(data: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pair, whether the suffix at byte a sorts strictly before the suffix at byte b."""
    size = data.shape[0]
    result = np.zeros(a.shape[0], dtype=bool)
    pending = np.arange(a.shape[0])
    shift = 0
    for _ in range(VECTOR_ROUNDS):
        if not pending.size:
            break
        pa, pb = a[pending] + shift, b[pending] + shift
        ka, kb = _keys(data, pa), _keys(data, pb)
        differ = ka != kb
        result[pending[differ]] = ka[differ] < kb[differ]
        left_a, left_b = size - pa, size - pb
        ended = ~differ & ((left_a <= 8) | (left_b <= 8))
        result[pending[ended]] = left_a[ended] < left_b[ended]
        pending = pending[~differ & ~ended]
        shift += 8
    for index in pending.tolist():
        result[index] = _slow_less(data, int(a[index]), int(b[index]))
    return result


def _pointers_at(table: np.ndarray, ranks: np.ndarray, width: int) -> np.ndarray:
    raw = table[(ranks[:, None] * width + np.arange(width)[None, :]).reshape(-1)]
    return decode_pointers(raw, width)


def verify_suffix_array(folder: str | Path, shard: int, token_width: int | None = None) -> None:
    """LayoutError unless table.N holds every token position once and neighbouring entries (all
    of them up to CHECK_ALL positions, a fixed-seed sample beyond) are in suffix order."""
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
    data = np.fromfile(data_path, dtype=np.uint8) if files.data_bytes <= (1 << 26) \
        else np.memmap(data_path, dtype=np.uint8, mode="r")
    table = np.memmap(table_path, dtype=np.uint8, mode="r")
    positions = files.data_bytes // width
    seen = np.zeros(positions, dtype=bool)
    for start in range(0, positions, DECODE_CHUNK):
        stop = min(positions, start + DECODE_CHUNK)
        values = decode_pointers(np.asarray(table[start * ptr:stop * ptr]), ptr)
        bad = (values % width != 0) | (values >= files.data_bytes)
        if bad.any():
            rank = start + int(np.argmax(bad))
            raise LayoutError(f"{table_path}: entry {rank} ({int(values[rank - start])}) is not a "
                              f"token position of {data_path.name}")
        seen[values // width] = True
    if not seen.all():
        missing = int(np.argmin(seen))
        raise LayoutError(f"{table_path}: not a permutation of the {positions} token positions "
                          f"(position {missing * width} missing, another repeated)")
    del seen
    if positions < 2:
        return
    if positions - 1 <= CHECK_ALL:
        ranks = np.arange(positions - 1, dtype=np.int64)
    else:
        rng = np.random.default_rng(shard)
        ranks = np.unique(np.concatenate([
            rng.integers(0, positions - 1, SAMPLE, dtype=np.int64),
            np.array([0, positions - 2], dtype=np.int64)]))
    for start in range(0, ranks.shape[0], DECODE_CHUNK):
        chunk = ranks[start:start + DECODE_CHUNK]
        a, b = _pointers_at(table, chunk, ptr), _pointers_at(table, chunk + 1, ptr)
        ordered = suffixes_in_order(data, a, b)
        if not ordered.all():
            rank = int(chunk[int(np.argmin(ordered))])
            wrong = int((~ordered).sum())
            raise LayoutError(f"{table_path}: entries {rank} and {rank + 1} are out of suffix "
                              f"order ({wrong} of {chunk.shape[0]} neighbours checked here)")


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


def _build_table(temp: Path, shard: int, token_width: int, size: int, cpus: int) -> None:
    """table.N for tokenized.N in `temp`. For 4-byte tokens the indexer allocates a bucket per
    possible token (2**35 bytes), which a machine without that much memory to promise refuses;
    there the byte-level array is built and its token-aligned entries kept: both sort by bytes,
    so those entries are the token array, in order."""
    data_path, _, table_path = shard_paths(temp, shard)
    if token_width != 4:
        _run_indexer(temp, data_path, table_path, token_width, size, cpus)
        return
    try:
        _run_indexer(temp, data_path, table_path, token_width, size, cpus)
        return
    except IndexerError as error:
        if "memory allocation" not in str(error):
            raise
    for leftover in ("parts", "merged"):
        shutil.rmtree(temp / leftover, ignore_errors=True)
    table_path.unlink(missing_ok=True)
    byte_table = temp / "bytes.table"
    _run_indexer(temp, data_path, byte_table, 1, size, cpus)
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
                 cpus: int) -> None:
    """rust_indexing's three steps: parts sorted in parallel, merged, concatenated."""
    ratio = str(pointer_width(size))
    workers = worker_count(size, cpus)
    batches = 1
    per_byte = 12 if token_width == 1 else 8
    while batches * (_memory_bytes() // per_byte) < size:
        batches *= 2
    jobs = batches * workers
    while jobs > 1 and size // jobs < MIN_SHARE:
        jobs -= 1
    share = size // jobs
    share += (-share) % token_width
    parts, merged = temp / "parts", temp / "merged"
    parts.mkdir()
    merged.mkdir()
    common = ["--ratio", ratio, "--token-width", str(token_width)]
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
                *, cpus: int = 1) -> ShardInfo:
    """tokenized.N, offset.N and table.N for `documents` (each an array of token ids), built in a
    temporary folder inside `folder` and renamed in, table last, only once the suffix array has
    been verified: a kill leaves no shard whose table exists."""
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
        _build_table(temp, shard, token_width, size, cpus)
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

"""The ingest driver shared by every source: chunks -> parallel parsing -> ordered upserts.

One reader thread decompresses and cuts the input into chunks; a process pool parses them
(JSON decoding and row extraction are the CPU-heavy part); the main process writes each
chunk's rows together with its checkpoint in one transaction, in input order. So a killed
ingest resumes at the last committed chunk and ends in exactly the state of an uninterrupted
run, and a bad record costs one reject row, never the run.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import orjson

from .model import Rows
from .readers import Chunk, InputError, TruncatedInput, check_readable, fingerprint
from .store import Store


@dataclass
class ParseResult:
    rows: Rows
    records: int  # records that produced rows (entities, documents, triples)
    rejects: list[tuple[int, str, str]] = field(default_factory=list)  # (line, reason, excerpt)


class Source(Protocol):
    """What a source provides to the driver. `parse` runs in worker processes, so a source
    must be picklable (a plain dataclass of options is)."""

    name: str

    def chunks(self, path: Path, start: int, position: int) -> Iterator[Chunk]: ...

    def parse(self, chunk: Chunk) -> ParseResult: ...


@dataclass
class IngestReport:
    source: str
    path: str
    key: str
    records: int = 0  # records ingested by this run
    rejected: int = 0  # rejects recorded for this input (all runs)
    lines_read: int = 0  # input records/lines covered so far (all runs)
    resumed_from: int = 0
    truncated: bool = False
    already_done: bool = False
    seconds: float = 0.0
    rejects: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.truncated and self.rejected == 0

    def as_dict(self) -> dict:
        return {
            "source": self.source, "path": self.path, "records": self.records,
            "rejected": self.rejected, "lines_read": self.lines_read,
            "resumed_from": self.resumed_from, "truncated": self.truncated,
            "already_done": self.already_done, "seconds": round(self.seconds, 3),
            "complete": self.complete,
        }


ProgressFn = Callable[[int, int], None]  # (records done this run, bytes of the file consumed)


def _exit_with_parent(parent: int) -> None:
    """Pool initializer: a worker whose ingest was killed (even by SIGKILL, which runs no
    cleanup) exits on its own instead of lingering as an orphan."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def _prefetch(it: Iterator[Chunk], depth: int) -> Iterator[Chunk]:
    """Run an iterator in a thread so decompression overlaps with parsing and writing."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def pump() -> None:
        try:
            for item in it:
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(done)
        except BaseException as exc:  # handed to the consumer, raised there
            q.put(exc)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


def ingest(
    store: Store,
    source: Source,
    path: str | os.PathLike,
    *,
    workers: int | None = None,
    restart: bool = False,
    progress: ProgressFn | None = None,
) -> IngestReport:
    """Ingest one input file into the store, resuming where an earlier run stopped."""
    started = time.perf_counter()
    p = check_readable(path)
    key = f"{source.name}:{fingerprint(p)}"
    state = store.begin_ingest(key, source.name, str(p.resolve()), restart=restart)
    report = IngestReport(source.name, str(p), key, resumed_from=state.records_done)
    if state.complete:
        report.already_done = True
        report.lines_read = state.records_done
        report.rejects = store.rejects(key)
        report.rejected = len(report.rejects)
        return report

    workers = default_workers() if workers is None else workers
    size = p.stat().st_size
    # A pool costs ~0.1 s to start; small inputs parse faster inline.
    use_pool = workers > 0 and size > 8 << 20
    chunks = _prefetch(source.chunks(p, state.records_done, state.position), depth=4)
    records_done, position = state.records_done, state.position

    def commit(chunk: Chunk, result: ParseResult) -> None:
        nonlocal records_done, position
        with store.transaction() as conn:
            store.write(result.rows, conn)
            store.checkpoint(conn, key, chunk.first + chunk.count - 1, chunk.position, result.rejects)
        records_done, position = chunk.first + chunk.count - 1, chunk.position
        report.records += result.records
        if progress:
            progress(report.records, chunk.progress)

    try:
        if use_pool:
            ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
            with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_exit_with_parent,
                                        initargs=(os.getpid(),)) as pool:
                window: deque[tuple[Chunk, cf.Future]] = deque()
                for chunk in chunks:
                    window.append((chunk, pool.submit(source.parse, chunk)))
                    while len(window) > 2 * workers:
                        done_chunk, future = window.popleft()
                        commit(done_chunk, future.result())
                while window:
                    done_chunk, future = window.popleft()
                    commit(done_chunk, future.result())
        else:
            for chunk in chunks:
                commit(chunk, source.parse(chunk))
    except TruncatedInput as exc:
        report.truncated = True
        with store.transaction() as conn:
            store.checkpoint(conn, key, records_done, position,
                             [(exc.line, "truncated input", str(exc))])
    except InputError:
        raise

    store.finish_ingest(key, truncated=report.truncated)
    report.lines_read = records_done
    report.rejects = store.rejects(key)
    report.rejected = len(report.rejects)
    report.seconds = time.perf_counter() - started
    return report


def write_rejects(path: str | os.PathLike, reports: list[IngestReport]) -> int:
    """Write every reject of these inputs as JSON lines naming file, line and reason."""
    n = 0
    with open(path, "wb") as f:
        for report in reports:
            for line, reason, text in report.rejects:
                f.write(orjson.dumps({"file": report.path, "line": line, "reason": reason,
                                      "excerpt": text}) + b"\n")
                n += 1
    return n

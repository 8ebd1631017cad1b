"""The ingest driver shared by every source: chunks -> parallel parsing -> ordered upserts.

One reader thread decompresses and cuts the input into chunks; a process pool parses them
(JSON decoding and row extraction are the CPU-heavy part); the main process writes each
chunk's rows together with its checkpoint in one transaction, in input order. So a killed
ingest resumes at the last committed chunk and ends in exactly the state of an uninterrupted
run, and a bad record costs one reject row, never the run: a record that the parser let through
and SQLite still refuses is rejected by name when the chunk is written again record by record.
An input is known by the hash of its bytes (kg/identity.py): a file changed anywhere is read
again, and a resume never continues inside other bytes than the checkpoint's.
"""

from __future__ import annotations

import concurrent.futures as cf
import marshal
import multiprocessing
import os
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import orjson

from .identity import InputDigest, recognise
from .model import Rows
from .readers import Chunk, InputError, TruncatedInput, check_readable, fingerprint
from .store import Store


@dataclass
class ParseResult:
    rows: Rows
    records: int  # records that produced rows (entities, documents, triples)
    rejects: list[tuple[int, str, str]] = field(default_factory=list)  # (line, reason, excerpt)
    ignored: int = 0  # records of an entity the same batch holds newer (kg/revisions.py)
    # Parts of records left out while the rest of their record is stored (a mention, a triple,
    # a qualifier): (line, record id, path inside the record, reason, excerpt). Counted apart
    # from rejects, named in the rejects file beside them.
    dropped: list[tuple[int, str, str, str, str]] = field(default_factory=list)


class Source(Protocol):
    """What a source provides to the driver. `parse` runs in worker processes, so a source
    must be picklable (a plain dataclass of options is). `chunks` feeds `digest` every byte it
    reads from the file (kg.readers' readers take it); one that does not costs the driver an
    extra read of the file to hash it, and its checkpoints cannot be resumed from."""

    name: str

    def chunks(self, path: Path, start: int, position: int,
               digest: InputDigest | None = None) -> Iterator[Chunk]: ...

    def parse(self, chunk: Chunk) -> ParseResult: ...


@dataclass
class IngestReport:
    """One input's outcome (`ingest`'s return): records written by this run, rejects (line,
    reason, excerpt) of all runs, whether it was truncated or already done, and how long it took.
    `changed`: why an earlier run of this input's slot was not resumed or skipped but the input
    read from its start (its bytes differ); `digest`: the whole file's hash once read to its end."""
    source: str
    path: str
    key: str
    records: int = 0  # records ingested by this run
    rejected: int = 0  # rejects recorded for this input (all runs)
    lines_read: int = 0  # input records/lines covered so far (all runs)
    resumed_from: int = 0
    truncated: bool = False
    already_done: bool = False
    older_ignored: int = 0  # records ignored by this run: the store holds the entity newer
    seconds: float = 0.0
    rejects: list[tuple[int, str, str]] = field(default_factory=list)
    dropped: int = 0  # parts of records left out, the rest of each record stored (all runs)
    drops: list[tuple[int, str, str, str, str]] = field(default_factory=list)  # ParseResult.dropped
    changed: str = ""
    digest: str = ""

    @property
    def complete(self) -> bool:
        return not self.truncated and self.rejected == 0

    def as_dict(self) -> dict:
        return {
            "source": self.source, "path": self.path, "records": self.records,
            "rejected": self.rejected, "dropped": self.dropped, "lines_read": self.lines_read,
            "resumed_from": self.resumed_from, "truncated": self.truncated,
            "already_done": self.already_done, "seconds": round(self.seconds, 3),
            "complete": self.complete, "older_ignored": self.older_ignored,
            "changed": self.changed or None, "digest": self.digest or None,
        }


def already_done(store: Store, report: IngestReport, records_done: int) -> IngestReport:
    """The report for an input an earlier run finished: nothing is read again, its rejects
    are restated so the rejects file stays complete."""
    report.already_done = True
    report.lines_read = records_done
    report.rejects = store.rejects(report.key)
    report.rejected = len(report.rejects)
    report.drops = store.dropped(report.key)
    report.dropped = len(report.drops)
    return report


ProgressFn = Callable[[int, int], None]  # (records done this run, bytes of the file consumed)


def _exit_with_parent(parent: int) -> None:
    """Pool initializer: a worker whose ingest was killed (even by SIGKILL, which runs no
    cleanup) exits on its own instead of lingering as an orphan."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


# -- transport of parsed rows from the parsing workers to the writing process -----------------
#
# The main process is the bottleneck of a bulk ingest: it alone writes SQLite, so every
# microsecond it spends per row counts, while the workers have CPU to spare. Two costs are
# moved to the workers (measured on 2.7M Wikidata fact rows):
# - Binding None is the slowest parameter sqlite3 binds: it is not one of the types sqlite3
#   binds directly, so each one goes through the adapter lookup (~0.3 us; fact rows carry 9-11
#   of them). SQLite stores a bound NaN as NULL (it has no NaN), and floats bind directly, so
#   the workers send NaN for None: executemany of fact rows drops from ~4.5 to ~1.4 us/row and
#   the stored values are the same NULLs (checked once per ingest: `_nan_is_null`).
# - marshal is about twice as fast as pickle both ways for lists of tuples of str/int/float.
# Anything else (a Rows subclass with its own behaviour, a value marshal cannot carry or that
# is not hashable) travels as before, pickled as it is.

_NAN = float("nan")
_NONE_TO_NAN = {None: _NAN}.get
_TABLES = tuple(Rows.__dataclass_fields__)


def _nan_is_null(store: Store) -> bool:
    return store.conn.execute("SELECT ? IS NULL", (_NAN,)).fetchone()[0] == 1


def _parse_packed(source: Source, chunk: Chunk, nan_for_none: bool) -> ParseResult | bytes:
    """Worker side: parse a chunk and pack its result compactly for the writer (see above).

    Replacing None in every row costs the workers ~0.8 us a row, so a source may offer
    `_parse_with_null(chunk, null)`: `parse` with `null` in the absent columns of its fact
    rows, built that way at no cost (kg/sources/wikidata_json.py). A None it leaves is harmless:
    None and NaN both store NULL; NaN only binds faster."""
    with_null = getattr(source, "_parse_with_null", None) if nan_for_none else None
    result = with_null(chunk, _NAN) if with_null is not None else source.parse(chunk)
    rows = result.rows
    if type(rows) is not Rows or type(result) is not ParseResult:
        return result
    try:
        if nan_for_none:
            get = _NONE_TO_NAN
            tables = tuple(
                getattr(rows, name) if name == "facts" and with_null is not None
                else [tuple(map(get, row, row)) for row in getattr(rows, name)]
                for name in _TABLES)
        else:
            tables = tuple(getattr(rows, name) for name in _TABLES)
        return marshal.dumps((result.records, result.rejects, tables, result.ignored, result.dropped))
    except (TypeError, ValueError):  # an unhashable or unmarshallable value: send it as is
        return result


def _unpack(packed: ParseResult | bytes) -> ParseResult:
    if not isinstance(packed, bytes):
        return packed
    records, rejects, tables, ignored, dropped = marshal.loads(packed)
    return ParseResult(Rows(*tables), records, rejects, ignored, dropped)


# A row SQLite refuses (a value it cannot bind, a constraint) is its record's fault; any other
# error (a full disk, a locked or damaged store) is not, and stops the ingest as before.
WRITE_ERRORS = (sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError, sqlite3.DataError,
                OverflowError, TypeError, ValueError)
# The column of each table's rows that names the record (entity or document) a row belongs to.
_OWNER = {"entities": 0, "names": 0, "types": 0, "facts": 1, "revisions": 0, "documents": 0, "annotations": 0,
          "provenance": 3}


def write_each(store: Store, conn: sqlite3.Connection, rows: Rows, first_line: int) -> tuple[list, int]:
    """Write a batch that failed as a whole one record at a time, each in a savepoint: a record
    SQLite refuses is rejected by name (its line when the batch knows it, else the batch's
    first), the others are kept. Returns (those rejects, records ignored as older)."""
    groups: dict[str, Rows] = {}
    for table, column in _OWNER.items():
        for row in getattr(rows, table):
            getattr(groups.setdefault(row[column], Rows()), table).append(row)
    if rows.meta:
        groups[""] = Rows(meta=rows.meta)
    lines = {r[0]: r[3] for r in rows.revisions}
    failed, ignored = [], 0
    conn.execute("BEGIN")  # the savepoints nest in it: the outermost RELEASE would commit
    for owner, group in groups.items():
        conn.execute("SAVEPOINT record")
        try:
            ignored += store.write(group, conn)
        except WRITE_ERRORS as exc:
            conn.execute("ROLLBACK TO record")
            failed.append((lines.get(owner, first_line), f"{str(owner)[:40]}: not stored ({type(exc).__name__}: {exc})", ""))
        conn.execute("RELEASE record")
    return failed, ignored


_EXPANSION = 5  # a conservative decompressed/compressed size ratio for text dumps


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
    """Ingest one input file into the store, resuming where an earlier run stopped.

    Args:
        store: The open Store to write into (its languages are the names kept).
        source: What reads the input format: kg.sources' WikidataJsonSource, RdfSource,
            TrexSource or Wikidata5mSource, with its own options (languages, relations, ...).
        path: The input file (compressed dumps are read as they are).
        workers: Parsing processes for an input over 8 MB (None: the cores, at most 8; 0: inline).
        restart: Read the input again from its start, ignoring an earlier (partial) run of it.
        progress: Called with (records done by this run, bytes of the file consumed or hashed).

    Returns:
        The IngestReport; an input an earlier run finished with the same bytes is not read
        again (`already_done`; it is hashed whole to know). A bad record is a reject in it and a
        cut compressed tail makes it `truncated`, never an exception.

    Raises:
        InputError: The input cannot be read at all (missing, not a file, permission denied).
    """
    started = time.perf_counter()
    p = check_readable(path)
    key = f"{source.name}:{fingerprint(p)}"
    seen = recognise(store, key, source.name, p, restart=restart,
                     progress=(lambda n: progress(0, n)) if progress else None)
    state, digest = seen.state, seen.digest
    report = IngestReport(source.name, str(p), key, resumed_from=state.records_done, changed=seen.changed)
    if seen.done:
        report.digest = digest.hexdigest()
        return already_done(store, report, state.records_done)

    workers = default_workers() if workers is None else workers
    # Judged on the text to parse, not the file: compressed dumps hold 5-10x their size.
    size = p.stat().st_size * (_EXPANSION if p.suffix.lower() in (".gz", ".bz2", ".xz") else 1)
    # A pool costs ~0.1 s to start; small inputs parse faster inline.
    use_pool = workers > 0 and size > 8 << 20
    # A bulk load builds the randomly filled indexes once at the end (Store.defer_random_indexes)
    # when the source's rows are plain upserts (it says so with `_bulk_upserts_only`; a source
    # that reads the store while writing does not) and the input is large next to the store,
    # so rebuilding costs less than maintaining them row by row.
    defer_indexes = (use_pool and getattr(source, "_bulk_upserts_only", False)
                     and 2 * size >= store.size_bytes())
    chunks = _prefetch(source.chunks(p, state.records_done, state.position, digest=digest), depth=4)
    records_done, position = state.records_done, state.position

    def commit(chunk: Chunk, result: ParseResult) -> None:
        nonlocal records_done, position
        last = chunk.first + chunk.count - 1
        try:
            with store.transaction() as conn:
                ignored = store.write(result.rows, conn)
                store.checkpoint(conn, key, last, chunk.position, result.rejects, result.dropped)
                store.record_digest(conn, key, chunk.progress, digest.at(chunk.progress))
            written = result.records
        except WRITE_ERRORS:  # rolled back: the chunk again, record by record
            if type(result.rows) is not Rows:  # a batch assembled at write time cannot be split
                raise
            with store.transaction() as conn:
                failed, ignored = write_each(store, conn, result.rows, chunk.first)
                store.checkpoint(conn, key, last, chunk.position, result.rejects + failed, result.dropped)
                store.record_digest(conn, key, chunk.progress, digest.at(chunk.progress))
            written = result.records - len(failed)
        records_done, position = last, chunk.position
        report.records += written
        report.older_ignored += ignored + result.ignored
        if progress:
            progress(report.records, chunk.progress)

    if defer_indexes:
        store.defer_random_indexes()
    try:
        if use_pool:
            ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
            nan_for_none = _nan_is_null(store)
            with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_exit_with_parent,
                                        initargs=(os.getpid(),)) as pool:
                window: deque[tuple[Chunk, cf.Future]] = deque()

                def drain(keep: int) -> None:
                    while len(window) > keep:
                        done_chunk, future = window.popleft()
                        commit(done_chunk, _unpack(future.result()))

                try:
                    for chunk in chunks:
                        window.append((chunk, pool.submit(_parse_packed, source, chunk, nan_for_none)))
                        drain(2 * workers)
                except TruncatedInput:
                    # The chunks read before a damaged tail are good and go in, as they do
                    # without a pool.
                    drain(0)
                    raise
                drain(0)
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
    finally:
        if defer_indexes:
            store.restore_indexes()

    if not report.truncated:
        report.digest = digest.finish(p)
    store.finish_ingest(key, truncated=report.truncated,
                        digest=None if report.truncated else (digest.bytes, report.digest))
    report.lines_read = records_done
    report.rejects = store.rejects(key)
    report.rejected = len(report.rejects)
    report.drops = store.dropped(key)
    report.dropped = len(report.drops)
    report.seconds = time.perf_counter() - started
    return report


def write_rejects(path: str | os.PathLike, reports: list[IngestReport]) -> int:
    """Write every reject of these inputs as JSON lines naming file, line and reason, then
    every dropped part naming also its record and path (and `"dropped": true`)."""
    from .outputs import replacing

    n = 0
    with replacing(path) as f:  # written beside and renamed: never into a link at `path`
        for report in reports:
            for line, reason, text in report.rejects:
                f.write(orjson.dumps({"file": report.path, "line": line, "reason": reason,
                                      "excerpt": text}) + b"\n")
                n += 1
            for line, record, part, reason, text in report.drops:
                f.write(orjson.dumps({"file": report.path, "line": line, "record": record, "path": part,
                                      "reason": reason, "excerpt": text, "dropped": True}) + b"\n")
                n += 1
    return n

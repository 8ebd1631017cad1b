"""The HTTP service's job records, kept on disk so that jobs outlive the process: one SQLite table
(WAL, synchronous FULL) in DATA/jobs.sqlite, one row per job (id, kind, request, status,
timestamps, result folder, summary, error), written in one transaction at each transition, so
a `kill -9` leaves every row as its last transition wrote it. The queue (jobs.py) reads
them back at start; `unlisted_folders` names the folders under DATA/jobs/ that no row owns.
`hold_data_folder` keeps a second server off a folder whose jobs one server runs.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...kg.outputs import open_update

FINISHED = ("done", "failed", "interrupted")
PENDING = ("queued", "running")
SCHEMA = 1

_COLUMNS = "id, kind, params, folder, status, error, created, started, finished, summary, restarts"


class DataFolderInUse(RuntimeError):
    pass


def hold_data_folder(data_dir: Path):
    """An exclusive lock on DATA/jobs.lock for as long as the returned file stays open (the
    process's end, `kill -9` included, lets go of it): two servers resuming the same jobs would
    run them twice. DataFolderInUse when another process holds it."""
    held = open_update(data_dir / "jobs.lock")  # never into a link, symbolic or hard (kg/outputs.py)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        held.seek(0)
        other = held.read().strip() or "another process"
        held.close()
        raise DataFolderInUse(f"in use by another server ({other})") from None
    held.seek(0)
    held.truncate()
    held.write(f"pid {os.getpid()}\n")
    held.flush()
    return held


@dataclass
class Job:
    id: str
    kind: str  # "probeset" or "eval"
    params: dict
    folder: Path  # DATA/jobs/<id>; the row keeps it relative to DATA
    status: str = "queued"  # queued, running, done, failed, interrupted
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    summary: dict = field(default_factory=dict)  # small facts about the result (items, accuracy)
    restarts: int = 0  # times the service restarted while the job was running, and resumed it

    def view(self) -> dict:
        # A pending job's times run to now; an ended job without a recorded end (interrupted
        # while queued) has no end to measure to, and its figures must not grow with the clock.
        end = self.finished or (time.time() if self.status in PENDING else None)

        def seconds(since: float | None, until: float | None) -> float | None:
            return round(until - since, 3) if since is not None and until is not None else None

        timings = {"created": self.created, "started": self.started, "finished": self.finished,
                   "queued_seconds": seconds(self.created, self.started or end),
                   "run_seconds": seconds(self.started, end)}
        return {"id": self.id, "kind": self.kind, "status": self.status, "error": self.error, "params": self.params,
                "timings": timings, "summary": self.summary, "restarts": self.restarts}

    @property
    def probes(self) -> Path:
        return self.folder / "probes.jsonl"

    @property
    def run_dir(self) -> Path:
        return self.folder / "run"


class JobStore:
    """The rows of DATA/jobs.sqlite behind one lock (the routes' threads and the job thread share
    one connection)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.lock = threading.Lock()
        self.conn = sqlite3.connect(data_dir / "jobs.sqlite", check_same_thread=False, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA):
            raise RuntimeError(f"{data_dir / 'jobs.sqlite'}: job records of schema {version}; this server reads "
                               f"schema {SCHEMA}")
        with self.conn:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, params TEXT NOT NULL, "
                "folder TEXT NOT NULL, status TEXT NOT NULL, error TEXT, created REAL NOT NULL, started REAL, "
                "finished REAL, summary TEXT NOT NULL, restarts INTEGER NOT NULL DEFAULT 0)")
            self.conn.execute("CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status, created)")
            self.conn.execute(f"PRAGMA user_version={SCHEMA}")

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def insert(self, job: Job) -> None:
        with self.lock, self.conn:
            self.conn.execute(f"INSERT INTO jobs ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)", self._row(job))

    def save(self, job: Job) -> None:
        """The job's transition: status, error, timestamps, summary and restarts in one transaction."""
        with self.lock, self.conn:
            self.conn.execute("UPDATE jobs SET status=?, error=?, started=?, finished=?, summary=?, restarts=? "
                              "WHERE id=?", (job.status, job.error, job.started, job.finished,
                                             json.dumps(job.summary), job.restarts, job.id))

    def get(self, job_id: str) -> Job | None:
        with self.lock:
            row = self.conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id=?", (job_id,)).fetchone()
        return self._job(row) if row else None

    def pending(self) -> int:
        with self.lock:
            return self.conn.execute(f"SELECT count(*) FROM jobs WHERE status IN {PENDING}").fetchone()[0]

    def unfinished(self) -> list[Job]:
        """Jobs a stopped process left queued or running, oldest first."""
        with self.lock:
            rows = self.conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE status IN {PENDING} "
                                     "ORDER BY created, id").fetchall()
        return [self._job(r) for r in rows]

    def page(self, status: str | None, offset: int, limit: int) -> list[Job]:
        """Jobs newest first, of one status or all."""
        where, args = ("WHERE status=?", (status,)) if status else ("", ())
        with self.lock:
            rows = self.conn.execute(f"SELECT {_COLUMNS} FROM jobs {where} ORDER BY created DESC, id "
                                     "LIMIT ? OFFSET ?", (*args, limit, offset)).fetchall()
        return [self._job(r) for r in rows]

    def counts(self) -> dict[str, int]:
        with self.lock:
            found = dict(self.conn.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall())
        return {status: found.get(status, 0) for status in (*PENDING, *FINISHED)}

    def unlisted_folders(self, root: Path) -> list[str]:
        """Names of the entries under `root` (DATA/jobs) that belong to no job row: left by a server
        from before job records were kept, or put there by hand."""
        with self.lock:
            owned = {Path(r[0]).name for r in self.conn.execute("SELECT folder FROM jobs")}
        return sorted(p.name for p in root.iterdir() if p.name not in owned) if root.is_dir() else []

    def _row(self, job: Job) -> tuple:
        return (job.id, job.kind, json.dumps(job.params), job.folder.relative_to(self.data_dir).as_posix(),
                job.status, job.error, job.created, job.started, job.finished, json.dumps(job.summary), job.restarts)

    def _job(self, row: tuple) -> Job:
        return Job(row[0], row[1], json.loads(row[2]), self.data_dir / row[3], row[4], row[5], row[6], row[7],
                   row[8], json.loads(row[9]), row[10])

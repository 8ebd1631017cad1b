"""Background jobs of the HTTP service: probe-set builds and evaluation runs.

Jobs run in-process on one worker thread (a model and a build at once would fight over the
cores), in folders the server names: DATA/jobs/<job id>/. A client names a job by its id only,
never by a path. Job records live in memory: a restarted server forgets its jobs.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ..probes.methods import registered
from ..probes.probeset import KINDS

log = logging.getLogger("factprobe.service")

PID = r"^P[1-9][0-9]{0,9}$"
DATE = r"^[0-9]{4}(-[0-9]{2}-[0-9]{2})?$"
JOB_ID = r"^[0-9a-f]{32}$"
MAX_PENDING = 16  # queued + running jobs; more answer 429
MAX_KEPT = 1000  # finished job records kept in memory (oldest finished dropped first)

PropertyId = Annotated[str, StringConstraints(pattern=PID)]
Language = Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(-[a-z0-9]{1,8})?$")]
Bucket = Annotated[str, StringConstraints(min_length=1, max_length=20)]


class ProbesetRequest(BaseModel):
    """A probe-set build: the fact selection and the kind's options, paths left out."""
    model_config = ConfigDict(extra="forbid")

    kind: Literal[KINDS]  # type: ignore[valid-type]  (probes/probeset.py, an enum in OpenAPI)
    relations: list[PropertyId] = Field(default_factory=list, max_length=50)
    per_relation: int | None = Field(None, ge=1, le=10_000)
    per_bucket: int | None = Field(None, ge=1, le=10_000)
    buckets: list[Bucket] = Field(default_factory=list, max_length=10)
    corpus: str | None = Field(None, pattern=r"^[A-Za-z0-9_.:-]{1,64}$")
    annotators: list[Literal["NoSub", "AllEnt", "SPO"]] = Field(default_factory=list, max_length=3)
    at: str | None = Field(None, pattern=DATE)
    popularity_bins: int = Field(0, ge=0, le=100)
    seed: int = Field(0, ge=0, le=2**31 - 1)
    languages: list[Language] = Field(default_factory=list, max_length=5)
    manual_only: bool = False
    aliases_per_subject: int = Field(3, ge=1, le=20)
    choices: int = Field(100, ge=2, le=100)
    demo_fraction: float = Field(0.2, ge=0.0, le=1.0)
    shots: int = Field(5, ge=0, le=20)
    strategies: list[Literal["random", "sem", "temp+sem"]] = Field(default_factory=lambda: ["random"],
                                                                   min_length=1, max_length=3)
    n: int = Field(5, ge=1, le=50)


OptionValue = Annotated[str, StringConstraints(max_length=200)] | int | float | bool | None


class EvalRequest(BaseModel):
    """An evaluation run over the probe set a finished probeset job built."""
    model_config = ConfigDict(extra="forbid")

    method: Literal[tuple(registered())]  # type: ignore[valid-type]  (the registry's names, an enum in OpenAPI)
    probeset_job: str = Field(pattern=JOB_ID)
    model: str = Field(max_length=100)
    limit: int | None = Field(None, ge=1, le=10_000)
    batch: int = Field(16, ge=1, le=64)
    seed: int = Field(0, ge=0, le=2**31 - 1)
    options: dict[str, OptionValue] = Field(default_factory=dict, max_length=16)


@dataclass
class Job:
    id: str
    kind: str  # "probeset" or "eval"
    params: dict
    folder: Path
    status: str = "queued"  # queued, running, done, failed
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    summary: dict = field(default_factory=dict)  # small facts about the result (items, accuracy)

    def view(self) -> dict:
        timings = {"created": self.created, "started": self.started, "finished": self.finished,
                   "queued_seconds": round((self.started or time.time()) - self.created, 3),
                   "run_seconds": (round((self.finished or time.time()) - self.started, 3) if self.started else None)}
        return {"id": self.id, "kind": self.kind, "status": self.status, "error": self.error, "params": self.params,
                "timings": timings, "summary": self.summary}

    @property
    def probes(self) -> Path:
        return self.folder / "probes.jsonl"

    @property
    def run_dir(self) -> Path:
        return self.folder / "run"


class JobQueue:
    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / "jobs"
        self.root.mkdir(parents=True, exist_ok=True)
        self.jobs: dict[str, Job] = {}
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="factprobe-job")

    def get(self, job_id: str) -> Job | None:
        with self.lock:
            return self.jobs.get(job_id)

    def submit(self, kind: str, params: dict, work: Callable[[Job], dict]) -> Job | None:
        """Queue `work(job)` (its return value becomes the job's summary); None when the queue is full."""
        with self.lock:
            pending = sum(j.status in ("queued", "running") for j in self.jobs.values())
            if pending >= MAX_PENDING:
                return None
            self._forget_old()
            job_id = uuid.uuid4().hex
            job = Job(job_id, kind, params, self.root / job_id)
            self.jobs[job_id] = job
        self.pool.submit(self._run, job, work)
        return job

    def _forget_old(self) -> None:
        finished = sorted((j for j in self.jobs.values() if j.status in ("done", "failed")), key=lambda j: j.created)
        for job in finished[:max(0, len(self.jobs) - MAX_KEPT + 1)]:
            del self.jobs[job.id]

    def _run(self, job: Job, work: Callable[[Job], dict]) -> None:
        job.started, job.status = time.time(), "running"
        try:
            job.folder.mkdir(parents=True, exist_ok=True)
            job.summary = work(job)
            job.status = "done"
        except Exception as error:  # a job fails with its message; the server goes on
            log.warning("job %s (%s) failed: %s", job.id, job.kind, error, exc_info=not isinstance(error, ValueError))
            job.error = str(error) or type(error).__name__
            job.status = "failed"
        finally:
            job.finished = time.time()

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def probeset_work(store: Path, semantic_dir: Path | None, request: ProbesetRequest) -> Callable[[Job], dict]:
    from ..probes.build import build_probeset, request_from_mapping

    # The request's fields are FactSelection / BuildOptions fields by name; the server adds the semantic index.
    selection, options = request_from_mapping(
        {**request.model_dump(), "semantic_dir": str(semantic_dir) if semantic_dir else None})

    def work(job: Job) -> dict:
        meta = build_probeset(store, job.probes, selection, options)
        return {"items": meta.items, "kind": meta.kind, "sha256": meta.sha256}

    return work


class Scorers:
    """The last loaded model, kept for the next run (one at a time: models are the big memory)."""

    def __init__(self) -> None:
        self.spec: str | None = None
        self.scorer: Any = None

    def get(self, spec: str):
        if spec != self.spec:
            from ..probes.scoring.loader import load_scorer

            self.spec, self.scorer = None, None
            self.scorer, self.spec = load_scorer(spec), spec
        return self.scorer


def eval_work(scorers: Scorers, probes: Path, request: EvalRequest) -> Callable[[Job], dict]:
    from ..probes.runner import evaluate

    def work(job: Job) -> dict:
        summary = evaluate(scorers.get(request.model), request.method, probes, job.run_dir,
                           options=dict(request.options), limit=request.limit, batch=request.batch, seed=request.seed)
        aggregate = summary.aggregate
        return {"items": summary.items, "rejected": len(summary.rejected), "accuracy": aggregate.get("accuracy")}

    return work


def read_page(path: Path, offset: int, limit: int) -> list[dict]:
    """Lines offset..offset+limit of a JSONL file, streamed (a page never loads the whole file)."""
    if not path.is_file():
        return []
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in itertools.islice(lines, offset, offset + limit) if line.strip()]


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None

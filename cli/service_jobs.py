"""Background jobs of the HTTP service: probe-set builds and evaluation runs.

Jobs run in-process on one worker thread (a model and a build at once would fight over the
cores), in folders the server names: DATA/jobs/<job id>/. A client names a job by its id only,
never by a path. Job records live in memory: a restarted server forgets its jobs.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

from ..probes.declare import LOCAL, OptionSpec
from ..probes.kinds import registered as registered_kinds
from ..kg.jsonl import read_jsonl
from ..probes.methods import registered
from ..probes.scoring.model_cache import ModelCache
from .build_options import merged_options

log = logging.getLogger("factprobe.service")

DATE = r"^[0-9]{4}(-[0-9]{2}-[0-9]{2})?$"  # the graph routes' `at`
JOB_ID = r"^[0-9a-f]{32}$"
MAX_PENDING = 16  # queued + running jobs; more answer 429
MAX_KEPT = 1000  # finished job records kept in memory (oldest finished dropped first)

def probeset_request_model() -> type[BaseModel]:
    """The request of a probe-set job, derived from the declarations (cli/build_options.py): the
    kind and every option a client may set, each with its type, bounds, choices and help; a
    client's absent (or null) option takes the kind's default. Options naming a path on the
    server's disk are not offered; a model is one the server serves (checked by the route)."""
    fields: dict[str, Any] = {"kind": (Literal[tuple(registered_kinds())], ...)}  # type: ignore[misc]
    for name, merged in merged_options().items():
        spec = merged.spec
        if spec.exposure == LOCAL:
            continue
        fields[name] = (_field_type(spec) | None, Field(None, description=merged.help, **_bounds(spec)))
    model = create_model("ProbesetRequest", __config__=ConfigDict(extra="forbid"), **fields)
    model.__doc__ = "A probe-set build: the kind, the fact selection and the kind's options."
    return model


def _field_type(spec: OptionSpec) -> Any:
    if spec.type in ("int", "float", "bool"):
        return {"int": int, "float": float, "bool": bool}[spec.type]
    element: Any = Literal[spec.choices] if spec.choices else (  # type: ignore[valid-type]
        Annotated[str, StringConstraints(pattern=f"^{spec.pattern}$")] if spec.pattern else str)
    return list[element] if spec.type == "list" else element


def _bounds(spec: OptionSpec) -> dict:
    if spec.type == "list":
        return {"max_length": spec.http_limit} if spec.http_limit else {}
    if spec.type not in ("int", "float"):
        return {}
    top = [x for x in (spec.maximum, spec.http_limit) if x is not None]
    return {**({"ge": spec.minimum} if spec.minimum is not None else {}), **({"le": min(top)} if top else {})}


ProbesetRequest = probeset_request_model()


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


def probeset_work(store: Path, request, models: ModelCache) -> Callable[[Job], dict]:
    """The work of a probe-set job: `build_step` (the command's) on a BuildRequest, silently, a
    model it asks for (appropt, single_token) loaded from the server's cache."""
    from .steps import SILENT, build_step

    def work(job: Job) -> dict:
        meta = build_step(store, job.probes, request, SILENT, models)
        return {"items": meta.items, "kind": meta.kind, "sha256": meta.sha256}

    return work


def eval_work(models: ModelCache, probes: Path, request: EvalRequest) -> Callable[[Job], dict]:
    """The work of an evaluation job: `eval_step` (the command's) with the served model, silently."""
    from .steps import SILENT, eval_step

    def work(job: Job) -> dict:
        summary = eval_step(models.get(request.model), request.method, probes, job.run_dir,
                            options=dict(request.options), limit=request.limit, batch=request.batch,
                            seed=request.seed, console=SILENT)
        aggregate = summary.aggregate
        return {"items": summary.items, "rejected": len(summary.rejected), "accuracy": aggregate.get("accuracy")}

    return work


def read_page(path: Path, offset: int, limit: int) -> list[dict]:
    """Lines offset..offset+limit of a JSONL file, streamed (a page never loads the whole file)."""
    if not path.is_file():
        return []
    return list(read_jsonl(path, start=offset, stop=offset + limit))


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None

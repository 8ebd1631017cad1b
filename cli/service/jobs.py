"""Background jobs of the HTTP service: probe-set builds and evaluation runs.

Jobs run in-process on one worker thread (a model and a build at once would fight over the
cores), in folders the server names: DATA/jobs/<job id>/. A client names a job by its id only,
never by a path. Every job's record is kept on disk (store.py) and written at each
transition; a restarted server answers for its finished jobs as before, queues again the jobs
it had queued, and resumes once a job it was running (an evaluation continues after its
finished items, a build starts over), each once it passes the checks a new job passes under
the new start's permissions (admission.py; failed otherwise, not run); a job running at a
second restart is left interrupted.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from dataclasses import asdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, create_model

from ...probes.declare import EVERYWHERE, OptionSpec, option_specs
from ...probes.kinds import registered as registered_kinds
from ...kg.jsonl import read_jsonl
from ...probes.methods import registered
from ...probes.evaluation.runner import BATCH, SEED
from ...probes.evaluation.sample import DEFAULT_STRATIFY, STRATIFY
from ...probes.scoring.model_cache import ModelCache
from ..build_options import merged_options
from .checks import VALUE_CHECKS
from .store import Job, JobStore, hold_data_folder

log = logging.getLogger("factprobe.service")

DATE = r"^[0-9]{4}(-[0-9]{2}-[0-9]{2})?$"  # the graph routes' `at`
JOB_ID = r"^[0-9a-f]{32}$"
MAX_PENDING = 16  # queued + running jobs; more answer 429
MAX_RESTARTS = 1  # a job running when the service stopped is resumed once; a job that was running at
# two restarts in a row may be what stops the service (memory), so it is not tried a third time

def probeset_request_model() -> type[BaseModel]:
    """The request of a probe-set job, derived from the declarations (cli/build_options.py): the
    kind and every option, each with its type, bounds, choices and help; a client's absent (or
    null) option takes the kind's default. An option naming a model or a path on the server's
    disk takes only what the operator allowed (checked by the route, GET /models lists it)."""
    fields: dict[str, Any] = {"kind": (Literal[tuple(registered_kinds())], ...)}  # type: ignore[misc]
    for name, merged in merged_options().items():
        spec = merged.spec
        allowed = " Only a model or path the server allows (GET /models)." if spec.exposure != EVERYWHERE else ""
        fields[name] = (_field_type(spec, VALUE_CHECKS.get(name)) | None,
                        Field(None, description=merged.help + allowed, **_bounds(spec)))
    model = create_model("ProbesetRequest", __config__=ConfigDict(extra="forbid"), **fields)
    model.__doc__ = "A probe-set build: the kind, the fact selection and the kind's options."
    return model


def _field_type(spec: OptionSpec, check: Callable[[str], str] | None = None) -> Any:
    """The option's pydantic type; `check` (service_checks.VALUE_CHECKS) runs on each text value
    after the pattern (a date that is a day of the calendar, a corpus name that is no path)."""
    if spec.type in ("int", "float", "bool"):
        return {"int": int, "float": float, "bool": bool}[spec.type]
    element: Any = Literal[spec.choices] if spec.choices else (  # type: ignore[valid-type]
        Annotated[str, StringConstraints(pattern=f"^{spec.pattern}$")] if spec.pattern else str)
    if check is not None:
        element = Annotated[element, AfterValidator(check)]
    return list[element] if spec.type == "list" else element


def _bounds(spec: OptionSpec) -> dict:
    if spec.type == "list":
        return {"max_length": spec.http_limit} if spec.http_limit else {}
    if spec.type not in ("int", "float"):
        return {}
    top = [x for x in (spec.maximum, spec.http_limit) if x is not None]
    return {**({"ge": spec.minimum} if spec.minimum is not None else {}), **({"le": min(top)} if top else {})}


ProbesetRequest = probeset_request_model()


Text = Annotated[str, StringConstraints(max_length=200)]
OptionValue = Text | int | float | bool | Annotated[list[Text], Field(max_length=64)] | None


def method_options_schema() -> dict:
    """Each registered method's options as JSON Schema properties, from their declarations (the
    route checks a request's options against the same declarations, probes/methods/base.py)."""
    schemas = {}
    for name, cls in registered().items():
        properties = {}
        for spec in option_specs(cls.Options):
            element = {"type": {"int": "integer", "float": "number", "bool": "boolean"}.get(spec.type, "string")}
            if spec.choices:
                element["enum"] = list(spec.choices)
            bounds = {"minimum": spec.minimum, "maximum": _http_maximum(spec)} if spec.type != "list" else {
                "minItems": spec.minimum, "maxItems": spec.http_limit}
            prop = {"type": "array", "items": element} if spec.type == "list" else element
            prop.update({k: v for k, v in bounds.items() if v is not None})
            if spec.choices and spec.type in ("int", "float"):  # a number, or one of its words ("all")
                words = prop.pop("enum")
                prop = {"anyOf": [prop, {"type": "string", "enum": words}]}
            served = " Only what the server allows (GET /models)." if spec.exposure != EVERYWHERE else ""
            prop["description"] = spec.help + served
            prop["default"] = list(spec.default) if isinstance(spec.default, tuple) else spec.default
            properties[spec.name] = {"anyOf": [prop, {"type": "null"}]} if spec.optional else prop
        schemas[name] = {"type": "object", "properties": properties, "additionalProperties": False}
    return schemas


def _http_maximum(spec: OptionSpec) -> float | None:
    top = [x for x in (spec.maximum, spec.http_limit) if x is not None]
    return min(top) if top else None


class EvalRequest(BaseModel):
    """An evaluation run over the probe set a finished probeset job built."""
    model_config = ConfigDict(extra="forbid")

    method: Literal[tuple(registered())]  # type: ignore[valid-type]  (the registry's names, an enum in OpenAPI)
    probeset_job: str = Field(pattern=JOB_ID)
    model: str = Field(max_length=100)
    limit: int | None = Field(None, ge=1, le=10_000)
    stratify: Literal[STRATIFY] = Field(  # type: ignore[valid-type]
        DEFAULT_STRATIFY, description="How `limit` samples (probes/evaluation/sample.py): each relation's share, "
                                      "each frequency bucket's, or none: the first `limit` in file order")
    batch: int = Field(BATCH, ge=1, le=64)
    dry_run: bool = Field(False, description="Only the cost, as `eval --dry-run`: items per relation, example "
                                             "prompts, tokens and a time from a few items scored; no run written")
    seed: int = Field(SEED, ge=0, le=2**31 - 1)
    options: dict[str, OptionValue] = Field(
        default_factory=dict, max_length=32,
        description="The method's options by name, checked at the door against its declaration "
                    "(`x-options-by-method`; `factprobe eval --help` lists the same).",
        json_schema_extra={"x-options-by-method": method_options_schema()})


class JobRefused(ValueError):
    """A job read back by a restarted server that no longer passes the checks a new job passes
    (admission.resumed_work): it fails with this line, and is not run."""


class JobQueue:
    """The jobs of one data folder: their records (JobStore, DATA/jobs.sqlite) and the one worker
    thread that runs them."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / "jobs"
        self.root.mkdir(parents=True, exist_ok=True)
        self.held = hold_data_folder(data_dir)  # DataFolderInUse when another server runs these jobs
        self.store = JobStore(data_dir)
        self.lock = threading.Lock()  # counting the pending jobs and adding one are one step
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="factprobe-job")

    def get(self, job_id: str) -> Job | None:
        return self.store.get(job_id)

    def submit(self, kind: str, params: dict, work: Callable[[Job], dict]) -> Job | None:
        """Queue `work(job)` (its return value becomes the job's summary); None when the queue is full."""
        with self.lock:
            if self.store.pending() >= MAX_PENDING:
                return None
            job_id = uuid.uuid4().hex
            job = Job(job_id, kind, params, self.root / job_id)
            self.store.insert(job)
        self.pool.submit(self._run, job, work)
        return job

    def recover(self, make_work: Callable[[Job], Callable[[Job], dict]]) -> list[str]:
        """The jobs the last process left queued or running, queued again in their order with
        `make_work(job)`; failed with the reason when `make_work` refuses it (JobRefused), left
        interrupted with the reason when it was running twice or `make_work` raised otherwise.
        Returns the entries of DATA/jobs/ that belong to no job (and logs them)."""
        for job in self.store.unfinished():
            was = job.status
            if was == "running":
                job.restarts += 1
            if job.restarts > MAX_RESTARTS:
                self._interrupt(job, f"the service restarted while the job was running, {job.restarts} times; "
                                     "it is not resumed again (submit it again)")
                continue
            try:
                work = make_work(job)
            except JobRefused as error:
                job.status, job.finished = "failed", time.time()
                job.error = (f"the service restarted while the job was {was}, and the job no longer passes the "
                             f"checks a new job passes, so it was not run: {error}")
                self.store.save(job)
                log.warning("job %s (%s): %s", job.id, job.kind, job.error)
                continue
            except Exception as error:  # whatever it is, the job says why it did not resume
                self._interrupt(job, f"the service restarted while the job was {was}, and it cannot be resumed: "
                                     f"{error}")
                continue
            job.status, job.started = "queued", None
            self.store.save(job)
            log.warning("job %s (%s) was %s when the service stopped: queued again", job.id, job.kind, was)
            self.pool.submit(self._run, job, work)
        unlisted = self.store.unlisted_folders(self.root)
        if unlisted:
            log.warning("%d folder(s) under %s belong to no job: %s", len(unlisted), self.root,
                        ", ".join(unlisted[:10]) + (" ..." if len(unlisted) > 10 else ""))
        return unlisted

    def _interrupt(self, job: Job, reason: str) -> None:
        job.status, job.error, job.finished = "interrupted", reason, time.time()
        self.store.save(job)
        log.warning("job %s (%s): %s", job.id, job.kind, reason)

    def _run(self, job: Job, work: Callable[[Job], dict]) -> None:
        job.started, job.status = time.time(), "running"
        try:
            self.store.save(job)
            job.folder.mkdir(parents=True, exist_ok=True)
            job.summary = work(job)
            job.status = "done"
        except Exception as error:  # a job fails with its message; the server goes on
            log.warning("job %s (%s) failed: %s", job.id, job.kind, error, exc_info=not isinstance(error, ValueError))
            job.error = str(error) or type(error).__name__
            job.status = "failed"
        finally:
            job.finished = time.time()
        try:
            self.store.save(job)
        except Exception:  # the job's row stays "running": the next start resumes it
            log.exception("job %s: its record could not be written", job.id)

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def probeset_work(store: Path, request, models: ModelCache) -> Callable[[Job], dict]:
    """The work of a probe-set job: `build_step` (the command's) on a BuildRequest, silently, a
    model it asks for (appropt, single_token) loaded from the server's cache."""
    from ..steps import SILENT, build_step

    def work(job: Job) -> dict:
        meta = build_step(store, job.probes, request, SILENT, models)
        return {"items": meta.items, "kind": meta.kind, "sha256": meta.sha256}

    return work


# The progress of each evaluation job running in this process, by job id: GET /jobs/{id} reads it
# while the job runs (it is not a record: a restarted server starts its jobs' progress over).
_RUNNING: dict[str, Any] = {}


def job_progress(job_id: str) -> dict | None:
    """A running evaluation job's stage, items done of the total, elapsed and eta seconds
    (cli/progress.RunProgress); None when the job is not an evaluation running here."""
    found = _RUNNING.get(job_id)
    return None if found is None else found.view()


def eval_work(models: ModelCache, probes: Path, request: EvalRequest) -> Callable[[Job], dict]:
    """The work of an evaluation job: `eval_step` (the command's) on the request's Evaluation, the
    served model loaded from the server's cache, silently, its progress kept for GET /jobs/{id}."""
    from ...probes.evaluation.entry import Evaluation
    from ..progress import RunProgress
    from ..steps import SILENT, dry_run_step, eval_step

    def work(job: Job) -> dict:
        _RUNNING[job.id] = watch = RunProgress()
        try:
            return _evaluate(job, watch)
        finally:
            _RUNNING.pop(job.id, None)

    def _evaluate(job: Job, watch) -> dict:
        evaluation = Evaluation(request.model, request.method, probes, job.run_dir, options=dict(request.options),
                                limit=request.limit, stratify=request.stratify, batch=request.batch,
                                seed=request.seed)
        if request.dry_run:  # the job's summary is the cost; its folder holds no run
            return asdict(dry_run_step(evaluation, models, SILENT))
        summary = eval_step(evaluation, models, SILENT, watch=watch)
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

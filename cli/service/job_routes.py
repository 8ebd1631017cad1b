"""The HTTP service's `jobs` routes (one APIRouter): start a probe-set build or an evaluation
run (POST, bearer token), list the jobs, read a job's status and its result page by page. The
queue, the request models and the work itself are in jobs.py, the job records in
store.py, the checks a request passes before it is queued (and again when a restarted server
resumes it) in admission.py."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Path as PathParam, Query

from .admission import admit_eval, admit_probeset
from .guard import require_token
from .jobs import (JOB_ID, EvalRequest, Job, ProbesetRequest, eval_work, job_progress, probeset_work, read_json,
                   read_page)
from .state import ServiceState, State

JobId = Annotated[str, PathParam(pattern=JOB_ID, description="A job id as POST /jobs/... returned it.")]

jobs_router = APIRouter(tags=["jobs"])


def started(job: Job | None) -> dict:
    if job is None:
        raise HTTPException(429, "too many jobs queued or running; try again later")
    return {"job_id": job.id, "status": job.status}


@jobs_router.post("/jobs/probeset", status_code=202, dependencies=[Depends(require_token)])
def start_probeset(request: ProbesetRequest, state: State) -> dict:
    built = admit_probeset(request, state.config, state.res.kg())
    return started(state.jobs.submit("probeset", built.to_dict(), probeset_work(state.config.store, built,
                                                                              state.models)))


@jobs_router.post("/jobs/eval", status_code=202, dependencies=[Depends(require_token)])
def start_eval(request: EvalRequest, state: State) -> dict:
    probes = admit_eval(request, state.config, state.jobs)
    return started(state.jobs.submit("eval", request.model_dump(), eval_work(state.models, probes, request)))


def job_of(state: ServiceState, job_id: str) -> Job:
    job = state.jobs.get(job_id)
    if job is None:
        raise HTTPException(404, f"no job {job_id}")
    return job


@jobs_router.get("/jobs")
def list_jobs(state: State, status: Literal["queued", "running", "done", "failed", "interrupted"] | None = None,
              offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
              limit: Annotated[int, Query(ge=1, le=500)] = 100) -> dict:
    """The jobs this data folder records, newest first, and the folders under DATA/jobs/ that
    belong to none of them (`unlisted_folders`: left by hand or by a server from before job
    records were kept)."""
    store = state.jobs.store
    page = [job.view() for job in store.page(status, offset, limit + 1)]
    return {"counts": store.counts(), "offset": offset, "limit": limit, "jobs": page[:limit],
            "next_offset": offset + limit if len(page) > limit else None,
            "unlisted_folders": store.unlisted_folders(state.jobs.root)}


@jobs_router.get("/jobs/{job_id}")
def job_status(job_id: JobId, state: State) -> dict:
    """The job's record, and while an evaluation runs its `progress`: stage, items done of the
    total, elapsed and estimated seconds left (null otherwise)."""
    job = job_of(state, job_id)
    return {**job.view(), "progress": job_progress(job.id) if job.status == "running" else None}


@jobs_router.get("/jobs/{job_id}/result")
def job_result(job_id: JobId, state: State, offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
               limit: Annotated[int, Query(ge=1, le=500)] = 100) -> dict:
    job = job_of(state, job_id)
    if job.status != "done":
        raise HTTPException(409, f"job {job_id} is {job.status}" + (f": {job.error}" if job.error else ""))
    if job.kind == "probeset":
        from ...probes.building.probeset import sidecar_path

        meta = read_json(sidecar_path(job.probes))
        items = read_page(job.probes, offset, limit)
        total = meta["items"] if meta else None
        extra = {"meta": meta}
    else:
        aggregate = read_json(job.run_dir / "aggregate.json")
        items = read_page(job.run_dir / "items.jsonl", offset, limit)
        total = job.summary.get("items")
        extra = {"aggregate": aggregate}
    more = total is not None and offset + len(items) < total
    return {"job_id": job.id, "kind": job.kind, "offset": offset, "limit": limit, "total": total,
            "items": items, "next_offset": offset + limit if more else None, **extra}

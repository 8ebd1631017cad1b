"""What a job must pass to be run: one check per kind of job, called at the door (job_routes.py)
and again when a restarted server reads a queued or running job back (`resumed_work`), with the
permissions of the server now running: a job queued under `--allow-model X` is not run by a
server started without it. A refusal at the door is the route's 4xx; a job read back that no
longer passes fails with the same words (jobs.JobRefused), and is not run.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from fastapi import HTTPException
from pydantic import ValidationError

from .checks import check_against_store, check_method_options, refuse, refuse_not_allowed
from .jobs import EvalRequest, JobQueue, JobRefused, ProbesetRequest, eval_work, probeset_work
from .store import Job

if TYPE_CHECKING:
    from ...probes.building.build import BuildRequest
    from ...probes.scoring.model_cache import ModelCache
    from .config import ServiceConfig


class Resuming(Protocol):
    """What resuming a job reads of the server's state (state.ServiceState has it)."""

    config: ServiceConfig
    jobs: JobQueue
    models: ModelCache

    @property
    def res(self): ...


def admit_probeset(request: ProbesetRequest, config: ServiceConfig, kg) -> BuildRequest:
    """The build a probe-set request asks for, every check passed: what it names on the
    server's disk allowed by the operator, its relations, corpus and languages in the store, a
    semantic index where its strategies need one (the server's own by default), its options
    together as its kind's declaration takes them. HTTPException (422 naming the field, 409)."""
    from ...probes.building.build import build_request
    from ..build_options import merged_options

    values = request.model_dump(exclude_none=True)
    kind = values.pop("kind")
    own = (str(config.semantic),) if config.semantic is not None else ()  # the index it gives builds itself
    # a model, a folder: only what the operator allowed, before anything is read
    refuse_not_allowed(values, {name: merged.spec for name, merged in merged_options().items()},
                       (*config.allowed, *own))
    check_against_store(values, kg)
    if kind == "distractor":
        if "semantic" not in values and own:
            values["semantic"] = own[0]
        if set(values.get("strategies") or ()) - {"random", "appropt"} and "semantic" not in values:
            raise HTTPException(409, "strategies sem and temp+sem need a semantic index (--semantic DIR)")
    try:
        return build_request(kind, values)
    except ValueError as error:  # an option of another kind, or a value its declaration refuses
        refuse((), str(error), values)


def admit_eval(request: EvalRequest, config: ServiceConfig, jobs: JobQueue) -> Path:
    """The probe set an evaluation request reads, every check passed: a served model, its
    method's options (what they name allowed; each as `eval --option` checks it), a finished
    probe-set job of a kind the method reads. HTTPException (422 naming the field, 404, 409)."""
    from ...probes.methods import registered

    if request.model not in config.models:
        refuse(("model",), f"model {request.model!r}: use one of {', '.join(config.models)}", request.model)
    method = registered()[request.method]
    check_method_options(method, request.options, config.allowed)
    source = jobs.get(request.probeset_job)
    if source is None or source.kind != "probeset":
        raise HTTPException(404, f"no probeset job {request.probeset_job}")
    if source.status != "done":
        raise HTTPException(409, f"probeset job {source.id} is {source.status}, not done")
    kind = source.params["kind"]
    if kind not in method.kinds:
        refuse(("method",), f"method {request.method} reads {' or '.join(method.kinds)} probe sets; "
                            f"job {source.id} built {kind}", request.method)
    return source.probes


def resumed_work(job: Job, state: Resuming) -> Callable[[Job], dict]:
    """The work of a job read back from its record, for a restarted server to run again, once
    its request passes the checks a new one passes (JobRefused with the first refusal when it
    does not): a build starts over in an emptied folder; an evaluation continues in its run
    folder (eval_step's resume) over its probe-set job's file."""
    try:
        if job.kind == "probeset":
            params = job.params
            request = ProbesetRequest.model_validate({"kind": params["kind"], **params["selection"],
                                                      **params["options"]})
            built = admit_probeset(request, state.config, state.res.kg())
            if job.folder.exists():
                shutil.rmtree(job.folder)  # nothing of the killed build is taken for part of the new one
            return probeset_work(state.config.store, built, state.models)
        if job.kind == "eval":
            request = EvalRequest.model_validate(job.params)
            return eval_work(state.models, admit_eval(request, state.config, state.jobs), request)
    except (HTTPException, ValidationError) as error:
        raise JobRefused(refusal(error)) from None
    raise ValueError(f"a job of kind {job.kind!r}")


def refusal(error: HTTPException | ValidationError) -> str:
    """A refusal in one line: the field it names, then why."""
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        field, why = ".".join(str(part) for part in first["loc"]), first["msg"]
    elif isinstance(error.detail, list):
        first = error.detail[0]
        field, why = ".".join(str(part) for part in first["loc"][1:]), first["msg"]  # loc[0] is "body"
    else:
        field, why = "", str(error.detail)
    return why if not field or why.startswith(field.rsplit(".", 1)[-1]) else f"{field}: {why}"

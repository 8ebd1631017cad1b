"""The one entry of an evaluation. An `Evaluation` says what to run: the model spec, the method
and its options, the probe set, the results folder, --limit, --batch, --seed, a shard, whether
to restart or overwrite the folder, and where the model loads. `run_evaluation` runs it in the
order every caller needs: everything that needs no model first (the folder claimed, the model
spec, then the probe set, its kind, the options and the folder's run: probes/runner.plan_eval),
so that bad input costs no load; then the model through a ModelCache (kept for the next
evaluation of the same spec); then the items into the folder, and the EvalSummary.
`estimate_evaluation` goes the same way up to the model, then says what the run would cost
(probes/evaluation/cost.py) and writes nothing: `eval --dry-run`, `--batch auto`.

`factprobe eval`, the pipeline's evaluations and the service's eval jobs each build an
Evaluation and run it (through cli/steps.eval_step, which adds the progress bar and the
summary line); the pieces underneath, `plan_eval` and `evaluate` (probes/evaluation/runner.py), stay
public for a caller holding a scorer that no spec names (the tests' scripted ones).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping

from ...kg.outputs import OutputError
from .runner import BATCH, SEED, EvalPlan, EvalSummary, claim_run_folder, evaluate, plan_eval
from ..scoring.model_cache import ModelCache
from ..scoring.scorer import ScoringError
from ..scoring.specs import check_spec, parse_spec
from .cost import CALIBRATE, EvalCost, estimate_cost
from .sample import DEFAULT_STRATIFY
from .shard import Shard


class EvalInputError(ValueError):
    """An evaluation's input refused before any model loaded, in one line (the check's own)."""


class ModelLoadError(ValueError):
    """The evaluation's model could not be loaded, in one line (the loader's own)."""


@dataclass(frozen=True)
class Evaluation:
    """What one evaluation needs, as `factprobe eval` takes it.

    model: a model spec (probes/scoring/specs.py: "smollm2-135m-instruct", "hf:PATH", ...).
    method: a registered method (probes.methods.registered()); options: its options by name.
    probes: the probe set's JSONL; out: the results folder (run.json, items.jsonl,
    aggregate.json; a rerun continues there). limit: only `limit` test items, a seeded sample
    stratified by `stratify` ("relation", "bucket", or "none": the first `limit`; sample.py);
    batch: items per scorer call (and per checkpoint); seed: of every draw the method makes.
    shard: only this part of the run (probes/evaluation/shard.py), whole batches of `batch`.
    restart: start `out` over; overwrite: take an `out` holding files no run wrote (its own
    files then start over). device, dtype: where and how the model loads when run_evaluation
    makes its own ModelCache (None: FACTPROBE_DEVICE / FACTPROBE_DTYPE, else auto).
    """
    model: str
    method: str
    probes: Path
    out: Path
    options: Mapping[str, Any] = field(default_factory=dict)
    limit: int | None = None
    stratify: str = DEFAULT_STRATIFY
    batch: int = BATCH
    seed: int = SEED
    shard: Shard | None = None
    restart: bool = False
    overwrite: bool = False
    device: str | None = None
    dtype: str | None = None

    def __post_init__(self) -> None:  # paths as given, options a read-only copy
        object.__setattr__(self, "probes", Path(self.probes))
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))


def run_evaluation(evaluation: Evaluation, *, models: ModelCache | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   stage: Callable[[str], None] | None = None) -> EvalSummary:
    """Run `evaluation`: check its input, load its model, evaluate the items the folder does not
    hold yet, write aggregate.json.

    Args:
        evaluation: What to run.
        models: The ModelCache the model loads through (the pipeline's and the service's keep
            one for all their evaluations); None: a new one on the evaluation's device and dtype.
        progress: Called with (items done, items in the run) once the model has loaded, then
            after each piece the method scores (an item or a batch: Method.run_each).
        stage: Called with a line at each stage that takes time before the first item: "loading
            model SPEC ..." before a load (not when `models` holds it), then "model SPEC loaded
            in 12.3 s".

    Returns:
        The EvalSummary (probes/evaluation/runner.py): the folder's item count, those this call computed,
        rejected lines, aggregate.json's contents and warnings.

    Raises:
        OutputError: `out` may not be written (kg/outputs.py), before anything else.
        EvalInputError: the model spec, the probe set, its kind, the options or the folder's run
            refused, before any model loads; the message is the check's own.
        ModelLoadError: the model could not be loaded.
        ValueError, ScoringError, Unsupported, OSError: while evaluating, as probes.evaluation.runner.evaluate.
    """
    models = _cache(evaluation, models)
    plan = _checked(evaluation)
    scorer = _announced_load(models, evaluation.model, stage)
    return evaluate(scorer, plan.method, plan.probes, plan.out, batch=evaluation.batch, progress=progress, plan=plan)


def estimate_evaluation(evaluation: Evaluation, *, models: ModelCache | None = None,
                        stage: Callable[[str], None] | None = None, calibrate: int = CALIBRATE) -> EvalCost:
    """What `evaluation` will cost (probes/evaluation/cost.py): its input checked as
    run_evaluation checks it, its model loaded, every request listed and `calibrate` items timed;
    nothing is written. Raises as run_evaluation does before it scores."""
    models = _cache(evaluation, models)
    plan = _checked(evaluation)
    scorer = _announced_load(models, evaluation.model, stage)
    return estimate_cost(scorer, plan, batch=evaluation.batch, calibrate=calibrate)


def _announced_load(models: ModelCache, spec: str, stage: Callable[[str], None] | None):
    loading = stage is not None and not models.holds(spec)
    if loading:
        stage(f"loading model {spec} ...")
    started = time.perf_counter()
    scorer = _load(models, spec)
    if loading:  # a load is silent for 10-70 s otherwise: the line says what the wait was
        stage(f"model {spec} loaded in {time.perf_counter() - started:.1f} s")
    return scorer


def _checked(evaluation: Evaluation) -> EvalPlan:
    """Every check that needs no model, in this order: the folder's claim, the model spec, then
    plan_eval's (the probe set's kind against the method, its lines, the options, the folder's run)."""
    try:
        # the folder: a run factprobe wrote is resumed; one of other files only with overwrite, started over
        restart = claim_run_folder(evaluation.out, overwrite=evaluation.overwrite,
                                   inputs=[evaluation.probes]) or evaluation.restart
        check_spec(parse_spec(evaluation.model))
        return plan_eval(evaluation.method, evaluation.probes, evaluation.out, options=dict(evaluation.options),
                         limit=evaluation.limit, seed=evaluation.seed, restart=restart, shard=evaluation.shard,
                         batch=evaluation.batch, stratify=evaluation.stratify)
    except OutputError:
        raise  # typed already: the output refused
    except (ValueError, OSError, ScoringError) as error:  # ScoringError: an API judge a method option names
        raise EvalInputError(str(error)) from error


def _cache(evaluation: Evaluation, models: ModelCache | None) -> ModelCache:
    if models is None:
        return ModelCache(evaluation.device, evaluation.dtype)
    clash = [f"{name} {asked!r}" for name, asked in (("device", evaluation.device), ("dtype", evaluation.dtype))
             if asked is not None and asked != getattr(models, name)]
    if clash:
        raise ValueError(f"the evaluation asks for {' and '.join(clash)}; the model cache given loads on "
                         f"device {models.device!r}, dtype {models.dtype!r}")
    return models


def _load(models: ModelCache, spec: str):
    try:
        return models.get(spec)
    except (ValueError, FileNotFoundError, ScoringError) as error:  # SpecError is a ValueError
        raise ModelLoadError(str(error)) from error

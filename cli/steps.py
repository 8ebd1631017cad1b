"""The steps of the jobs factprobe runs, one function each: build a probe set, evaluate, write a
report (and, in steps_graph.py, the graph and corpus steps). The `factprobe` command, the
pipeline (`factprobe run`) and the service call these same functions; each says what it did
through a `Console`: summary lines on stdout, progress, notes and warnings on stderr, or nowhere
for the service, which keeps the returned result instead. Each writing step holds its output's
lock while it writes (kg/output_lock.hold_output): one writer per output.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .terminal import echo


def _stdout(text: str) -> None:
    echo(text)


def _stderr(text: str) -> None:
    echo(text, err=True)


@dataclass(frozen=True)
class Console:
    """Where a step writes: `say` its summary (stdout), `note` warnings and rejects (stderr);
    `quiet` turns progress bars and progress notes off."""
    quiet: bool = False
    say: Callable[[str], None] = _stdout
    note: Callable[[str], None] = _stderr


SILENT = Console(quiet=True, say=lambda _: None, note=lambda _: None)


# -- probe sets -----------------------------------------------------------------------------------


def build_step(store: str | Path, out: str | Path, request, console: Console = Console(), models=None,
               overwrite: bool = False):
    """`factprobe probeset build`: the probe set `request` (probes.building.build.BuildRequest) from the
    store into `out`; prints the kind's warnings and the summary. `models`: the ModelCache a kind
    that asks a model loads from; `overwrite`: replace a probe set at `out` that this build would
    change. Returns the ProbeSetMeta. FileNotFoundError when there is no store; ValueError when
    the build cannot be made or would change the probe set at `out`. Underneath:
    probes.building.build.build_probeset, whose docstring details the arguments."""
    from ..kg.output_lock import hold_output
    from ..probes.building.build import build_probeset
    from ..probes.kinds import get_kind
    from ..probes.building.listed import fact_list_lines
    from ..probes.building.probeset import claim_probeset, require_pyarrow, sidecar_path

    if not Path(store).is_file():
        raise FileNotFoundError(f"no knowledge-graph store at {store}")
    if request.options.parquet:
        require_pyarrow()  # before the build writes the JSONL
    progress = None if console.quiet else (lambda text: console.note(f"{text} ..."))
    with hold_output(out, folder=False, beside=[sidecar_path(out).name]):  # one build writes a set at a time
        claim_probeset(out, overwrite=overwrite, inputs=(store,), parquet=request.options.parquet)
        meta = build_probeset(store, out, request, progress=progress, models=models, overwrite=overwrite)
    kind = get_kind(request.kind)
    for warning in kind.warnings(meta.source):
        console.note(f"warning: {warning}")
    out = Path(out)
    console.say(f"{meta.items:,} {request.kind} items from {meta.source['selection']['kept']:,} facts -> {out} "
                f"(sidecar {out.name.removesuffix('.jsonl')}.meta.json)")
    for line in kind.summary_lines(meta.source):
        console.say(line)
    summary, unselected = fact_list_lines(meta.source)  # a fact list: every listed fact left out, and why
    for line in summary:
        console.say(line)
    for line in unselected:
        console.note(line)
    return meta


# -- evaluation -----------------------------------------------------------------------------------


def eval_step(evaluation, models=None, console: Console = Console(), watch=None):
    """`factprobe eval`: the Evaluation (probes/evaluation/entry.py) run by
    probes.evaluation.entry.run_evaluation, the one entry every caller goes through, with a progress
    bar once the model has loaded; prints warnings, rejected records and the summary line.
    `models`: the ModelCache the model loads through (a new one on the evaluation's device and
    dtype by default). `watch`: a cli/progress.RunProgress kept up to date (the service's job
    status reads it). A model load is announced on stderr with its time, unless quiet.
    Returns the EvalSummary; raises as run_evaluation does (OutputError, EvalInputError
    before any model loads)."""
    from ..kg.output_lock import hold_output
    from ..probes.evaluation.entry import run_evaluation

    bar = _ProgressBar(console.quiet)
    try:
        with hold_output(evaluation.out, folder=True):  # two runs into one folder would write every item twice
            summary = run_evaluation(evaluation, models=models, progress=_both(bar, watch and watch.items),
                                     stage=_both(None if console.quiet else console.note, watch and watch.note))
    finally:
        bar.close()
    for line in summary.warnings:
        console.note(f"warning: {line}")
    for line in summary.rejected:
        console.note(f"rejected {line}")
    figures = eval_headline(evaluation.method, summary.aggregate, evaluation.probes)
    console.say(f"{evaluation.method} on {summary.items:,} items ({summary.new:,} new)"
                f"{f': {figures}' if figures else ''} -> {summary.out}/aggregate.json")
    return summary


def dry_run_step(evaluation, models=None, console: Console = Console()):
    """`factprobe eval --dry-run`: the evaluation's cost (probes/evaluation/cost.py) before it runs:
    items per relation, example prompts, tokens, a calibrated time; nothing written. Returns the
    EvalCost; raises as eval_step does before it scores."""
    from ..probes.evaluation.entry import estimate_evaluation

    cost = estimate_evaluation(evaluation, models=models, stage=None if console.quiet else console.note)
    for line in cost_lines(cost):
        console.say(line)
    for line in cost.notes:
        console.note(f"note: {line}")
    return cost


def cost_lines(cost) -> list[str]:
    """An EvalCost as `eval --dry-run` prints it."""
    relations = ", ".join(f"{r} {n:,}" for r, n in sorted(cost.by_relation.items()))
    lines = [f"dry run: {cost.method} on {cost.items:,} items ({cost.todo:,} to do) with {cost.model}",
             f"items per relation: {relations}"]
    lines += [f"example prompt {k}: {text}" for k, text in enumerate(cost.examples, start=1)]
    lines.append(f"tokens: {cost.tokens:,} prompt and continuation tokens in {cost.requests:,} requests"
                 if cost.tokens is not None else "tokens: unknown")
    if cost.seconds_per_item is not None:
        warmup = f" after {cost.warmup_seconds:.1f} s of warm-up" if cost.warmup_seconds is not None else \
            " (warm-up included)"
        lines.append(f"calibration: {cost.calibrated} items, {cost.seconds_per_item:.2f} s an item{warmup}: about "
                     f"{_duration(cost.estimate_seconds)} for the {cost.todo:,} items to do at --batch {cost.batch}")
    lines.append("nothing written (--dry-run)")
    return lines


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {rest:02d}s" if minutes else f"{rest}s"


def auto_batch_step(evaluation, models, console: Console = Console()):
    """`eval --batch auto`: the evaluation with the batch a calibration picks (cost.auto_batch),
    said on stderr. `models`: the ModelCache the run then uses, so the model loads once."""
    from dataclasses import replace

    from ..probes.evaluation.cost import auto_batch
    from ..probes.evaluation.entry import estimate_evaluation

    cost = estimate_evaluation(evaluation, models=models, stage=None if console.quiet else console.note)
    batch = auto_batch(cost.seconds_per_item)
    timed = f"{cost.seconds_per_item:.2f} s an item over {cost.calibrated}" if cost.seconds_per_item else "nothing to time"
    console.note(f"--batch auto: {batch} ({timed})")
    return replace(evaluation, batch=batch)


def eval_headline(method: str, aggregate: dict, probes: Path | None) -> str:
    """The run's figures as its method states them (Method.headline: Min@n and Avg@n for a
    distractor run, where one accuracy would be n/a), the ones `factprobe run` ends with;
    `probes` None where the probe set is not at hand (then without the figures read from it)."""
    from ..probes.methods import Method, registered

    return registered().get(method, Method).headline(aggregate, probes)


def _both(*callbacks):
    """One callback calling each given one in turn; None when none is given."""
    kept = [c for c in callbacks if c]
    if not kept:
        return None
    return lambda *args: [c(*args) for c in kept] and None


class _ProgressBar:
    """tqdm's bar, opened at the first report: after the model has loaded, so a refusal before
    it prints no bar."""

    def __init__(self, quiet: bool) -> None:
        self.quiet, self.bar = quiet, None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(unit=" items", disable=self.quiet, dynamic_ncols=True)
        self.bar.total, self.bar.n = total, done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def option_value(value: Any) -> Any:
    """A method option's value as `eval --option KEY=VALUE` reads it: text that is JSON is parsed
    ("10" is 10, "true" is True), other text stays text (`separator=": "`); lists and numbers
    stay what they are."""
    import json

    if not isinstance(value, str):
        return json.loads(json.dumps(value))
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


# -- report ---------------------------------------------------------------------------------------


def report_step(folders: Sequence[str | Path], out: str | Path, title: str, definitions=None,
                console: Console = Console(), overwrite: bool = False, items=None):
    """`factprobe report`: tables and plots over finished runs into `out` (Markdown and a
    self-contained HTML page), and the item view (items.html; `items`: its ItemViewOptions);
    `overwrite`: write into a folder holding other files (a run folder's, a link, are refused
    always: cli/outputs.py). Returns the ReportFiles."""
    from ..kg.output_lock import hold_output
    from ..probes.report import Definitions, load_runs, write_report
    from ..probes.report.items_data import ItemViewOptions
    from .outputs import claim_report_folder

    folders = [Path(f) for f in folders]
    with hold_output(out, folder=True):
        claim_report_folder(out, overwrite=overwrite, inputs=folders)
        runs = load_runs(folders)
        files = write_report(runs, Path(out), title, definitions or Definitions(), items or ItemViewOptions())
    for line in files.warnings:  # also at the top of report.html
        console.note(f"warning: {line}")
    console.say(f"{len(runs)} run(s) -> {files.markdown}, {files.html}, {files.items}, {len(files.images)} plot(s)")
    return files

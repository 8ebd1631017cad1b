"""`factprobe export lm-eval`: a probe set and a method as an lm-evaluation-harness task folder
(probes/formats/export_lm_eval.py writes it)."""

from __future__ import annotations

import json
import sys

import click

from .errors import EXIT_PARTIAL, EXIT_USAGE, fail
from .eval_cmds import MethodChoice
from .options import FolderPath, json_option, method_options
from .outputs import overwrite_option
from .terminal import echo


@click.group("export")
def export_group() -> None:
    """Probe sets in other tools' formats.

    \b
    factprobe export lm-eval --probes kdf.jsonl --method kdf --out tasks/kdf
    lm_eval --model hf --model_args pretrained=HuggingFaceTB/SmolLM2-135M-Instruct \\
        --include_path tasks/kdf --tasks factprobe_kdf_kdf --log_samples --output_path out/
    """


@export_group.command("lm-eval")
@click.option("--probes", required=True, type=click.Path(dir_okay=False, exists=True), help="A probe-set JSONL.")
@click.option("--method", required=True, type=MethodChoice(),
              help="kdf, ic-lke, eic-lke or belief-icl (the others are refused, with the reason).")
@click.option("--out", "out_dir", required=True, type=FolderPath(),
              help="The task folder: NAME.yaml, NAME.jsonl and utils.py (one task per folder).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Method option as `factprobe eval` takes it; what changes a prompt is written into the "
                   "exported text. Repeatable.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of demonstration draws (the same as eval's, for the same prompts).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N test items.")
@click.option("--name", help="The harness task's name (--tasks NAME) [default: factprobe_<set>_<method>].")
@overwrite_option
@json_option
def export_lm_eval_command(probes, method, out_dir, options, seed, limit, name, overwrite, as_json):
    """Write an lm-evaluation-harness 0.4.x task folder (`lm_eval --include_path OUT --tasks NAME`)
    whose `acc` is factprobe's `correct` item by item: KDF, IC-LKE and EIC-LKE as multiple_choice
    over the scored continuations, BELIEF-ICL's greedy answers as generate_until matched by
    factprobe's answer matching. A method or option harness cannot express is refused by name.

    Beside NAME, harness groups: NAME_by_relation (a subtask per relation), NAME_by_bucket (per
    frequency bucket, where the items have buckets) and NAME_breakdowns (both); `--tasks
    NAME_by_relation` prints acc per relation and the group's acc over all items."""
    from ..probes.formats.export_lm_eval import export_lm_eval

    try:
        task = export_lm_eval(method, probes, out_dir, options=method_options(options), seed=seed, limit=limit,
                              name=name, overwrite=overwrite)
    except (ValueError, OSError) as error:
        fail(str(error), EXIT_USAGE)
    for line in task.rejected:  # as eval names them: the task holds every other item
        echo(f"rejected {line}", err=True)
    if as_json:
        echo(json.dumps({"task": task.name, "folder": str(task.folder), "files": list(task.files),
                               "documents": task.documents, "output_type": task.output_type,
                               "method": task.method, "options": task.options, "rejected": len(task.rejected),
                               "groups": list(task.groups)}))
    else:
        echo(f"{task.documents:,} {task.output_type} documents -> {task.folder}/{task.name}.yaml; run: lm_eval "
                   f"--include_path {task.folder} --tasks {task.name} --log_samples")
        if task.groups:
            echo(f"groups (acc per relation / bucket and over all): {', '.join(task.groups)}")
    if task.rejected:
        sys.exit(EXIT_PARTIAL)

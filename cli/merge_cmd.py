"""One evaluation over many processes: `factprobe merge` (the shards of one run into one results
folder, probes/evaluation/shard_merge.py), and what `factprobe eval` does with --shard or under `torchrun`
/ `accelerate launch`: pick the shard and its folder (OUT/shard-K-of-N), the worker's device
(cuda:LOCAL_RANK), and on rank 0 wait for the other ranks' shards and merge them into OUT.

The wait is a file-based barrier (a shard is finished when its records and aggregate.json are
written): torch.distributed is not needed, and the ranks share nothing but the folder, so on
several nodes OUT must be on a shared filesystem. If a rank fails, torchrun stops the others.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import click

from .errors import EXIT_FAILURE, EXIT_USAGE, fail, os_error_line
from .options import FolderPath, json_option
from .outputs import claim_merge_folder, overwrite_option
from .terminal import echo


@dataclass(frozen=True)
class ShardSetup:
    """Where and how this `eval` process runs: `shard` None for a whole run in `out`."""
    shard: object  # probes.evaluation.shard.Shard | None
    out: str  # this process's results folder (a shard's: OUT/shard-K-of-N)
    run_out: str  # --out
    device: str
    launched: bool  # a torchrun / accelerate worker (not an explicit --shard)

    @property
    def merges(self) -> bool:
        """Rank 0 of a launch gathers the shards into --out."""
        return self.launched and self.shard.index == 0

    @property
    def reports(self) -> bool:
        """Whether this process prints the run's JSON and exits 3 on rejected records: not the
        other ranks of a launch (torchrun would read their exit 3 as a failure and stop rank 0)."""
        return not self.launched or self.shard.index == 0


def shard_setup(shard_text: str | None, out_dir: str, device: str) -> ShardSetup:
    """--shard K/N if given, else the launcher's RANK / WORLD_SIZE; one-line error on bad ones."""
    from ..probes.evaluation.shard import Shard, launched, local_device

    try:
        if shard_text is not None:
            shard = Shard.parse(shard_text)
            return ShardSetup(shard, str(shard.folder(out_dir)), out_dir, device, False)
        launch = launched()
    except ValueError as error:
        fail(str(error), EXIT_USAGE)
    if launch is None:
        return ShardSetup(None, out_dir, out_dir, device, False)
    import torch

    device = local_device(device, launch, torch.cuda.is_available())
    return ShardSetup(launch.shard, str(launch.shard.folder(out_dir)), out_dir, device, True)


def merge_after_launch(setup: ShardSetup, summary, wait: float, console, probes: Path | None = None):
    """On rank 0 of a launch: waits up to `wait` seconds for the other ranks' shards, merges
    them into --out and returns the merged run's EvalSummary; elsewhere `summary` as it is.
    `probes`: the probe set the eval read, for the merged line's figures."""
    from ..probes.evaluation.shard_merge import MergeError, merge_shards, wait_for_shards

    if not setup.merges:
        return summary
    count = setup.shard.count
    if count > 1 and not console.quiet:
        console.note(f"rank 0: waiting for the other {count - 1} shard(s) under {setup.run_out} ...")
    left = wait_for_shards(setup.run_out, count, wait)
    if left:
        fail(f"rank 0 waited {wait:g}s for {', '.join(left)} under {setup.run_out}; when they finish: "
             f"factprobe merge {setup.run_out}/shard-*-of-{count} --out {setup.run_out}", EXIT_FAILURE)
    folders = [Path(setup.run_out) / f"shard-{k}-of-{count}" for k in range(count)]
    try:
        merged = merge_shards(folders, setup.run_out)
    except MergeError as error:
        fail(str(error), EXIT_FAILURE)
    except OSError as error:
        fail(os_error_line(error), EXIT_FAILURE)
    console.say(_merged_line(merged, probes))
    return dataclasses.replace(summary, out=merged.out, items=merged.items, aggregate=merged.aggregate)


def _merged_line(merged, probes: Path | None) -> str:
    """The merged run's figures as `eval` states them (its method's headline); `probes` None
    where the probe set is not at hand, so the line goes without what is read from it (chance)."""
    from .steps import eval_headline

    method = merged.aggregate.get("method")
    figures = eval_headline(method, merged.aggregate, probes)
    return (f"merged {merged.shards} shard(s): {method} on {merged.items:,} items{f': {figures}' if figures else ''}"
            f" -> {merged.out}/aggregate.json")


def _recorded_probe_set(out: str | Path) -> Path | None:
    """The probe set a merged run read, from the path its run.json records (the shards' own;
    the runner records a file name, looked for in the current folder, a hand-written one may be
    a full path): only a file whose bytes hash to the recorded probes_sha256, so another file of
    that name is never read as the run's. None when there is none."""
    from ..kg.identity import file_sha256
    from ..probes.evaluation.shard_merge import MergeError, read_run

    try:
        run = read_run(Path(out))
    except MergeError:
        return None
    name, sha256 = run.get("probes"), run.get("probes_sha256")
    if not isinstance(name, str) or not name or not isinstance(sha256, str):
        return None
    path = Path(name)
    if not path.is_file():  # nor a pipe a hand-written name might point at, which would hang the read
        return None
    try:
        return path if file_sha256(path) == sha256 else None
    except OSError:  # unreadable
        return None


@click.command("merge")
@click.argument("shards", nargs=-1, required=True, type=click.Path())  # merge_shards names a bad one
@click.option("--out", "out_dir", required=True, type=FolderPath(),
              help="The run's folder: run.json, items.jsonl and aggregate.json as the unsharded eval writes them.")
@overwrite_option
@json_option
def merge_command(shards, out_dir, overwrite, as_json):
    """Merge the shards of one evaluation (`eval --shard K/N`) into one results folder.

    Checks that the folders are all N shards of one run (same model, method, options, seed,
    probe set and its hash, N and --batch; each K once; each finished) and writes run.json,
    items.jsonl (in the unsharded run's order) and aggregate.json (from all records at once):
    the files the same evaluation writes unsharded.

    \b
    factprobe merge runs/kdf/shard-*-of-8 --out runs/kdf
    """
    from ..probes.evaluation.shard_merge import MergeError, merge_shards

    claim_merge_folder(out_dir, overwrite=overwrite)  # empty, a run, or the shards' folder (a shard: merge_shards)
    try:
        merged = merge_shards(shards, out_dir)
    except MergeError as error:
        fail(str(error), EXIT_USAGE)
    except OSError as error:  # --out checked, then unwritable or full
        fail(os_error_line(error), EXIT_FAILURE)
    if as_json:
        echo(json.dumps({"out": merged.out, "shards": merged.shards, **merged.aggregate}))
    else:
        echo(_merged_line(merged, _recorded_probe_set(out_dir)))

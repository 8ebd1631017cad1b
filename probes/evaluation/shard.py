"""One evaluation spread over many processes: which test items shard K of N computes, where its
folder is, and how a process launched by `torchrun` / `accelerate launch` learns its shard and
its device from the environment. Merging the shards back: probes/evaluation/shard_merge.py.

A shard is a contiguous run of whole batches of the method's own order (`Method.order`) over the
test items after --limit: shard K of N takes batches [K*B//N, (K+1)*B//N) of the B batches. So
every scorer call a shard makes holds exactly the items the unsharded run's call holds (same
numbers, bit for bit on the same hardware), items that share a prompt prefix stay together, and
the shards in order K = 0..N-1 are the unsharded run's records in its order. What a method
aggregates over several records (BELIEF-ICL's fact over its templates, Acc@1's draws) may
straddle two shards: the merge aggregates all records at once, as the unsharded run does.
K counts from 0, as RANK and a Slurm array `--array=0-7` do.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

# torchrun sets these for every worker, and `accelerate launch` runs its workers through torchrun,
# so it sets the same ones.
RANK_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK")


@dataclass(frozen=True)
class Shard:
    index: int  # K, from 0
    count: int  # N

    @classmethod
    def parse(cls, text: str) -> "Shard":
        """`K/N` as --shard takes it; ValueError with a one-line reason otherwise."""
        k, sep, n = str(text).strip().partition("/")
        try:
            index, count = int(k), int(n)
        except ValueError:
            raise ValueError(f"--shard {text!r}: write K/N, e.g. 0/8 (K counts from 0)") from None
        if not sep or count < 1 or not 0 <= index < count:
            raise ValueError(f"--shard {text!r}: K must be 0..N-1 and N at least 1 (K counts from 0, as RANK does)")
        return cls(index, count)

    @property
    def name(self) -> str:
        return f"shard-{self.index}-of-{self.count}"

    def folder(self, out: str | Path) -> Path:
        """The shard's own results folder under the run's folder `out`."""
        return Path(out) / self.name

    def select(self, ordered: Sequence[dict], batch: int) -> list[dict]:
        """This shard's items of `ordered` (every test item, in the method's order)."""
        batch = max(1, batch)
        batches = -(-len(ordered) // batch)
        first, last = self.index * batches // self.count, (self.index + 1) * batches // self.count
        return list(ordered[first * batch:last * batch])

    def record(self, items: int, batch: int) -> dict:
        """run.json's `shard` entry: a rerun with another N or --batch would take other items, so
        both are part of what the folder holds; `items` lets the merge tell a finished shard."""
        return {"index": self.index, "count": self.count, "batch": max(1, batch), "items": items}


@dataclass(frozen=True)
class Launch:
    """This process's place in a `torchrun` / `accelerate launch` job."""
    rank: int
    world_size: int
    local_rank: int

    @property
    def shard(self) -> Shard:
        return Shard(self.rank, self.world_size)


def launched(environ: Mapping[str, str] | None = None) -> Launch | None:
    """The launcher's rank, world size and local rank; None outside one (or with one process).
    ValueError when the variables are there but not a rank of the world."""
    environ = os.environ if environ is None else environ
    if "RANK" not in environ or "WORLD_SIZE" not in environ:
        return None
    try:
        rank, world = int(environ["RANK"]), int(environ["WORLD_SIZE"])
        local = int(environ.get("LOCAL_RANK", "0"))
    except ValueError:
        raise ValueError("RANK, WORLD_SIZE and LOCAL_RANK must be whole numbers (as torchrun sets them), got "
                         + ", ".join(f"{v}={environ.get(v)!r}" for v in RANK_VARIABLES)) from None
    if world <= 1:
        return None
    if not 0 <= rank < world or local < 0:
        raise ValueError(f"RANK={rank} is not a rank of WORLD_SIZE={world} (LOCAL_RANK={local})")
    return Launch(rank, world, local)


def local_device(device: str, launch: Launch | None, cuda_available: bool) -> str:
    """The device a launched worker uses: "auto" or a bare "cuda" is this node's GPU number
    LOCAL_RANK where there is CUDA (the CPU otherwise); anything named more exactly stays."""
    if launch is None or device not in ("auto", "cuda", ""):
        return device
    if cuda_available:
        return f"cuda:{launch.local_rank}"
    return "cpu" if device != "cuda" else device  # "cuda" without CUDA: the loader says so

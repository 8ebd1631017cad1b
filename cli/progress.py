"""Progress for long runs: bars for bytes of an input consumed, documents indexed, facts counted;
RunProgress, an evaluation's stage, items done and time left, for the service to answer with."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from tqdm import tqdm


@contextlib.contextmanager
def file_progress(path: str | os.PathLike, *, disable: bool = False,
                  label: str = "") -> Iterator[Callable[[int, int], None] | None]:
    if disable:
        yield None
        return
    try:
        total = os.path.getsize(path)
    except OSError:
        total = None
    started = time.perf_counter()
    bar = tqdm(total=total, unit="B", unit_scale=True, desc=label or str(path), file=sys.stderr,
               dynamic_ncols=True, mininterval=0.5, leave=False)

    def update(records: int, consumed: int) -> None:
        bar.n = min(consumed, total) if total else consumed
        elapsed = max(time.perf_counter() - started, 1e-9)
        bar.set_postfix_str(f"{records:,} records, {records / elapsed:,.0f} records/s", refresh=False)
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()


@contextlib.contextmanager
def document_progress(label: str, *, disable: bool = False) -> Iterator[Callable[[int], None] | None]:
    """A bar counting documents read; yields the callback `index_corpus` takes (None when off)."""
    if disable:
        yield None
        return
    bars: list = []  # opened at the first document: a job that fails to start prints no bar

    def update(read: int) -> None:
        if not bars:
            bars.append(tqdm(desc=label, unit=" docs", dynamic_ncols=True))
        bars[0].update(read - bars[0].n)

    try:
        yield update
    finally:
        for bar in bars:
            bar.close()


@contextlib.contextmanager
def fact_progress(*, disable: bool = False) -> Iterator[Callable[[str, int], None] | None]:
    """One bar per relation counting facts; yields the callback `annotate` takes (None when off)."""
    if disable:
        yield None
        return
    bars: dict = {}

    def update(relation: str, done: int) -> None:
        if relation not in bars:
            for bar in bars.values():
                bar.close()
            bars[relation] = tqdm(desc=relation, unit=" facts", dynamic_ncols=True)
        bar = bars[relation]
        bar.update(done - bar.n)

    try:
        yield update
    finally:
        for bar in bars.values():
            bar.close()


@dataclass
class RunProgress:
    """Where a running evaluation is, for whoever asks while it runs (the service's GET
    /jobs/{id}): its stage ("checking", "loading model", "scoring"), items done of the total,
    seconds since it began and the estimated seconds left, from the rate of the items this run
    scored (resumed items cost nothing, so they are left out of the rate)."""
    stage: str = "checking"
    done: int = 0
    total: int | None = None
    started: float = field(default_factory=time.monotonic)
    scoring_since: float | None = None
    resumed: int = 0  # items the folder held when scoring began

    def note(self, line: str) -> None:
        """A stage line from run_evaluation ("loading model X ...", "model X loaded in ...")."""
        self.stage = "loading model" if line.startswith("loading model") else "model loaded"

    def items(self, done: int, total: int) -> None:
        """The runner's progress callback: (items done, items in the run)."""
        if self.scoring_since is None:
            self.scoring_since, self.resumed = time.monotonic(), done
        self.stage, self.done, self.total = "scoring", done, total

    def view(self) -> dict:
        now = time.monotonic()
        scored = self.done - self.resumed
        eta = None
        if self.scoring_since is not None and scored > 0 and self.total is not None:
            eta = round((now - self.scoring_since) / scored * (self.total - self.done), 1)
        return {"stage": self.stage, "done": self.done, "total": self.total,
                "elapsed_seconds": round(now - self.started, 1), "eta_seconds": eta}

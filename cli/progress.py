"""Progress bars for long runs: bytes of an input consumed, documents indexed, facts counted."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator

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

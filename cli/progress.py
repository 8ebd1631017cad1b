"""Progress bars for long runs: bytes of the input consumed, records and records per second."""

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

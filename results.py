"""Finished eval runs as a pandas DataFrame: `factprobe.results.load("runs/")`, the table
`factprobe results` writes (probes/report/tidy.py builds both), for a notebook without glue code.

    import factprobe.results
    frame = factprobe.results.load("runs/sample/runs")
    frame[frame.measure == "accuracy"].pivot_table(index="relation_label", columns="run", values="value")

pandas is an extra: pip install 'factprobe[results]'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from .probes.report.tidy import COLUMNS, load_results
from .probes.report.tidy_files import FRAME_TYPES

__all__ = ["load", "COLUMNS"]


def load(folders: str | Path | Iterable[str | Path], probes: Iterable[str | Path] = ()):
    """The results table over eval run folders, as a pandas DataFrame.

    Args:
        folders: A run folder, a folder of run folders (as `factprobe run` writes runs/), or a
            list of either.
        probes: Probe sets (files or folders) to take relation labels from when they are not
            beside the runs.

    Returns:
        One row per run x measure x breakdown with the columns of `COLUMNS` (run, model, method,
        probe_set, relation, relation_label, bucket, measure, value, low, high, n, interval), then
        one text column per other breakdown the runs hold (strategy, setting, k). Text columns
        are pandas' "string" dtype, value/low/high float64 (NaN where none), n Int64 (<NA>).

    Raises:
        ImportError: pandas is not installed (the message says how to install it).
        factprobe.probes.report.RunError: a folder is not a readable run (the message names it).
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("factprobe.results.load needs pandas: pip install 'factprobe[results]'") from None
    given = [folders] if isinstance(folders, (str, Path)) else list(folders)
    rows, extra = load_results(given, tuple(Path(p) for p in probes))
    columns = [*COLUMNS, *extra]
    frame = pd.DataFrame([row.as_dict(extra) for row in rows], columns=columns)
    return frame.astype({name: FRAME_TYPES.get(name, "string") for name in columns})

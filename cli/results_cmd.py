"""`factprobe results`: finished eval runs as one tidy table (probes/report/tidy.py builds it,
tidy_files.py writes it), for pandas, R or a spreadsheet without glue code."""

from __future__ import annotations

from pathlib import Path

import click

from ..kg.outputs import claim_file, replace_file
from .errors import EXIT_USAGE, fail
from .outputs import overwrite_option
from .terminal import echo

# Spelled out here so that `--help` needs no import of the report package (tidy_files.FORMATS).
_FORMATS = ("csv", "jsonl", "parquet")
# What a table this command wrote begins with, by format: the output it may replace unasked.
_HEADS = {"csv": b"run,model,method,probe_set,", "jsonl": b'{"run": ', "parquet": b"PAR1"}


@click.command("results")
@click.argument("folders", nargs=-1, required=True, metavar="DIR...")
@click.option("--format", "fmt", type=click.Choice(_FORMATS), default="csv", show_default=True,
              help="csv (an empty field for null), jsonl (one JSON object a line, null) or parquet (typed "
                   "columns; needs pyarrow and --out).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Write the table to FILE (replaced whole) instead of standard output.")
@click.option("--probes", multiple=True, type=click.Path(exists=True), metavar="PATH",
              help="A probe set (or a folder of them) the runs read, for relation labels, when it is not beside "
                   "the runs (the run folder, its parent, or ../probesets/); matched by its SHA-256. Without "
                   "it, a relation the shipped templates name gets their label, any other none. Repeatable.")
@overwrite_option
def results_command(folders, fmt, out, probes, overwrite):
    """One tidy table over eval run folders (from `factprobe eval --out DIR`; a folder of run
    folders, as `factprobe run` writes runs/, stands for each of them).

    \b
    One row per run x measure x breakdown, columns:
      run, model, method, probe_set   the run folder's name and what its run.json says ran
      relation, relation_label        the relation of a per-relation row (empty on others)
      bucket                          the frequency bucket of a per-bucket row (empty on others)
      measure                         aggregate.json's name: accuracy, acc_at_1, min_at_n, ...
      value, low, high, n, interval   the value, the interval aggregate.json holds for it (empty
                                      where it holds none) with its n and how it was drawn
    then one column per other breakdown the runs hold (strategy, setting, k), empty where a row
    has none. Values are aggregate.json's, nothing is recomputed.

    \b
    factprobe results runs/sample/runs > results.csv
    factprobe results runs/a runs/b --format parquet --out results.parquet
    """
    from ..probes.report.loading import RunError
    from ..probes.report.tidy import COLUMNS, load_results
    from ..probes.report.tidy_files import ParquetUnavailable, csv_text, jsonl_text, parquet_bytes

    if fmt == "parquet" and out is None:
        fail("--format parquet writes a binary file: name it with --out FILE", EXIT_USAGE)
    try:
        rows, extra = load_results(folders, tuple(Path(p) for p in probes))
    except (RunError, OSError) as error:
        fail(str(error), EXIT_USAGE)
    columns = [*COLUMNS, *extra]
    table = [row.as_dict(extra) for row in rows]
    if out is None:
        echo((csv_text if fmt == "csv" else jsonl_text)(table, columns), nl=False)
        return
    claim_file(out, overwrite=overwrite, ours=lambda p: _ours(p, fmt), what=f"a {fmt} table factprobe results wrote")
    try:
        data = parquet_bytes(table, columns) if fmt == "parquet" else \
            (csv_text if fmt == "csv" else jsonl_text)(table, columns).encode("utf-8")
    except ParquetUnavailable as error:
        fail(str(error), EXIT_USAGE)
    replace_file(out, data)
    echo(f"{len(rows)} rows from {len({r.run for r in rows})} run(s) -> {out}", err=True)


def _ours(path: Path, fmt: str) -> bool:
    try:
        with open(path, "rb") as stream:
            head = stream.read(len(_HEADS[fmt]))
    except OSError:
        return False
    return head == _HEADS[fmt] or (fmt != "parquet" and not head)

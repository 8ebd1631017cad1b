"""`factprobe report` and `factprobe compare`: reading finished eval runs, never a model."""

from __future__ import annotations

import json
import sys

import click

from .options import json_option


def _load(folders):
    from ..probes.report import RunError, load_runs

    try:
        return load_runs(folders)
    except (RunError, OSError) as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(2)


@click.command("report")
@click.argument("folders", nargs=-1, required=True, metavar="DIR...")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for report.md, report.html and the PNG plots (created if needed).")
@click.option("--title", default="factprobe report", show_default=True, help="Heading of the report.")
def report_command(folders, out_dir, title):
    """Tables and plots over eval run folders (from `factprobe eval --out DIR`).

    \b
    Writes REPORT_DIR/report.md, report.html (self-contained; images next to it) and PNGs:
      accuracy_by_bucket.png  accuracy per frequency bucket, one bar per run
      reliability.png         confidence against accuracy (runs with reliability bins)
      relation_heatmap.png    accuracy per relation and run
      overlap.png             subsumption and sharing between runs of one method over one probe set

    \b
    factprobe report runs/smollm2-iclke runs/gemma-iclke --out reports/iclke
    """
    from ..probes.report import write_report

    runs = _load(folders)
    files = write_report(runs, out_dir, title)
    click.echo(f"{len(runs)} run(s) -> {files.markdown}, {files.html}, {len(files.images)} plot(s)")


@click.command("compare")
@click.argument("dir_a", metavar="DIR_A")
@click.argument("dir_b", metavar="DIR_B")
@json_option
def compare_command(dir_a, dir_b, as_json):
    """Two eval runs side by side: accuracy overall, per relation and per bucket (with B - A),
    subsumption both ways, sharing, and which items only one of them knows.

    Items are matched by id. Runs over different probe sets are compared anyway, with a warning.
    """
    from ..probes.report import compare, comparison_text, load_run, RunError

    try:
        a, b = load_run(dir_a), load_run(dir_b)
    except (RunError, OSError) as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(2)
    result = compare(a, b)
    if not result.same_probe_set:
        click.echo(f"warning: {dir_a} and {dir_b} ran over different probe sets ({a.probe_set} vs {b.probe_set}); "
                   f"only the {result.overlap.shared} items with the same id are compared", err=True)
    data = result.as_dict()
    click.echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) if as_json else comparison_text(data))

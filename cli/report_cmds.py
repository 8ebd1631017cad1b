"""`factprobe report` and `factprobe compare`: reading finished eval runs, never a model."""

from __future__ import annotations

import json

import click

from .errors import EXIT_USAGE, fail
from .options import FolderPath, json_option
from .outputs import overwrite_option
from .terminal import echo

# The choices are spelled out here so that `--help` works without importing the report module;
# probes/measures/overlap.py `Definitions` checks them too. The first of each is the paper's (known:
# IC-LKE's comparison; sharing: BELIEF's rate).
_KNOWN = ("per-template", "per-prompt", "all-prompts")
_SHARING = ("asymmetric", "probed", "jaccard")
# BELIEF-ICL's settings; zero-shot is the one BELIEF's encoder-decoder sharing rate reads (000:273).
_ICL_SETTINGS = ("zero-shot", "x-random", "x-relation", "x-template")


def _definition_options(command):
    command = click.option(
        "--icl-setting", type=click.Choice(_ICL_SETTINGS), default=_ICL_SETTINGS[0], show_default=True,
        help="A BELIEF run against a BELIEF-ICL run over the same probe set: the BELIEF-ICL setting read, both "
             "then on (fact, template) units (zero-shot: BELIEF's encoder-decoder sharing rate). Runs of one "
             "method ignore it.")(command)
    command = click.option(
        "--sharing", type=click.Choice(_SHARING), default=_SHARING[0], show_default=True,
        help="asymmetric (BELIEF's): units both runs know / units A knows, and / units B knows, pooled; "
             "probed: units both know / units both scored; jaccard: known by both / known by either.")(command)
    return click.option(
        "--known", type=click.Choice(_KNOWN), default=_KNOWN[0], show_default=True,
        help="per-template: a unit is one fact under one template (and ICL setting), covered when one of its "
             "subject names is right (BELIEF's covered facts), rates averaged per relation (IC-LKE); per-prompt: "
             "each prompt (template and subject name) a unit; all-prompts: an item is known only when its "
             "`correct` is 1.0 (right on every prompt and setting), rates pooled over items.")(command)


def _definitions(known: str, sharing: str, icl_setting: str = _ICL_SETTINGS[0]):
    from ..probes.report import Definitions

    return Definitions(known=known, sharing=sharing, icl_setting=icl_setting)


@click.command("report")
@click.argument("folders", nargs=-1, required=True, metavar="DIR...")
@click.option("--out", "out_dir", required=True, type=FolderPath(),
              help="Folder for report.md, report.html and the PNG plots (created if needed).")
@click.option("--title", default="factprobe report", show_default=True, help="Heading of the report.")
@click.option("--probes", "probes", multiple=True, type=click.Path(exists=True), metavar="PATH",
              help="A probe set (or a folder of them) the runs read, for the item view's prompts and choices, "
                   "when it is not beside the runs (the run folder, its parent, or ../probesets/ as `factprobe "
                   "run` lays them out); matched by its SHA-256. Repeatable. A run whose probe set is "
                   "found nowhere is warned of, in the terminal and at the top of the page.")
@click.option("--items-rows", type=click.IntRange(1), default=5000, show_default=True,
              help="Rows items.html holds; past them it holds a seeded sample of items, and says so.")
@click.option("--seed", "items_seed", type=int, default=0, show_default=True, help="The seed of that sample.")
@_definition_options
@overwrite_option
def report_command(folders, out_dir, title, probes, items_rows, items_seed, known, sharing, icl_setting, overwrite):
    """Tables and plots over eval run folders (from `factprobe eval --out DIR`), and every item.

    \b
    Writes REPORT_DIR/report.md, report.html (self-contained; images next to it), items.html (every
    item with filters, its prompt, choices, scores and the other runs' answers; self-contained) and PNGs:
      accuracy_by_bucket.png  accuracy per frequency bucket: a panel per method with its chance
                              line, a colour per model, 95% intervals (distractors: Min@n)
      reliability.png         confidence against accuracy (runs with reliability bins)
      relation_heatmap.png    accuracy per relation and run, each cell with its 95% interval
      overlap.png             subsumption and sharing between runs of one method (or a BELIEF and a
                              BELIEF-ICL run) over one probe set

    \b
    factprobe report runs/smollm2-iclke runs/gemma-iclke --out reports/iclke
    """
    from pathlib import Path

    from ..probes.report import RunError
    from ..probes.report.items_data import ItemViewOptions
    from .steps import Console, report_step

    items = ItemViewOptions(tuple(Path(p) for p in probes), items_rows, items_seed)
    try:
        report_step(folders, out_dir, title, _definitions(known, sharing, icl_setting), Console(say=echo),
                    overwrite=overwrite, items=items)
    except (RunError, OSError) as error:
        fail(str(error), EXIT_USAGE)


@click.command("compare")
@click.argument("dir_a", metavar="DIR_A")
@click.argument("dir_b", metavar="DIR_B")
@_definition_options
@json_option
def compare_command(dir_a, dir_b, as_json, known, sharing, icl_setting):
    """Two eval runs side by side: accuracy overall, per relation and per bucket (with B - A),
    subsumption both ways, sharing, and which items only one of them knows.

    Items are matched by id. Runs over different probe sets are compared anyway, with a warning.
    `--known` and `--sharing` choose what counts as known and which sharing rate is shown; the
    output names both. A BELIEF run and a BELIEF-ICL run over one probe set compare on (fact,
    template) units, the BELIEF-ICL run read in `--icl-setting` (named in the output too).
    """
    from ..probes.report import compare, comparison_text, icl_settings, load_run, missing_setting, RunError

    try:
        a, b = load_run(dir_a), load_run(dir_b)
    except (RunError, OSError) as error:
        fail(str(error), EXIT_USAGE)
    definitions = _definitions(known, sharing, icl_setting)
    icl = missing_setting(a, b, definitions)
    if icl is not None:
        fail(f"{icl.folder}: the belief-icl run has no {icl_setting} answers; --icl-setting names one of: "
             f"{', '.join(icl_settings(icl)) or 'none'}", EXIT_USAGE)
    result = compare(a, b, definitions)
    if not result.same_probe_set:
        echo(f"warning: {dir_a} and {dir_b} ran over different probe sets ({a.probe_set} vs {b.probe_set}); "
                   f"only the {result.overlap.shared_items} items with the same id are compared", err=True)
    data = result.as_dict()
    echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) if as_json else comparison_text(data))

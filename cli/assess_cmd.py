"""`factprobe assess`: DistFact's evaluation of knowledge measures over finished runs of the
distractor method and its baselines against human judgements (probes/evaluation/assess.py), written as
assess.json (every number, for plots) and assess.md (beside the paper's Tables 3 and 4)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .errors import EXIT_USAGE, fail, os_error_line
from .options import FolderPath
from .outputs import overwrite_option
from .terminal import echo


@click.command("assess")
@click.argument("folders", nargs=-1, required=True, metavar="RUN_DIR...")
@click.option("--judgements", required=True, type=click.Path(dir_okay=False),
              help="Human judgements of whether the model knows each fact: .jsonl, .csv or DistFact's .json "
                   "(see above).")
@click.option("--out", "out_dir", required=True, type=FolderPath(),
              help="Folder for assess.json and assess.md (created if needed).")
@click.option("--probes", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A probe set the runs evaluated (repeatable; matched by the SHA-256 in run.json): needed for "
                   "judgements naming triples, and for distractor runs whose records do not name the object and "
                   "the distractors.")
@click.option("--flawed", multiple=True, type=FolderPath("input"),
              help="A run over flawed clozes (repeatable), for the robustness table; paired with --corrected. "
                   "The two probe sets: `probeset import --format distfact-taxonomy --verbalization flawed` "
                   "(and corrected), DistFact's published errors as each item's clozes.")
@click.option("--corrected", multiple=True, type=FolderPath("input"),
              help="A run over the corrected clozes of the same facts, method and options (repeatable).")
@click.option("--folds", type=click.IntRange(min=2), default=3, show_default=True,
              help="Cross-validation folds (the paper's K = 3).")
@click.option("--seed", type=int, default=42, show_default=True,
              help="Seed of the fold split and of the cloze subsets (42: the authors' notebook).")
@click.option("--thresholds", is_flag=True,
              help="factprobe's variant, not the paper's: cut each measure at a threshold searched with its "
                   "hyperparameters (a value above it counts as known) and take tau on those verdicts.")
@overwrite_option
def assess_command(folders, judgements, out_dir, probes, flawed, corrected, folds, seed, thresholds, overwrite):
    """Kendall's tau of each knowledge measure against human judgements, as DistFact evaluates
    them (seed 004, sections 4.2-5.1): K-fold cross-validation with a grid search of each
    measure's hyperparameters (Min@n or Avg@n and the number of distractors within a distractor
    run; beam width and n across baselines runs, one run per setting), tau against the number of
    distractors and of clozes, and, with --flawed and --corrected runs, robustness to
    verbalization errors.

    \b
    Judgements, one row per fact (or per rater: rows of one fact are averaged):
      JSONL  {"fact": "Q142$...", "knows": 1}   or "id": ITEM_ID, or
             "subject": "Q142", "relation": "P37", "object": "Q150" (needs --probes)
      CSV    a header row with the same names: fact,knows
      JSON   DistFact's published scores: [[["Q142", "P37", "Q150"], 1.0], ...]
    knows: 1 (the model knows the fact), 0 (it does not), or a share in between.

    \b
    factprobe assess runs/gpt2-distractor runs/gpt2-baselines-b1 runs/gpt2-baselines-b10 \\
        --judgements human.jsonl --out assess/gpt2

    \b
    Robustness (Table 4): import DistFact's verbalization errors twice onto a distractor set
    holding their facts, run the same method and options over both, and pass the runs:
      factprobe probeset import --format distfact-taxonomy taxonomy_hichem.csv \\
          --verbalization flawed --onto d.jsonl --out flawed.jsonl   (then corrected)
      ... --flawed runs/gpt2-distractor-flawed --corrected runs/gpt2-distractor-corrected
    """
    from ..kg.outputs import replace_file
    from .outputs import claim_assess_folder

    inputs = [Path(p) for p in (*folders, *flawed, *corrected, judgements, *probes)]
    claim_assess_folder(out_dir, overwrite=overwrite, inputs=inputs)
    try:
        from ..probes.evaluation.assess import Protocol, assess
        from ..probes.evaluation.assess_inputs import AssessInputError, read_judgements, read_probe_sets
        from ..probes.report import RunError, load_runs, to_markdown
        from ..probes.report.assess_section import assess_blocks
    except ImportError as error:  # numpy and scipy come with the eval extra
        fail(f"assess needs the eval extra: pip install 'factprobe[eval]' ({error})", EXIT_USAGE)
    try:
        result = assess(load_runs(folders), read_judgements(judgements), read_probe_sets(probes),
                        flawed=load_runs(flawed) if flawed else (), corrected=load_runs(corrected) if corrected else (),
                        protocol=Protocol(folds=folds, seed=seed, thresholds=thresholds))
    except (RunError, AssessInputError) as error:
        fail(str(error), EXIT_USAGE)
    except OSError as error:
        fail(os_error_line(error), EXIT_USAGE)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    replace_file(out / "assess.json", json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    replace_file(out / "assess.md", to_markdown(assess_blocks(result)))
    for measure in result["measures"].values():
        echo(f"{measure['label']}: mean tau {_number(measure['mean_tau'])} (paper "
                   f"{(measure.get('paper') or {}).get('mean_tau', '-')})")
    echo(f"{result['judgements']['assessed']} facts -> {out / 'assess.json'}, {out / 'assess.md'}")


def _number(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"

"""`factprobe assess`: DistFact's evaluation of knowledge measures (seed 004) over finished runs of
the distractor method and its baselines. Kendall's tau of each measure against human judgements
with K-fold cross-validation and a grid search of the measure's hyperparameters (004:178-186),
tau against the number of distractors and of clozes, each fold's choice re-scored (004:253-265,
appendix C), and robustness to verbalization errors: tau between a measure's values over flawed
clozes and over their corrections, for each fold's chosen configuration (Table 4, 004:225-239).
The result is one JSON-ready dict beside the paper's numbers; probes/report/assess_section.py
lays it out. Inputs: probes/evaluation/assess_inputs.py; the arithmetic: probes/measures/assess.py.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Sequence

from .assess_inputs import (AssessInputError, DistractorSource, Items, Judgements, Source, fact_key, sources_of)
from ..measures.assess import (PAPER_BEAMS, PAPER_DISTRACTORS, PAPER_FOLDS, PAPER_JUDGE_BEAMS, Config, FoldChoice,
                              cross_validate, kfold, mean_and_std, paired_tau, proportional_gain, rescored)
from ..report.loading import Run

FORMAT = "factprobe-assess/1"
PAPER_SEED = 42  # the authors' KFold random_state; the paper names none
# (label, Table 3's mean tau, its std, the line in seed 004); KaRR is "our tentative" there.
PAPER_TABLE_3 = {"karr": ("KaRR", 0.104, 0.039, 213), "rouge_l": ("ROUGE-L", 0.138, 0.122, 214),
                 "bertscore": ("BERT-score", 0.159, 0.063, 215), "precision_at_n": ("Precision@n", 0.185, 0.028, 216),
                 "probability": ("Probability", 0.262, 0.047, 217), "dist:random": ("Dist. Random", 0.225, 0.021, 218),
                 "dist:temp+sem": ("Dist. Temp+Sem", 0.242, 0.023, 219),
                 "dist:appropt": ("Dist. ApprOpt", 0.282, 0.024, 220), "judge": ("LLM-as-a-judge", 0.293, 0.029, 221)}
# Table 4: tau between the values over flawed and corrected verbalizations, and its line.
PAPER_TABLE_4 = {"rouge_l": (0.47, 229), "judge": (0.58, 230), "bertscore": (0.61, 231), "probability": (0.63, 232),
                 "dist:appropt": (0.92, 233)}
LABELS = {**{k: v[0] for k, v in PAPER_TABLE_3.items()}, "dist:sem": "Dist. Sem"}


@dataclass(frozen=True)
class Protocol:
    folds: int = PAPER_FOLDS
    seed: int = PAPER_SEED
    thresholds: bool = False  # factprobe's variant: also cut each measure at a threshold


def label(measure: str) -> str:
    return LABELS.get(measure, f"Dist. {measure[5:]}" if measure.startswith("dist:") else measure)


def assess(runs: Sequence[Run], judgements: Judgements, probe_sets: dict | None = None,
           flawed: Sequence[Run] = (), corrected: Sequence[Run] = (), protocol: Protocol = Protocol()) -> dict:
    """The whole evaluation; AssessInputError for inputs it cannot use (one line each)."""
    probe_sets = probe_sets or {}
    _one_model([*runs, *flawed, *corrected])
    groups = _groups([s for run in runs for s in _sources(run, judgements.key, probe_sets)])
    if not groups:
        raise AssessInputError("the runs hold no measure assess knows (distractor or baselines runs)")
    facts = [f for f in judgements.scores if all(f in s.facts for group in groups.values() for s in group)]
    if len(facts) < protocol.folds:
        raise AssessInputError(f"{judgements.file}: {len(facts)} judged facts are measured by every run, too few for "
                               f"{protocol.folds} folds (judgements name facts by {judgements.key})")
    folds = [[facts[p] for p in fold] for fold in kfold(len(facts), protocol.folds, protocol.seed)]
    human, assessed = judgements.scores, set(facts)
    measures, choices = {}, {}
    for measure, group in groups.items():
        choices[measure] = cross_validate(_configs(group), human, folds, protocol.thresholds)
        measures[measure] = _measure_entry(measure, group, choices[measure])
    return {"format": FORMAT, "definitions": _definitions(protocol, groups),
            "judgements": {"file": judgements.file, "key": judgements.key, "rows": judgements.rows,
                           "facts": len(judgements.scores), "assessed": len(facts),
                           "unmeasured": [f for f in judgements.scores if f not in assessed][:20]},
            "runs": [_run_entry(r) for r in runs], "folds": folds, "measures": measures,
            "distractor_curve": {m: _distractor_curve(groups[m], choices[m], folds, human)
                                 for m in groups if m.startswith("dist:")},
            "cloze_curve": {m: _cloze_curve(groups[m], choices[m], folds, human, protocol.seed) for m in groups},
            "robustness": _robustness(groups, choices, flawed, corrected, probe_sets) if flawed or corrected else None,
            "paper": {"table_3": {m: {"label": v[0], "mean_tau": v[1], "std_tau": v[2], "line": f"004:{v[3]}"}
                                  for m, v in PAPER_TABLE_3.items()},
                      "table_4": {m: {"label": label(m), "tau": v[0], "line": f"004:{v[1]}"}
                                  for m, v in PAPER_TABLE_4.items()}}}


def _sources(run: Run, key: str, probe_sets: dict) -> list[Source]:
    items = Items(run, probe_sets)
    return sources_of(run, fact_key(key, items), items)


def _one_model(runs: Sequence[Run]) -> None:
    models = sorted({r.model for r in runs})
    if len(models) > 1:
        raise AssessInputError(f"the runs are of {len(models)} models ({', '.join(models)}); human judgements "
                               "speak of one model's knowledge: assess one model's runs at a time")


def _groups(sources: Sequence[Source]) -> dict[str, list[Source]]:
    """Sources by measure, measures in Table 3's order, then others by name."""
    groups: dict[str, list[Source]] = {}
    for source in sources:
        groups.setdefault(source.measure, []).append(source)
    order = list(PAPER_TABLE_3)
    return dict(sorted(groups.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order), kv[0])))


def _configs(group: Sequence[Source]) -> list[Config]:
    """The grid, in search order: runs in report order, then each run's own grid."""
    return [Config(tuple({**s.settings, **params}.items()), s.values(params)) for s in group for params in s.grid()]


def _source(group: Sequence[Source], params: dict) -> Source:
    return next(s for s in group if s.settings["run"] == params["run"])


def _grid_params(source: Source, params: dict) -> dict:
    return {k: v for k, v in params.items() if k not in source.settings}


def _measure_entry(measure: str, group: Sequence[Source], choices: Sequence[FoldChoice]) -> dict:
    mean, std = mean_and_std([c.test_tau for c in choices])
    paper = PAPER_TABLE_3.get(measure)
    return {"label": label(measure), "mean_tau": mean, "std_tau": std,
            "configurations": sum(len(s.grid()) for s in group), "folds": [asdict(c) for c in choices],
            "paper": {"mean_tau": paper[1], "std_tau": paper[2], "line": f"004:{paper[3]}"} if paper else None}


def _distractor_curve(group: Sequence[Source], choices: Sequence[FoldChoice], folds, human) -> dict:
    """Each fold's choice with 1..N distractors (N: the most a cloze has), its test tau, and the
    mean over folds (004:253, Figure 3)."""
    most = max(s.available() for s in group if isinstance(s, DistractorSource))
    per_n = [rescored(choices, folds, human, lambda p, n=n: _source(group, p).values(
        {**_grid_params(_source(group, p), p), "n": n})) for n in range(1, most + 1)]
    return {"n": list(range(1, most + 1)), "mean_tau": [mean_and_std(t)[0] for t in per_n], "fold_tau": per_n}


def _cloze_curve(group: Sequence[Source], choices: Sequence[FoldChoice], folds, human, seed: int) -> dict:
    """Each fold's choice asked with m = 1..M of each fact's clozes (drawn by seed), its test tau,
    the mean over folds (004:257, Figure 4) and the gain over one cloze (appendix C, 004:354).
    Only where the run's records keep per-cloze values."""
    most = min(s.cloze_count() for s in group)
    if most == 0:
        return {"clozes": [], "mean_tau": [], "gain": [], "fold_tau": [],
                "missing": f"the runs' records hold no per-cloze values of {group[0].measure} "
                           f"({group[0].measure}_per_cloze)"}
    per_m = [rescored(choices, folds, human, lambda p, m=m: _source(group, p).values(
        _grid_params(_source(group, p), p), clozes=m, seed=seed)) for m in range(1, most + 1)]
    means = [mean_and_std(t)[0] for t in per_m]
    return {"clozes": list(range(1, most + 1)), "mean_tau": means,
            "gain": [proportional_gain(t, means[0]) for t in means], "fold_tau": per_m}


def _robustness(groups: dict[str, list[Source]], choices: dict[str, list[FoldChoice]], flawed: Sequence[Run],
                corrected: Sequence[Run], probe_sets: dict) -> dict:
    """Per measure: for each fold's chosen configuration, tau between its values over the flawed
    clozes and over the corrected ones, over the facts both runs hold whose clozes differ (the
    paper keeps the 32 flawed verbalizations, 004:237); the mean over configurations."""
    if not flawed or not corrected:
        raise AssessInputError("robustness needs both --flawed and --corrected runs")
    sides = {}
    for name, runs, prefix in (("flawed", flawed, "F"), ("corrected", corrected, "C")):
        named = [replace(r, rid=f"{prefix}{k}") for k, r in enumerate(runs, start=1)]
        sides[name] = [s for r in named for s in _sources(r, "record", probe_sets)]
    out = {}
    for measure, group in groups.items():
        rows = [_robustness_row(measure, group, choice, sides) for choice in choices[measure] if choice.params]
        taus = [r["tau"] for r in rows if r.get("tau") is not None]
        paper = PAPER_TABLE_4.get(measure)
        out[measure] = {"label": label(measure), "tau": mean_and_std(taus)[0], "folds": rows,
                        "paper": {"tau": paper[0], "line": f"004:{paper[1]}"} if paper else None}
    return out


def _robustness_row(measure: str, group: Sequence[Source], choice: FoldChoice, sides: dict) -> dict:
    main = _source(group, choice.params)
    params = _grid_params(main, choice.params)
    pair = {}
    for side, sources in sides.items():
        pair[side] = next((s for s in sources if s.measure == measure and s.signature() == main.signature()), None)
        if pair[side] is None:
            return {"fold": choice.fold, "params": choice.params, "tau": None,
                    "missing": f"no {side} run of {main.run.method} with {main.run.rid}'s options"}
    flawed, corrected = pair["flawed"], pair["corrected"]
    shared = [f for f in flawed.facts if f in corrected.facts]
    changed = [f for f in shared if not flawed.texts.get(f) or flawed.texts.get(f) != corrected.texts.get(f)]
    tau, n = paired_tau(flawed.values(params), corrected.values(params), changed)
    return {"fold": choice.fold, "params": choice.params, "flawed": flawed.run.folder,
            "corrected": corrected.run.folder, "tau": tau, "facts": n, "unchanged": len(shared) - len(changed)}


def _run_entry(run: Run) -> dict:
    return {"rid": run.rid, "folder": run.folder, "method": run.method, "model": run.model,
            "probes": run.probes, "probes_sha256": run.probes_sha256, "options": run.config.get("options") or {}}


def _definitions(protocol: Protocol, groups: dict[str, list[Source]]) -> dict:
    beams = sorted({s.settings["beams"] for g in groups.values() for s in g if "beams" in s.settings})
    return {"folds": protocol.folds, "seed": protocol.seed,
            "split": "facts in the judgements' order, shuffled by numpy RandomState(seed), cut into contiguous folds "
                     "(scikit-learn's KFold(shuffle=True))",
            "tau": "Kendall's tau-b (scipy.stats.kendalltau) between a measure's value and the mean human score",
            "selection": "per test fold, the configuration with the highest tau on the other folds; ties: the first "
                         "in grid order (runs in report order, Min@n before Avg@n, fewer distractors first)",
            "std": "sample standard deviation over folds (n - 1)",
            "thresholds": "searched: a value above the threshold counts as known (factprobe's variant)"
                          if protocol.thresholds else "none (the paper searches hyperparameters, 004:182-184)",
            "distractor_grid": list(PAPER_DISTRACTORS), "aggregations": ["min", "avg"],
            "beams_in_runs": beams, "paper_beams": list(PAPER_BEAMS), "paper_judge_beams": list(PAPER_JUDGE_BEAMS),
            "clozes": "m of each fact's clozes drawn without replacement, seeded per fact, the same for every measure"}

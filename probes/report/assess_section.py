"""The report of `factprobe assess` (probes/evaluation/assess.py's result): each measure's Kendall's tau with
the human judgements beside the paper's Table 3, robustness to verbalization errors beside its
Table 4, and tau against the number of distractors and of clozes (its Figures 3 and 4). The
paper's numbers are printed as the paper writes them, with the line of seed 004 they are on.
"""

from __future__ import annotations

from typing import Sequence

from ..document import Block, Heading, Text, fmt, fmt_count, table

# Rows of the distractor curve shown in the tables (the JSON holds every n).
CURVE_POINTS = (1, 2, 5, 10, 15, 20, 40, 60, 80, 100, 120, 140, 160, 180, 200)


def assess_blocks(result: dict, title: str = "DistFact's evaluation of the knowledge measures") -> list[Block]:
    judged = result["judgements"]
    blocks: list[Block] = [Heading(title, 1), Text(
        f"{judged['assessed']} facts judged in {judged['file']} ({judged['rows']} rows, {judged['facts']} facts, "
        f"named by {judged['key']}) are measured by every run; {result['definitions']['folds']}-fold "
        f"cross-validation, seed {result['definitions']['seed']}. Selection: {result['definitions']['selection']}. "
        f"Thresholds: {result['definitions']['thresholds']}.")]
    blocks += _runs(result["runs"])
    paper = result.get("paper") or {}
    blocks += _table_3(result["measures"], paper.get("table_3") or {})
    blocks += _table_4(result.get("robustness"), paper.get("table_4") or {})
    blocks += _distractor_curves(result.get("distractor_curve") or {}, result["measures"])
    blocks += _cloze_curves(result.get("cloze_curve") or {}, result["measures"])
    return blocks


def _runs(runs: Sequence[dict]) -> list[Block]:
    rows = [(r["rid"], r["method"], r["model"], r["folder"], r["probes"]) for r in runs]
    return [Heading("Runs", 2), table(("Run", "Method", "Model", "Folder", "Probe set"), rows)]


def _choice(fold: dict) -> str:
    if fold["params"] is None:
        return f"fold {fold['fold']}: no tau on the training folds"
    params = " ".join(f"{k}={v}" for k, v in fold["params"].items())
    cut = f" threshold={fold['threshold']:.4g}" if fold.get("threshold") is not None else ""
    return f"fold {fold['fold']}: {params}{cut} (test tau {fmt(fold['test_tau'])}, {fold['test_facts']} facts)"


def _table_3(measures: dict, paper: dict) -> list[Block]:
    """Every row of the paper's Table 3 in its order, ours beside it where the runs hold the
    measure; measures the paper does not show (Dist. Sem) after them."""
    rows = []
    for measure in [*paper, *(m for m in measures if m not in paper)]:
        entry, theirs = measures.get(measure), paper.get(measure) or {}
        ours = ((fmt(entry["mean_tau"]), fmt(entry["std_tau"])) if entry else ("not in the runs", ""))
        rows.append(((entry or theirs)["label"], *ours, str(theirs.get("mean_tau", "")), str(theirs.get("std_tau", "")),
                     theirs.get("line", ""), fmt_count(entry["configurations"]) if entry else "",
                     "; ".join(_choice(f) for f in entry["folds"]) if entry else ""))
    return [Heading("Correlation with human judgement (Kendall's tau, the paper's Table 3)", 2),
            table(("Measure", "Mean tau", "Std tau", "Paper mean tau", "Paper std tau", "Paper", "Configurations",
                   "Chosen per test fold"), rows)]


def _table_4(robustness: dict | None, paper: dict) -> list[Block]:
    heading = Heading("Robustness to verbalization errors (the paper's Table 4)", 2)
    if robustness is None:
        return [heading, Text("Not measured: pass runs over flawed clozes (--flawed) and over their corrections "
                              "(--corrected), of the same methods and options."),
                table(("Measure", "Paper tau", "Paper"), [(v["label"], str(v["tau"]), v["line"])
                                                          for v in paper.values()])]
    rows = []
    for measure in [*paper, *(m for m in robustness if m not in paper)]:
        entry, theirs = robustness.get(measure), paper.get(measure) or {}
        folds = entry["folds"] if entry else []
        facts = sorted({f["facts"] for f in folds if f.get("facts") is not None})
        missing = sorted({f["missing"] for f in folds if f.get("missing")})
        rows.append(((entry or theirs)["label"], fmt(entry["tau"]) if entry else "not in the runs",
                     ", ".join(map(str, facts)) or "-", str(theirs.get("tau", "")), theirs.get("line", ""),
                     "; ".join(missing)))
    return [heading, Text("Kendall's tau between a measure's values over the flawed clozes and over the corrected "
                          "ones, for each test fold's chosen configuration, averaged (004:237)."),
            table(("Measure", "Tau", "Facts", "Paper tau", "Paper", "Missing"), rows)]


def _distractor_curves(curves: dict, measures: dict) -> list[Block]:
    if not curves:
        return []
    most = max((max(c["n"]) for c in curves.values() if c["n"]), default=0)
    points = [n for n in CURVE_POINTS if n <= most] + ([most] if most not in CURVE_POINTS else [])
    rows = [(str(n), *(fmt(c["mean_tau"][n - 1]) if n <= len(c["mean_tau"]) else "-" for c in curves.values()))
            for n in points]
    return [Heading("Tau against the number of distractors (the paper's Figure 3, 004:253)", 2),
            Text("Each test fold's chosen configuration with its first n distractors; mean tau over the folds."),
            table(("Distractors", *(measures[m]["label"] for m in curves)), rows)]


def _cloze_curves(curves: dict, measures: dict) -> list[Block]:
    shown = {m: c for m, c in curves.items() if c["clozes"]}
    missing = [f"{measures[m]['label']}: {c['missing']}" for m, c in curves.items() if not c["clozes"]]
    blocks: list[Block] = [Heading("Tau against the number of clozes (the paper's Figure 4 and appendix C)", 2)]
    if shown:
        most = max(max(c["clozes"]) for c in shown.values())
        rows = [(str(m), *(f"{fmt(c['mean_tau'][m - 1])} (gain {fmt(c['gain'][m - 1])})" if m <= len(c["clozes"])
                           else "-" for c in shown.values())) for m in range(1, most + 1)]
        blocks += [Text("Each test fold's chosen configuration on m of each fact's clozes; mean tau over the folds, "
                        "and the gain (tau_m + 1) / (tau_1 + 1) (004:354)."),
                   table(("Clozes", *(measures[m]["label"] for m in shown)), rows)]
    if missing:
        blocks.append(Text("Not measured: " + "; ".join(missing) + "."))
    return blocks

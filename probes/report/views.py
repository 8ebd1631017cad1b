"""What the report's accuracy tables and plots (by frequency bucket, by frequency, by relation)
show of each run (`accuracy_views`; `figure_views` adds a distractor run per strategy by its
Min@n, for the bucket and relation tables and plots), and the notes that qualify its figures: a uniform guess's accuracy (`chance_level`)
and how each bootstrap interval was drawn (`bootstrap_note`).

A run's `accuracy` is the mean of its records' `correct`, which is a paper's measure for most
methods but not for two: a BELIEF-ICL record's `correct` pools its ICL settings (the zero-shot and
the x-template verdicts of one prompt averaged, a number no paper defines), so the tables show it
per setting instead, one column per setting ("R7 zero-shot"); a baselines record's `correct` is
factprobe's verdict "Probability above `threshold`" (the distractor paper thresholds no measure,
004:201-207), so its column says so ("R5 Probability > 0.5").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Sequence

from ..document import breakdown, fmt_count
from ..measures.overlap import in_setting
from ..methods import registered
from .loading import Run


def run_option(run: Run, name: str):
    """The run's method option `name`: run.json's, else the method's default (None: neither)."""
    given = (run.config.get("options") or {}).get(name)
    if given is not None:
        return given
    cls = registered().get(run.method)
    return (getattr(cls, "option_defaults", {}) or {}).get(name) if cls else None


def threshold(run: Run):
    """A baselines run's `threshold`, the Probability its verdict `correct` must exceed."""
    return run_option(run, "threshold")


def verdict_name(run: Run) -> str | None:
    """What a baselines run's `correct` is, in words fit for a column ("Probability > 0.5")."""
    if run.method != "baselines":
        return None
    return f"Probability > {threshold(run):g}" if isinstance(threshold(run), (int, float)) else "Probability > ?"


def setting_entries(run: Run) -> dict:
    """A BELIEF-ICL run's measures per ICL setting (aggregate.json's `by_setting`); empty for any
    other run. Where there are some, the run's own accuracy and its breakdowns pool the
    settings, a number no paper defines: read the settings instead."""
    if run.method != "belief-icl":
        return {}
    return {name: entry for name, entry in breakdown(run, "by_setting").items()
            if isinstance(entry, dict) and "acc_at_1" in entry}


def accuracy_views(run: Run) -> list[Run]:
    """The run as the accuracy tables and plots read it: BELIEF-ICL per ICL setting (the setting's
    breakdowns, each record's verdict in that setting), a baselines run under the name of its
    verdict, any other run as it is."""
    settings = setting_entries(run)
    if settings:
        return [replace(run, rid=f"{run.rid} {name}", items=tuple(in_setting(run.items, name)),
                        aggregate={**run.aggregate, "accuracy": entry.get("accuracy"),
                                   "accuracy_interval": entry.get("accuracy_interval"),
                                   "by_relation": entry.get("by_relation") or {},
                                   "by_bucket": entry.get("by_bucket") or {}})
                for name, entry in settings.items()]
    named = verdict_name(run)
    return [replace(run, rid=f"{run.rid} {named}")] if named else [run]


def accuracy_runs(runs: Sequence[Run]) -> list[Run]:
    return [view for run in runs for view in accuracy_views(run)]


def accuracy_note(runs: Sequence[Run]) -> str:
    """The sentence that says what the accuracy of a BELIEF-ICL or a baselines column is."""
    parts = []
    for r in runs:
        named = verdict_name(r)
        if r.method == "belief-icl" and len(accuracy_views(r)) > 1:
            parts.append(f"{r.rid} (BELIEF-ICL): one column per ICL setting, the share of that setting's prompts "
                         "answered right (a prompt of a cloze set: the share of its subject names right); the "
                         "settings are never pooled")
        elif named:
            parts.append(f"{r.rid} (baselines): the share of facts whose Probability (the distractor paper's, "
                         f"summed over the object's names, averaged over the clozes) is above {threshold(r):g} "
                         "(`threshold`, factprobe's verdict: the paper thresholds no measure)")
    return ("Columns: " + "; ".join(parts) + ".") if parts else ""


def chance_level(run: Run) -> float | None:
    """A uniform guess's accuracy over the run's multiple-choice items; None without choices."""
    shares = []
    for item in run.items:
        # IC-LKE records the number of choices; KDF one score per option (either scoring)
        count = item.get("choices") or len(item.get("letter_logprobs") or item.get("option_logprobs") or ())
        if isinstance(count, int) and count > 0:
            shares.append(1 / count)
    return round(sum(shares) / len(shares), 6) if shares else None


def chance_text(run: Run) -> str:
    """The runs table's chance cell: 1/choices averaged over the items ("0.0500"), "–" where the
    items have no choices."""
    chance = chance_level(run)
    if chance is None:
        return "–"
    counts = sorted({c for c in (_choices(i) for i in run.items) if c})
    if len(counts) == 1:
        return f"{chance:.4f} (1/{counts[0]})"
    return f"{chance:.4f} (mean of 1/choices)"


def _choices(item: dict) -> int | None:
    count = item.get("choices") or len(item.get("letter_logprobs") or item.get("option_logprobs") or ())
    return count if isinstance(count, int) and count > 0 else None


# Aggregate keys whose intervals the report shows, as the report names the figure.
_FIGURES = {"accuracy": "accuracy", "acc_at_1": "Acc@1", "consistency": "Consist", "overconfidence": "Ovconf",
            "min_at_n": "Min@n", "avg_at_n": "Avg@n", "probability": "Probability",
            "precision_at_n": "Precision@n", "rouge_l": "ROUGE-L", "bertscore": "BERT-score", "karr": "KaRR",
            "karr_known": "KaRR known", "judge": "Judge", "probability_known": "Probability > threshold"}


def _bootstraps(node, figure: str = "accuracy") -> Iterable[tuple[str, object, object]]:
    """(figure, resamples, seed) of every bootstrap interval under `node` (an aggregate)."""
    if isinstance(node, list):
        for child in node:
            yield from _bootstraps(child, figure)
        return
    if not isinstance(node, dict):
        return
    for key, child in node.items():
        if key == "interval" or (isinstance(key, str) and key.endswith("_interval")):
            if isinstance(child, dict) and child.get("method") == "bootstrap":
                name = figure if key == "interval" else _FIGURES.get(key[:-len("_interval")], key[:-len("_interval")])
                yield name, child.get("resamples"), child.get("seed")
        elif isinstance(child, (dict, list)):
            yield from _bootstraps(child, figure)


def bootstrap_note(runs: Sequence[Run]) -> str:
    """How the bootstrap intervals among these runs' figures were drawn: per (resamples, seed), the
    figures drawn so ("1000 resamples of the facts, seed 0: accuracy, Acc@1; 200 ...: Ovconf");
    empty when no figure has one. Aggregates from before issue 45 did not record them."""
    found: dict[tuple, list[str]] = {}
    # the aggregates as the report shows them: a BELIEF-ICL run's pooled shares are not
    for run in (view for r in runs for view in accuracy_views(r)):
        for figure, resamples, seed in _bootstraps(run.aggregate):
            names = found.setdefault((resamples, seed), [])
            if figure not in names:
                names.append(figure)
    if not found:
        return ""
    parts = [(f"{fmt_count(resamples)} resamples of the facts, seed {seed}" if resamples is not None else
              "resamples and seed not recorded (an aggregate.json written before factprobe recorded them)") + ": " + ", ".join(names)
             for (resamples, seed), names in sorted(found.items(), key=lambda kv: (kv[0][0] is None, -(kv[0][0] or 0)))]
    return ("Bootstrap intervals (scipy.stats.bootstrap, percentile, the facts resampled with replacement from "
            "numpy's generator seeded as said): " + "; ".join(parts) + ".")


def min_at_n_entry(entry: dict) -> dict:
    """A distractor strategy's Min@n entry (one bucket's or relation's) in the shape the accuracy
    tables and plots read: `accuracy` is Min@n there, `measure` says so; Avg@n kept beside it."""
    return {"accuracy": entry.get("min_at_n"), "interval": entry.get("min_at_n_interval"), "total": entry.get("items"),
            "min_at_n": entry.get("min_at_n"), "min_at_n_interval": entry.get("min_at_n_interval"),
            "avg_at_n": entry.get("avg_at_n"), "avg_at_n_interval": entry.get("avg_at_n_interval")}


def figure_views(run: Run) -> list[Run]:
    """The run as the bucket and relation tables and plots read it: `accuracy_views`, and a
    distractor run once per strategy, its Min@n by bucket and relation (the measure's own
    breakdowns, under `by_strategy`) where the others have accuracy; its aggregate's `measure`
    is "Min@n" then."""
    strategies = {name: entry for name, entry in breakdown(run, "by_strategy").items()
                  if isinstance(entry, dict) and "min_at_n" in entry}
    if not strategies:
        return accuracy_views(run)
    return [replace(run, rid=f"{run.rid} {name}",
                    aggregate={**run.aggregate, "measure": "Min@n",
                               **{key: {k: min_at_n_entry(e) for k, e in (entry.get(key) or {}).items()
                                        if isinstance(e, dict)} for key in ("by_bucket", "by_relation")}})
            for name, entry in strategies.items()]


def figure_runs(runs: Sequence[Run]) -> list[Run]:
    return [view for run in runs for view in figure_views(run)]


def measure_name(run: Run) -> str:
    """What a view's `accuracy` is: "Min@n" for a distractor strategy, else "accuracy"."""
    return str(run.aggregate.get("measure") or "accuracy")

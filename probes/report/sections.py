"""The report's sections (runs, method measures, frequency buckets, reliability, IC-LKE
positions, relations, overlap between runs) as blocks of probes/document, and `build_document`,
which puts them together. "Method measures" holds the sections that the runs' methods declare
(`report_sections`, probes/methods/base.py), then a table per breakdown no section shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..document import (Block, Heading, Image, Link, Section, Table, Text, breakdown, bucket_key, fmt, fmt_acc_at_1,
                        fmt_cell, fmt_count, fmt_interval, interval_suffix, measure_columns, natural_key, table,
                        with_interval)
from ..methods import registered
from ..measures.uncertainty import wilson
from .comparison import Definitions, PairRow, comparable_pairs, correlation_text, fisher_interval, position_curve
from .frequency import frequency_section, frequency_series, popularity_section
from .loading import Run
from .labels import Names
from .views import (accuracy_note, accuracy_runs, accuracy_views, bootstrap_note, chance_text, figure_runs,
                    run_option)

# The breakdowns every aggregate has; their own sections (buckets, relations) show them.
SHARED_BREAKDOWNS = ("by_relation", "by_bucket")


def method_sections(run: Run) -> tuple[Section, ...]:
    """The report sections the run's method declares; none for a method no longer registered."""
    cls = registered().get(run.method)
    return tuple(cls.report_sections) if cls is not None else ()


def shown_breakdowns(run: Run) -> set[str]:
    """The run's `by_*` keys that a section of their own shows: the shared ones and those its
    method's sections declare (the distractor measure's `by_strategy`)."""
    return {*SHARED_BREAKDOWNS, *(key for section in method_sections(run) for key in section.breakdowns)}


def _runs_section(runs: Sequence[Run]) -> list[Block]:
    rows = [(r.rid, r.name, r.model, r.probe_set, r.folder, str(r.item_count), *run_measure(r), chance_text(r),
             ", ".join(f"{k}={v}" for k, v in sorted(r.changed_options.items())) or "defaults") for r in runs]
    note = bootstrap_note(runs)
    return [Heading("Runs"),
            Text("Measure: the one the run's method reports, with its 95% interval (Wilson for right/wrong "
                 "items, a bootstrap over facts for shares; \"few\" under 30 items): Min@n and Avg@n "
                 "per distractor strategy; Acc@1 for BELIEF and per ICL setting for BELIEF-ICL, as mean ± SD "
                 "(range) over the one-prompt draws (BELIEF's fluctuation: the range is the highest draw's "
                 "accuracy less the lowest's), the bracket the bootstrap interval of the mean; for baselines "
                 "the distractor paper's means over facts (Probability, Precision@n, ROUGE-L, and those asked); "
                 "else accuracy, the mean of the items' `correct` values as `factprobe eval` wrote it to "
                 "aggregate.json. Chance: a uniform guess's accuracy over the run's multiple-choice items "
                 "(1/choices; KDF's four letters 0.25), the level its accuracy is read against; \"–\" where "
                 "items have no choices. Scored: the items the measure rests on. Options: those the run set away "
                 "from the method's defaults (KDF's `scoring`, for one). Numbers are rounded to 4 decimals, "
                 "intervals to 2. Plots and tables name runs by their label (model alias / method (options)); "
                 "this table is their legend, with each model's full identity." + (" " + note if note else "")),
            table(("Run", "Label", "Model", "Probe set", "Folder", "Items", "Scored", "Measure [95%]", "Chance",
                   "Options"), rows)]


def run_measure(run: Run) -> tuple[str, str]:
    """(scored, measure) for the runs table: the measure the run's method reports, named, with its
    interval, and the items it rests on; accuracy where the method has no other."""
    a = run.aggregate
    strategies = {n: e for n, e in breakdown(run, "by_strategy").items() if isinstance(e, dict) and "min_at_n" in e}
    if strategies:  # the distractor measure: no accuracy, a verdict per strategy
        scored = "/".join(dict.fromkeys(fmt_count(e.get("items")) for e in strategies.values()))
        return scored, "; ".join(f"{n}: Min@n {with_interval(e.get('min_at_n'), e.get('min_at_n_interval'))}, "
                                 f"Avg@n {with_interval(e.get('avg_at_n'), e.get('avg_at_n_interval'))}"
                                 for n, e in strategies.items())
    if isinstance(a.get("acc_at_1"), dict):  # BELIEF
        return fmt_count(a.get("scored")), f"Acc@1 {fmt_acc_at_1(a['acc_at_1'])}{interval_suffix(a.get('acc_at_1_interval'))}"
    settings = {n: e for n, e in breakdown(run, "by_setting").items() if isinstance(e, dict)
                and isinstance(e.get("acc_at_1"), dict)}
    if settings:  # BELIEF-ICL
        return fmt_count(a.get("scored")), "; ".join(
            f"{n}: Acc@1 {fmt_acc_at_1(e['acc_at_1'])}{interval_suffix(e.get('acc_at_1_interval'))}"
            for n, e in settings.items())
    baselines = a.get("baselines")
    if isinstance(baselines, dict):  # the distractor paper's measures, not factprobe's thresholded verdict
        shown = [(label, key) for key, label in BASELINE_FIGURES if baselines.get(key) is not None]
        n = run_option(run, "n")
        return fmt_count(a.get("scored")), "; ".join(
            f"{label.replace('@n', f'@{n}')} {with_interval(baselines[key], baselines.get(key + '_interval'))}"
            for label, key in shown) or "n/a"
    return fmt_count(a.get("scored")), f"Accuracy {with_interval(a.get('accuracy'), a.get('accuracy_interval'))}"


# The baselines' figures in the runs table, in the distractor paper's order (004:201-207).
BASELINE_FIGURES = (("probability", "Probability"), ("precision_at_n", "Precision@n"), ("rouge_l", "ROUGE-L"),
                    ("bertscore", "BERT-score"), ("karr", "KaRR"), ("judge", "Judge"))


def _items_section(page: str | None) -> list[Block]:
    if not page:
        return []
    return [Heading("Items"),
            Text("Every item of these runs, with filters by run, method, relation, frequency bucket, distractor "
                 "strategy, ICL setting, right or wrong, and the items the runs disagree on; each item opens to its "
                 "prompt, its choices or answers with their scores, the model's pick, the gold and its names, "
                 "and the same item in the other runs. A page too large for one file holds a seeded sample of "
                 "the items and says so; `factprobe serve --runs DIR` serves them all, page by page."),
            Link(page, f"The item view: {page}")]


def _method_sections(runs: Sequence[Run]) -> list[Block]:
    declared: dict[Section, list[Run]] = {}  # each section once, with the runs that declare it
    for run in runs:
        for section in method_sections(run):
            declared.setdefault(section, []).append(run)
    blocks = [block for section in sorted(declared, key=lambda s: s.place)
              for block in section.build(declared[section])]
    shown = [shown_breakdowns(r) for r in runs]
    for key in sorted({k for r, own in zip(runs, shown) for k, v in r.aggregate.items()
                       if k.startswith("by_") and k not in own and isinstance(v, dict)}):
        blocks += _extra_breakdown([r for r, own in zip(runs, shown) if key not in own], key)
    note = bootstrap_note([r for r in runs if method_sections(r)])
    return [Heading("Method measures"), *([Text(note)] if note else []), *blocks] if blocks else []


def _extra_breakdown(runs: Sequence[Run], key: str) -> list[Block]:
    """A breakdown this report has no dedicated table for (BELIEF-ICL's `by_setting`, or one added
    later): accuracy and item count per entry, plus whatever headline measures the entries have.
    Entries that all have Acc@1 (BELIEF-ICL's settings) get no accuracy column: their measure is
    Acc@1, and the share of prompts right beside it is no paper's figure."""
    entries = [(r, name, entry) for r in runs for name, entry in sorted(breakdown(r, key).items())
               if isinstance(entry, dict)]
    if not entries:
        return []
    columns = measure_columns([e for _, _, e in entries])
    label = key[3:].replace("_", " ")
    if all("acc_at_1" in e for _, _, e in entries):
        rows = [(r.rid, name, fmt_count(e.get("items", e.get("total"))), *(get(e) for _, get in columns))
                for r, name, e in entries]
        return [Heading(f"Measures by {label}", 3),
                table(("Run", label.capitalize(), "Prompts", *(h for h, _ in columns)), rows)]
    rows = [(r.rid, name, with_interval(e.get("accuracy"), e.get("interval") or e.get("accuracy_interval")),
             fmt_count(e.get("items", e.get("total"))),
             *(get(e) for _, get in columns))
            for r, name, e in entries]
    return [Heading(f"Accuracy by {label}", 3),
            table(("Run", label.capitalize(), "Accuracy [95%]", "Items", *(h for h, _ in columns)), rows)]


def figure_cell(entry) -> str:
    """A table cell of a bucket or relation: accuracy as `fmt_cell` writes it, a distractor
    strategy's "Min@n 0.8421 [0.73–0.91]; Avg@n 0.9298 [0.88–0.97] (57)"."""
    if isinstance(entry, dict) and "min_at_n" in entry:
        return (f"Min@n {with_interval(entry.get('min_at_n'), entry.get('min_at_n_interval'))}; "
                f"Avg@n {with_interval(entry.get('avg_at_n'), entry.get('avg_at_n_interval'))} "
                f"({fmt_count(entry.get('total'))})")
    return fmt_cell(entry)


def _breakdown_table(runs: Sequence[Run], key: str, order, first: str, label=str) -> Table:
    runs = [r for r in runs if breakdown(r, key)]  # a run without one has no column
    names = sorted({name for r in runs for name in breakdown(r, key)}, key=order)
    return table((first, *(r.rid for r in runs)),
                 [(label(name), *(figure_cell(breakdown(r, key).get(name)) for r in runs)) for name in names])


def _bucket_section(runs: Sequence[Run], images: set[str]) -> list[Block]:
    shown = figure_runs(runs)
    note = accuracy_note(runs)
    blocks: list[Block] = [Heading("Accuracy by frequency bucket"),
                           Text("Buckets of the subject-object co-occurrence count in the corpus, by lower edge; "
                                "\"none\": items without a frequency annotation. Cells: accuracy (correct/total) "
                                "[95% interval: Wilson's for right/wrong items, the bootstrap for shares; \"few\": "
                                "under 30 items, too few to read]. Distractor runs: a column per strategy, "
                                "Min@n and Avg@n [95% interval] (facts). The plot: a panel per method with its "
                                "chance line, a colour per model."
                                + (" " + note if note else ""))]
    if "accuracy_by_bucket.png" in images:
        blocks.append(Image("accuracy_by_bucket.png", "Accuracy by frequency bucket"))
    return [*blocks, _breakdown_table(shown, "by_bucket", bucket_key, "Bucket")]


@dataclass(frozen=True)
class Reliability:
    run: Run
    setting: str | None  # the entry of an extra breakdown (BELIEF-ICL's settings); None: the run's own
    bins: tuple[dict, ...]

    def label(self, name: str) -> str:
        return name if self.setting is None else f"{name} · {self.setting}"


def reliability_series(run: Run) -> list[Reliability]:
    """A run's reliability bins, and those of each entry of an extra breakdown (per setting)."""
    found: list[tuple[str | None, list]] = []
    if isinstance(run.aggregate.get("reliability"), list):
        found.append((None, run.aggregate["reliability"]))
    shown = shown_breakdowns(run)
    for key in sorted(k for k in run.aggregate if k.startswith("by_") and k not in shown):
        for name, entry in sorted(breakdown(run, key).items()):
            if isinstance(entry, dict) and isinstance(entry.get("reliability"), list):
                found.append((name, entry["reliability"]))
    return [Reliability(run, name, tuple(b for b in bins if isinstance(b, dict))) for name, bins in found]


def _reliability_section(runs: Sequence[Run], images: set[str]) -> list[Block]:
    series = [s for r in runs for s in reliability_series(r)]
    if not series:
        return []
    rows = [(s.label(s.run.rid), str(k), fmt(b.get("confidence")), fmt(b.get("accuracy")),
             fmt_interval(bin_interval(b)), fmt_count(b.get("count")))
            for s in series for k, b in enumerate(s.bins, start=1)]
    blocks: list[Block] = [Heading("Reliability"),
                           Text("Equal-size confidence bins: mean confidence against accuracy, with the "
                                "accuracy's 95% Wilson interval over the bin's answers. Points below "
                                "the diagonal are overconfident.")]
    if "reliability.png" in images:
        blocks.append(Image("reliability.png", "Reliability diagram"))
    return [*blocks, table(("Run", "Bin", "Confidence", "Accuracy", "95% interval", "Count"), rows)]


def bin_interval(b: dict) -> dict | None:
    """A reliability bin's accuracy interval (Wilson over its count; shares rounded to answers)."""
    count, accuracy = b.get("count"), b.get("accuracy")
    if not isinstance(count, (int, float)) or count < 1 or not isinstance(accuracy, (int, float)):
        return None
    n = int(count)
    return wilson(min(n, max(0, round(accuracy * n))), n).as_dict()


def _positions_section(runs: Sequence[Run], images: set[str]) -> list[Block]:
    curves = [(r, position_curve(r)) for r in runs]
    rows = [(r.rid, str(p.position), fmt(p.estimate.value), fmt_interval(_finite(p.estimate.as_dict())),
             str(p.estimate.n)) for r, curve in curves for p in curve]
    if not rows:
        return []
    blocks: list[Block] = [Heading("IC-LKE: log-probability by demonstration position"),
                           Text("Runs with `record_positions=true`: for the k-th demonstration line, the mean "
                                "log-probability of its object given the lines before it, over the items, with "
                                "its 95% interval (mean ± 1.96 SE). A curve that rises with k shows the model "
                                "picking up the relation from the examples.")]
    if "positions.png" in images:
        blocks.append(Image("positions.png", "Log-probability by demonstration position"))
    return [*blocks, table(("Run", "Position", "Mean log-prob", "95% interval", "Items"), rows)]


def _finite(interval: dict) -> dict | None:
    return interval if interval.get("low") == interval.get("low") else None  # NaN: one item, no interval


def _relation_section(runs: Sequence[Run], images: set[str], names: Names = Names()) -> list[Block]:
    note = accuracy_note(runs)
    blocks: list[Block] = [Heading("Accuracy by relation"),
                           Text("Cells: accuracy (correct/total) [95% interval: Wilson's for right/wrong items, the bootstrap "
                                "for shares; \"few\": under 30 items]; distractor runs: Min@n and Avg@n per strategy."
                                + (" " + note if note else ""))]
    if "relation_heatmap.png" in images:
        blocks.append(Image("relation_heatmap.png", "Accuracy by relation and run"))
    return [*blocks, _breakdown_table(figure_runs(runs), "by_relation", natural_key, "Relation", names.relation)]


def _overlap_section(pairs: Sequence[PairRow], images: set[str]) -> list[Block]:
    blocks: list[Block] = [Heading("Overlap between runs")]
    if not pairs:
        return [*blocks, Text("No two runs share both a method and a probe set, so none is compared.")]
    across = next((p.overlap.definitions.across_rule() + " " for p in pairs if p.overlap.across_methods), "")
    blocks.append(Text(
        "Pairs of runs with the same method, or a BELIEF and a BELIEF-ICL run, over the same probe set (same "
        "SHA-256, or the same file name when a run has no digest), over the items both contain, matched by id. "
        + pairs[0].overlap.definitions.describe() + " " + across +
        "Subsumption A→B: share of the units A knows that B knows too. Pearson and Kendall tau-b correlate the "
        "two runs' per-relation accuracies over the shared items, each with its 95% interval by Fisher's z "
        "(n/a under 5 relations, where any few points correlate by chance, or with a constant side). McNemar p: the exact test that both runs know as much, from the units only one of them knows "
        "(n/a where the runs share no unit: there is nothing to test)." + DISTRACTOR_UNITS * any(
            p.a.method == "distractor" for p in pairs)))
    if "overlap.png" in images:
        blocks.append(Image("overlap.png", "Subsumption and sharing between runs"))
    # BELIEF's asymmetric sharing has a rate per run; the symmetric definitions one per pair.
    asymmetric = pairs[0].overlap.asymmetric
    rows = [(p.a.rid, p.b.rid, p.a.method if p.a.method == p.b.method else f"{p.a.method} / {p.b.method}", p.a.probes,
             str(o.shared), fmt(o.subsumption_ab), fmt(o.subsumption_ba),
             *((fmt(o.sharing_a), fmt(o.sharing_b)) if asymmetric else (fmt(o.sharing),)),
             str(o.both), str(o.only_a), str(o.only_b), str(o.neither), str(o.relations),
             correlation_cell(o.pearson, o.relations), correlation_cell(o.kendall, o.relations, kendall=True),
             f"{o.p_value:.3g}" if o.shared else "n/a")
            for p in pairs for o in (p.overlap,)]
    sharing = ("Sharing of A's", "Sharing of B's") if asymmetric else ("Sharing",)
    return [*blocks, table(("A", "B", "Method", "Probe set", "Shared units", "Subsumption A→B", "Subsumption B→A",
                            *sharing, "Both", "Only A", "Only B", "Neither", "Relations", "Pearson",
                            "Kendall tau-b", "McNemar p"), rows)]


def correlation_cell(r: float | None, relations: int, *, kendall: bool = False) -> str:
    """A correlation over `relations` points as `compare` gives it: the value with its Fisher
    interval, or the reason it is not given."""
    return correlation_text(fisher_interval(r, relations, kendall=kendall))


# What a unit of a distractor run is (probes/measures/overlap.py `known_units`).
DISTRACTOR_UNITS = (" Distractor runs (DistFact defines no sharing between runs; factprobe's reading): a unit is "
                    "a fact under one distractor strategy, known when its Min@n is 1.0 (the object more plausible "
                    "than each of its n distractors on every cloze); their per-relation values are Min@n, the "
                    "mean over the facts and strategies.")


def build_document(runs: Sequence[Run], title: str, images: set[str] | None = None,
                   definitions: Definitions = Definitions(), items_page: str | None = None,
                   warnings: Sequence[str] = (), names: Names | None = None) -> list[Block]:
    """The whole report as blocks; `images` names the PNG files that were drawn, `items_page`
    the item view beside the report (items.html); `warnings` stand at the top (probe sets not
    found); `names` label the relations."""
    images = images or set()
    pairs = comparable_pairs(runs, definitions)
    counted = [r for r in runs if any(map(frequency_series, accuracy_views(r)))]  # runs the frequency table shows
    return [Heading(title, 1),
            Text(f"{len(runs)} run(s). Generated by factprobe report from run.json, items.jsonl and aggregate.json."),
            *(Text(f"Warning: {line}.") for line in warnings),
            *_runs_section(runs), *_items_section(items_page), *_method_sections(runs), *_bucket_section(runs, images),
            *frequency_section(accuracy_runs(runs), images, accuracy_note(counted)),
            *popularity_section(accuracy_runs(runs), images),
            *_reliability_section(runs, images), *_positions_section(runs, images), *_relation_section(runs, images, names or Names()),
            *_overlap_section(pairs, images)]

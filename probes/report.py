"""Reports over finished `factprobe eval` runs: tables and plots across runs, and a side-by-side
comparison of two.

A run folder holds run.json (what ran), items.jsonl (one record per item) and aggregate.json
(the numbers `eval` computed). Everything here reads those files only; no model is loaded.

Layers, in order: loading (the one place that touches run folders), pure computations (overlap
between runs, comparisons), a small document model (headings, text, tables, images) rendered to
Markdown and to HTML from the same blocks so the two never disagree, and the plots. Output is
deterministic: runs are sorted, keys are sorted, numbers have 4 decimals.
"""

from __future__ import annotations

import html
import json
import math
import re
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence, Union

from . import metrics

RUN_FILES = ("run.json", "aggregate.json", "items.jsonl")
KNOWN_RULE = ("An item counts as known when its `correct` is true, or, where `correct` is a share "
              "(BELIEF over several prompts), when that share is 1.0.")
# Aggregate keys rendered by dedicated tables; any other `by_*` mapping gets a generic table.
HANDLED_BREAKDOWNS = {"by_relation", "by_bucket", "by_strategy"}


class RunError(ValueError):
    """A folder that is not a readable run; the message names the folder or file."""


# ---------------------------------------------------------------------------------------------
# Loading


@dataclass(frozen=True)
class Run:
    folder: str  # as given on the command line
    config: dict  # run.json
    aggregate: dict  # aggregate.json
    items: tuple[dict, ...]  # items.jsonl
    rid: str = ""  # short id in tables ("R1"), set once the runs are sorted

    @property
    def model(self) -> str:
        return str(self.config.get("model") or "?")

    @property
    def method(self) -> str:
        return str(self.config.get("method") or self.aggregate.get("method") or "?")

    @property
    def probes(self) -> str:
        return str(self.config.get("probes") or "?")

    @property
    def probes_sha256(self) -> str | None:
        return self.config.get("probes_sha256") or None

    @property
    def probe_set(self) -> str:
        sha = self.probes_sha256
        return f"{self.probes} ({sha[:12]})" if sha else self.probes

    @property
    def label(self) -> str:
        return f"{self.rid}: {self.model} / {self.method}" if self.rid else f"{self.model} / {self.method}"

    @property
    def item_count(self) -> int:
        return int(self.aggregate.get("items", len(self.items)))


def load_run(folder: str | Path) -> Run:
    path = Path(folder)
    if not path.is_dir():
        raise RunError(f"{folder}: no such run folder")
    for name in RUN_FILES:
        if not (path / name).is_file():
            raise RunError(f"{folder}: not a run folder (no {name}; run `factprobe eval --out {folder}` first)")
    config = _json_object(path / "run.json")
    aggregate = _json_object(path / "aggregate.json")
    items = []
    text = (path / "items.jsonl").read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise RunError(f"{path / 'items.jsonl'}:{number}: not JSON ({error.msg})") from None
        if not isinstance(record, dict) or "id" not in record:
            raise RunError(f"{path / 'items.jsonl'}:{number}: not an item record (no id)")
        items.append(record)
    return Run(str(folder), config, aggregate, tuple(items))


def _json_object(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RunError(f"{path}: not JSON ({error.msg}, line {error.lineno})") from None
    except UnicodeDecodeError:
        raise RunError(f"{path}: not UTF-8 text") from None
    if not isinstance(value, dict):
        raise RunError(f"{path}: not a JSON object")
    return value


def load_runs(folders: Iterable[str | Path]) -> list[Run]:
    """Every folder loaded, a folder named twice kept once, sorted so that the order on the
    command line does not change the report; runs get ids R1, R2, ... in that order."""
    seen: dict[Path, Run] = {}
    for folder in folders:
        seen.setdefault(Path(folder).resolve(), load_run(folder))
    ordered = sorted(seen.values(), key=lambda r: (r.model, r.method, r.probes, r.probes_sha256 or "", r.folder))
    return [replace(run, rid=f"R{k}") for k, run in enumerate(ordered, start=1)]


# ---------------------------------------------------------------------------------------------
# Pure computations


def is_known(correct) -> bool:
    # bool is a subclass of int, so True == 1.0 and a share of 1.0 both qualify; None does not.
    return isinstance(correct, (int, float)) and correct == 1.0


def natural_key(text: str) -> tuple:
    """P17 before P36 before P1376: digit runs compare as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def bucket_key(label: str) -> tuple:
    """Frequency buckets by their lower edge ("0", "[1,10)", "[100,inf)"); labels that are not
    buckets after them, alphabetically; "none" (unannotated items) last."""
    if label == "none":
        return (2, 0.0, label)
    match = re.fullmatch(r"\[?\s*([0-9.]+)\s*(,.*)?", label)
    if match:
        try:
            return (0, float(match.group(1)), label)
        except ValueError:
            pass
    return (1, 0.0, label)


def same_probe_set(a: Run, b: Run) -> bool:
    """The same file contents when both runs know the SHA-256; otherwise the same file name."""
    if a.probes_sha256 and b.probes_sha256:
        return a.probes_sha256 == b.probes_sha256
    return a.probes == b.probes


def _number(value) -> float | None:
    """A float for tables and JSON; None for missing values and NaN (JSON has no NaN)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


# How `compare` and `report` decide what a run knows (see `Definitions`): the first value of each
# is IC-LKE's (Wu et al. 2024) and the default.
KNOWN_DEFINITIONS = ("per-template", "all-prompts")
SHARING_DEFINITIONS = ("probed", "jaccard")


@dataclass(frozen=True)
class Definitions:
    """What a model "knows" when two runs are compared, and which sharing rate is reported.

    known:
      - "per-template" (IC-LKE's comparison, the default): the unit is one probe, i.e. one fact
        under one prompt (BELIEF: each template and subject alias), one fact under one template
        in one ICL setting (BELIEF-ICL), or one item where a method has one verdict per item;
        subsumption and sharing are computed per relation and averaged over relations with
        equal weight;
      - "all-prompts" (factprobe before issue 20): the unit is the item, known only when its
        `correct` is true or 1.0 (a BELIEF fact right on every prompt, a BELIEF-ICL fact right in
        every setting), and the rates are pooled over all items.
    sharing:
      - "probed" (default; our reading of IC-LKE's sharing rate, whose exact formula we could not
        confirm): the share of the units both runs scored that both know;
      - "jaccard": known by both / known by either (the Jaccard index reported before).
    """

    known: str = KNOWN_DEFINITIONS[0]
    sharing: str = SHARING_DEFINITIONS[0]

    def __post_init__(self) -> None:
        if self.known not in KNOWN_DEFINITIONS:
            raise ValueError(f"known must be one of {', '.join(KNOWN_DEFINITIONS)}, not {self.known!r}")
        if self.sharing not in SHARING_DEFINITIONS:
            raise ValueError(f"sharing must be one of {', '.join(SHARING_DEFINITIONS)}, not {self.sharing!r}")

    def describe(self) -> str:
        if self.known == "per-template":
            known = ("Known (--known per-template, IC-LKE's comparison): the unit is one probe, i.e. a fact under "
                     "one prompt (BELIEF), under one template in one ICL setting (BELIEF-ICL), or the item where a "
                     "method has one verdict per item (known when `correct` is true or 1.0); rates are computed per "
                     "relation over the units both runs scored and averaged over relations.")
        else:
            known = f"Known (--known all-prompts): {KNOWN_RULE} Rates are pooled over all items."
        sharing = ("Sharing (--sharing probed): units both know / units both scored." if self.sharing == "probed"
                   else "Sharing (--sharing jaccard): units both know / units either knows (Jaccard index).")
        return f"{known} {sharing}"

    def as_dict(self) -> dict:
        return {"known": self.known, "sharing": self.sharing}


@dataclass(frozen=True)
class Overlap:
    """What two runs know of the units both contain (items matched by id; see `Definitions`)."""
    shared: int  # units both runs scored (= items under --known all-prompts)
    both: int
    only_a: int
    only_b: int
    neither: int
    subsumption_ab: float | None  # share of A's known units that B knows too; None: A knows none of them
    subsumption_ba: float | None
    sharing: float | None  # per `Definitions.sharing`; None when undefined
    relations: int  # relations among the shared items, the points of the correlations
    pearson: float | None  # of per-relation accuracies; None when undefined (< 2 relations, constant)
    kendall: float | None
    definitions: Definitions = Definitions()
    shared_items: int = 0  # items those units belong to

    def as_dict(self) -> dict:
        return {"shared_items": self.shared_items, "shared_units": self.shared, "both": self.both, "only_a": self.only_a, "only_b": self.only_b,
                "neither": self.neither, "subsumption_a_to_b": self.subsumption_ab,
                "subsumption_b_to_a": self.subsumption_ba, "sharing": self.sharing,
                "relations": self.relations, "pearson": self.pearson, "kendall_tau": self.kendall,
                "definitions": self.definitions.as_dict()}


def known_units(items: Sequence[dict], known: str) -> dict[tuple, tuple[str, bool]]:
    """unit -> (relation, known) for every unit that has a verdict, under the `known` definition.

    Units are keyed so that two runs over one probe set name the same probe alike: (id,) for an
    item, (id, template, k) for the k-th prompt of a template (BELIEF: one per subject alias),
    (id, setting) for a BELIEF-ICL setting. An item without a verdict (a multi-strategy
    distractor item, correct None) has no unit: counting it as "not known" would invent agreement.
    """
    out: dict[tuple, tuple[str, bool]] = {}
    for r in items:
        relation = str(r.get("relation"))
        if known == "per-template":
            prompts = r.get("prompt_correct")
            if isinstance(prompts, list):
                templates = r.get("template_ids") or [None] * len(prompts)
                seen: dict = {}
                for template, correct in zip(templates, prompts):
                    k = seen[template] = seen.get(template, -1) + 1
                    out[(r["id"], template, k)] = (relation, bool(correct))
                continue
            settings = r.get("by_setting")
            if isinstance(settings, dict):
                for setting, entry in settings.items():
                    if isinstance(entry, dict) and entry.get("correct") is not None:
                        out[(r["id"], setting)] = (relation, bool(entry["correct"]))
                continue
        if r.get("correct") is not None:
            out[(r["id"],)] = (relation, is_known(r["correct"]))
    return out


def overlap(items_a: Sequence[dict], items_b: Sequence[dict], definitions: Definitions = Definitions()) -> Overlap:
    units_a, units_b = known_units(items_a, definitions.known), known_units(items_b, definitions.known)
    shared = set(units_a) & set(units_b)
    known_a = {u for u in shared if units_a[u][1]}
    known_b = {u for u in shared if units_b[u][1]}
    both = len(known_a & known_b)
    if definitions.known == "per-template":
        relation_of = {u: units_a[u][0] for u in shared}
        subsumption_ab = _number(metrics.subsumption_rate_by_relation(known_a, known_b, relation_of))
        subsumption_ba = _number(metrics.subsumption_rate_by_relation(known_b, known_a, relation_of))
        sharing = _number(metrics.mean_over_relations(relation_of, lambda units: _sharing(
            known_a & units, known_b & units, units, definitions.sharing)))
    else:
        # The metric functions call an empty side vacuously 1.0; a report says n/a instead, since a
        # reader would take 1.0 as "B knows everything A knows" when A knows nothing.
        subsumption_ab = metrics.subsumption_rate(known_a, known_b) if known_a else None
        subsumption_ba = metrics.subsumption_rate(known_b, known_a) if known_b else None
        sharing = _number(_sharing(known_a, known_b, shared, definitions.sharing))
    by_id_a = {r["id"]: r for r in items_a}
    by_id_b = {r["id"]: r for r in items_b}
    shared_ids = sorted({u[0] for u in shared}, key=str)
    acc_a = relation_means([by_id_a[i] for i in shared_ids])
    acc_b = relation_means([by_id_b[i] for i in shared_ids])
    relations = sorted(set(acc_a) & set(acc_b), key=natural_key)
    pearson = kendall = None
    if len(relations) >= 2:
        x, y = [acc_a[r] for r in relations], [acc_b[r] for r in relations]
        pearson, kendall = _number(metrics.pearson(x, y)), _number(metrics.kendall_tau(x, y))
    return Overlap(shared=len(shared), both=both, only_a=len(known_a) - both, only_b=len(known_b) - both,
                   neither=len(shared) - len(known_a | known_b), subsumption_ab=subsumption_ab,
                   subsumption_ba=subsumption_ba, sharing=sharing, relations=len(relations), pearson=pearson,
                   kendall=kendall, definitions=definitions, shared_items=len(shared_ids))


def _sharing(known_a: set, known_b: set, probed: set, definition: str) -> float:
    """One sharing rate over one group of units; NaN where it is undefined."""
    if definition == "jaccard":
        return metrics.sharing_rate({"a": known_a, "b": known_b}) if known_a | known_b else math.nan
    return metrics.shared_rate({"a": known_a, "b": known_b}, probed)


def relation_means(items: Sequence[dict]) -> dict[str, float]:
    """Mean `correct` per relation (a share counts as its value, as in the overall accuracy);
    unscored items (correct None) are left out."""
    groups: dict[str, list[float]] = {}
    for r in items:
        correct = r.get("correct")
        if isinstance(correct, (int, float)) and correct == correct:  # NaN != NaN: unscored too
            groups.setdefault(str(r.get("relation")), []).append(float(correct))
    return {k: sum(v) / len(v) for k, v in groups.items()}


@dataclass(frozen=True)
class PairRow:
    a: Run
    b: Run
    overlap: Overlap


def comparable_pairs(runs: Sequence[Run], definitions: Definitions = Definitions()) -> list[PairRow]:
    """Every pair of runs with the same method over the same probe set, in run order."""
    return [PairRow(a, b, overlap(a.items, b.items, definitions))
            for k, a in enumerate(runs) for b in runs[k + 1:]
            if a.method == b.method and same_probe_set(a, b)]


def _breakdown(run: Run, key: str) -> dict[str, dict]:
    value = run.aggregate.get(key)
    return value if isinstance(value, dict) else {}


def _entry_accuracy(entry) -> float | None:
    return _number(entry.get("accuracy")) if isinstance(entry, dict) else None


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


@dataclass(frozen=True)
class Comparison:
    a: Run
    b: Run
    same_probe_set: bool
    overlap: Overlap

    def as_dict(self) -> dict:
        """The JSON of `factprobe compare`: differences are B - A."""
        def side(run: Run) -> dict:
            return {"folder": run.folder, "model": run.model, "method": run.method, "probes": run.probes,
                    "probes_sha256": run.probes_sha256, "items": run.item_count,
                    "accuracy": _number(run.aggregate.get("accuracy"))}

        def table(key: str, order) -> dict:
            ta, tb = _breakdown(self.a, key), _breakdown(self.b, key)
            out = {}
            for name in sorted(set(ta) | set(tb), key=order):
                acc_a, acc_b = _entry_accuracy(ta.get(name)), _entry_accuracy(tb.get(name))
                out[name] = {"a": acc_a, "b": acc_b, "difference": _diff(acc_a, acc_b),
                             "total_a": (ta.get(name) or {}).get("total"), "total_b": (tb.get(name) or {}).get("total")}
            return out

        acc_a, acc_b = side(self.a)["accuracy"], side(self.b)["accuracy"]
        return {"a": side(self.a), "b": side(self.b), "same_probe_set": self.same_probe_set,
                "same_method": self.a.method == self.b.method,
                "accuracy": {"a": acc_a, "b": acc_b, "difference": _diff(acc_a, acc_b)},
                "by_relation": table("by_relation", natural_key), "by_bucket": table("by_bucket", bucket_key),
                "overlap": self.overlap.as_dict(), "known_rule": self.overlap.definitions.describe()}


def compare(a: Run, b: Run, definitions: Definitions = Definitions()) -> Comparison:
    return Comparison(a, b, same_probe_set(a, b), overlap(a.items, b.items, definitions))


# ---------------------------------------------------------------------------------------------
# Formatting


def fmt(value) -> str:
    """A rate or score: 4 decimals, "n/a" when missing."""
    number = _number(value)
    return "n/a" if number is None else f"{number:.4f}"


def fmt_signed(value) -> str:
    number = _number(value)
    return "n/a" if number is None else f"{number:+.4f}"


def fmt_count(value) -> str:
    """A count: whole, except sums of shares (share-scored methods count correct items so)."""
    number = _number(value)
    if number is None:
        return "?"
    return str(int(number)) if number.is_integer() else f"{number:.4f}"


def fmt_cell(entry) -> str:
    """A breakdown entry as "accuracy (correct/total)"."""
    if not isinstance(entry, dict):
        return "–"
    return f"{fmt(entry.get('accuracy'))} ({fmt_count(entry.get('correct'))}/{fmt_count(entry.get('total'))})"


def fmt_acc_at_1(value) -> str:
    if not isinstance(value, dict):
        return "n/a"
    return f"{fmt(value.get('mean'))} ± {fmt(value.get('sd'))}"


# ---------------------------------------------------------------------------------------------
# The document: blocks that render to Markdown and HTML alike


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Image:
    file: str
    alt: str


Block = Union[Heading, Text, Table, Image]


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> Table:
    return Table(tuple(headers), tuple(tuple(r) for r in rows))


def _headline_columns(entries: Sequence[dict]) -> list[tuple[str, Callable[[dict], str]]]:
    """The BELIEF-style measures present in any of `entries` (a run's aggregate, or one setting
    of a breakdown), as (column header, formatter) pairs; absent ones get no column."""
    candidates = [
        ("acc_at_1", "Acc@1 (mean ± SD)", lambda d: fmt_acc_at_1(d.get("acc_at_1"))),
        ("consistency", "Consistency", lambda d: fmt(d.get("consistency"))),
        ("overconfidence", "Overconfidence", lambda d: fmt(d.get("overconfidence"))),
        ("one_word_ratio", "One-word ratio", lambda d: fmt(d.get("one_word_ratio"))),
        ("coverage", "Coverage avg / max / oracle",
         lambda d: " / ".join(fmt((d.get("coverage") or {}).get(k)) for k in ("average", "maximum", "oracle"))),
        ("bias_level", "Bias level", lambda d: fmt(d.get("bias_level"))),
    ]
    return [(header, get) for key, header, get in candidates if any(key in e for e in entries)]


def _runs_section(runs: Sequence[Run]) -> list[Block]:
    rows = [(r.rid, r.model, r.method, r.probe_set, r.folder, str(r.item_count),
             fmt_count(r.aggregate.get("scored")), fmt(r.aggregate.get("accuracy"))) for r in runs]
    return [Heading("Runs"),
            Text("Accuracy is the mean of the items' `correct` values, as `factprobe eval` wrote it to "
                 "aggregate.json. Numbers are rounded to 4 decimals."),
            _table(("Run", "Model", "Method", "Probe set", "Folder", "Items", "Scored", "Accuracy"), rows)]


def _method_sections(runs: Sequence[Run]) -> list[Block]:
    blocks: list[Block] = []
    headline_runs = [r for r in runs if "acc_at_1" in r.aggregate or "consistency" in r.aggregate]
    if headline_runs:
        columns = _headline_columns([r.aggregate for r in headline_runs])
        blocks += [Heading("BELIEF measures", 3),
                   _table(("Run", *(h for h, _ in columns)),
                          [(r.rid, *(get(r.aggregate) for _, get in columns)) for r in headline_runs])]
    blocks += _belief_definitions(runs)
    icl_rows = [(r.rid, k, fmt((v or {}).get("accuracy")), fmt_count((v or {}).get("items")))
                for r in runs for k, v in sorted(_breakdown(r, "accuracy_at_k").items(), key=lambda kv: bucket_key(kv[0]))]
    if icl_rows:
        blocks += [Heading("IC-LKE Accuracy@K", 3),
                   Text("Accuracy over the items whose normalized probability of the predicted choice exceeds K."),
                   _table(("Run", "K", "Accuracy", "Items"), icl_rows)]
    strategy_rows = [(r.rid, s, fmt((v or {}).get("min_at_n")), fmt((v or {}).get("avg_at_n")))
                     for r in runs for s, v in sorted(_breakdown(r, "by_strategy").items())]
    if strategy_rows:
        blocks += [Heading("Distractors: Min@n and Avg@n per strategy", 3),
                   _table(("Run", "Strategy", "Min@n", "Avg@n"), strategy_rows)]
    for key in sorted({k for r in runs for k, v in r.aggregate.items()
                       if k.startswith("by_") and k not in HANDLED_BREAKDOWNS and isinstance(v, dict)}):
        blocks += _extra_breakdown(runs, key)
    return [Heading("Method measures"), *blocks] if blocks else []


BELIEF_UNITS = {"pair": "subject-relation pair (BELIEF's)", "fact": "(s, r, o) fact, not BELIEF's pair",
                "mixed": "mixed pairs and facts"}
BELIEF_BIAS = {"entropy": "1 - H/H_max of the content-free distribution over the candidate objects (BELIEF's)",
               "top1": "share of answers equal to the content-free prompt's top-1 answer, not BELIEF's"}
BELIEF_MAXIMUM = {"best-subject": "best subject expression per template (MyriadLAMA's)",
                  "mean": "mean over a template's subject expressions, not MyriadLAMA's"}


def _belief_definitions(runs: Sequence[Run]) -> list[Block]:
    """Which definition each BELIEF / BELIEF-ICL run's numbers follow (aggregate.json's
    `definitions`; probes/aggregate.py), one line per run, beside the numbers."""
    lines = []
    for r in runs:
        d = r.aggregate.get("definitions")
        if not isinstance(d, dict):
            continue
        parts = [f"unit {d.get('unit')}: {BELIEF_UNITS.get(d.get('unit'), '?')}",
                 f"Acc@1 over {d.get('acc_draws')} one-prompt draws"
                 + (" (BELIEF's N)" if d.get("acc_draws") == 50_000 else " (BELIEF uses 50000)")]
        if d.get("bias"):
            parts.append(f"bias={d['bias']}: {BELIEF_BIAS.get(d['bias'], '?')}")
        if d.get("coverage_maximum"):
            parts.append(f"coverage_maximum={d['coverage_maximum']}: "
                         f"{BELIEF_MAXIMUM.get(d['coverage_maximum'], '?')}")
        lines.append(f"{r.rid}: " + "; ".join(parts) + ".")
    return [Text("Definitions of the BELIEF measures. " + " ".join(lines))] if lines else []


def _extra_breakdown(runs: Sequence[Run], key: str) -> list[Block]:
    """A breakdown this report has no dedicated table for (BELIEF-ICL's `by_setting`, or one added
    later): accuracy and item count per entry, plus whatever headline measures the entries have."""
    entries = [(r, name, entry) for r in runs for name, entry in sorted(_breakdown(r, key).items())
               if isinstance(entry, dict)]
    if not entries:
        return []
    columns = _headline_columns([e for _, _, e in entries])
    rows = [(r.rid, name, fmt(e.get("accuracy")), fmt_count(e.get("items", e.get("total"))),
             *(get(e) for _, get in columns))
            for r, name, e in entries]
    return [Heading(f"Accuracy by {key[3:].replace('_', ' ')}", 3),
            _table(("Run", key[3:].replace("_", " ").capitalize(), "Accuracy", "Items", *(h for h, _ in columns)), rows)]


def _breakdown_table(runs: Sequence[Run], key: str, order, first: str) -> Table:
    names = sorted({name for r in runs for name in _breakdown(r, key)}, key=order)
    return _table((first, *(r.rid for r in runs)),
                  [(name, *(fmt_cell(_breakdown(r, key).get(name)) for r in runs)) for name in names])


def _bucket_section(runs: Sequence[Run], images: set[str]) -> list[Block]:
    blocks: list[Block] = [Heading("Accuracy by frequency bucket"),
                           Text("Buckets of the subject-object co-occurrence count in the corpus, by lower edge; "
                                "\"none\": items without a frequency annotation. Cells: accuracy (correct/total).")]
    if "accuracy_by_bucket.png" in images:
        blocks.append(Image("accuracy_by_bucket.png", "Accuracy by frequency bucket"))
    return [*blocks, _breakdown_table(runs, "by_bucket", bucket_key, "Bucket")]


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
    for key in sorted(k for k in run.aggregate if k.startswith("by_") and k not in HANDLED_BREAKDOWNS):
        for name, entry in sorted(_breakdown(run, key).items()):
            if isinstance(entry, dict) and isinstance(entry.get("reliability"), list):
                found.append((name, entry["reliability"]))
    return [Reliability(run, name, tuple(b for b in bins if isinstance(b, dict))) for name, bins in found]


def _reliability_section(runs: Sequence[Run], images: set[str]) -> list[Block]:
    series = [s for r in runs for s in reliability_series(r)]
    if not series:
        return []
    rows = [(s.label(s.run.rid), str(k), fmt(b.get("confidence")), fmt(b.get("accuracy")), fmt_count(b.get("count")))
            for s in series for k, b in enumerate(s.bins, start=1)]
    blocks: list[Block] = [Heading("Reliability"),
                           Text("Equal-size confidence bins: mean confidence against accuracy. Points below "
                                "the diagonal are overconfident.")]
    if "reliability.png" in images:
        blocks.append(Image("reliability.png", "Reliability diagram"))
    return [*blocks, _table(("Run", "Bin", "Confidence", "Accuracy", "Count"), rows)]


def _relation_section(runs: Sequence[Run], images: set[str]) -> list[Block]:
    blocks: list[Block] = [Heading("Accuracy by relation"), Text("Cells: accuracy (correct/total).")]
    if "relation_heatmap.png" in images:
        blocks.append(Image("relation_heatmap.png", "Accuracy by relation and run"))
    return [*blocks, _breakdown_table(runs, "by_relation", natural_key, "Relation")]


def _overlap_section(pairs: Sequence[PairRow], images: set[str]) -> list[Block]:
    blocks: list[Block] = [Heading("Overlap between runs")]
    if not pairs:
        return [*blocks, Text("No two runs share both a method and a probe set, so none is compared.")]
    blocks.append(Text(
        "Pairs of runs with the same method over the same probe set (same SHA-256, or the same file name "
        "when a run has no digest), over the items both contain, matched by id. "
        + pairs[0].overlap.definitions.describe() + " "
        "Subsumption A→B: share of the units A knows that B knows too. Pearson and Kendall tau-b correlate the "
        "two runs' per-relation accuracies over the shared items (n/a with fewer than 2 relations or a constant "
        "side)."))
    if "overlap.png" in images:
        blocks.append(Image("overlap.png", "Subsumption and sharing between runs"))
    rows = [(p.a.rid, p.b.rid, p.a.method, p.a.probes, str(o.shared), fmt(o.subsumption_ab), fmt(o.subsumption_ba),
             fmt(o.sharing), str(o.both), str(o.only_a), str(o.only_b), str(o.neither), str(o.relations),
             fmt(o.pearson), fmt(o.kendall))
            for p in pairs for o in (p.overlap,)]
    return [*blocks, _table(("A", "B", "Method", "Probe set", "Shared units", "Subsumption A→B", "Subsumption B→A",
                             "Sharing", "Both", "Only A", "Only B", "Neither", "Relations", "Pearson",
                             "Kendall tau-b"), rows)]


def build_document(runs: Sequence[Run], title: str, images: set[str] | None = None,
                   definitions: Definitions = Definitions()) -> list[Block]:
    """The whole report as blocks; `images` names the PNG files that were drawn."""
    images = images or set()
    pairs = comparable_pairs(runs, definitions)
    return [Heading(title, 1),
            Text(f"{len(runs)} run(s). Generated by factprobe report from run.json, items.jsonl and aggregate.json."),
            *_runs_section(runs), *_method_sections(runs), *_bucket_section(runs, images),
            *_reliability_section(runs, images), *_relation_section(runs, images), *_overlap_section(pairs, images)]


# ---------------------------------------------------------------------------------------------
# Rendering


_MD_SPECIAL = re.compile(r"([\\`*<>|])")


def md_escape(text: str) -> str:
    # Backslash escapes keep labels such as "<b>" or "a|b" literal in any CommonMark renderer;
    # the one exception is inline code, which the texts here mark with backticks on purpose.
    return _MD_SPECIAL.sub(r"\\\1", text).replace("\n", " ")


def _md_text(text: str) -> str:
    parts = text.split("`")
    # Odd parts sit between backticks: code spans, kept verbatim.
    return "".join(f"`{p}`" if k % 2 else md_escape(p) for k, p in enumerate(parts))


def to_markdown(blocks: Sequence[Block]) -> str:
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            lines += ["#" * block.level + " " + md_escape(block.text), ""]
        elif isinstance(block, Text):
            lines += [_md_text(block.text), ""]
        elif isinstance(block, Image):
            lines += [f"![{md_escape(block.alt)}]({block.file})", ""]
        else:
            lines.append("| " + " | ".join(md_escape(h) for h in block.headers) + " |")
            lines.append("|" + "|".join("---" for _ in block.headers) + "|")
            lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in block.rows]
            lines.append("")
    return "\n".join(lines)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
tr:nth-child(even) td { background: #fafafa; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0 1em; }
code { background: #f2f2f2; padding: 0 0.2em; }
""".strip()


def _html_text(text: str) -> str:
    parts = text.split("`")
    return "".join(f"<code>{html.escape(p)}</code>" if k % 2 else html.escape(p) for k, p in enumerate(parts))


def to_html(blocks: Sequence[Block], title: str) -> str:
    body: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Text):
            body.append(f"<p>{_html_text(block.text)}</p>")
        elif isinstance(block, Image):
            body.append(f'<img src="{html.escape(block.file)}" alt="{html.escape(block.alt)}">')
        else:
            head = "".join(f"<th>{html.escape(h)}</th>" for h in block.headers)
            rows = "\n".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                             for row in block.rows)
            body.append(f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


# ---------------------------------------------------------------------------------------------
# Plots (matplotlib's object API on the Agg canvas: no pyplot state, no display needed)


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _save(fig, path: Path) -> None:
    # No "Software" entry: PNG metadata then holds nothing that changes between versions.
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None})


def _wrap(text: str, width: int = 32) -> str:
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or text


def _nan(value) -> float:
    number = _number(value)
    return math.nan if number is None else number


def plot_buckets(runs: Sequence[Run], path: Path) -> bool:
    # Runs without a single bucket accuracy (e.g. multi-strategy distractor runs) only add legend noise.
    runs = [r for r in runs if any(_entry_accuracy(v) is not None for v in _breakdown(r, "by_bucket").values())]
    buckets = sorted({b for r in runs for b in _breakdown(r, "by_bucket")}, key=bucket_key)
    if not buckets:
        return False
    fig = _figure(max(6.0, 1.2 * len(buckets) * max(1, len(runs)) ** 0.5 + 2), 4.5)
    ax = fig.add_subplot()
    width = 0.8 / len(runs)
    for k, run in enumerate(runs):
        heights = [_nan(_entry_accuracy(_breakdown(run, "by_bucket").get(b))) for b in buckets]
        bars = ax.bar([i - 0.4 + width * (k + 0.5) for i in range(len(buckets))], heights, width,
                      label=_wrap(run.label, 48))
        # Values on the bars: an accuracy of 0 is otherwise indistinguishable from a missing bucket.
        ax.bar_label(bars, ["" if math.isnan(h) else f"{h:.2f}" for h in heights], fontsize="x-small")
    ax.set_xticks(range(len(buckets)), buckets)
    ax.set_xlabel("frequency bucket")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.05)
    ax.set_title("Accuracy by frequency bucket")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    _save(fig, path)
    return True


def plot_reliability(runs: Sequence[Run], path: Path) -> bool:
    series = [s for r in runs for s in reliability_series(r)]
    if not series:
        return False
    fig = _figure(6.5, 5)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    for s in series:
        ax.plot([_nan(b.get("confidence")) for b in s.bins], [_nan(b.get("accuracy")) for b in s.bins], marker="o",
                label=_wrap(s.label(s.run.label), 48))
    ax.set_xlim(-0.02, 1.02)  # room for the markers of bins at 0 or 1
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("mean confidence")
    ax.set_ylabel("accuracy")
    ax.set_title("Reliability diagram")
    ax.legend(fontsize="small")
    _save(fig, path)
    return True


def plot_relations(runs: Sequence[Run], path: Path) -> bool:
    relations = sorted({n for r in runs for n in _breakdown(r, "by_relation")}, key=natural_key)
    if not relations:
        return False
    import numpy as np

    values = np.array([[_nan(_entry_accuracy(_breakdown(r, "by_relation").get(rel))) for r in runs]
                       for rel in relations], dtype=float)
    fig = _figure(max(5.0, 1.6 * len(runs) + 2.5), min(60.0, max(3.0, 0.35 * len(relations) + 2)))
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(runs)), [_wrap(r.label, 40) for r in runs], fontsize="small", rotation=30,
                  ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(relations)), relations, fontsize="small")
    if len(relations) <= 80:  # beyond that the numbers no longer fit their cells
        for i in range(len(relations)):
            for j in range(len(runs)):
                value = values[i, j]
                ax.text(j, i, "–" if math.isnan(value) else f"{value:.2f}", ha="center", va="center",
                        color="white" if not math.isnan(value) and value < 0.6 else "black", fontsize="small")
    fig.colorbar(image, ax=ax, label="accuracy")
    ax.set_title("Accuracy by relation")
    _save(fig, path)
    return True


def plot_overlap(pairs: Sequence[PairRow], path: Path) -> bool:
    if not pairs:
        return False
    fig = _figure(7.5, max(3.0, 0.9 * len(pairs) + 1.5))
    ax = fig.add_subplot()
    measures = [("subsumption A→B", lambda o: o.subsumption_ab), ("subsumption B→A", lambda o: o.subsumption_ba),
                ("sharing", lambda o: o.sharing)]
    height = 0.8 / len(measures)
    for k, (name, get) in enumerate(measures):
        positions = [i - 0.4 + height * (k + 0.5) for i in range(len(pairs))]
        ax.barh(positions, [_nan(get(p.overlap)) for p in pairs], height, label=name)
    ax.set_yticks(range(len(pairs)), [f"A={p.a.rid}, B={p.b.rid}" for p in pairs])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("rate")
    ax.set_title("Known items shared between runs")
    ax.legend(fontsize="small", loc="lower right")
    _save(fig, path)
    return True


# ---------------------------------------------------------------------------------------------
# The report on disk


@dataclass
class ReportFiles:
    markdown: Path
    html: Path
    images: list[Path] = field(default_factory=list)


def write_report(runs: Sequence[Run], out: str | Path, title: str = "factprobe report",
                 definitions: Definitions = Definitions()) -> ReportFiles:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plots = {"accuracy_by_bucket.png": lambda p: plot_buckets(runs, p),
             "reliability.png": lambda p: plot_reliability(runs, p),
             "relation_heatmap.png": lambda p: plot_relations(runs, p),
             "overlap.png": lambda p: plot_overlap(comparable_pairs(runs, definitions), p)}
    drawn = []
    for name, draw in plots.items():
        target = out / name
        if draw(target):
            drawn.append(target)
        elif target.exists():
            target.unlink()  # left from an earlier report over other runs: it would mislead
    blocks = build_document(runs, title, {p.name for p in drawn}, definitions)
    files = ReportFiles(out / "report.md", out / "report.html", drawn)
    files.markdown.write_text(to_markdown(blocks), encoding="utf-8")
    files.html.write_text(to_html(blocks, title), encoding="utf-8")
    return files


def comparison_text(result: Mapping) -> str:
    """`factprobe compare` for people: aligned columns, differences as B - A."""
    a, b, o = result["a"], result["b"], result["overlap"]
    lines = [f"A: {a['folder']}  {a['model']} / {a['method']}  probes {a['probes']}  ({a['items']} items)",
             f"B: {b['folder']}  {b['model']} / {b['method']}  probes {b['probes']}  ({b['items']} items)", ""]
    rows = [("accuracy", fmt(result["accuracy"]["a"]), fmt(result["accuracy"]["b"]),
             fmt_signed(result["accuracy"]["difference"]))]
    for key, prefix in (("by_relation", "relation"), ("by_bucket", "bucket")):
        rows += [(f"{prefix} {name}", fmt(v["a"]), fmt(v["b"]), fmt_signed(v["difference"]))
                 for name, v in result[key].items()]
    lines += _aligned(("", "A", "B", "B - A"), rows)
    definitions = o["definitions"]
    lines += ["", f"over {o['shared_units']} units of {o['shared_items']} items in both runs (matched by id; "
                  f"--known {definitions['known']}): both know {o['both']}, only A {o['only_a']}, "
                  f"only B {o['only_b']}, neither {o['neither']}",
              f"subsumption A->B {fmt(o['subsumption_a_to_b'])}  B->A {fmt(o['subsumption_b_to_a'])}  "
              f"sharing ({definitions['sharing']}) {fmt(o['sharing'])}",
              f"per-relation accuracy over {o['relations']} relations: Pearson {fmt(o['pearson'])}  "
              f"Kendall tau-b {fmt(o['kendall_tau'])}",
              result["known_rule"].replace("`", "")]
    return "\n".join(lines)


def _aligned(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]
    def line(cells):
        first, *rest = cells
        return "  ".join([str(first).ljust(widths[0]), *(str(c).rjust(w) for c, w in zip(rest, widths[1:]))]).rstrip()
    return [line(headers), *(line(r) for r in rows)]

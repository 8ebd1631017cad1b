"""Finished eval runs as one tidy table: a row per run x measure x breakdown, each with its value,
the interval aggregate.json already holds (none is computed here) and its n. What `factprobe
results` writes (cli/results_cmd.py) and `factprobe.results.load` returns as a DataFrame.

aggregate.json is read as every method writes it, without a list of methods: a number under a
name is a measure ("accuracy", "min_at_n", "consistency"); `NAME_interval` beside it, or
`interval` in a breakdown entry for its `accuracy`, is its interval; `by_X` holds one entry per
value of X (relation and bucket have columns of their own, any other X, such as a distractor
strategy or an ICL setting, becomes a column named X); `NAME_by_X` is NAME per value of X; a
summary of draws ({"mean", "sd", ...}: BELIEF's Acc@1) is its mean; an object named after the
method (the baselines' measures) holds measures under their own names, any other object
(BELIEF's coverage) measures named "object.name". Counts (items, total, correct, ...) are the
rows' n, not rows; lists (reliability bins), `definitions` and a measure the run could not
compute (null) give no row. Two methods' `accuracy` is no paper's: a BELIEF-ICL run's pools
its ICL settings, so only its per-setting rows are given (column `setting`); a baselines run's is
factprobe's verdict "Probability above the threshold", named so ("accuracy (Probability > 0.5)").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from ...kg.jsonl import json_value
from ...kg.readers import without_bom
from ..templates import shipped_labels
from .items_data import find_probe_set
from .loading import Run, load_runs
from .views import setting_entries, verdict_name

# The table's columns, in order; breakdowns other than relation and bucket follow them.
COLUMNS = ("run", "model", "method", "probe_set", "relation", "relation_label", "bucket",
           "measure", "value", "low", "high", "n", "interval")
# Names that count what a measure is over: a row's n where it has no interval, never a row.
_COUNTS = ("n", "total", "items", "scored")
_NOT_MEASURES = frozenset({*_COUNTS, "correct", "count", "draws", "skipped", "few", "rejected_records", "se"})
_SKIPPED = frozenset({"method", "definitions"})
# Objects that are a breakdown under another name: key -> (its column, the measure's new name
# for each name inside). accuracy_at_k: the accuracy of the items whose confidence reaches k.
_RESHAPED = {"accuracy_at_k": ("k", {"accuracy": "accuracy_at_k"})}
_PER = re.compile(r"^(?P<measure>.+)_by_(?P<dimension>[a-z][a-z0-9_]*)$")


@dataclass(frozen=True)
class ResultRow:
    """One number of one run. relation, bucket and `breakdown`'s names are None/absent in the
    run's overall rows; low/high/interval None where aggregate.json holds no interval."""
    run: str  # the run folder's name
    model: str  # run.json's model identity
    method: str
    probe_set: str  # the probe set's file name, as run.json records it
    relation: str | None
    relation_label: str | None
    bucket: str | None
    measure: str  # aggregate.json's name ("accuracy", "acc_at_1", "min_at_n")
    value: float
    low: float | None
    high: float | None
    n: int | None  # what the value is over: the interval's n, else the entry's count
    interval: str | None  # how the interval was drawn ("wilson", "bootstrap")
    breakdown: tuple[tuple[str, str], ...] = ()  # other breakdowns: (("strategy", "random"),)

    def as_dict(self, extra: Sequence[str] = ()) -> dict:
        """The row under the table's columns, then the breakdown columns `extra` (None where the
        row has no value for one)."""
        out = {name: getattr(self, name) for name in COLUMNS}
        held = dict(self.breakdown)
        out.update({name: held.get(name) for name in extra})
        return out


def breakdown_columns(rows: Iterable[ResultRow]) -> list[str]:
    """The breakdowns beyond relation and bucket the rows use, in the order first met."""
    return list(dict.fromkeys(name for row in rows for name, _ in row.breakdown))


def results_table(runs: Sequence[Run], relation_labels: Mapping[str, str] | None = None) -> list[ResultRow]:
    """Every run's measures as rows, runs in the order given (`load_runs` sorts them), each run's
    rows in aggregate.json's order. `relation_labels`: relation id -> label (`find_relation_labels`);
    a relation it lacks has a None label."""
    labels = dict(relation_labels or {})
    names = [Path(run.folder).name or run.folder for run in runs]
    rows: list[ResultRow] = []
    for run, name in zip(runs, names):
        # two folders of one name (a/run, b/run): the paths as given tell them apart
        shown = run.folder if names.count(name) > 1 else name
        # A BELIEF-ICL run's own accuracy pools its settings: only its settings' rows are given.
        # A baselines run's accuracy is factprobe's thresholded verdict: named as the report names it.
        pooled = {"accuracy", "by_relation", "by_bucket"} if setting_entries(run) else set()
        aggregate = {k: v for k, v in run.aggregate.items() if k not in pooled}
        verdict = verdict_name(run)
        for measure, value, interval, n, where in _measures(aggregate, run.method):
            if verdict and measure == "accuracy":
                measure = f"accuracy ({verdict})"
            relation = where.pop("relation", None)
            bucket = where.pop("bucket", None)
            low, high, how = (interval.get("low"), interval.get("high"), interval.get("method")) if interval \
                else (None, None, None)
            rows.append(ResultRow(
                shown, run.model, run.method, run.probes, relation,
                labels.get(relation) if relation is not None else None, bucket, measure, float(value),
                _number(low), _number(high), _count(interval.get("n") if interval else None) or n,
                how if isinstance(how, str) else None, tuple(where.items())))
    return rows


def find_relation_labels(runs: Sequence[Run], probes: Sequence[Path] = ()) -> dict[str, str]:
    """Relation id -> label: from the probe set each run read (its items' `relation_label`; found
    beside the run or among `probes`, as the report finds it, by its SHA-256), else the label the
    shipped templates give the relation."""
    labels: dict[str, str] = {}
    read: set[Path] = set()
    for run in runs:
        path = find_probe_set(run.folder, run.probes, run.probes_sha256, probes)
        if path is not None and path.resolve() not in read:
            read.add(path.resolve())
            for relation, label in _probe_set_labels(path):
                labels.setdefault(relation, label)
    for relation, names in shipped_labels().items():
        if names:
            labels.setdefault(relation, names[0])
    return labels


def _probe_set_labels(path: Path) -> Iterator[tuple[str, str]]:
    with open(path, "rb") as stream:
        for number, raw in enumerate(stream, start=1):
            if not raw.strip():
                continue
            item, _ = json_value(without_bom(raw) if number == 1 else raw)
            if isinstance(item, dict) and isinstance(item.get("relation"), str) \
                    and isinstance(item.get("relation_label"), str) and item["relation_label"]:
                yield item["relation"], item["relation_label"]


def _measures(node: dict, method: str, where: dict | None = None, prefix: str = "",
              n: int | None = None) -> Iterator[tuple[str, float, dict | None, int | None, dict]]:
    """(measure, value, interval, n, breakdown) for every number under `node`."""
    where = where or {}
    n = next((_count(node.get(k)) for k in _COUNTS if _count(node.get(k)) is not None), n)
    for key, value in node.items():
        if not isinstance(key, str) or key in _SKIPPED or key in _NOT_MEASURES or value is None:
            continue
        if key == "interval" or key.endswith("_interval"):
            continue  # read with its measure
        if key.startswith("by_") and isinstance(value, dict):
            for name, entry in value.items():
                if isinstance(entry, dict):
                    yield from _measures(entry, method, {**where, key[3:]: str(name)}, prefix, n)
            continue
        per = _PER.match(key)
        if per and isinstance(value, dict):
            dimension, measure = per["dimension"], prefix + per["measure"]
            for name, entry in value.items():
                place = {**where, dimension: str(name)}
                if _number(entry) is not None:
                    yield measure, entry, None, n, place
                elif isinstance(entry, dict):
                    yield from _measures(entry, method, place, f"{measure}.", n)
            continue
        if key in _RESHAPED and isinstance(value, dict):
            dimension, renamed = _RESHAPED[key]
            for name, entry in value.items():
                if not isinstance(entry, dict):
                    continue
                place = {**where, dimension: str(name)}
                for found in _measures(entry, method, place, prefix, n):
                    yield (prefix + renamed.get(found[0][len(prefix):], found[0][len(prefix):]), *found[1:])
            continue
        interval = node.get(f"{key}_interval")
        if not isinstance(interval, dict) and key == "accuracy" and isinstance(node.get("interval"), dict):
            interval = node["interval"]  # a breakdown entry's one interval is its accuracy's
        interval = interval if isinstance(interval, dict) else None
        if _number(value) is not None:
            yield prefix + key, value, interval, n, dict(where)
        elif isinstance(value, dict) and _number(value.get("mean")) is not None:
            yield prefix + key, value["mean"], interval, n, dict(where)  # a summary of draws: its mean
        elif isinstance(value, dict):
            inner = prefix if key == method else f"{prefix}{key}."
            yield from _measures(value, method, where, inner, n)


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return float(value)


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def run_folders(paths: Iterable[str | Path]) -> list[Path]:
    """The run folders `paths` name: a folder holding run.json is a run; one holding none, whose
    subfolders hold runs (`factprobe run`'s runs/), stands for those, by name; anything else is
    kept as given, for the loader to refuse by name."""
    out: list[Path] = []
    for path in map(Path, paths):
        inner = sorted(p for p in path.iterdir() if (p / "run.json").is_file()) \
            if path.is_dir() and not (path / "run.json").exists() else []
        out.extend(inner or [path])
    return out


def load_results(paths: Iterable[str | Path], probes: Sequence[Path] = ()) -> tuple[list[ResultRow], list[str]]:
    """The table over the runs `paths` name (`run_folders`), with relation labels: its rows and
    the breakdown columns beyond the table's own. RunError (probes/report/loading.py) naming a
    folder or file that is not a readable run."""
    runs = load_runs(run_folders(paths))
    rows = results_table(runs, find_relation_labels(runs, probes))
    return rows, breakdown_columns(rows)

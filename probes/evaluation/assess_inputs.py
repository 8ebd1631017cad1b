"""What `factprobe assess` reads: human judgements of whether a model knows each fact, and the
knowledge measures that finished run folders of the distractor method and its baselines hold,
each as a source of fact -> value maps per configuration (probes/measures/assess.py computes on
them; probes/evaluation/assess.py runs the paper's protocol).

A judgement names its fact by the item's `fact` id, its item `id`, or the Wikidata triple
(`subject`, `relation`, `object`; the probe set, `--probes`, says which item holds it) and says
`knows`: 1 or 0, or a share in between; several rows of one fact are averaged, as the paper's
human score is the mean rating (004:178). DistFact's published file (a JSON array of
[[subject, relation, object], score]) reads as it is.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ...kg.jsonl import jsonl_bytes, jsonl_lines, read_json_file
from ..formats.import_rows import csv_records, open_csv
from ..measures.assess import AGGREGATIONS, ClozeWins, cloze_subset, distractor_counts, distractor_score, mean_of
from ..report.loading import Run

KEYS = ("fact", "id", "triple")
BASELINE_MEASURES = ("probability", "precision_at_n", "rouge_l", "bertscore", "karr", "judge")
# The run options that make a baseline's configuration (the paper's hyperparameters, 004:184).
SETTINGS = {"probability": ("probability", "probability_eos"), "precision_at_n": ("candidates", "beams", "n"),
            "rouge_l": ("candidates", "beams"), "bertscore": ("candidates", "beams", "bertscore_layers"),
            "judge": ("candidates", "beams", "judge_model", "judge_prompt"), "karr": ("karr_probability", "karr_samples")}


class AssessInputError(ValueError):
    """An input `assess` cannot use; the message names the file, line or run and the field."""


@dataclass(frozen=True)
class Judgements:
    file: str
    key: str  # how rows name facts: fact, id or triple
    scores: dict[str, float]  # fact key -> the mean of its rows, in the order facts first appear
    rows: int


def read_judgements(path: str | Path) -> Judgements:
    """JSONL (one object a line), CSV (a header row) or DistFact's JSON; see the module's doc."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        rows = _jsonl_rows(path)
    elif suffix == ".csv":
        rows = _csv_rows(path)
    elif suffix == ".json":
        rows = _distfact_rows(path)
    else:
        raise AssessInputError(f"{path}: judgements are a .jsonl, .csv or .json file (DistFact's [[s, r, o], score] "
                               f"pairs), not {suffix or 'a file without a suffix'}")
    kind, sums = None, {}
    for where, row in rows:
        row_kind, key = _row_key(row, where)
        if kind is None:
            kind = row_kind
        elif row_kind != kind:
            raise AssessInputError(f"{where}: names its fact by {row_kind}; the rows before it by {kind}")
        sums.setdefault(key, []).append(_knows(row.get("knows"), where))
    if not sums:
        raise AssessInputError(f"{path}: no judgements")
    return Judgements(str(path), kind, {k: math.fsum(v) / len(v) for k, v in sums.items()},
                      sum(len(v) for v in sums.values()))


def _jsonl_rows(path: Path) -> Iterable[tuple[str, dict]]:
    for line in jsonl_lines(path, finite=True):
        if line.error or not isinstance(line.value, dict):
            raise AssessInputError(f"{line.where(path)}: {line.error or 'not a JSON object'}")
        yield line.where(path), line.value


def _csv_rows(path: Path) -> Iterable[tuple[str, dict]]:
    with open_csv(path) as stream:
        header = None
        for record in csv_records(stream):
            if record.bad:
                raise AssessInputError(f"{path}:{record.line}: {record.problem(header)}")
            if header is None:
                header = [name.strip() for name in record.cells] or None  # blank lines before it: not a header
            elif record.cells:
                yield f"{path}:{record.line}", {k: v for k, v in zip(header, record.cells) if k and v != ""}


def _distfact_rows(path: Path) -> Iterable[tuple[str, dict]]:
    try:
        data = read_json_file(path, finite=True)
    except ValueError as error:  # not UTF-8, not JSON, nested too deep, a number too long, NaN
        raise AssessInputError(str(error)) from None
    if not isinstance(data, list):
        raise AssessInputError(f"{path}: not DistFact's judgements (a JSON array of [[s, r, o], score])")
    for k, entry in enumerate(data):
        where = f"{path}: entry {k}"
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list) and len(entry[0]) == 3):
            raise AssessInputError(f"{where}: not [[subject, relation, object], score]")
        (subject, relation, obj), score = entry
        yield where, {"subject": subject, "relation": relation, "object": obj, "knows": score}


def _row_key(row: dict, where: str) -> tuple[str, str]:
    if row.get("fact") not in (None, ""):
        return "fact", str(row["fact"])
    if row.get("id") not in (None, ""):
        return "id", str(row["id"])
    parts = [row.get(k) for k in ("subject", "relation", "object")]
    if all(isinstance(p, str) and p for p in parts):
        return "triple", triple_key(*parts)
    raise AssessInputError(f"{where}: no fact, id, or subject, relation and object to name the fact by")


def triple_key(subject: str, relation: str, obj: str) -> str:
    return f"{subject}|{relation}|{obj}"


def _knows(value, where: str) -> float:
    if isinstance(value, str):
        text = value.strip().lower()
        value = {"true": 1.0, "false": 0.0}.get(text, text)
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and 0 <= value <= 1:  # NaN fails both comparisons
        return float(value)
    raise AssessInputError(f"{where}: knows: {value!r} is not a number from 0 to 1 (1: the model knows the fact)")


def read_probe_sets(paths: Sequence[str | Path]) -> dict[str, dict[str, dict]]:
    """SHA-256 of each file's bytes (what a run's run.json records) -> its items by id."""
    out = {}
    for path in paths:
        raw = Path(path).read_bytes()
        items = {}
        for line in jsonl_bytes(raw):
            if line.error:
                raise AssessInputError(f"{line.where(path)}: {line.error}")
            if isinstance(line.value, dict) and "id" in line.value:
                items[str(line.value["id"])] = line.value
        out[hashlib.sha256(raw).hexdigest()] = items
    return out


class Items:
    """A run's probe items, from the probe sets given, matched by the hash its run.json holds."""

    def __init__(self, run: Run, probe_sets: dict[str, dict[str, dict]]) -> None:
        self.run, self.items = run, probe_sets.get(run.probes_sha256 or "")

    def get(self, record: dict, why: str) -> dict:
        if self.items is None:
            raise AssessInputError(f"{self.run.rid} ({self.run.folder}): {why} needs its probe set {self.run.probes} "
                                   f"(sha256 {self.run.probes_sha256 or 'not recorded'}): pass it with --probes")
        item = self.items.get(str(record["id"]))
        if item is None:
            raise AssessInputError(f"{self.run.rid} ({self.run.folder}): item {record['id']} is not in {self.run.probes}")
        return item


def fact_key(kind: str, items: Items) -> Callable[[dict], str | None]:
    """How a run's record is named in the judgements (`kind`), or for verbalization pairs
    (`record`: its fact id, else its item id)."""
    if kind == "fact":
        return lambda r: None if r.get("fact") is None else str(r["fact"])
    if kind == "id":
        return lambda r: str(r["id"])
    if kind == "record":
        return lambda r: str(r.get("fact") or r["id"])

    def triple(record: dict) -> str:
        item = items.get(record, "naming facts by subject, relation and object")
        return triple_key(str(item.get("subject")), str(item.get("relation")), str(item.get("object")))
    return triple


def cloze_texts(record: dict) -> tuple[str, ...]:
    """The clozes a record was asked with, as it holds them (none: unknown)."""
    if isinstance(record.get("clozes"), list):
        return tuple(map(str, record["clozes"]))
    return tuple(str(c.get("cloze")) for c in record.get("per_cloze") or () if isinstance(c, dict))


class Source:
    """One measure as one run holds it: `settings` fix the run's part of the configuration,
    `grid()` the hyperparameters searched within it; `values` gives each fact's value."""

    measure: str
    run: Run
    settings: dict
    facts: dict[str, list]  # fact key -> per record what its values are computed from
    texts: dict[str, tuple[str, ...]]  # fact key -> the clozes of its first record

    def grid(self) -> list[dict]:
        return [{}]

    def signature(self) -> tuple:
        """What pairs this run with its flawed and corrected counterparts (clozes aside)."""
        options = {k: v for k, v in (self.run.config.get("options") or {}).items() if k != "clozes"}
        return self.run.method, self.run.model, json.dumps(options, sort_keys=True, default=str)

    def cloze_count(self) -> int:
        """The most clozes a fact has per-cloze values for (0: the run holds none)."""
        return 0

    def values(self, params: dict, clozes: int | None = None, seed: int = 0) -> dict[str, float | None]:
        raise NotImplementedError


class RecordSource(Source):
    """A baseline: each record's value (`key`), and `KEY_per_cloze` where the method writes it."""

    def __init__(self, measure: str, run: Run, records: dict[str, list[dict]]) -> None:
        self.measure, self.run = measure, run
        options = run.config.get("options") or {}
        self.settings = {"run": run.rid, **{k: options[k] for k in SETTINGS.get(measure, ()) if k in options}}
        self.facts = {f: [(r.get(measure), r.get(f"{measure}_per_cloze")) for r in rs] for f, rs in records.items()}
        self.texts = {f: cloze_texts(rs[0]) for f, rs in records.items()}

    def cloze_count(self) -> int:
        return max((len(per) for rows in self.facts.values() for _, per in rows if isinstance(per, list)), default=0)

    def values(self, params: dict, clozes: int | None = None, seed: int = 0) -> dict[str, float | None]:
        out = {}
        for fact, rows in self.facts.items():
            if clozes is None:
                kept = [float(v) for v, _ in rows if v is not None]
            else:
                kept = [mean_of(per, cloze_subset(fact, len(per), clozes, seed)) for _, per in rows
                        if isinstance(per, list) and per]
                kept = [v for v in kept if v is not None]
            out[fact] = math.fsum(kept) / len(kept) if kept else None
        return out


class DistractorSource(Source):
    """One strategy of a distractor run: per record and cloze, which named distractors the true
    object beat, so that Min@n and Avg@n come out for any n and any subset of clozes."""

    def __init__(self, strategy: str, run: Run, records: dict[str, list[dict]], items: Items) -> None:
        self.measure, self.run, self.strategy = f"dist:{strategy}", run, strategy
        self.settings = {"run": run.rid}
        self.facts = {f: [self._wins(r, items) for r in rs] for f, rs in records.items()}
        self.texts = {f: cloze_texts(rs[0]) for f, rs in records.items()}

    def _wins(self, record: dict, items: Items) -> list[ClozeWins | None]:
        found = (record.get("by_strategy") or {}).get(self.strategy)
        if not isinstance(found, dict):
            return []
        order, gold = found.get("distractors"), record.get("object")
        if order is None or gold is None:  # records written before they carried both
            item = items.get(record, "a distractor run whose records do not name the object and distractors")
            gold = item["object"]
            order = [d["entity"] for d in (item.get("distractors") or {}).get(self.strategy, ())]
        wins = []
        for cloze in record.get("per_cloze") or ():
            plausibility = cloze.get("log_plausibility") or {}
            named = [plausibility[d] for d in order if d in plausibility]
            wins.append(ClozeWins.of(plausibility[gold], named) if gold in plausibility else None)
        return wins

    def signature(self) -> tuple:
        return self.run.method, self.run.model  # the values are recomputed, whatever n the run kept

    def available(self) -> int:
        """The most named distractors a cloze of this run has."""
        return max((len(c.wins) for rows in self.facts.values() for wins in rows for c in wins if c), default=0)

    def grid(self) -> list[dict]:
        return [{"agg": agg, "n": n} for agg in AGGREGATIONS for n in distractor_counts(self.available())]

    def cloze_count(self) -> int:
        return max((len(wins) for rows in self.facts.values() for wins in rows), default=0)

    def values(self, params: dict, clozes: int | None = None, seed: int = 0) -> dict[str, float | None]:
        out = {}
        for fact, rows in self.facts.items():
            kept = [distractor_score(w, params["agg"], params["n"],
                                     None if clozes is None else cloze_subset(fact, len(w), clozes, seed))
                    for w in rows if w]
            kept = [v for v in kept if v is not None]
            out[fact] = math.fsum(kept) / len(kept) if kept else None
        return out


def sources_of(run: Run, key: Callable[[dict], str | None], items: Items) -> list[Source]:
    """Every measure the run holds: a distractor run's strategies, a baselines run's measures
    that some record has a value for."""
    records: dict[str, list[dict]] = {}
    for record in run.items:
        name = key(record)
        if name is not None:
            records.setdefault(name, []).append(record)
    if run.method == "distractor":
        strategies = sorted({s for rs in records.values() for r in rs for s in r.get("by_strategy") or {}})
        return [DistractorSource(s, run, records, items) for s in strategies]
    if run.method == "baselines":
        return [RecordSource(m, run, records) for m in BASELINE_MEASURES
                if any(r.get(m) is not None for rs in records.values() for r in rs)]
    raise AssessInputError(f"{run.rid} ({run.folder}): a run of {run.method}; assess reads runs of the distractor "
                           "method and its baselines")

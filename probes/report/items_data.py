"""The item view's data: each run's records in the common shape (items_shape.py), joined with the
probe set the run read (found beside the run by name and checked by its SHA-256, or given), whose
items hold the choices and names a record leaves out and whose demonstrations let the method's
own code rebuild a prompt that items.jsonl does not hold (IC-LKE's, BELIEF-ICL's). `items_payload`
is what the report's items.html embeds: every row of every run, or a seeded sample of items past
`limit` rows (items_filter.py), with the facets the filters offer and which rows the runs
disagree on.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from ...kg.identity import file_sha256
from ...kg.jsonl import json_value
from ...kg.readers import without_bom
from ..document import bucket_key, natural_key
from .items_filter import FACETS, disagreeing, sample_ids
from .items_shape import OUTCOMES, REBUILT_PROMPTS, ItemRow, PromptFn, rows_of
from .labels import Names, gather
from .loading import Run

# Rows a page holds before it takes a seeded sample of items: the sample job has 1,162 (about
# 1 MB of JSON); 5,000 rows of the largest records (KDF's prompts, IC-LKE's 20 choices) are
# about 5 MB, which a browser parses in well under a second.
PAGE_ROWS = 5000


@dataclass(frozen=True)
class ItemViewOptions:
    probes: tuple[Path, ...] = ()  # probe sets (files or folders) to look in first (`report --probes`)
    rows: int = PAGE_ROWS  # rows the page holds before it takes a seeded sample of items
    seed: int = 0  # of that sample


class ProbeSetChanged(ValueError):
    """The probe set's bytes are not the ones the run read: one line naming the file and both digests."""


def changed_line(path: Path, found: str, recorded: str) -> str:
    return (f"{path}: its bytes hash to sha256 {found[:12]}, not the run's probes_sha256 {recorded[:12]} "
            "(edited after the run?): prompts and choices are what items.jsonl holds")


@dataclass(frozen=True)
class ProbeSetFound:
    """Where a run's probe set is (`path`, None when not found), and when a file of its name is
    there but holds other bytes, that file (`other`) and the one line saying so (`note`)."""
    path: Path | None
    note: str | None = None
    other: Path | None = None


def locate_probe_set(folder: str | Path, name: str, sha256: str | None, given: Sequence[Path] = ()) -> ProbeSetFound:
    """The probe set a run read: a file `given` (or one named `name` in a folder given), else
    `name` in the run folder, beside it, or in the pipeline layout's probesets/ beside runs/;
    the first whose bytes hash to the run's probes_sha256 (a sidecar's recorded digest is not
    trusted: the file may have been edited since it was written)."""
    folder = Path(folder)
    candidates = [p for g in given for p in ((g / name,) if g.is_dir() else (g,))]
    candidates += [folder / name, folder.parent / name, folder.parent.parent / "probesets" / name]
    note = other = None
    for path in candidates:
        if not (path.is_file() and (path.name == name or sha256)):
            continue
        if sha256 is None:
            return ProbeSetFound(path)  # a run from before digests: its file name is all it says
        found = _digest(str(path), *_stamp(path))
        if found == sha256:
            return ProbeSetFound(path)
        if note is None and path.name == name:
            note, other = changed_line(path, found, sha256), path
    return ProbeSetFound(None, note, other)


def find_probe_set(folder: str | Path, name: str, sha256: str | None, given: Sequence[Path] = ()) -> Path | None:
    """`locate_probe_set`'s path: None when no file holds the bytes the run read."""
    return locate_probe_set(folder, name, sha256, given).path


def _stamp(path: Path) -> tuple[int, int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


@lru_cache(maxsize=64)
def _digest(path: str, _size: int, _mtime: int, _inode: int) -> str:
    # a search's shortcut only: `read_probe_items` hashes again the very bytes it parses
    return file_sha256(path)


@dataclass
class ProbeItems:
    """What the view needs of a probe set: its test items by id (those asked for), and the
    demonstration items and, for a method that chains them (EIC-LKE), every test item, by relation."""
    path: Path | None
    items: dict[str, dict] = field(default_factory=dict)
    demonstrations: dict[str, list[dict]] = field(default_factory=dict)
    tests: dict[str, list[dict]] = field(default_factory=dict)


def read_probe_items(path: Path | None, wanted: set[str] | None = None, tests: bool = False,
                     sha256: str | None = None) -> ProbeItems:
    """The probe set's items (`wanted` ids only, or all), its demonstrations, and with `tests`
    every test item by relation. With `sha256`, the bytes parsed are hashed as they are read
    and ProbeSetChanged raised unless they are the run's: what the view shows is what the run read."""
    found = ProbeItems(path)
    if path is None:
        return found
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for number, raw in enumerate(stream, start=1):
            digest.update(raw)
            item, _ = json_value(without_bom(raw) if number == 1 else raw) if raw.strip() else (None, None)
            if not isinstance(item, dict) or "id" not in item:
                continue
            if item.get("split") == "demo":
                found.demonstrations.setdefault(item.get("relation"), []).append(item)
                continue
            if tests:
                found.tests.setdefault(item.get("relation"), []).append(item)
            if wanted is None or item["id"] in wanted:
                found.items[item["id"]] = item
    if sha256 is not None and digest.hexdigest() != sha256:
        raise ProbeSetChanged(changed_line(path, digest.hexdigest(), sha256))
    return found


def prompt_maker(method: str, config: dict, probes: ProbeItems) -> PromptFn | None:
    """The method's own prompt, for a method whose records do not hold it (REBUILT_PROMPTS),
    made from the run's options and seed and the probe set's demonstrations; None for the others."""
    from ..methods import MethodContext, registered

    need, cls = REBUILT_PROMPTS.get(method), registered().get(method)
    if need is None or cls is None or probes.path is None:
        return None
    context = MethodContext(dict(config.get("options") or {}), int(config.get("seed") or 0),
                            probes.demonstrations, probes.tests if need == "tests" else {})
    try:
        runner = cls(context)
    except (ValueError, TypeError, KeyError) as error:
        why = str(error)

        def refused(item: dict, setting: str | None) -> str:
            raise ValueError(f"the run's options no longer make a {method} prompt ({why})")
        return refused
    if need == "item":  # BELIEF-ICL: a prompt per setting
        return lambda item, setting: runner.prompt(item, setting)
    return lambda item, setting: runner.prompt(item)


def needs_tests(method: str) -> bool:
    return REBUILT_PROMPTS.get(method) == "tests"


def run_entry(run: Run, probe_set: Path | None, note: str | None = None) -> dict:
    """A run as the view lists it: its id, label, model, method, folder and probe set (and
    `probe_note`: why a file of the probe set's name is not used)."""
    return {"run": run.rid, "label": run.label, "name": run.name, "model": run.model, "method": run.method, "folder": run.folder,
            "probes": run.probe_set, "probe_set": None if probe_set is None else str(probe_set),
            "probe_note": note, "items": run.item_count}


def facet_values(rows: Iterable[dict], runs: Sequence[str]) -> dict[str, list[str]]:
    """Per facet, the values the rows have, in the order the filters list them."""
    seen: dict[str, dict] = {facet: {} for facet in FACETS}
    for row in rows:
        for facet in FACETS:
            if row.get(facet) is not None:
                seen[facet][row[facet]] = None
    order = {"run": lambda v: runs.index(v) if v in runs else len(runs), "relation": natural_key,
             "bucket": bucket_key, "outcome": lambda v: OUTCOMES.index(v) if v in OUTCOMES else len(OUTCOMES)}
    return {facet: sorted(values, key=order[facet]) if facet in order else list(values)
            for facet, values in seen.items()}


def probe_sets_found(runs: Sequence[Run], given: Sequence[Path] = ()) -> list[ProbeSetFound]:
    """Where each run's probe set is, in run order (`locate_probe_set`)."""
    return [locate_probe_set(run.folder, run.probes, run.probes_sha256, given) for run in runs]


def missing_probe_sets(runs: Sequence[Run], found: Sequence[ProbeSetFound]) -> list[str]:
    """One line per run whose probe set was not found: what the report and the item view lack
    then, and how to give it (`report --probes`)."""
    return [f"{run.rid} ({run.folder}): probe set {run.probes} not found"
            + (f" ({f.note})" if f.note else " beside the run, in its parent or ../probesets/")
            + "; the item view shows what items.jsonl holds (no prompts or choices it leaves out; "
              "entities named from the runs' own records); give it with --probes PATH"
            for run, f in zip(runs, found) if f.path is None]


def report_names(runs: Sequence[Run], found: Sequence[ProbeSetFound]) -> Names:
    """The relation and entity names of the probe sets found, then of the runs' records."""
    return names_of([f.path for f in found if f.path is not None], [run.items for run in runs])


def names_of(probe_sets: Iterable[Path], records: Iterable[Iterable]) -> Names:
    """The relation and entity names of the probe sets, then of each run's records (an iterable
    each, read once: the service streams them)."""
    names = Names()
    for path in dict.fromkeys(probe_sets):
        try:
            probe = read_probe_items(path)
        except (OSError, ValueError):
            continue  # unreadable now: the item view says so for its run
        gather(names, [*probe.items.values(), *(d for demos in probe.demonstrations.values() for d in demos)])
    for stream in records:
        gather(names, stream)
    return names


def with_names(row: ItemRow, names: Names) -> ItemRow:
    """A row made without its probe set, its bare entity ids (a distractor run's picks and
    choices) named where the report knows the entity; the choice named as the gold marked so."""
    texts = [names.entity(c.text) or c.text for c in row.choices]
    marked = any(c.gold for c in row.choices)
    choices = tuple(replace(c, text=t, gold=c.gold or (not marked and row.gold is not None and t == row.gold))
                    for c, t in zip(row.choices, texts))
    if choices == row.choices and names.entity(row.pick) == row.pick:
        return row
    return replace(row, pick=names.entity(row.pick), choices=choices,
                   notes=(*row.notes, "entities named from the runs' own records (the probe set was not found)"))


def items_payload(runs: Sequence[Run], probes: Sequence[Path] = (), limit: int = PAGE_ROWS, seed: int = 0,
                  names: Names | None = None) -> dict:
    """Every row of every run (or the seeded sample), with the runs, the facets and the sample's
    notice: the JSON that items.html embeds. `names`: what a run whose probe set is missing names
    its bare entity ids by (`report_names`)."""
    brief = [(run, row) for run in runs for record in run.items for row in rows_of(run.method, record)]
    disagree = disagreeing(((run.probes_sha256 or run.probes, row.key), row.outcome) for run, row in brief)
    sample = sample_ids([row.id for _, row in brief], limit, seed)
    entries, rows = [], []
    for run in runs:
        found = locate_probe_set(run.folder, run.probes, run.probes_sha256, probes)
        kept = [r for r in run.items if sample.ids is None or str(r["id"]) in sample.ids]
        try:
            made = mapped(run, kept, found.path)
        except ProbeSetChanged as changed:  # edited between the search and the read
            found, made = ProbeSetFound(None, str(changed)), mapped(run, kept, None)
        if found.path is None and names is not None:
            made = [with_names(row, names) for row in made]
        entries.append(run_entry(run, found.path, found.note))
        rows += [row.as_dict(run.rid, run.method, (run.probes_sha256 or run.probes, row.key) in disagree)
                 for row in made]
    return {"format": 1, "runs": entries, "rows": rows, "facets": facet_values(rows, [r.rid for r in runs]),
            "sample": {"seed": sample.seed, "items": sample.items, "items_total": sample.items_total,
                       "rows": sample.rows, "rows_total": sample.rows_total, "notice": sample.notice()}
            if sample.sampled else None}


def mapped(run: Run, records: Sequence[dict], path: Path | None) -> list[ItemRow]:
    """The records' rows with their probe items and rebuilt prompts."""
    wanted = {str(r["id"]) for r in records}
    probe = read_probe_items(path, wanted, tests=needs_tests(run.method), sha256=run.probes_sha256)
    prompt = prompt_maker(run.method, run.config, probe)
    return [row for record in records for row in rows_of(run.method, record, probe.items.get(str(record["id"])), prompt)]

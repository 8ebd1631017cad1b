"""The shards of one evaluation (probes/evaluation/shard.py) back into one results folder, the same files the
unsharded `eval` writes: run.json without the `shard` entry, items.jsonl as the shards' record
lines in shard order (the unsharded run's order, bytes as written), and aggregate.json computed
from all records at once (so measures over facts or pairs that straddle shards come out as in
one run), with the run-level entries the runner adds (`rejected_records`, equal in every shard).

Before writing, the merge checks that the folders are the N shards of one run: the same run.json
apart from `shard` and where and when each shard ran (run_files.VOLATILE: the merged run.json
holds the first shard's environment, the earliest start, the latest end, the summed runtime) (model, method, options, seed, probe set and its hash, kind), the same N and
--batch, each K once, all there, each finished. It refuses with one line naming what differs or
is missing. A shard's own aggregate.json covers its records only.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ...kg.outputs import replace_file
from .aggregate import aggregate
from .run_files import VOLATILE, check_run_json, settings
from .runner import check_results_folder

RUN, ITEMS, AGGREGATE = "run.json", "items.jsonl", "aggregate.json"


class MergeError(ValueError):
    """Why the folders cannot be merged, in one line."""


@dataclass
class Merged:
    out: str
    shards: int
    items: int
    aggregate: dict = field(default_factory=dict)


def read_run(folder: Path) -> dict:
    """The folder's run.json; MergeError naming it when it is not one eval wrote."""
    path = Path(folder) / RUN
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError(f"{folder}: no {RUN}: not an eval results folder") from None
    except (OSError, ValueError, RecursionError) as error:  # ValueError: not UTF-8, not JSON, a 5,000-digit number
        raise MergeError(f"{path}: unreadable ({error})") from None
    if not isinstance(run, dict):
        raise MergeError(f"{path}: not a {RUN} eval wrote (not a JSON object)")
    try:
        return check_run_json(run, path)  # a field of the wrong type: named, before any is used
    except ValueError as error:
        raise MergeError(str(error)) from None


def record_lines(folder: Path) -> list[bytes]:
    """The shard's whole record lines (a line torn by a kill is not one)."""
    path = Path(folder) / ITEMS
    if not path.is_file():
        return []
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1].splitlines(keepends=True)


def finished(folder: Path) -> bool:
    """The shard's records are all written and its eval has closed (aggregate.json of them)."""
    try:
        shard = read_run(folder).get("shard") or {}
        held = json.loads((Path(folder) / AGGREGATE).read_text(encoding="utf-8"))
        lines = record_lines(folder)
    except (MergeError, OSError, ValueError, RecursionError):  # ValueError: not UTF-8, not JSON
        return False
    return isinstance(shard, dict) and isinstance(held, dict) and "items" in shard \
        and held.get("items") == shard["items"] == len(lines)


def merge_shards(folders: Sequence[str | Path], out: str | Path) -> Merged:
    """Checks `folders` are every shard of one finished run and writes the merged run into `out`."""
    folders, out = [Path(f) for f in folders], Path(out)
    if not folders:
        raise MergeError("no shard folders given")
    for folder in folders:
        if not folder.is_dir():
            raise MergeError(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'} (a shard is the "
                             "folder `eval --shard K/N` wrote)")
    runs = [read_run(f) for f in folders]
    for folder, run in zip(folders, runs):
        _check_shard_run(folder, run)
    config = _common_config(folders, runs)
    count = runs[0]["shard"]["count"]
    by_index: dict[int, Path] = {}
    for folder, run in zip(folders, runs):
        k = run["shard"]["index"]
        if k in by_index:
            raise MergeError(f"shard {k}/{count} is given twice: {by_index[k]} and {folder}")
        by_index[k] = folder
    missing = [str(k) for k in range(count) if k not in by_index]
    if missing:
        raise MergeError(f"shard(s) {', '.join(missing)} of {count} missing (given: "
                         f"{', '.join(str(k) for k in sorted(by_index))})")
    if any(out.resolve() == f.resolve() for f in folders):
        raise MergeError(f"--out {out} is one of the shard folders: merge into the run's own folder")
    for k in range(count):
        folder, want = by_index[k], runs[folders.index(by_index[k])]["shard"]["items"]
        if not finished(folder):
            raise MergeError(f"{folder}: shard {k}/{count} is unfinished ({len(record_lines(folder))} of {want} "
                             "items, or no aggregate.json yet): rerun its eval to finish it")
    lines, records = [], []
    for k in range(count):
        for number, line in enumerate(record_lines(by_index[k]), start=1):
            lines.append(line)
            records.append(_record(by_index[k] / ITEMS, number, line))
    ids = [r["id"] for r in records]
    if len(set(ids)) != len(ids):
        raise MergeError("the shards hold the same item twice: they were not made by one N and --batch")
    summary = aggregate(config["method"], records, config.get("options"))
    summary.update(_run_entries(summary, [by_index[k] for k in range(count)]))
    _write(out, config, b"".join(lines), summary)
    return Merged(str(out), count, len(records), summary)


def _check_shard_run(folder: Path, run: dict) -> None:
    """run.json of a shard: a `shard` entry of whole numbers and the method that made it."""
    shard = run.get("shard")
    if not isinstance(shard, dict):
        raise MergeError(f"{folder}: not a shard ({RUN} has no `shard`; `eval --shard K/N` writes one)")
    wrong = [k for k in ("index", "count", "batch", "items")
             if isinstance(shard.get(k), bool) or not isinstance(shard.get(k), int) or shard[k] < 0]
    if wrong:
        raise MergeError(f"{folder / RUN}: its `shard` has no whole number {', '.join(wrong)}: not one eval wrote")
    if not isinstance(run.get("method"), str):
        raise MergeError(f"{folder / RUN}: no `method`: not one eval wrote")


def _record(path: Path, number: int, line: bytes) -> dict:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested too deep
        record = None
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        raise MergeError(f"{path}:{number}: not a record eval wrote (a JSON object with a text id)")
    return record


def unfinished_shards(out: str | Path, count: int) -> list[str]:
    """The shard folders under `out` (OUT/shard-K-of-N) not finished yet."""
    return [name for name in (f"shard-{k}-of-{count}" for k in range(count)) if not finished(Path(out) / name)]


def wait_for_shards(out: str | Path, count: int, timeout: float, *, poll: float = 1.0,
                    sleep: Callable[[float], None] = time.sleep,
                    clock: Callable[[], float] = time.monotonic) -> list[str]:
    """Waits until every shard under `out` is finished or `timeout` seconds pass (a file-based
    barrier: the folders are the only thing the workers share); returns those still unfinished."""
    deadline = clock() + timeout
    while True:
        left = unfinished_shards(out, count)
        if not left or clock() >= deadline:
            return left
        sleep(min(poll, max(0.0, deadline - clock())))


def _common_config(folders: list[Path], runs: list[dict]) -> dict:
    first = runs[0]
    base = {k: v for k, v in settings(first).items() if k != "shard"}
    for folder, run in zip(folders[1:], runs[1:]):
        other = {k: v for k, v in settings(run).items() if k != "shard"}
        changed = sorted(k for k in set(base) | set(other) if base.get(k) != other.get(k))
        changed += [f"shard {k}" for k in ("count", "batch") if first["shard"].get(k) != run["shard"].get(k)]
        if changed:
            key = changed[0]
            a, b = ((first["shard"].get(key[6:]), run["shard"].get(key[6:])) if key.startswith("shard ")
                    else (base.get(key), other.get(key)))
            raise MergeError(f"{folders[0]} and {folder} are not shards of one run: they differ in "
                             f"{', '.join(changed)} ({key}: {_short(a)} vs {_short(b)})")
    return {**base, **_sittings(runs)}


def _sittings(runs: list[dict]) -> dict:
    """The merged run's sitting fields (run_files.VOLATILE): the first shard's environment (each
    shard's own stays in its folder), the earliest start, the latest end, the runtimes summed
    (the compute the run cost)."""
    out: dict = {}
    if isinstance(runs[0].get("environment"), dict):
        out["environment"] = runs[0]["environment"]
    starts = [r["started_at"] for r in runs if isinstance(r.get("started_at"), str)]
    ends = [r["ended_at"] for r in runs if isinstance(r.get("ended_at"), str)]
    times = [r["runtime_s"] for r in runs if isinstance(r.get("runtime_s"), (int, float))
             and not isinstance(r.get("runtime_s"), bool)]
    if starts:
        out["started_at"] = min(starts)
    if ends:
        out["ended_at"] = max(ends)
    if times:
        out["runtime_s"] = round(sum(times), 3)
    return out


def _run_entries(summary: dict, folders: list[Path]) -> dict:
    """What the runner adds to aggregate.json beside the measures (`rejected_records`): the keys
    of the shards' aggregates that the measures do not have; one run, so one value in all."""
    entries: dict = {}
    for folder in folders:
        held = json.loads((folder / AGGREGATE).read_text(encoding="utf-8"))  # read by `finished` already
        for key, value in held.items():
            if key in summary:
                continue
            if key in entries and entries[key] != value:
                raise MergeError(f"{folders[0]} and {folder} differ in {key} ({_short(entries[key])} vs "
                                 f"{_short(value)}): they read different probe-set files")
            entries.setdefault(key, value)
    return entries


def _write(out: Path, config: dict, lines: bytes, summary: dict) -> None:
    try:
        check_results_folder(out)
    except ValueError as error:
        raise MergeError(str(error)) from None
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(config, indent=1, sort_keys=True) + "\n"  # as the runner writes run.json
    if (out / RUN).is_file():
        held = settings(read_run(out))
        if held != settings(config):
            changed = sorted(k for k in set(held) | set(config) if k not in VOLATILE and held.get(k) != config.get(k))
            raise MergeError(f"{out} holds a run with other settings ({', '.join(changed)}): "
                             "use another --out, or delete it to start over")
    _replace(out / RUN, text.encode("utf-8"))
    _replace(out / ITEMS, lines)
    _replace(out / AGGREGATE, (json.dumps(summary, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))


def _replace(path: Path, data: bytes) -> None:
    """Written whole or not at all (a kill mid-merge leaves the old file), never through a link."""
    replace_file(path, data)


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."

"""The evaluation runner: a method over a probe set with one model, to a results folder
(run.json: what ran, the probe set's SHA-256 hashed from the bytes read, and --limit, then
where and when each sitting ran, never compared on a resume: run_files.VOLATILE;
items.jsonl: one record per test item; aggregate.json: the measures, recomputed from
items.jsonl). `plan_eval` reads and checks everything that needs no model first. A rerun with
the same configuration and bytes resumes after the items written (a larger --limit continues);
other bytes, another configuration or a smaller --limit than the folder holds is refused.
Files and resuming in detail: docs/design/scoring.md. These are the pieces with a loaded scorer;
the one entry from a model spec (folder claimed, input checked, model loaded, then these) is
probes/evaluation/entry.py `run_evaluation`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ...kg.jsonl import json_value, jsonl_lines, read_json_file, read_jsonl
from ...kg.outputs import Claim, claim_folder, open_append, replace_file, truncate
from .aggregate import aggregate
from .run_files import VOLATILE, environment, settings
from .sample import DEFAULT_STRATIFY, Sample, ranked, sample_items
from ..methods import Method, MethodContext, get_method
from ..methods.base import check_option_types
from ..building.probeset import read_meta, sidecar_path
from ..scoring.scorer import reporting

# An evaluation's defaults, declared here once: Evaluation, `eval --batch/--seed` and the
# service's eval jobs read them.
BATCH = 16  # items per scorer call, and per checkpoint: items.jsonl grows a batch at a time
SEED = 0  # of every draw a method makes (demonstrations, samples)


@dataclass
class EvalSummary:
    """What `evaluate` did: the folder, the method, how many items the folder holds and how many
    this run computed, rejected input lines, the aggregate (aggregate.json's contents) and
    warnings."""
    out: str
    method: str
    items: int  # records in items.jsonl now
    new: int  # computed by this run
    resumed_after: int
    rejected: list[str] = field(default_factory=list)
    aggregate: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # e.g. a probe set edited after its build


@dataclass
class EvalPlan:
    """An evaluation read and checked before its model loads (`plan_eval`)."""
    method: str
    probes: Path
    out: Path
    runner: Method
    test: list[dict]  # the test items --limit selects
    config: dict  # run.json but the model's identity, known once it has loaded
    done: set[str]  # ids of the items the folder holds
    rejected: list[str]
    warnings: list[str]
    restart: bool = False


def plan_eval(method: str, probes: str | Path, out: str | Path, *, options: dict | None = None,
              limit: int | None = None, seed: int = SEED, restart: bool = False, shard=None,
              batch: int = BATCH, stratify: str = DEFAULT_STRATIFY) -> EvalPlan:
    """Everything an evaluation checks that needs no model, so that a mistake is named before one
    loads: the method reads the set's kind; the probe set's bytes (hashed once, as they are read);
    the method's options; and, unless `restart`, that the folder holds this same run (the same
    bytes and settings, no item beyond `limit`). ValueError naming what differs.

    Args:
        method: A registered method ("ic-lke", "eic-lke", "kdf", "belief", "belief-icl",
            "distractor", "baselines", or a plugin's; probes.methods.registered()).
        probes: The probe set's JSONL (with its sidecar, or items that carry `kind`).
        out: The run folder (run.json, items.jsonl, aggregate.json).
        options: The method's options by name ({"separator": ": ", "examples": 10}); values of
            the type of the method's default.
        limit: Evaluate only `limit` test items, a sample `stratify` says; None: all.
        stratify: How `limit` samples (probes/evaluation/sample.py): "relation" (a seeded sample
            keeping each relation's share), "bucket" (each frequency bucket's), "none" (the
            first `limit` in file order).
        seed: The seed of every draw the method makes (demonstrations, samples).
        restart: Start `out` over rather than continue the run it holds.
        shard: Only this part of the run (probes.evaluation.shard: K of N, whole batches of `batch`).
        batch: Items per batch (the unit a shard takes whole).

    Returns:
        The EvalPlan `evaluate(..., plan=)` runs: the method's runner, the selected test items,
        run.json's settings, the ids the folder already holds, rejected lines and warnings.

    Raises:
        ValueError: The method does not read the set's kind, the set is not a probe set or
            has an item id twice, an option is of the wrong type, `out` cannot be a results
            folder, or it holds another run (other bytes, settings, or more items than `limit`).
    """
    cls = get_method(method)  # the registry: built-ins and registered plugins (probes/methods/__init__.py)
    probes, out = Path(probes), Path(out)
    check_results_folder(out)
    kind, built_digest = _kind(probes)
    if kind not in cls.kinds:
        raise ValueError(f"method {method} reads {' or '.join(cls.kinds)} probe sets; {probes.name} is {kind}")
    digest = hashlib.sha256()
    rejected: list[str] = []
    test, demos = [], defaultdict(list)
    for number, item in _records(probes, digest, rejected):
        if item.get("split") == "demo":
            demos[item.get("relation")].append(item)
            continue
        missing = [k for k in cls.reads if k not in item]
        if missing:
            rejected.append(f"{probes}:{number}: missing {', '.join(missing)}")
            continue
        test.append(item)
    warnings = []
    if built_digest is not None and built_digest != digest.hexdigest():
        warnings.append(f"{probes}: the probe set was edited after its build (its sidecar says sha256 {built_digest}, "
                        f"the file's bytes hash to {digest.hexdigest()}); the run records the file's")
    tests = defaultdict(list)
    for item in test:  # all of them, before --limit: EIC-LKE chains test items into prompts
        tests[item.get("relation")].append(item)
    sample = Sample(limit, stratify, seed)
    selected = sample_items(test, sample)
    check_option_types(cls, options or {})
    runner = cls(MethodContext(options or {}, seed, dict(demos), dict(tests)))
    config = {"method": method, "options": runner.options, "seed": seed, "probes": probes.name,
              "probes_sha256": digest.hexdigest(), "kind": kind, "limit": limit}
    if limit is not None:  # which items a limit takes; a run without one takes all of them
        config["stratify"] = stratify
    annotator = _frequency_annotator(probes)
    if annotator is not None:  # who counted the items' `frequency`: the report's frequency axis names it
        config["frequency_annotator"] = annotator
    if shard is not None:  # probes/evaluation/shard.py: shard K of N, whole batches of the method's order
        selected = shard.select(runner.order(selected), batch)
        config["shard"] = shard.record(len(selected), batch)
    done: set[str] = set()
    if not restart:
        held = _held_config(out / "run.json")
        if held is not None:
            _check_same_run(out, held, config)
        done = _done_ids(out / "items.jsonl")
        _check_limit(out, done, test, sample)
    return EvalPlan(method, probes, out, runner, selected, config, done, rejected, warnings, restart)


def evaluate(scorer, method: str, probes: str | Path, out: str | Path, *, options: dict | None = None,
             limit: int | None = None, batch: int = BATCH, seed: int = SEED,
             progress: Callable[[int, int], None] | None = None, plan: EvalPlan | None = None,
             restart: bool = False, shard=None, stratify: str = DEFAULT_STRATIFY) -> EvalSummary:
    """`method` with `scorer` over the probe set into `out`, after the items already there.
    `plan`: the one `plan_eval` made before the model loaded (made here otherwise); `restart`:
    start the folder over rather than continue it.

    Args:
        scorer: The loaded model (a probes.scoring Scorer: ModelCache().get(spec) or
            probes.scoring.loader.load_scorer(spec)).
        method, probes, out, options, limit, seed, restart, shard, stratify: As `plan_eval` takes them;
            read only when `plan` is None (a plan carries its own).
        batch: Items the method scores together (also the unit of a checkpoint: items.jsonl
            grows by one batch at a time, so a killed run loses at most one).
        progress: Called with (items done, items in the run) before the first batch, after each
            piece the method yields (Method.run_each: a batch, or an item where the method scores
            item by item, as the distractor measure does) and, inside a batch, as the scorer says
            how much of its call is answered (Scorer.call_progress: an estimate in whole items).
        plan: The plan `plan_eval` made, so that its checks ran before the model loaded.

    Returns:
        The EvalSummary: `aggregate` is aggregate.json's contents (`items`, `accuracy` and its
        `accuracy_interval`, `by_relation`, `by_bucket` and the method's own measures);
        `items` the records the folder holds, `new` those this call computed.

    Raises:
        ValueError: As `plan_eval`, or the folder's run.json names another model.
        ScoringError, Unsupported: The scorer cannot answer what the method asks.
    """
    if plan is None:
        plan = plan_eval(method, probes, out, options=options, limit=limit, seed=seed, restart=restart, shard=shard,
                         batch=batch, stratify=stratify)
    out, runner, done = plan.out, plan.runner, plan.done
    out.mkdir(parents=True, exist_ok=True)
    items_path = out / "items.jsonl"
    if plan.restart:
        for stale in (items_path, out / "aggregate.json", out / "run.json"):
            stale.unlink(missing_ok=True)
    started, clock = _utc_now(), time.monotonic()
    _record_config(out, {"model": getattr(scorer, "identity", str(scorer)), **plan.config})
    todo = runner.order([i for i in plan.test if i["id"] not in done])
    new = 0
    if progress:
        progress(len(done), len(done) + len(todo))
    with open_append(items_path) as sink:  # never into a link: a symbolic one, or a hard one (kg/outputs.py)
        for start in range(0, len(todo), max(1, batch)):
            records: list[dict] = []
            items, total = todo[start:start + batch], len(done) + len(todo)
            within = (_within_batch(progress, len(done) + new, len(items), total)
                      if progress and runner.progress_within_piece else None)
            with reporting(scorer, within) if within else nullcontext():
                for piece in runner.run_each(scorer, items):  # the method's pieces: items or a batch
                    records += piece
                    if progress:
                        progress(len(done) + new + len(records), total)
            sink.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
            sink.flush()
            new += len(records)
    _record_sitting(out, environment(scorer), started, time.monotonic() - clock)
    records = list(read_jsonl(items_path))
    summary = aggregate(plan.method, records, runner.options)  # options name some measures' definitions
    summary["rejected_records"] = len(plan.rejected)
    replace_file(out / "aggregate.json", json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    return EvalSummary(str(out), plan.method, len(records), new, len(done), plan.rejected, summary, plan.warnings)


def _within_batch(progress: Callable[[int, int], None], base: int, size: int, total: int) -> Callable[[float], None]:
    """The scorer's share of its call answered, shown as items of a batch of `size` after `base`:
    an estimate, so never the whole batch (its records arrive with the piece) and never backwards
    (a method's second call over the batch starts its share again at 0)."""
    shown = 0

    def hook(share: float) -> None:
        nonlocal shown
        k = min(size - 1, int(share * size))
        if k > shown:
            shown = k
            progress(base + k, total)

    return hook


RUN_FILES = ("run.json", "items.jsonl", "aggregate.json")  # what a run writes into its folder


def is_run_folder(folder: Path) -> bool:
    """`folder` holds a run this runner wrote: a run.json that is a JSON object."""
    try:
        return isinstance(read_json_file(Path(folder) / "run.json"), dict)
    except (OSError, ValueError):  # read_json_file: any reason (too deep, not UTF-8) is a ValueError
        return False


def claim_run_folder(out, *, overwrite: bool = False, inputs: Iterable = ()) -> bool:
    """May a run be written into `out` (kg/outputs.claim_folder)? An empty folder, or a run
    factprobe wrote, which the run resumes; one of other files only with `overwrite`, and then
    True: the run starts its own files over (the others stay). OutputError otherwise."""
    claim = claim_folder(out, overwrite=overwrite, inputs=inputs, ours=is_run_folder, writes=RUN_FILES,
                         in_place=["items.jsonl"], what="a factprobe eval run (it has no run.json)")
    return claim is Claim.REPLACE


def check_results_folder(out: Path) -> None:
    """`out` can hold a run: a folder, or none yet under a folder; its run.json, items.jsonl and
    aggregate.json, where there, files. ValueError naming what is in the way."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is a file, not a results folder: use another --out")
    above = next((p for p in out.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise ValueError(f"{out} cannot be a results folder: {above} is a file")
    for name in ("run.json", "items.jsonl", "aggregate.json"):
        if (out / name).exists() and not (out / name).is_file():
            raise ValueError(f"{out / name} is not a file: not a results folder eval wrote; use another --out")


def _kind(probes: Path) -> tuple[str, str | None]:
    if sidecar_path(probes).is_file():
        meta = read_meta(probes)
        return meta.kind, meta.sha256
    unread = ""
    for line in jsonl_lines(probes):  # a set from elsewhere: its first item says (a bad line is rejected later)
        if isinstance(line.value, dict) and "kind" in line.value:
            return line.value["kind"], None
        unread = unread or (f" (line {line.number}: {line.error})" if line.error else "")
    raise ValueError(f"{probes}: no sidecar and no item with a `kind`{unread}: is it a factprobe probe set?")


def _frequency_annotator(probes: Path) -> dict | None:
    """The annotator the probe set's sidecar names for its frequencies (probes/building/build.py), if any."""
    if not sidecar_path(probes).is_file():
        return None
    found = read_meta(probes).source.get("frequency_annotator")
    return found if isinstance(found, dict) else None


def _records(path: Path, digest, rejected: list[str]) -> Iterator[tuple[int, dict]]:
    """The file's probe items, its bytes fed to `digest` as they are read: the hash a run records
    is that of the very bytes it evaluated. A line that is not an item is rejected by line; an id
    seen before is a ValueError naming both lines, since a resume skips done items by id, so a
    repeated id would be evaluated twice straight through but once after a resume."""
    first_line: dict[str, int] = {}
    with open(path, "rb") as stream:
        for number, raw in enumerate(stream, start=1):
            digest.update(raw)
            if number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # a BOM some editors write: not part of the item
            if not raw.strip():
                continue
            value, error = json_value(raw)
            if error:
                rejected.append(f"{path}:{number}: {error}")
                continue
            if not isinstance(value, dict) or "id" not in value:
                rejected.append(f"{path}:{number}: not a probe item (no id)")
            elif not isinstance(value["id"], str) or not value["id"]:
                rejected.append(f"{path}:{number}: not a probe item (its id {json.dumps(value['id'])} is not a text)")
            elif value["id"] in first_line:
                raise ValueError(f"{path}:{number}: item id {value['id']!r} is also the id of line "
                                 f"{first_line[value['id']]}: a probe set's ids must be unique (a resume skips the "
                                 "items done by id)")
            else:
                first_line[value["id"]] = number
                yield number, value


def _held_config(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        held = read_json_file(path)
    except ValueError as error:  # not UTF-8, not JSON, nested too deep, a number too long
        raise ValueError(f"{error}: not a run.json factprobe wrote: use another --out, or --restart") from None
    if not isinstance(held, dict):
        raise ValueError(f"{path}: not a run.json factprobe wrote: use another --out, or --restart")
    return held


def _check_same_run(out: Path, held: dict, config: dict) -> None:
    """The folder's run is `config`'s: the probe set's bytes first (named by both hashes), then
    every other setting. The model is compared once it has loaded (`config` without it skips it);
    --limit may differ (`_check_limit`)."""
    if held.get("probes_sha256") != config["probes_sha256"]:
        raise ValueError(f"{out} holds a run of {held.get('probes')} whose bytes hashed to sha256 "
                         f"{held.get('probes_sha256') or '(not recorded)'}; {config['probes']} now hashes to "
                         f"{config['probes_sha256']}: "
                         "the probe set changed since. Use another --out, or --restart to start over")
    # A run begun before run.json named the frequency annotator continues: the same bytes, the same counts.
    held, config = settings(held), settings(config)  # where and when it ran is no setting
    changed = sorted(k for k in set(held) | set(config)
                     if k not in ("limit", "stratify") and (k != "model" or "model" in config)
                     and (k != "frequency_annotator" or k in held) and held.get(k) != config.get(k))
    if changed:
        raise ValueError(f"{out} holds a run with other settings ({', '.join(changed)}): "
                         "use another --out, or --restart to start over")


def _check_limit(out: Path, done: set[str], test: list[dict], sample: Sample) -> None:
    """A folder's items.jsonl and aggregate.json describe one set of items: a --limit that selects
    fewer than the folder already holds is refused (its aggregate would no longer cover them); a
    larger one, or none, continues (a sample of N is inside the sample of N + k: sample.py)."""
    limit = sample.limit
    selected = {i["id"] for i in sample_items(test, sample)}
    beyond = done - selected
    if not beyond:
        return
    position = {test[p]["id"]: k for k, p in enumerate(ranked(test, sample.stratify, sample.seed), start=1)}
    needed = max((position.get(i, 0) for i in done), default=0) if beyond <= set(position) else None
    rerun = f"rerun with --limit {needed} or more, " if needed else ""
    raise ValueError(f"{out} holds {len(done)} items, {len(beyond)} of them beyond --limit {limit}: "
                     f"{rerun}use another --out, or --restart to start over")


def _record_config(out: Path, config: dict) -> None:
    """run.json: the settings compared on every resume, and the --limit of the latest run."""
    path = out / "run.json"
    held = _held_config(path)
    if held is not None:
        _check_same_run(out, held, config)
        if held.get("limit", ...) == config["limit"] and held.get("stratify") == config.get("stratify"):
            return
        config = {**config, **{k: held[k] for k in VOLATILE if k in held}}  # the sittings before this one
    replace_file(path, json.dumps(config, indent=1, sort_keys=True) + "\n")


def _record_sitting(out: Path, env: dict, started: str, seconds: float) -> None:
    """run.json's sitting fields once the items are written: this sitting's environment, the
    first sitting's `started_at`, this one's `ended_at`, and `runtime_s` summed over the
    sittings (a resumed run's cost is all of them)."""
    path = out / "run.json"
    held = _held_config(path) or {}
    runtime = held.get("runtime_s") if isinstance(held.get("runtime_s"), (int, float)) else 0.0
    held.update({"environment": env, "started_at": held.get("started_at") or started, "ended_at": _utc_now(),
                 "runtime_s": round(runtime + seconds, 3)})
    replace_file(path, json.dumps(held, indent=1, sort_keys=True) + "\n")


def _utc_now() -> str:
    """The time now in UTC, ISO 8601 to the second ("2026-12-05T07:30:00Z")."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _done_ids(path: Path) -> set[str]:
    """The ids of the records the folder's items.jsonl holds; ValueError naming the line of one
    that is not a record eval wrote (the folder is not this run's to continue)."""
    if not path.is_file():
        return set()
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):  # killed mid-write: the torn record is redone
        data = data[: data.rfind(b"\n") + 1]
        truncate(path, len(data))  # in place, never into a link (kg/outputs.py)
    done = set()
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise ValueError(f"{path}:{number}: not a record eval wrote (a JSON object with a text id): "
                             "use another --out, or --restart to start over")
        done.add(record["id"])
    return done

"""The evaluation runner: a method over a probe set with one model, to a results folder
(run.json: what ran; items.jsonl: one record per test item; aggregate.json: the measures,
recomputed from items.jsonl). A rerun with the same configuration resumes after the items
written; another configuration is refused. Files and resuming in detail: docs/design-notes.md.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ..kg.jsonl import jsonl_lines, read_jsonl
from .aggregate import aggregate
from .methods import MethodContext, get_method
from .probeset import read_meta, sidecar_path


@dataclass
class EvalSummary:
    out: str
    method: str
    items: int  # records in items.jsonl now
    new: int  # computed by this run
    resumed_after: int
    rejected: list[str] = field(default_factory=list)
    aggregate: dict = field(default_factory=dict)


def evaluate(scorer, method: str, probes: str | Path, out: str | Path, *, options: dict | None = None,
             limit: int | None = None, batch: int = 16, seed: int = 0,
             progress: Callable[[int, int], None] | None = None) -> EvalSummary:
    cls = get_method(method)  # the registry: built-ins and registered plugins (probes/methods/__init__.py)
    probes, out = Path(probes), Path(out)
    kind, digest = _kind(probes)
    if kind not in cls.kinds:
        raise ValueError(f"method {method} reads {' or '.join(cls.kinds)} probe sets; {probes.name} is {kind}")
    rejected: list[str] = []
    test, demos = [], defaultdict(list)
    for number, item in _records(probes, rejected):
        if item.get("split") == "demo":
            demos[item.get("relation")].append(item)
            continue
        missing = [k for k in cls.reads if k not in item]
        if missing:
            rejected.append(f"{probes}:{number}: missing {', '.join(missing)}")
            continue
        test.append(item)
    tests = defaultdict(list)
    for item in test:  # all of them, before --limit: EIC-LKE chains test items into prompts
        tests[item.get("relation")].append(item)
    if limit is not None:
        test = test[:limit]
    runner = cls(MethodContext(options or {}, seed, dict(demos), dict(tests)))
    config = {"model": getattr(scorer, "identity", str(scorer)), "method": method, "options": runner.options,
              "seed": seed, "probes": probes.name, "probes_sha256": digest, "kind": kind}
    out.mkdir(parents=True, exist_ok=True)
    _check_config(out / "run.json", config)
    items_path = out / "items.jsonl"
    done = _done_ids(items_path)
    todo = runner.order([i for i in test if i["id"] not in done])
    new = 0
    with open(items_path, "a", encoding="utf-8") as sink:
        for start in range(0, len(todo), max(1, batch)):
            records = runner.run(scorer, todo[start:start + batch])
            sink.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
            sink.flush()
            new += len(records)
            if progress:
                progress(len(done) + new, len(done) + len(todo))
    records = list(read_jsonl(items_path))
    summary = aggregate(method, records, runner.options)  # options name some measures' definitions
    summary["rejected_records"] = len(rejected)
    (out / "aggregate.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return EvalSummary(str(out), method, len(records), new, len(done), rejected, summary)


def _kind(probes: Path) -> tuple[str, str | None]:
    if sidecar_path(probes).is_file():
        meta = read_meta(probes)
        return meta.kind, meta.sha256
    for line in jsonl_lines(probes):  # a set from elsewhere: its first item says
        if isinstance(line.value, dict) and "kind" in line.value:
            return line.value["kind"], None
    raise ValueError(f"{probes}: no sidecar and no item with a `kind`: is it a factprobe probe set?")


def _records(path: Path, rejected: list[str]) -> Iterator[tuple[int, dict]]:
    for line in jsonl_lines(path):
        if line.error:
            rejected.append(f"{line.where(path)}: {line.error}")
        elif not isinstance(line.value, dict) or "id" not in line.value:
            rejected.append(f"{line.where(path)}: not a probe item (no id)")
        else:
            yield line.number, line.value


def _check_config(path: Path, config: dict) -> None:
    if path.is_file():
        held = json.loads(path.read_text(encoding="utf-8"))
        if held != config:
            changed = sorted(k for k in set(held) | set(config) if held.get(k) != config.get(k))
            raise ValueError(f"{path.parent} holds a run with other settings ({', '.join(changed)}): "
                             "use another --out, or delete it to start over")
        return
    path.write_text(json.dumps(config, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _done_ids(path: Path) -> set[str]:
    if not path.is_file():
        return set()
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):  # killed mid-write: the torn record is redone
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    return {record["id"] for record in read_jsonl(path)}

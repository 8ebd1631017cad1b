"""Probe-set files: JSONL items, a Parquet copy on request, and a sidecar that describes the build.

`NAME.jsonl` holds one self-describing item per line (loadable with
`datasets.load_dataset("json", data_files=...)`); `NAME.meta.json` beside it holds the kind, the
build parameters, the seed, statistics of the source graph and the JSONL's SHA-256. Nothing in
either file depends on the machine or the clock (a build's truth date comes from the graph,
probes/building/build.py), so the same command, graph and seed reproduce both files byte for byte on any
day. The sidecar is a separate file because a header line inside the JSONL would break `datasets`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ...kg.jsonl import read_json_file, read_jsonl
from ...kg.outputs import Claim, claim_file, staging
from ..kinds import get_kind

FORMAT_VERSION = 1


@dataclass(frozen=True)
class ProbeSetMeta:
    kind: str
    items: int
    seed: int
    params: dict
    source: dict  # statistics of what it was built from (store, relations, facts seen/kept)
    sha256: str
    format_version: int = FORMAT_VERSION

    def to_dict(self) -> dict:
        return {"format_version": self.format_version, "kind": self.kind, "items": self.items, "seed": self.seed,
                "params": self.params, "source": self.source, "sha256": self.sha256}


def sidecar_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")


def write_probeset(path: str | Path, items: Iterable[dict], *, kind: str, seed: int, params: dict,
                   source: dict, parquet: bool = False) -> ProbeSetMeta:
    """Write the items (already in their final order) and the sidecar; optionally NAME.parquet.
    ValueError, and nothing written, when two items have one id: eval resumes by id, so a set
    with a repeated id would lose items (the builders and importers never make one)."""
    get_kind(kind)  # a kind the registry knows (ValueError naming them otherwise)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    digest, count = hashlib.sha256(), 0
    rows, first = [], {}
    # The JSONL and its sidecar are written to temporaries of this build's own and renamed in
    # together: a killed build, or a full disk, leaves the earlier set and its sidecar as they were.
    with staging() as stage:
        out = stage.open(path)
        for item in items:
            if item.get("id") in first:
                raise ValueError(f"{path}: items {first[item['id']]} and {count + 1} have the same id "
                                 f"{item['id']!r}; a probe set's ids must be unique (nothing written)")
            first[item.get("id")] = count + 1
            line = (json.dumps(item, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8")
            out.write(line)
            digest.update(line)
            count += 1
            if parquet:
                rows.append(item)
        meta = ProbeSetMeta(kind, count, seed, params, source, digest.hexdigest())
        stage.open(sidecar_path(path)).write(
            (json.dumps(meta.to_dict(), indent=1, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))
    if parquet:
        _write_parquet(path.with_suffix(".parquet"), rows)
    return meta


def require_pyarrow() -> None:
    """RuntimeError naming the extra to install when pyarrow is missing: a command asked for
    Parquet calls it before it writes anything, so a missing package never leaves half an output."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError as error:
        raise RuntimeError("--parquet needs pyarrow (pip install 'factprobe[parquet]')") from error


def _write_parquet(path: Path, rows: list[dict]) -> None:
    require_pyarrow()
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = list(dict.fromkeys(k for r in rows for k in r))
    columns = [_parquet_column(pa, [r.get(k) for r in rows]) for k in names]
    pq.write_table(pa.Table.from_arrays(columns, names=names), path)


def _parquet_column(pa, values: list):
    """A column as pyarrow types it: lists and objects stay lists and structs (gold, distractors,
    choices, demonstrations read in pandas or DuckDB as what they are, no JSON to decode), a
    missing key null. Only a column no one type holds (a field that is a number in one item and
    a text in another, or an empty object, which Parquet cannot store) falls back to JSON text."""
    try:
        column = pa.array(values)
        if not _has_empty_struct(pa, column.type):
            return column
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        pass
    return pa.array([json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else
                     (None if v is None else str(v)) for v in values], type=pa.string())


def _has_empty_struct(pa, kind) -> bool:
    if pa.types.is_struct(kind):
        return kind.num_fields == 0 or any(_has_empty_struct(pa, kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _has_empty_struct(pa, kind.value_type)
    return False


def read_meta(path: str | Path) -> ProbeSetMeta:
    side = sidecar_path(path)
    try:
        data = read_json_file(side)  # ValueError "SIDE: why", one line
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no sidecar {side.name} beside it (was it built by factprobe?)") from None
    if not isinstance(data, dict):
        raise ValueError(f"{side}: not a probe-set sidecar factprobe wrote (not a JSON object)")
    missing = [k for k in ("kind", "items", "seed", "params", "source", "sha256") if k not in data]
    if missing:
        raise ValueError(f"{side}: not a probe-set sidecar factprobe wrote (no {', '.join(missing)})")
    return ProbeSetMeta(data["kind"], data["items"], data["seed"], data["params"], data["source"], data["sha256"],
                        data.get("format_version", FORMAT_VERSION))


def is_probeset(path: str | Path) -> bool:
    """A probe set factprobe wrote: its sidecar is beside it and reads as one."""
    try:
        read_meta(path)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return True


def claim_probeset(path: str | Path, *, overwrite: bool = False, inputs=(), parquet: bool = False) -> Claim:
    """May a command write the probe set `path` (kg/outputs.py)? A probe set factprobe wrote is
    the command's own (its caller compares what it holds); another file, or a sidecar of
    another's beside a new one, is refused unless `overwrite`; a link or an input, always."""
    path, side = Path(path), sidecar_path(path)
    beside = [side, path.with_name(path.name + ".partial"), *([path.with_suffix(".parquet")] if parquet else [])]
    why = f"{side.name} beside it is not a sidecar factprobe wrote" if side.exists() else f"no {side.name} beside it"
    claim = claim_file(path, overwrite=overwrite, inputs=inputs, ours=is_probeset, beside=beside,
                       what=f"a factprobe probe set ({why})")
    if claim is Claim.NEW and side.exists():
        claim_file(side, overwrite=overwrite, ours=_is_sidecar, what="a probe set's sidecar factprobe wrote")
    return claim


def _is_sidecar(side: Path) -> bool:
    try:
        data = read_json_file(side)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"kind", "items", "sha256"} <= set(data)


def read_items(path: str | Path) -> Iterator[dict]:
    """The items of a probe set; ValueError "PATH:LINE: not JSON (...)" at a bad line."""
    return read_jsonl(path)


@dataclass(frozen=True)
class ProbeSetStats:
    items: int
    by_relation: dict[str, int]
    by_bucket: dict[str, int]
    by_relation_bucket: dict[str, dict[str, int]]
    by_split: dict[str, int]

    def to_dict(self) -> dict:
        return {"items": self.items, "by_relation": self.by_relation, "by_bucket": self.by_bucket,
                "by_relation_bucket": self.by_relation_bucket, "by_split": self.by_split}


def probeset_stats(items: Iterable[dict]) -> ProbeSetStats:
    """Counts per relation, per frequency bucket ("none" when unannotated) and per split."""
    relation, bucket, split, pair = Counter(), Counter(), Counter(), {}
    total = 0
    for item in items:
        total += 1
        r, b = item.get("relation", "?"), item.get("bucket") or "none"
        relation[r] += 1
        bucket[b] += 1
        split[item.get("split", "test")] += 1
        pair.setdefault(r, Counter())[b] += 1
    return ProbeSetStats(total, dict(sorted(relation.items())), dict(sorted(bucket.items())),
                         {r: dict(sorted(c.items())) for r, c in sorted(pair.items())}, dict(sorted(split.items())))

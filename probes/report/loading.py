"""Loading finished `factprobe eval` runs: the one place in the report package that touches run
folders. A run folder holds run.json (what ran), items.jsonl (one record per item) and
aggregate.json (the numbers `eval` computed); `load_runs` reads several, drops duplicates and
sorts them so the order on the command line does not change a report.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

from ...kg.jsonl import jsonl_lines, read_json_file
from ..evaluation.run_files import check_aggregate_json, check_run_json

RUN_FILES = ("run.json", "aggregate.json", "items.jsonl")


class RunError(ValueError):
    """A folder that is not a readable run; the message names the folder or file."""


@dataclass(frozen=True)
class Run:
    folder: str  # as given on the command line
    config: dict  # run.json
    aggregate: dict  # aggregate.json
    items: tuple[dict, ...]  # items.jsonl
    rid: str = ""  # short id in tables ("R1"), set once the runs are sorted
    short: str = ""  # the model's name in labels, set once every run of the report is known

    @property
    def model(self) -> str:
        return str(self.config.get("model") or "?")

    @property
    def method(self) -> str:
        return str(self.config.get("method") or self.aggregate.get("method") or "?")

    @property
    def changed_options(self) -> dict:
        """The method options this run set away from the method's defaults (all of them when the
        method is no longer registered): what tells two runs of one method apart."""
        from ..methods import registered

        cls = registered().get(self.method)
        defaults = dict(getattr(cls, "option_defaults", {}) or {}) if cls else {}
        missing = object()
        return {k: v for k, v in (self.config.get("options") or {}).items() if defaults.get(k, missing) != v}

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
    def alias(self) -> str:
        """The model's short name ("SmolLM2-135M-Instruct"), or its identity where two models of
        the report share a short name (set by `load_runs`)."""
        return self.short or model_alias(self.model)

    @property
    def name(self) -> str:
        """Model alias / method, and the options set away from the defaults: what tells runs
        apart. The runs table is the legend, with each model's full identity."""
        changed = ", ".join(f"{k}={v}" for k, v in sorted(self.changed_options.items()))
        return f"{self.alias} / {self.method}" + (f" ({changed})" if changed else "")

    @property
    def label(self) -> str:
        return f"{self.rid}: {self.name}" if self.rid else self.name

    @property
    def item_count(self) -> int:
        return int(self.aggregate.get("items", len(self.items)))


def load_run(folder: str | Path, items: bool = True) -> Run:
    """The run in `folder`; without `items`, its run.json and aggregate.json only (the service's
    item view streams items.jsonl instead of holding it)."""
    path = Path(folder)
    if not path.is_dir():
        raise RunError(f"{folder}: no such run folder")
    for name in RUN_FILES:
        if not (path / name).is_file():
            raise RunError(f"{folder}: not a run folder (no {name}; run `factprobe eval --out {folder}` first)")
    config = _json_object(path / "run.json", check_run_json)
    aggregate = _json_object(path / "aggregate.json", check_aggregate_json)
    if not items:
        return Run(str(folder), config, aggregate, ())
    records = []
    for line in jsonl_lines(path / "items.jsonl"):
        if line.error:
            raise RunError(f"{line.where(path / 'items.jsonl')}: {line.error}")
        if not isinstance(line.value, dict) or "id" not in line.value:
            raise RunError(f"{line.where(path / 'items.jsonl')}: not an item record (no id)")
        records.append(line.value)
    return Run(str(folder), config, aggregate, tuple(records))


def _json_object(path: Path, check) -> dict:
    try:
        # not UTF-8, not JSON, nested too deep, a number too long; a field of the wrong type
        return check(read_json_file(path), path)
    except ValueError as error:
        raise RunError(str(error)) from None


def load_runs(folders: Iterable[str | Path]) -> list[Run]:
    """Every folder loaded, a folder named twice kept once, sorted so that the order on the
    command line does not change the report; runs get ids R1, R2, ... in that order."""
    seen: dict[Path, Run] = {}
    for folder in folders:
        seen.setdefault(Path(folder).resolve(), load_run(folder))
    ordered = sorted(seen.values(), key=lambda r: (r.model, r.method, r.probes, r.probes_sha256 or "", r.folder))
    taken = Counter(model_alias(model) for model in {r.model for r in ordered})
    return [replace(run, rid=f"R{k}", short=model_alias(run.model) if taken[model_alias(run.model)] == 1 else run.model)
            for k, run in enumerate(ordered, start=1)]


# Quantization tags of GGUF file names ("Q4_1", "q4_k_m", "IQ3_XS", "f16"): not part of a model's name.
_QUANT = re.compile(r"[.\-_](i?q\d(_[0-9a-z]+)*|f16|f32|bf16)$", re.IGNORECASE)


def model_alias(identity: str) -> str:
    """A model identity's short name: "gguf:SmolLM2-135M-Instruct.Q4_1.gguf@b179c9523d0e/float32"
    -> "SmolLM2-135M-Instruct"; "hf:HuggingFaceTB/SmolLM2-360M@main/bfloat16" -> "SmolLM2-360M".
    The scheme, revision, dtype, folders, file extension and quantization tag are dropped."""
    name = identity.split(":", 1)[1] if re.match(r"^[a-z][a-z0-9+-]*:", identity) else identity
    name = name.split("@", 1)[0]
    parts = [p for p in name.split("/") if p]
    if len(parts) > 1 and re.fullmatch(r"(b?float\d+|fp\d+|bf16|auto)", parts[-1]):
        parts = parts[:-1]  # "…/float32" when no revision came before it
    name = parts[-1] if parts else identity
    name = re.sub(r"\.(gguf|bin|safetensors)$", "", name, flags=re.IGNORECASE)
    return _QUANT.sub("", name) or identity

"""`factprobe run CONFIG.yaml`: the whole job from one file, each step the CLI command a
researcher would type, in order: ingest the graph, index the corpus and count the facts, build
the semantic index, build probe sets, evaluate every model with every method, write a report.

Every step resumes: the ingest and the corpus index continue where a killed run stopped, probe
sets are rebuilt byte for byte from their seed, and evaluations continue after their finished
items. Paths in the config are relative to the config file; `@sample/` names the sample data
shipped with factprobe. Swapping in full Wikidata, another corpus or a GPU model is an edit of
this file (see kg/data/sample_pipeline.yaml).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "kg" / "data"
SAMPLE_CONFIG = SAMPLE_DIR / "sample_pipeline.yaml"
KINDS = ("cloze", "icl-mc", "kdf", "distractor", "belief-icl")
TOP_KEYS = {"name", "out", "seed", "graph", "corpus", "semantic", "probesets", "models", "evaluations", "report"}


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Pipeline:
    name: str
    out: Path
    seed: int
    graph: dict
    corpus: dict | None
    semantic: bool
    probesets: dict[str, dict]  # name -> {kind, options...}
    models: list[str]
    evaluations: list[dict]  # {method, probeset, options}
    report: bool
    base: Path = field(repr=False, default=Path("."))

    def path(self, value: str) -> Path:
        if value.startswith("@sample/"):
            return SAMPLE_DIR / value.removeprefix("@sample/")
        path = Path(value)
        return path if path.is_absolute() else self.base / path


def load_pipeline(path: str | Path, out: str | None = None) -> Pipeline:
    import yaml

    from ..probes.methods import METHODS

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not YAML ({error})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping")
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown keys {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(TOP_KEYS))})")

    def need(mapping: dict, key: str, where: str, kind=None):
        if key not in mapping:
            raise ConfigError(f"{path}: {where}: `{key}` is required")
        value = mapping[key]
        if kind is not None and not isinstance(value, kind):
            raise ConfigError(f"{path}: {where}.{key}: expected {kind.__name__}, got {type(value).__name__}")
        return value

    graph = need(data, "graph", "top level", dict)
    sources = need(graph, "sources", "graph", list)
    for k, source in enumerate(sources):
        if not isinstance(source, dict) or source.get("format") not in ("wikidata", "trex", "rdf", "wikidata5m"):
            raise ConfigError(f"{path}: graph.sources[{k}]: needs `format` (wikidata, trex, rdf or wikidata5m) and `path`")
        need(source, "path", f"graph.sources[{k}]", str)
    probesets = need(data, "probesets", "top level", dict)
    for name, spec in probesets.items():
        if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
            raise ConfigError(f"{path}: probesets.{name}: `kind` must be one of {', '.join(KINDS)}")
    models = need(data, "models", "top level", list)
    evaluations = need(data, "evaluations", "top level", list)
    for k, ev in enumerate(evaluations):
        if not isinstance(ev, dict) or ev.get("method") not in METHODS:
            raise ConfigError(f"{path}: evaluations[{k}]: `method` must be one of {', '.join(METHODS)}")
        if ev.get("probeset") not in probesets:
            raise ConfigError(f"{path}: evaluations[{k}]: `probeset` must name one of: {', '.join(probesets)}")
    return Pipeline(str(data.get("name", path.stem)), Path(out) if out else path.parent / data.get("out", "runs"),
                    int(data.get("seed", 0)), graph, data.get("corpus"), bool(data.get("semantic", False)),
                    probesets, [str(m) for m in models], evaluations, bool(data.get("report", True)), path.parent)


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("factprobe")
    return [str(script)] if script.exists() else [sys.executable, "-m", "factprobe.cli.main"]


def _flags(options: dict) -> list[str]:
    """{"per_relation": 30, "relations": [P36, P37], "manual_only": true} -> CLI flags."""
    renamed = {"relations": "relation", "buckets": "bucket", "annotators": "annotator", "strategies": "strategy",
               "templates": "templates"}
    flags = []
    for key, value in options.items():
        flag = "--" + renamed.get(key, key).replace("_", "-")
        if isinstance(value, bool):
            flags += [flag] if value else []
        elif isinstance(value, list):
            for v in value:
                flags += [flag, str(v)]
        else:
            flags += [flag, str(value)]
    return flags


class Runner:
    def __init__(self, pipeline: Pipeline, quiet: bool) -> None:
        self.p, self.quiet = pipeline, quiet
        self.store = pipeline.out / "graph.sqlite"
        self.started = time.perf_counter()

    def step(self, title: str, *args: str, has_quiet: bool = True) -> None:
        print(f"\n[{time.perf_counter() - self.started:6.1f} s] {title}", flush=True)
        print(f"  $ factprobe {shlex.join(args)}", flush=True)
        quiet = ["--quiet"] if self.quiet and has_quiet else []
        proc = subprocess.run([*_cli(), *args, *quiet])
        if proc.returncode not in (0, 3):  # 3: finished, with rejected records reported above
            raise RuntimeError(f"step failed ({title}): exit {proc.returncode}")

    def run(self) -> dict:
        p = self.p
        p.out.mkdir(parents=True, exist_ok=True)
        languages = p.graph.get("languages")
        for source in p.graph["sources"]:
            extra = ["--lang", ",".join(languages)] if languages and source["format"] == "wikidata" else []
            self.step(f"graph: {source['path']}", "ingest", source["format"], str(p.path(source["path"])),
                      "--store", str(self.store), *extra)
        corpus_name = None
        if p.corpus:
            corpus_name = p.corpus.get("name", "corpus")
            index = p.out / f"{corpus_name}.index.sqlite"
            files = [str(p.path(f)) for f in p.corpus.get("files", [])]
            relations = p.corpus.get("relations", [])
            counts = [x for r in relations for x in ("--count-facts", r)]
            self.step(f"corpus: index {len(files)} file(s)", "corpus", "index", *files, "--format",
                      p.corpus.get("format", "jsonl"), "--store", str(self.store), "--index", str(index), *counts)
            for relation in relations:
                self.step(f"corpus: count the facts of {relation}", "frequency", "annotate", "--relation", relation,
                          "--to-store", "--corpus-name", corpus_name, "--store", str(self.store), "--index", str(index),
                          "--out", str(p.out / f"frequency-{relation}.jsonl"))
        semantic = p.out / "semantic-index"
        if p.semantic:
            self.step("semantic index (TF-IDF, self-checked)", "distractors", "build", "--store", str(self.store),
                      "--out", str(semantic))
        built = {}
        for name, spec in p.probesets.items():
            options = {k: v for k, v in spec.items() if k != "kind"}
            if options.pop("with_corpus", False) and corpus_name:
                options["corpus"] = corpus_name
            if spec["kind"] == "distractor" and p.semantic:
                options.setdefault("semantic", str(semantic))
            built[name] = p.out / "probesets" / f"{name}.jsonl"
            self.step(f"probe set {name} ({spec['kind']})", "probeset", "build", "--kind", spec["kind"], "--store",
                      str(self.store), "--out", str(built[name]), "--seed", str(p.seed), *_flags(options))
        runs = []
        for model in p.models:
            for ev in p.evaluations:
                folder = p.out / "runs" / f"{_safe(model)}--{ev['method']}--{ev['probeset']}"
                options = [x for k, v in (ev.get("options") or {}).items() for x in ("--option", f"{k}={_json(v)}")]
                limit = ["--limit", str(ev["limit"])] if ev.get("limit") else []
                self.step(f"eval {model}: {ev['method']} on {ev['probeset']}", "eval", "--model", model, "--method",
                          ev["method"], "--probes", str(built[ev["probeset"]]), "--out", str(folder),
                          "--seed", str(p.seed), *options, *limit)
                runs.append((folder, built[ev["probeset"]]))
        report = p.out / "report"
        if p.report and runs:
            self.step("report", "report", *(str(f) for f, _ in runs), "--out", str(report), "--title", f"factprobe: {p.name}",
                      has_quiet=False)
        return {"out": str(p.out), "report": str(report / "report.html") if p.report else None,
                "runs": [str(f) for f, _ in runs], "seconds": round(time.perf_counter() - self.started, 1),
                "headline": _headline(runs)}


def _safe(model: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in model)


def _json(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _chance(probes: Path) -> float | None:
    """Expected accuracy of a uniform guess over a multiple-choice set's test items (None when the
    items have no choices): a headline number means little without it."""
    shares = []
    try:
        with open(probes, encoding="utf-8") as lines:
            for line in lines:
                item = json.loads(line)
                options = item.get("choices") or item.get("options")
                if item.get("split") != "demo" and options:
                    shares.append(1 / len(options))
    except (OSError, json.JSONDecodeError):
        return None
    return sum(shares) / len(shares) if shares else None


def _headline(runs: list[tuple[Path, Path]]) -> list[str]:
    """One line per evaluation: accuracy against chance and by frequency bucket, or Min@n / Avg@n
    per distractor strategy."""
    lines = []
    for folder, probes in runs:
        try:
            aggregate = json.loads((folder / "aggregate.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        text = f"{folder.name} ({aggregate.get('items')} items):"
        strategies = aggregate.get("by_strategy") or {}
        if strategies:
            text += "; ".join(f" {s} Min@n {_fmt(v.get('min_at_n'))} Avg@n {_fmt(v.get('avg_at_n'))}"
                              for s, v in strategies.items())
        else:
            chance = _chance(probes)
            text += f" accuracy {_fmt(aggregate.get('accuracy'))}"
            text += f" (chance {chance:.3f})" if chance is not None else ""
            buckets = {b: v for b, v in (aggregate.get("by_bucket") or {}).items() if b != "none"}
            if buckets:
                text += " | by bucket " + ", ".join(f"{b} {_fmt(v.get('accuracy'), 2)}" for b, v in buckets.items())
        lines.append(text)
    return lines


def _fmt(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"

"""`factprobe run CONFIG.yaml`: the whole job from one file, in order: ingest the graph, index
the corpus and count the facts, build the semantic index, build probe sets, evaluate every model
with every method, write a report. Every step is a library call in this process
(pipeline_steps.py); before it runs, the command a researcher would type for it is printed.

Every step resumes: the ingest and the corpus index continue where a killed run stopped, probe
sets are rebuilt byte for byte from their seed, and evaluations continue after their finished
items. Paths in the config are relative to the config file; `@sample/` names the sample data
shipped with factprobe. Swapping in full Wikidata, another corpus or a GPU model is an edit of
this file (see kg/data/sample_pipeline.yaml).
"""

from __future__ import annotations

import json
import shlex
import time
import traceback
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable

from ..probes.probeset import KINDS
from .pipeline_steps import PROBESET_KEYS, WIKIDATA5M_KINDS, probeset_request

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "kg" / "data"
SAMPLE_CONFIG = SAMPLE_DIR / "sample_pipeline.yaml"
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

    from ..probes.methods import registered

    methods = registered()  # the built-in methods and those FACTPROBE_PLUGINS registers
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
        if source["format"] == "wikidata5m" and source.get("part", "triples") not in WIKIDATA5M_KINDS:
            raise ConfigError(f"{path}: graph.sources[{k}].part: one of {', '.join(WIKIDATA5M_KINDS)} (Wikidata5M "
                              f"files: `ingest wikidata5m --triples/--entity-aliases/--relation-aliases/--corpus`)")
    probesets = need(data, "probesets", "top level", dict)
    for name, spec in probesets.items():
        if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
            raise ConfigError(f"{path}: probesets.{name}: `kind` must be one of {', '.join(KINDS)}")
        unknown = set(spec) - set(PROBESET_KEYS) - {"kind", "with_corpus"}
        if unknown:
            raise ConfigError(f"{path}: probesets.{name}: unknown keys {', '.join(sorted(unknown))} (allowed: kind, "
                              f"with_corpus, {', '.join(sorted(PROBESET_KEYS))})")
        try:
            probeset_request(spec["kind"], {k: v for k, v in spec.items() if k not in ("kind", "with_corpus")}, 0)
        except (TypeError, ValueError) as error:
            raise ConfigError(f"{path}: probesets.{name}: {error}") from None
    models = need(data, "models", "top level", list)
    evaluations = need(data, "evaluations", "top level", list)
    for k, ev in enumerate(evaluations):
        if not isinstance(ev, dict) or ev.get("method") not in methods:
            raise ConfigError(f"{path}: evaluations[{k}]: `method` must be one of {', '.join(methods)}")
        if ev.get("probeset") not in probesets:
            raise ConfigError(f"{path}: evaluations[{k}]: `probeset` must name one of: {', '.join(probesets)}")
        method, kind = methods[ev["method"]], probesets[ev["probeset"]]["kind"]
        if kind not in method.kinds:
            raise ConfigError(f"{path}: evaluations[{k}]: method {method.name} reads {' or '.join(method.kinds)} "
                              f"probe sets; {ev['probeset']} is {kind}")
        limit = ev.get("limit")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ConfigError(f"{path}: evaluations[{k}].limit: a positive whole number of items")
        if not isinstance(ev.get("options") or {}, dict):
            raise ConfigError(f"{path}: evaluations[{k}].options: a mapping of method options")
        unknown = set(ev) - {"method", "probeset", "options", "limit", "name", "models"}
        if unknown:
            raise ConfigError(f"{path}: evaluations[{k}]: unknown keys {', '.join(sorted(unknown))} "
                              "(allowed: method, probeset, options, limit, name, models)")
        chosen = ev.get("models")
        if chosen is not None and (not isinstance(chosen, list) or not chosen
                                   or any(str(m) not in [str(x) for x in models] for m in chosen)):
            raise ConfigError(f"{path}: evaluations[{k}].models: a list of some of the top-level models "
                              f"({', '.join(map(str, models))})")
    # `name` (default: the method) tells two evaluations of one method over one probe set apart
    labels = [(ev.get("name") or ev["method"], ev["probeset"]) for ev in evaluations]
    twice = sorted({f"{a}--{b}" for a, b in labels if labels.count((a, b)) > 1})
    if twice:
        raise ConfigError(f"{path}: evaluations: {', '.join(twice)} appear more than once; give one a `name`")
    return Pipeline(str(data.get("name", path.stem)), Path(out) if out else path.parent / data.get("out", "runs"),
                    int(data.get("seed", 0)), graph, data.get("corpus"), bool(data.get("semantic", False)),
                    probesets, [str(m) for m in models], evaluations, bool(data.get("report", True)), path.parent)


def _flags(options: dict) -> list[str]:
    """{"per_relation": 30, "relations": [P36, P37], "manual_only": true} -> CLI flags."""
    renamed = {"relations": "relation", "buckets": "bucket", "annotators": "annotator", "strategies": "strategy",
               "templates": "templates"}
    flags = []
    for key, value in options.items():
        flag = "--" + renamed.get(key, key).replace("_", "-")
        if key == "languages" and isinstance(value, list):  # one comma-separated option
            flags += [flag, ",".join(str(v) for v in value)]
        elif isinstance(value, bool):
            flags += [flag] if value else []
        elif isinstance(value, list):
            for v in value:
                flags += [flag, str(v)]
        else:
            flags += [flag, str(value)]
    return flags


# Errors a step reports in one line; anything else also prints its traceback.
EXPECTED_ERRORS = (ValueError, OSError, RuntimeError, LookupError)


class Runner:
    """Runs a pipeline's steps in order, in this process; a rerun resumes (see the module's doc)."""

    def __init__(self, pipeline: Pipeline, quiet: bool) -> None:
        from .pipeline_steps import Models

        self.p, self.quiet = pipeline, quiet
        self.store = pipeline.out / "graph.sqlite"
        self.started = time.perf_counter()
        self.models = Models()

    def step(self, title: str, args: list[str], action: Callable[..., None]) -> None:
        """Print the step and the equivalent command (`factprobe ARGS`), then run `action`."""
        from ..kg.readers import InputError
        from ..kg.store import StoreError

        print(f"\n[{time.perf_counter() - self.started:6.1f} s] {title}", flush=True)
        print(f"  $ factprobe {shlex.join(args)}", flush=True)
        try:
            action()
        except Exception as error:
            if not isinstance(error, (*EXPECTED_ERRORS, InputError, StoreError)):
                traceback.print_exc()
            raise RuntimeError(f"step failed ({title}): {error}") from error

    def run(self) -> dict:
        from . import pipeline_steps as steps

        p, quiet, store = self.p, self.quiet, self.store
        p.out.mkdir(parents=True, exist_ok=True)
        languages = p.graph.get("languages")
        for source in p.graph["sources"]:
            fmt, path = source["format"], p.path(source["path"])
            langs = tuple(languages) if languages and fmt == "wikidata" else ("en",)
            extra = ["--lang", ",".join(languages)] if languages and fmt == "wikidata" else []
            part = source.get("part", "triples")
            where = [f"--{part}", str(path)] if fmt == "wikidata5m" else [str(path)]
            self.step(f"graph: {source['path']}", ["ingest", fmt, *where, "--store", str(store), *extra],
                      partial(steps.ingest_source, store, fmt, path, langs, part=part, quiet=quiet))
        corpus_name = None
        if p.corpus:
            corpus_name = p.corpus.get("name", "corpus")
            index = p.out / f"{corpus_name}.index.sqlite"
            files = [str(p.path(f)) for f in p.corpus.get("files", [])]
            relations = p.corpus.get("relations", [])
            fmt = p.corpus.get("format", "jsonl")
            counts = [x for r in relations for x in ("--count-facts", r)]
            self.step(f"corpus: index {len(files)} file(s)",
                      ["corpus", "index", *files, "--format", fmt, "--store", str(store), "--index", str(index),
                       *counts],
                      partial(steps.index_corpus_step, store, index, files, fmt, relations, quiet=quiet))
            for relation in relations:
                counted = p.out / f"frequency-{relation}.jsonl"
                self.step(f"corpus: count the facts of {relation}",
                          ["frequency", "annotate", "--relation", relation, "--to-store", "--corpus-name",
                           corpus_name, "--store", str(store), "--index", str(index), "--out", str(counted)],
                          partial(steps.annotate_step, store, index, relation, corpus_name, counted, quiet=quiet))
        semantic = p.out / "semantic-index"
        if p.semantic:
            self.step("semantic index (TF-IDF, self-checked)",
                      ["distractors", "build", "--store", str(store), "--out", str(semantic)],
                      partial(steps.semantic_step, store, semantic, quiet=quiet))
        built = {}
        for name, spec in p.probesets.items():
            options = {k: v for k, v in spec.items() if k != "kind"}
            if options.pop("with_corpus", False) and corpus_name:
                options["corpus"] = corpus_name
            if spec["kind"] == "distractor" and p.semantic:
                options.setdefault("semantic", str(semantic))
            built[name] = p.out / "probesets" / f"{name}.jsonl"
            self.step(f"probe set {name} ({spec['kind']})",
                      ["probeset", "build", "--kind", spec["kind"], "--store", str(store), "--out", str(built[name]),
                       "--seed", str(p.seed), *_flags(options)],
                      partial(steps.probeset_step, store, built[name], spec["kind"], options, p.seed, quiet=quiet))
        runs = []
        for model in p.models:
            for ev in p.evaluations:
                if ev.get("models") is not None and model not in [str(m) for m in ev["models"]]:
                    continue  # this evaluation runs on some models only
                folder = p.out / "runs" / f"{_safe(model)}--{ev.get('name') or ev['method']}--{ev['probeset']}"
                options = ev.get("options") or {}
                flags = [x for k, v in options.items() for x in ("--option", f"{k}={_json(v)}")]
                limit = ["--limit", str(ev["limit"])] if ev.get("limit") else []
                self.step(f"eval {model}: {ev['method']} on {ev['probeset']}",
                          ["eval", "--model", model, "--method", ev["method"], "--probes", str(built[ev["probeset"]]),
                           "--out", str(folder), "--seed", str(p.seed), *flags, *limit],
                          partial(steps.eval_step, self.models, model, ev["method"], built[ev["probeset"]], folder,
                                  p.seed, options, int(ev["limit"]) if ev.get("limit") else None, quiet=quiet))
                runs.append((folder, built[ev["probeset"]]))
        report = p.out / "report"
        if p.report and runs:
            title = f"factprobe: {p.name}"
            self.step("report", ["report", *(str(f) for f, _ in runs), "--out", str(report), "--title", title],
                      partial(steps.report_step, [f for f, _ in runs], report, title))
        return {"out": str(p.out), "report": str(report / "report.html") if p.report else None,
                "runs": [str(f) for f, _ in runs], "seconds": round(time.perf_counter() - self.started, 1),
                "headline": headline_lines(runs)}


def _safe(model: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in model)


def _json(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def headline_lines(runs: list[tuple[Path, Path]]) -> list[str]:
    """One line per evaluation (run folder, probe set): the folder, its item count and the figures
    its method's `headline` gives (probes/methods); a run without a readable aggregate has none."""
    from ..probes.methods import Method, registered

    lines = []
    for folder, probes in runs:
        try:
            aggregate = json.loads((folder / "aggregate.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        figures = registered().get(aggregate.get("method"), Method).headline(aggregate, probes)
        lines.append(f"{folder.name} ({aggregate.get('items')} items):" + (f" {figures}" if figures else ""))
    return lines

"""`factprobe run CONFIG.yaml`: the whole job from one file (pipeline_config.py), in order:
ingest the graph, index the corpus and count the facts, build the semantic index, build probe
sets, evaluate every model with every method, write a report. Every step is the function the
step's own command calls (steps.py, steps_graph.py), run in this process; before it runs, that
command is printed.

Every step resumes: the ingest and the corpus index continue where a killed run stopped, probe
sets are rebuilt byte for byte from their seed, and evaluations continue after their finished
items. Swapping in full Wikidata, another corpus or a GPU model is an edit of the config file
(see kg/data/sample_pipeline.yaml).
"""

from __future__ import annotations

import shlex
import time
import traceback
from functools import partial
from pathlib import Path
from typing import Callable

from ..kg.jsonl import json_value
from .command_line import command_line
from .pipeline_config import Pipeline, with_relation_ids
from .terminal import echo

# Errors a step reports in one line; anything else also prints its traceback.
EXPECTED_ERRORS = (ValueError, OSError, RuntimeError, LookupError)


class Runner:
    """Runs a pipeline's steps in order, in this process; a rerun resumes (see the module's doc)."""

    def __init__(self, pipeline: Pipeline, quiet: bool, overwrite: bool = False) -> None:
        from ..probes.scoring.model_cache import ModelCache
        from .steps import Console

        self.p, self.quiet = pipeline, quiet
        self.overwrite = overwrite  # `run --overwrite`: each step may replace an output it did not write
        self.store = pipeline.out / "graph.sqlite"
        self.started = time.perf_counter()
        self.models = ModelCache()  # one model at a time, loaded once for all its evaluations
        self.console = Console(quiet=quiet)

    def step(self, title: str, args: list[str], action: Callable[..., object]) -> None:
        """Print the step and the equivalent command (`factprobe ARGS`), then run `action`."""
        from ..kg.outputs import OutputError
        from ..kg.readers import InputError
        from ..kg.store import StoreError

        echo(f"\n[{time.perf_counter() - self.started:6.1f} s] {title}")
        echo(f"  $ factprobe {shlex.join(args + (['--overwrite'] if self.overwrite else []))}")
        try:
            action()
        except OutputError:
            raise  # an output the step may not write: one line, exit 2 (cli/main.py)
        except Exception as error:
            if not isinstance(error, (*EXPECTED_ERRORS, InputError, StoreError)):
                traceback.print_exc()
            raise RuntimeError(f"step failed ({title}): {error}") from error

    def run(self) -> dict:
        p = self.p
        p.out.mkdir(parents=True, exist_ok=True)
        self.graph()
        self.p = p = with_relation_ids(p, self.store)  # labels read against the graph just ingested
        corpus_name = self.corpus()
        semantic = p.out / "semantic-index"
        if p.semantic:
            from .distractor_cmds import distractors_group
            from .steps_graph import semantic_step

            self.step("semantic index (TF-IDF, self-checked)",
                      command_line(distractors_group.commands["build"], {"store": self.store, "out_dir": semantic},
                                   group=distractors_group),
                      partial(semantic_step, self.store, semantic, self.console, overwrite=self.overwrite))
        built = self.probesets(corpus_name, semantic if p.semantic else None)
        runs = self.evaluations(built)
        report = p.out / "report"
        if p.report and runs:
            from .report_cmds import report_command
            from .steps import report_step

            title = f"factprobe: {p.name}"
            self.step("report", command_line(report_command, {"folders": [f for f, _ in runs], "out_dir": report,
                                                              "title": title}),
                      partial(report_step, [f for f, _ in runs], report, title, console=self.console,
                              overwrite=self.overwrite))
        return {"out": str(p.out), "report": str(report / "report.html") if p.report else None,
                "items": str(report / "items.html") if p.report and runs else None,
                "serve": serve_line(self.store, p.out / "runs") if runs else None,
                "runs": [str(f) for f, _ in runs], "seconds": round(time.perf_counter() - self.started, 1),
                "headline": headline_lines(runs)}

    def graph(self) -> None:
        from ..kg.model import LANGUAGES
        from .ingest_cmds import ingest_group
        from .steps_graph import ingest_step, source_for

        p, store = self.p, self.store
        languages = p.graph.get("languages")
        for source in p.graph["sources"]:
            fmt, path = source["format"], p.path(source["path"])
            langs = tuple(languages) if languages and fmt == "wikidata" else LANGUAGES
            part = source.get("part", "triples")
            # `ingest wikidata5m` takes each part by an option of its own (the corpus: --documents)
            param = ("documents" if part == "corpus" else part.replace("-", "_")) if fmt == "wikidata5m" else "files"
            given = {param: [path], "store": store,
                     "languages": ",".join(languages) if languages and fmt == "wikidata" else None}
            self.step(f"graph: {source['path']}", command_line(ingest_group.commands[fmt], given, group=ingest_group),
                      holding_store(store, partial(ingest_step, store, [(source_for(fmt, langs, part=part, store=store),
                                                                         path)], langs, console=self.console,
                                                         overwrite=self.overwrite)))

    def corpus(self) -> str | None:
        """Index the corpus and count the configured relations' facts into the store; its name."""
        p, store = self.p, self.store
        if not p.corpus:
            return None
        from ..index.backend import Backend
        from ..index.corpus_jobs import AnnotateOptions
        from .frequency_cmds import corpus_group, corpus_index, frequency_annotate, frequency_group
        from .steps_graph import annotate_step, index_step

        name = p.corpus.get("name", "corpus")
        index = p.out / f"{name}.index.sqlite"
        options = p.corpus_options()
        given = {"files": options.files, "fmt": options.format, "store": store, "index_path": index,
                 "count_facts": options.count_facts, "languages": ",".join(options.languages), "names": options.names,
                 "mentions": options.mentions, "min_alias_length": options.min_alias_length,
                 "min_han_length": options.min_han_length, "exclude_alias": options.exclude_aliases,
                 "id_field": options.id_field, "title_field": options.title_field, "text_field": options.text_field}
        backend = Backend("embedded", str(index))
        self.step(f"corpus: index {len(options.files)} file(s)",
                  command_line(corpus_index, given, group=corpus_group,
                               unless_default=("languages", "names", "mentions", "min_alias_length",
                                               "min_han_length", "id_field", "title_field", "text_field")),
                  partial(index_step, backend, store, options, self.console, overwrite=self.overwrite))
        for relation in options.count_facts:
            counted = p.out / f"frequency-{relation}.jsonl"
            given = {"relations": [relation], "to_store": True, "corpus_name": name, "store": store,
                     "index_path": index, "out_path": counted}
            self.step(f"corpus: count the facts of {relation}",
                      command_line(frequency_annotate, given, group=frequency_group),
                      partial(annotate_step, backend, store, AnnotateOptions((relation,), str(counted), True, name),
                              self.console, overwrite=self.overwrite))
        return name

    def probesets(self, corpus_name: str | None, semantic: Path | None) -> dict[str, Path]:
        from ..probes.building.build import build_request
        from .build_options import command_flags
        from .probeset_cmds import probeset_group
        from .steps import build_step

        p, built = self.p, {}
        for name, spec in p.probesets.items():
            options = {k: resolve_local_paths(p, k, v) for k, v in spec.items() if k != "kind"}
            if options.pop("with_corpus", False) and corpus_name:
                options["corpus"] = corpus_name
            if spec["kind"] == "distractor" and semantic is not None:
                options.setdefault("semantic", str(semantic))
            built[name] = p.out / "probesets" / f"{name}.jsonl"
            request = build_request(spec["kind"], {"seed": p.seed, **options})
            self.step(f"probe set {name} ({spec['kind']})",
                      [*command_line(probeset_group.commands["build"], {"kind": spec["kind"], "store": self.store,
                                                                        "out_path": built[name]}, group=probeset_group),
                       *command_flags({"seed": p.seed, **options})],
                      partial(build_step, self.store, built[name], request, self.console, self.models,
                              overwrite=self.overwrite))
        return built

    def evaluations(self, built: dict[str, Path]) -> list[tuple[Path, Path]]:
        from ..probes.evaluation.entry import Evaluation
        from ..probes.evaluation.sample import DEFAULT_STRATIFY
        from .eval_cmds import eval_command
        from .options import option_pairs
        from .steps import dry_run_step, eval_step, option_value

        p, runs = self.p, []
        for model in p.models:
            for ev in p.evaluations:
                if ev.get("models") is not None and model not in [str(m) for m in ev["models"]]:
                    continue  # this evaluation runs on some models only
                folder = p.out / "runs" / f"{_safe(model)}--{ev.get('name') or ev['method']}--{ev['probeset']}"
                options = ev.get("options") or {}
                probes = built[ev["probeset"]]
                printed = command_line(eval_command, {"spec": model, "method": ev["method"], "probes": probes,
                                                      "out_dir": folder, "seed": p.seed,
                                                      "options": option_pairs(options), "limit": ev.get("limit"),
                                                      "stratify": ev.get("stratify"),  # named only when the file names it
                                                      "dry_run": bool(ev.get("dry_run"))})
                evaluation = Evaluation(model, ev["method"], probes, folder,
                                        options={k: option_value(v) for k, v in options.items()},
                                        limit=int(ev["limit"]) if ev.get("limit") else None, seed=p.seed,
                                        stratify=ev.get("stratify", DEFAULT_STRATIFY),
                                        overwrite=self.overwrite)
                if ev.get("dry_run"):  # the cost alone: no run folder, so nothing for the report
                    self.step(f"eval {model}: {ev['method']} on {ev['probeset']} (dry run)", printed,
                              partial(dry_run_step, evaluation, self.models, self.console))
                    continue
                self.step(f"eval {model}: {ev['method']} on {ev['probeset']}", printed,
                          partial(eval_step, evaluation, self.models, self.console))
                runs.append((folder, probes))
        return runs


def holding_store(store: Path, action: Callable[[], object]) -> Callable[[], object]:
    """`action` (an ingest into `store`) as the store's one writer, as `factprobe ingest` is
    (kg/output_lock.hold_output): an ingest into it from another process is refused meanwhile."""
    def held() -> object:
        from ..kg.output_lock import hold_output

        with hold_output(store, folder=False, flag="--store"):
            return action()
    return held


def serve_line(store: Path, runs: Path) -> str:
    """The command that serves the item view over the pipeline's runs, page by page."""
    return shlex.join(["factprobe", "serve", "--store", str(store), "--runs", str(runs)])


def _safe(model: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in model)


def headline_lines(runs: list[tuple[Path, Path]]) -> list[str]:
    """One line per evaluation (run folder, probe set): the folder, its item count and the figures
    its method's `headline` gives (probes/methods); a run without a readable aggregate has none."""
    from ..probes.methods import Method, registered

    lines = []
    for folder, probes in runs:
        try:
            aggregate, _ = json_value((folder / "aggregate.json").read_bytes())
        except OSError:
            continue
        if not isinstance(aggregate, dict):  # not JSON, nested too deep, not an object: no figures
            continue
        figures = registered().get(aggregate.get("method"), Method).headline(aggregate, probes)
        lines.append(f"{folder.name} ({aggregate.get('items')} items):" + (f" {figures}" if figures else ""))
    return lines


def resolve_local_paths(p, key: str, value):
    """A probe-set option declared to name a file on this disk (`facts`, `templates`, `semantic`)
    is read relative to the pipeline file, as its other paths are, not to the working folder."""
    from ..probes.declare import LOCAL
    from .build_options import merged_options

    option = merged_options().get(key)
    if option is None or option.spec.exposure != LOCAL or value is None:
        return value
    if isinstance(value, list):
        return [str(p.path(str(v))) for v in value]
    return str(p.path(str(value)))

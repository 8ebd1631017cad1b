"""A pipeline file (`factprobe run CONFIG.yaml`), read and checked before anything runs: its
graph sources, corpus, probe sets (each checked against its kind's declared options, as
`probeset build` checks its command line), models and evaluations (each one's options against
its method's declared options, as `eval --option` checks them). Paths are relative to the
file; `@sample/` names the sample data shipped with factprobe."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..kg.sources.wikidata5m import FILE_KINDS as WIKIDATA5M_PARTS

if TYPE_CHECKING:
    from ..index.corpus_jobs import IndexOptions

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "kg" / "data"
SAMPLE_CONFIG = SAMPLE_DIR / "sample_pipeline.yaml"
TOP_KEYS = {"name", "out", "seed", "graph", "corpus", "semantic", "probesets", "models", "evaluations", "report"}
PIPELINE_ONLY_KEYS = ("kind", "with_corpus")  # a probe set's keys besides its options
# `corpus index`'s options, as its flags name them (--languages, --names, --mentions, --min-alias-length, ...)
CORPUS_KEYS = {"name", "format", "files", "relations", "languages", "names", "mentions", "min_alias_length",
               "min_han_length", "exclude_aliases", "id_field", "title_field", "text_field"}
NAMING_KEYS = ("format", "languages", "min_alias_length", "min_han_length", "exclude_aliases",
               "names", "mentions", "id_field", "title_field", "text_field")  # IndexOptions' own names


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
    config: Path | None = field(repr=False, default=None)  # the file it was read from, for errors found later

    def path(self, value: str) -> Path:
        if value.startswith("@sample/"):
            return SAMPLE_DIR / value.removeprefix("@sample/")
        path = Path(value)
        return path if path.is_absolute() else self.base / path

    def corpus_options(self) -> IndexOptions:
        """`corpus:` as `corpus index` takes it: its files, `relations` counted while linking,
        and the naming keys given (IndexOptions' defaults for those left out)."""
        from ..index.corpus_jobs import IndexOptions

        corpus = self.corpus or {}
        given = {key: tuple(value) if isinstance(value, list) else value
                 for key, value in corpus.items() if key in NAMING_KEYS}
        return IndexOptions(tuple(str(self.path(f)) for f in corpus.get("files", [])),
                            count_facts=tuple(corpus.get("relations", [])), **given)


def load_pipeline(path: str | Path, out: str | None = None) -> Pipeline:
    import yaml

    from ..probes.building.build import build_request
    from ..probes.kinds import registered as registered_kinds
    from ..probes.methods import registered
    from ..probes.evaluation.sample import STRATIFY
    from ..probes.methods.base import read_options

    methods, kinds = registered(), registered_kinds()  # the built-in methods and those FACTPROBE_PLUGINS registers
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
        if source["format"] == "wikidata5m" and source.get("part", "triples") not in WIKIDATA5M_PARTS:
            raise ConfigError(f"{path}: graph.sources[{k}].part: one of {', '.join(WIKIDATA5M_PARTS)} (Wikidata5M "
                              f"files: `ingest wikidata5m --triples/--entity-aliases/--relation-aliases/--documents`)")
    corpus = data.get("corpus")
    if corpus is not None:
        _check_corpus(path, corpus)
    probesets = need(data, "probesets", "top level", dict)
    for name, spec in probesets.items():
        if not isinstance(spec, dict) or spec.get("kind") not in kinds:
            raise ConfigError(f"{path}: probesets.{name}: `kind` must be one of {', '.join(kinds)}")
        try:  # the kind's declared options, checked as `probeset build` checks its command line
            build_request(spec["kind"], {k: v for k, v in spec.items() if k not in PIPELINE_ONLY_KEYS})
        except ValueError as error:
            raise ConfigError(f"{path}: probesets.{name}: {error}") from None
    models = need(data, "models", "top level", list)
    from ..probes.scoring.specs import SpecError, check_spec, parse_spec

    for k, model in enumerate(models):
        try:  # a mistyped model path is named now, not after the ingest and the builds
            check_spec(parse_spec(str(model)))
        except SpecError as error:
            raise ConfigError(f"{path}: models[{k}]: {error}") from None
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
        if ev.get("stratify", "relation") not in STRATIFY:
            raise ConfigError(f"{path}: evaluations[{k}].stratify: one of {', '.join(STRATIFY)} (how `limit` samples)")
        if not isinstance(ev.get("dry_run", False), bool):
            raise ConfigError(f"{path}: evaluations[{k}].dry_run: true or false (true: only say what it would cost)")
        if not isinstance(ev.get("options") or {}, dict):
            raise ConfigError(f"{path}: evaluations[{k}].options: a mapping of method options")
        try:  # the method's declared options, as `eval --option` checks them: named now, not after the builds
            read_options(method, ev.get("options") or {})
        except ValueError as error:
            raise ConfigError(f"{path}: evaluations[{k}].options: {error}") from None
        unknown = set(ev) - {"method", "probeset", "options", "limit", "stratify", "dry_run", "name", "models"}
        if unknown:
            raise ConfigError(f"{path}: evaluations[{k}]: unknown keys {', '.join(sorted(unknown))} "
                              "(allowed: method, probeset, options, limit, stratify, dry_run, name, models)")
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
                    probesets, [str(m) for m in models], evaluations, bool(data.get("report", True)), path.parent,
                    path)


def with_relation_ids(pipeline: Pipeline, store: Path) -> Pipeline:
    """The pipeline with every relation it names (probe sets' `relations`, the corpus's) as its id,
    read against the graph it has just ingested (kg/relations.py: a P-id, or a label in the store or
    the shipped templates), so every later step and the commands they print say ids. ConfigError
    naming the key where a label names no relation or several."""
    from dataclasses import replace

    from ..kg.graph import KnowledgeGraph
    from ..kg.relations import is_property_id
    from .relations import relation_id

    def ids(texts, where: str, keep=()) -> list[str]:
        texts = [texts] if isinstance(texts, str) else list(texts)
        try:
            return [t if t in keep else relation_id(kg, str(t)) for t in texts]
        except ValueError as error:
            raise ConfigError(f"{pipeline.config or pipeline.name}: {where}: {error}") from None

    named = [t for spec in (*pipeline.probesets.values(), pipeline.corpus or {}) for t in
             ([spec["relations"]] if isinstance(spec.get("relations"), str) else spec.get("relations") or ())]
    if all(t == "all" or is_property_id(str(t)) for t in named):
        return pipeline  # P-ids only: nothing to read, and a printed-only run has no graph to read from
    with KnowledgeGraph(store) as kg:
        probesets = {name: {**spec, "relations": ids(spec["relations"], f"probesets.{name}.relations")}
                     if spec.get("relations") else spec for name, spec in pipeline.probesets.items()}
        corpus = pipeline.corpus
        if corpus and corpus.get("relations"):  # `corpus index --count-facts` takes 'all' too
            corpus = {**corpus, "relations": ids(corpus["relations"], "corpus.relations", keep=("all",))}
    return replace(pipeline, probesets=probesets, corpus=corpus)


def _check_corpus(path: Path, corpus) -> None:
    if not isinstance(corpus, dict):
        raise ConfigError(f"{path}: corpus: a mapping (name, format, files, relations, ...)")
    unknown = set(corpus) - CORPUS_KEYS
    if unknown:
        raise ConfigError(f"{path}: corpus: unknown keys {', '.join(sorted(unknown))} "
                          f"(allowed: {', '.join(sorted(CORPUS_KEYS))})")
    for key in ("files", "relations", "languages", "exclude_aliases"):
        value = corpus.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: corpus.{key}: a list of strings")
    from ..index.settings import MENTIONS, NAMES

    if "names" in corpus and corpus["names"] not in NAMES:
        raise ConfigError(f"{path}: corpus.names: all (labels and aliases) or label (one name per language, KDF's)")
    if "mentions" in corpus and corpus["mentions"] not in MENTIONS:
        raise ConfigError(f"{path}: corpus.mentions: maximal (no name inside a longer name counts) or any "
                          "(every occurrence, KDF's)")
    from ..index.corpus_files import FORMATS

    if "format" in corpus and corpus["format"] not in FORMATS:
        raise ConfigError(f"{path}: corpus.format: one of {', '.join(FORMATS)}")
    for key in ("id_field", "title_field", "text_field"):
        if key in corpus and not (isinstance(corpus[key], str) and corpus[key]):
            raise ConfigError(f"{path}: corpus.{key}: a JSONL member's name")
    for key in ("min_alias_length", "min_han_length"):
        length = corpus.get(key)
        if key in corpus and (isinstance(length, bool) or not isinstance(length, int) or length < 1):
            raise ConfigError(f"{path}: corpus.{key}: a positive whole number")


"""`factprobe distractors ...`: the semantic index, and fair wrong answers for facts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..kg.jsonl import json_value
from .build_options import kind_options
from .errors import EXIT_PARTIAL, EXIT_USAGE, fail
from .options import Declared, FolderPath, json_option, store_option, with_options
from .outputs import overwrite_option
from .terminal import echo

SEMANTIC_DIR = "semantic-index"  # where `distractors build` writes and the other commands read, unless told
semantic_option = click.option(
    "--semantic", "semantic_dir", type=FolderPath("input"), default=SEMANTIC_DIR, show_default=True,
    envvar="FACTPROBE_SEMANTIC", help="Folder of the semantic index (env FACTPROBE_SEMANTIC).")
STRATEGY_CHOICE = click.Choice(["random", "sem", "temp+sem", "appropt"])
DEFAULT_TEMPLATE = "[X]'s [R] is [Y]."



@click.group("distractors")
def distractors_group() -> None:
    """Fair wrong answers for facts: Random, Sem, Temp+Sem (a semantic index) and ApprOpt (a model).

    \b
    A distractor o* of (s, r, o) shares a type with o (instance of or subclass of, DistFact's;
    --distractor-types and --untyped-pool give factprobe's older rules), shares no label or alias
    with o or any true object, and (s, r, o*) is not true at the probe date (--at, default today).
    """


@distractors_group.command("build")
@store_option
@click.option("--out", "out_dir", type=FolderPath(), default=SEMANTIC_DIR, show_default=True,
              help="Folder to write the index to.")
@click.option("--min-df", type=click.IntRange(min=1), default=Declared("factprobe.index.semantic", "MIN_DF"),
              show_default=True,
              help="Drop features shared by fewer entities (entities left with none have no neighbours).")
@click.option("--check", "check_queries", type=click.IntRange(min=0),
              default=Declared("factprobe.index.semantic_check", "CHECK_QUERIES"), show_default=True,
              help="Facts sampled for the self-check of Sem against brute force (0: skip it).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the self-check's sample.")
@click.option("--quiet", is_flag=True, help="No progress messages.")
@overwrite_option
@json_option
def build(store, out_dir, min_df, check_queries, seed, quiet, overwrite, as_json):
    """Build the semantic index: TF-IDF over each entity's features (itself, its relations, its
    objects, its relation=object pairs). Sem ranks a fact's pool (the entities sharing a type with
    the object) by exact cosine, ties by id; the build then checks that ranking against brute
    force on sampled facts and prints the recall and the time per query."""
    from .steps import Console
    from .steps_graph import semantic_step

    console = Console(quiet=quiet, say=(lambda _: None) if as_json else echo,
                      note=lambda text: echo(text, err=True))
    try:
        index, _ = semantic_step(store, out_dir, console, min_df=min_df, check_queries=check_queries, seed=seed,
                                 overwrite=overwrite)
    except FileNotFoundError as error:
        fail(str(error), EXIT_USAGE)
    if as_json:
        echo(json.dumps({**index.meta, "out": out_dir}))


def _finder(store, semantic_dir, strategies, model, languages, exact=False, batch=None, rules=None):
    from ..index.distractors import DistractorFinder
    from ..kg.graph import KnowledgeGraph

    if not Path(store).is_file():
        fail(f"no knowledge-graph store at {store}", EXIT_USAGE)
    kg = KnowledgeGraph(store)
    semantic = None
    if {"sem", "temp+sem"} & set(strategies):
        from ..index.semantic import SemanticIndex

        try:
            semantic = SemanticIndex.load(semantic_dir)
        except (FileNotFoundError, ValueError) as error:
            fail(str(error), EXIT_USAGE)
    ranker = None
    if "appropt" in strategies:
        if not model:
            fail("--strategy appropt needs --model SPEC (see `factprobe model --help`)", EXIT_USAGE)
        from ..probes.scoring.appropt import ApprOptRanker
        from ..probes.scoring.model_cache import ModelCache

        # `distractors add --batch` facts share the search's passes; `query` asks one, the ranker's default
        ranker = ApprOptRanker(ModelCache().get(model), exact=exact, **({"batch_size": batch} if batch else {}))
    langs = tuple(x.strip() for x in languages.split(",") if x.strip()) if languages else None
    return DistractorFinder(kg, semantic, languages=langs, appropt=ranker, **(rules or {}))


def cloze_prompt(template: str, subject_label: str, relation_label: str) -> str:
    """The text before [Y], with [X] and [R] filled: what ApprOpt's labels continue."""
    if "[Y]" not in template or "[X]" not in template:
        raise click.UsageError(f"--template {template!r} needs both [X] and [Y]")
    return template.split("[Y]")[0].replace("[X]", subject_label).replace("[R]", relation_label).rstrip()


# the finder's fairness rules: the distractor kind's options, declared once there (probes/kinds/distractor_kind.py)
RULES = ("distractor_types", "untyped_pool", "appropt_object", "exclude_objects", "class_candidates", "type_dates")
query_options = [
    click.option("--strategy", "strategies", type=STRATEGY_CHOICE, multiple=True, default=("sem",), show_default=True,
                 help="Repeatable."),
    click.option("--n", type=click.IntRange(min=1), default=5, show_default=True, help="Distractors per fact."),
    click.option("--at", help="Probe date (YYYY-MM-DD): truth is taken at this date [default: today]."),
    click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random strategy."),
    click.option("--model", help="Model spec for appropt, e.g. smollm2-135m-instruct."),
    click.option("--template", default=DEFAULT_TEMPLATE, show_default=True,
                 help="Cloze for appropt: [X] subject label, [R] relation label, [Y] the object slot."),
    click.option("--exact", is_flag=True,
                 help="appropt: widen the beam until the answer is provably the exact top n (as an exhaustive "
                      "scoring would rank them). Cheap on small pools, up to 100x slower on large ones."),
    click.option("--languages", help="Name languages for the label rule [default: the store's]."),
    *kind_options("distractor", RULES),
    store_option,
    semantic_option,
]


def _rules(types: str, untyped: str, appropt_object: str, exclude_objects: str, class_candidates: str,
           type_dates: str) -> dict:
    return {"types": types, "untyped": untyped, "appropt_object": appropt_object, "exclude_objects": exclude_objects,
            "class_candidates": class_candidates, "type_dates": type_dates}


def _label(finder, entity):
    return finder.label(entity) or entity


@distractors_group.command("query")
@click.option("--subject", required=True, help="Subject QID.")
@click.option("--relation", required=True, help="Relation PID, or its label (`kg relations`).")
@click.option("--object", "obj", required=True, help="The true object's QID.")
@with_options(query_options)
@json_option
def query(subject, relation, obj, strategies, n, at, seed, model, template, exact, languages, distractor_types,
          untyped_pool, appropt_object, exclude_objects, class_candidates, type_dates, store, semantic_dir, as_json):
    """Distractors for one fact.

    \b
    factprobe distractors query --subject Q183 --relation P36 --object Q64 --strategy temp+sem --n 5
    """
    from .relations import relation_ids_or_fail

    relation, = relation_ids_or_fail(store, [relation])
    finder = _finder(store, semantic_dir, strategies, model, languages, exact,
                     rules=_rules(distractor_types, untyped_pool, appropt_object, exclude_objects,
                                  class_candidates, type_dates))
    prompt = cloze_prompt(template, _label(finder, subject), _label(finder, relation))
    results = []
    for strategy in strategies:
        try:
            results.append(finder.find(subject, relation, obj, strategy=strategy, n=n, at=at, seed=seed, prompt=prompt))
        except ValueError as error:
            fail(str(error), EXIT_USAGE)
    if as_json:
        echo(json.dumps([r.to_dict() for r in results] if len(results) > 1 else results[0].to_dict()))
        return
    for r in results:
        echo(f"{r.strategy} ({r.pool} pool{', types ' + ','.join(r.types) if r.types else ''}):")
        for d in r.distractors:
            score = "" if d.score is None else f"  {d.score:.4f}"
            echo(f"  {d.entity:<12} {d.label or '':<30} {d.source}{score}")
        if r.shortfall:
            echo(f"  ({len(r.distractors)} of {r.n}: {r.shortfall})")


@distractors_group.command("add")
@click.argument("facts_file", type=click.Path(dir_okay=False, exists=True))
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True,
              help="JSONL: each input line with a `distractors` field added ({strategy: [...]}).")
@with_options(query_options)
@click.option("--batch", type=click.IntRange(min=1), default=16, show_default=True,
              help="Facts handled together (appropt searches them in shared forward passes); output is "
                   "written, and a rerun resumes, a batch at a time.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@overwrite_option
@json_option
def add(facts_file, out_path, strategies, n, at, seed, model, template, exact, languages, distractor_types,
        untyped_pool, appropt_object, exclude_objects, class_candidates, type_dates, store, semantic_dir, batch, quiet,
        overwrite, as_json):
    """Add distractors to every fact of FACTS_FILE (JSONL with `subject`, `relation`, `object`, as
    `frequency annotate` writes). A line without them is reported with its number and skipped. A
    rerun with the same --out continues after the lines already written."""
    from tqdm import tqdm

    from ..kg.outputs import open_append
    from .outputs import DISTRACTORS, claim_jsonl

    # resumed by its line count: only a file of this command's records (a foreign one is removed with --overwrite)
    claim_jsonl(out_path, DISTRACTORS, "facts with distractors factprobe wrote", overwrite=overwrite,
                inputs=[facts_file, store])
    finder = _finder(store, semantic_dir, strategies, model, languages, exact, batch,
                     rules=_rules(distractor_types, untyped_pool, appropt_object, exclude_objects,
                                  class_candidates, type_dates))
    done = _complete_lines(out_path)
    lines = Path(facts_file).read_text(encoding="utf-8").splitlines()
    rejected, written, short = [], 0, 0
    with open_append(out_path) as out, tqdm(total=len(lines), initial=min(done, len(lines)),
                                                              unit=" facts", disable=quiet, dynamic_ncols=True) as bar:
        for start in range(done, len(lines), batch):
            records = []
            for number, line in enumerate(lines[start:start + batch], start=start + 1):
                record = _fact_record(line)
                if record is None:
                    rejected.append(number)
                    echo(f"rejected {facts_file}:{number}: needs JSON with subject, relation, object", err=True)
                    record = {"rejected": True}  # written all the same: keeps line numbers aligned for a rerun
                records.append(record)
            facts = [r for r in records if "rejected" not in r]
            keys = [(r["subject"], r["relation"], r["object"],
                     cloze_prompt(template, _label(finder, r["subject"]), _label(finder, r["relation"])))
                    for r in facts]
            for record in facts:
                record["distractors"] = {}
            for strategy in strategies:
                try:
                    found = finder.find_many(keys, strategy=strategy, n=n, at=at, seed=seed)
                except ValueError as error:
                    fail(str(error), EXIT_USAGE)
                for record, result in zip(facts, found):
                    record["distractors"][strategy] = [d.entity for d in result.distractors]
                    if result.shortfall:
                        short += 1
                        record.setdefault("shortfall", {})[strategy] = result.shortfall
            out.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
            out.flush()
            written += len(facts)
            bar.update(len(records))
    summary = {"facts": written, "resumed_after": done, "rejected": rejected, "short": short, "out": out_path}
    if as_json:
        echo(json.dumps(summary))
    else:
        echo(f"{written:,} facts given distractors -> {out_path}" + (f" (continued after {done:,})" if done else "")
                   + (f"; {short} strategy results short of {n}" if short else ""))
    if rejected:
        sys.exit(EXIT_PARTIAL)


def _fact_record(line: str) -> dict | None:
    """The JSON object of a facts line, or None when it lacks a subject, relation or object."""
    record, _ = json_value(line)
    if isinstance(record, dict) and all(isinstance(record.get(k), str) and record[k]
                                        for k in ("subject", "relation", "object")):
        return record
    return None


def _complete_lines(path: str) -> int:
    """Lines already written by an earlier run; a torn last line (a kill mid-write) is cut off."""
    from ..kg.outputs import truncate

    p = Path(path)
    if not p.is_file():
        return 0
    data = p.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        truncate(p, len(data))  # in place, never into a link (kg/outputs.py)
    return data.count(b"\n")

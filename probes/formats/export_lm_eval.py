"""A probe set and a method as a task folder lm-evaluation-harness 0.4.x runs (`lm_eval --include_path
DIR --tasks NAME`): NAME.yaml, the documents as NAME.jsonl, and utils.py; beside them the
groups per relation and per frequency bucket (probes/formats/lm_eval_groups.py).

The prompts are the method's own (the runner's `plan_eval` builds the method as `factprobe eval`
does, and its prompt functions write them), so what an option or a seed changes in a prompt is in
the exported text. KDF, IC-LKE and EIC-LKE chain become multiple_choice over the scored
continuations (`target_delimiter` the text factprobe puts before each choice); EIC-LKE paper, whose
choices each have their own context, a multiple_choice task class in utils.py that asks harness
for exactly those pairs; BELIEF-ICL's greedy answers generate_until, one document per question and setting, matched by
factprobe's own matching in utils.py's process_results: the text of probes/measures/answers.py (stdlib and
simplemma only) is written into utils.py, so the task runs where factprobe is not installed.
Harness's `acc` is then factprobe's `correct`, item by item. What harness cannot express is
refused by name (`Unexportable`).

harness hands `data_files` to datasets.load_dataset, which resolves a relative path against the
working directory, not the YAML; utils.py names the file beside itself and the YAML reads it with
`!function utils.DATA` (harness imports utils.py from the YAML's folder), so the folder runs from
any directory and after a move.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ...kg.outputs import claim_folder, replace_file
from ..evaluation.runner import plan_eval
from .lm_eval_groups import groups_of, is_group_file

# Methods whose decision harness cannot ask, and why: the one line `export lm-eval` refuses with.
REFUSED = {
    "belief": "a masked LM's fill-mask top-k over every prompt of an item; harness asks causal LMs only "
              "(loglikelihood and generate_until), it has no fill-mask request",
    "distractor": "Min@n/Avg@n compare the object's plausibility (every name of it, + EOS) with each distractor's "
                  "and take the minimum or mean over distractors; a harness document scores one choice list and "
                  "reports its argmax, with no per-name sums nor a Min/Avg over distractors",
    "baselines": "its measures (probability thresholds, Precision@n over beam candidates, ROUGE-L, KaRR, BERT-score, "
                 "an LLM judge) are not one choice or one generated answer per document",
}
# Option values whose decision harness cannot ask.
REFUSED_OPTIONS = {
    ("kdf", "scoring", "option-text-norm"): "it ranks options by log-probability per token; harness's acc_norm "
                                             "divides by the option's length in bytes",
}


class Unexportable(ValueError):
    """The method, or one of its options, has no lm-evaluation-harness form."""


@dataclass(frozen=True)
class ExportedTask:
    """What `export_lm_eval` wrote."""
    name: str  # harness's task name (--tasks NAME)
    folder: Path
    files: tuple[str, ...]  # in the folder
    documents: int
    output_type: str  # multiple_choice or generate_until
    method: str
    options: dict  # the method's options as the export used them (defaults filled in)
    rejected: tuple[str, ...] = ()  # "file:line: why" of each probe-set line that is not an item, left out
    groups: tuple[str, ...] = ()  # harness groups over the task: NAME_by_relation, NAME_by_bucket, NAME_breakdowns


class _Function(str):
    """A YAML `!function` reference (harness resolves it from the YAML's folder)."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Function, lambda dumper, value: dumper.represent_scalar("!function", str(value)))
# Text with a line break double-quoted ("\n"), as one would write a stop string by hand.
_Dumper.add_representer(str, lambda dumper, value: dumper.represent_scalar(
    "tag:yaml.org,2002:str", value, style='"' if any(c in value for c in "\n\r\t") else None))


def export_lm_eval(method: str, probes: str | Path, out: str | Path, *, options: dict | None = None, seed: int = 0,
                   limit: int | None = None, name: str | None = None, overwrite: bool = False) -> ExportedTask:
    """Write the task folder `out` for `method` over the probe set `probes`, with the method's
    `options` and `seed` as `factprobe eval` takes them (`limit`: the first N test items only).
    `name`: the task's name (default factprobe_<set>_<method>). Unexportable for what harness
    cannot express; ValueError as `plan_eval` (kind, options) or for a folder holding another task;
    OutputError (kg/outputs.py) for a folder holding files no export wrote (unless `overwrite`),
    a link at a file it writes, or `probes` among them."""
    if method in REFUSED:
        raise Unexportable(f"lm-eval export: method {method} cannot be exported: {REFUSED[method]}")
    if method not in BUILDERS:
        raise Unexportable(f"lm-eval export: method {method} has no lm-eval form (exportable: "
                           f"{', '.join(BUILDERS)})")
    probes, out = Path(probes), Path(out)
    # restart: the plan never reads nor writes a run folder; it builds the method as eval does
    plan = plan_eval(method, probes, out / ".plan", options=options, limit=limit, seed=seed, restart=True)
    runner = plan.runner
    for (refused_method, key, value), why in REFUSED_OPTIONS.items():
        if method == refused_method and runner.options.get(key) == value:
            raise Unexportable(f"lm-eval export: {method} with {key}={value} cannot be exported: {why}")
    task = name or re.sub(r"[^A-Za-z0-9_]+", "_", f"factprobe_{probes.name.removesuffix('.jsonl')}_{method}")
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", task):
        raise ValueError(f"task name {task!r}: use letters, digits, '_', '.' and '-'")
    docs, config, utils = BUILDERS[method](runner, plan.test)
    labels = {str(i["relation"]): i["relation_label"] for i in plan.test if i.get("relation") and i.get("relation_label")}
    groups = groups_of(task, docs, labels)
    group_files = groups.documents(_Function)
    files = (f"{task}.yaml", f"{task}.jsonl", "utils.py", *group_files)
    claim_folder(out, overwrite=overwrite, inputs=[probes], ours=is_exported_task,
                 writes=[*files, *(f"{f}.partial" for f in files)], what="an lm-eval task factprobe exported")
    others = sorted(p.name for p in out.glob("*.yaml")
                    if p.name != f"{task}.yaml" and not is_group_file(p.name, task)) if out.is_dir() else []
    # named by its own YAML, not its groups'
    others = [n for n in others if not any(is_group_file(n, m.removesuffix(".yaml")) for m in others if m != n)]
    if others:
        raise ValueError(f"{out} holds another task ({', '.join(others)}): export each task into a folder of its own "
                         "(harness reads every YAML under --include_path, and utils.py is per folder)")
    meta = {"version": 1.0, "factprobe": {"method": method, "options": runner.options, "seed": seed,
                                          "probes": probes.name, "probes_sha256": plan.config["probes_sha256"],
                                          "limit": limit}}
    document = {"task": task, "dataset_path": "json",
                "dataset_kwargs": {"data_files": {"test": _Function("utils.DATA")}}, "test_split": "test",
                **config, "num_fewshot": 0, "metadata": meta}
    out.mkdir(parents=True, exist_ok=True)
    # each written beside and renamed over (never through a link)
    replace_file(out / f"{task}.jsonl", "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    replace_file(out / f"{task}.yaml", yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                                                 width=1000))
    for stale in out.glob("*.yaml"):  # an earlier export's subtasks of relations this one has not
        if is_group_file(stale.name, task) and stale.name not in group_files:
            stale.unlink()
    for file_name, settings in group_files.items():
        replace_file(out / file_name, yaml.dump(settings, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                                                width=1000))
    replace_file(out / "utils.py", _utils_source(task, utils + groups.utils_source()))
    return ExportedTask(task, out, files, len(docs), config["output_type"], method, dict(runner.options),
                        tuple(plan.rejected), groups.group_names())


UTILS_HEAD = '"""Written by `factprobe export lm-eval`'


def is_exported_task(folder: Path) -> bool:
    """A folder an export wrote: its utils.py is factprobe's, or one YAML in it names factprobe
    in its metadata (read as plain YAML: nothing in it runs)."""
    try:
        if (folder / "utils.py").read_text(encoding="utf-8", errors="replace").startswith(UTILS_HEAD):
            return True
    except OSError:
        pass
    for path in folder.glob("*.yaml"):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) < 1 << 20 and re.search(r"^  factprobe:$", text, re.MULTILINE):
            return True
    return False


def _choice_docs(items, pairs_of, answer_of, delimiter: str) -> tuple[list[dict], dict, str]:
    """multiple_choice documents from each item's (context, continuation) pairs: the prompt, the
    choices after `delimiter` (harness's target_delimiter; "" when some continuation lacks it) and
    the answer's index. Items whose choices have contexts of their own carry them in `contexts`."""
    rows = [(item, pairs_of(item)) for item in items]
    if any(not c.startswith(delimiter) for _, pairs in rows for _, c in pairs):
        delimiter = ""
    docs, per_choice = [], False
    for item, pairs in rows:
        contexts = [context for context, _ in pairs]
        doc = {"id": item["id"], "relation": item.get("relation"), "bucket": item.get("bucket"), "prompt": contexts[0],
               "choices": [c[len(delimiter):] for _, c in pairs], "answer": answer_of(item)}
        if len(set(contexts)) > 1:
            per_choice = True
        docs.append(doc)
        doc["contexts"] = contexts
    if not per_choice:
        for doc in docs:
            del doc["contexts"]
    config = {"output_type": "multiple_choice", "doc_to_text": "prompt", "doc_to_choice": "choices",
              "doc_to_target": "answer", "target_delimiter": delimiter,
              "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}]}
    if per_choice:
        config = {"class": _Function("utils.PerChoiceContexts"), **config}
    return docs, config, PER_CHOICE if per_choice else ""


def _kdf(runner, items):
    from ..methods.kdf import LETTERS

    def pairs(item):
        context = runner.prompt(item)
        return [(context, c) for c in runner.continuations(item)]

    delimiter = runner.gap(items[0]) if items else " "
    return _choice_docs(items, pairs, lambda item: LETTERS.index(item["answer"]), delimiter)


def _ic_lke(runner, items):
    def pairs(item):
        context = runner.prompt(item)
        return [(context, c) for c in runner.continuations(item)]

    return _choice_docs(items, pairs, lambda item: item["answer_index"], runner.options["separator"])


def _eic_lke(runner, items):
    delimiter = "" if runner.options["construction"] == "chain" else runner.options["separator"]
    return _choice_docs(items, runner.choice_pairs, lambda item: item["answer_index"], delimiter)


def _belief_icl(runner, items):
    from ..methods.belief_icl import STOP

    docs = []
    for item in items:
        for question in runner.questions(item):  # a cloze item's prompts: `prompt_index` says which
            where = {} if question is item else {"prompt_index": question["index"]}
            docs += [{"id": item["id"], **where, "setting": setting, "relation": item.get("relation"),
                      "bucket": item.get("bucket"), "prompt": runner.prompt(question, setting),
                      "gold": list(item["gold"]), "answer": item["gold"][0]}
                     for setting in runner.options["settings"]]
    config = {"output_type": "generate_until", "doc_to_text": "prompt", "doc_to_target": "answer",
              "generation_kwargs": {"until": list(STOP), "max_gen_toks": runner.tokens, "do_sample": False,
                                    "temperature": 0.0},
              "process_results": _Function("utils.process_results"),
              "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}]}
    return docs, config, _matching()


def _mc(runner, items):
    def pairs(item):
        return [(item["prompt"], c) for c in runner.continuations(item)]

    delimiter = items[0].get("target_delimiter", " ") if items else " "
    return _choice_docs(items, pairs, lambda item: item["answer_index"], delimiter)


BUILDERS = {"kdf": _kdf, "ic-lke": _ic_lke, "eic-lke": _eic_lke, "belief-icl": _belief_icl, "mc": _mc}

MATCHING = '''

def process_results(doc, results):
    """factprobe's verdict on the greedy answer (belief-icl): the answer, stripped, holds a gold
    name's lemmas in order (`matches_any` above, factprobe's own code)."""
    return {"acc": float(matches_any(results[0].strip(), doc["gold"]))}
'''


def _matching() -> str:
    """utils.py's matching: probes/measures/answers.py as text (its docstring and __future__ import left
    out; utils.py has its own), a one-line error where simplemma, its lemmatizer, is missing, and
    process_results. One source: what factprobe runs is what harness runs."""
    from importlib.metadata import PackageNotFoundError, version

    from ..measures import answers

    source = inspect.getsource(answers)
    tree = ast.parse(source)
    start = tree.body[0].end_lineno if isinstance(tree.body[0], ast.Expr) else 0  # after the docstring
    body = [line for line in source.splitlines()[start:] if line != "from __future__ import annotations"]
    try:
        used = version("simplemma")
    except PackageNotFoundError:
        used = "unknown"
    guard = (f"\n\n# -- factprobe's answer matching: factprobe/probes/measures/answers.py as factprobe ran it (simplemma {used})"
             "\ntry:\n    import simplemma  # noqa: F401\nexcept ModuleNotFoundError as error:\n"
             "    raise ModuleNotFoundError(\"this task matches answers by simplemma's lemmas, as factprobe does: \"\n"
             f"                              \"pip install simplemma=={used}\") from error\n")
    return guard + "\n".join(body).rstrip() + "\n" + MATCHING

PER_CHOICE = '''

from lm_eval.api.instance import Instance  # noqa: E402
from lm_eval.api.task import ConfigurableTask  # noqa: E402


class PerChoiceContexts(ConfigurableTask):
    """multiple_choice whose choice k is scored after its own context, doc["contexts"][k] (EIC-LKE
    paper: a later test slot shows the earlier slots answered with the choice of the same rank)."""

    def __init__(self, config=None):
        # harness hands the YAML's settings on, `class` among them, which TaskConfig does not take
        super().__init__(config={k: v for k, v in (config or {}).items() if k != "class"})

    def construct_requests(self, doc, ctx, **kwargs):
        kwargs.pop("apply_chat_template", None)
        kwargs.pop("chat_template", None)
        delimiter = self.config.target_delimiter
        return [Instance(request_type="loglikelihood", doc=doc, arguments=(context, delimiter + choice), idx=k,
                         **kwargs)
                for k, (context, choice) in enumerate(zip(doc["contexts"], doc["choices"]))]
'''


def _utils_source(task: str, extra: str) -> str:
    return (f'{UTILS_HEAD} for the task {task}. DATA: the documents beside this file\n'
            '(harness resolves a relative data_files against the working directory, not the YAML)."""\n\n'
            "from __future__ import annotations\n\nfrom pathlib import Path\n\n"
            f"DATA = str(Path(__file__).resolve().with_name({task + '.jsonl'!r}))\n" + extra)

"""An lm-evaluation-harness multiple_choice task (its YAML and local JSON data files) as icl-mc
items that carry their own prompt, for `--method mc` (probes/methods/mc.py): the prompt is
harness's context (description + doc_to_text), the choices doc_to_choice, the answer doc_to_target,
each read as harness reads it (a field name, else a Jinja template rendered as harness renders
it: StrictUndefined, trailing newlines kept, its regex_replace filter), and `target_delimiter`
goes with every item. What needs harness's Python or the hub is refused by name: a dataset on the
Hugging Face hub (none is reachable), `!function` fields, a task class, process_docs, few-shot
examples (num_fewshot > 0), gen_prefix, another output_type. A document that does not fit is
reported by file, document number and field, and skipped.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..kg.jsonl import jsonl_lines


class TaskRefused(ValueError):
    """The task needs something this import does not do (named in the message)."""


@dataclass(frozen=True)
class FunctionRef:
    """A YAML `!function module.name`, and the folder of the YAML that names it."""
    spec: str
    folder: Path


class _Loader(yaml.SafeLoader):
    pass


def load_task_yaml(path: str | Path) -> dict:
    """The task's configuration, `include:`d files first (paths relative to the YAML, as harness
    resolves them), `!function` as FunctionRef."""
    path = Path(path).resolve()

    class Loader(_Loader):
        pass

    Loader.add_constructor("!function", lambda loader, node: FunctionRef(loader.construct_scalar(node), path.parent))
    with open(path, encoding="utf-8") as handle:
        config = yaml.load(handle, Loader=Loader)  # noqa: S506 (a SafeLoader with one more tag)
    if not isinstance(config, dict):
        raise TaskRefused(f"{path}: not a task YAML (a mapping of settings)")
    include = config.pop("include", None)
    if include:
        config = {**load_task_yaml(path.parent / include), **config}
    return config


def _template(text: str, doc: dict) -> str:
    try:
        from jinja2 import BaseLoader, Environment, StrictUndefined
    except ImportError as error:  # harness and torch bring it; factprobe's core does not need it
        raise TaskRefused("templated doc_to_* fields need jinja2 (pip install jinja2)") from error

    env = Environment(loader=BaseLoader(), undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters["regex_replace"] = lambda s, pattern, repl, count=0: re.sub(pattern, repl, s, count=count)
    return env.from_string(text).render(**doc)


def _field(setting, doc: dict, name: str):
    """A doc_to_* value for one document, as harness's ConfigurableTask computes it."""
    if isinstance(setting, FunctionRef):
        raise TaskRefused(f"{name} is Python code (!function {setting.spec}): only field names and Jinja templates "
                          "import")
    if isinstance(setting, str):
        if setting in doc:
            return doc[setting]
        text = _template(setting, doc)
        if name == "doc_to_choice":
            return ast.literal_eval(text)
        if text.isdigit():
            return int(text)
        if name == "doc_to_target" and len(text) >= 2 and text[0] == "[" and text[-1] == "]":
            try:
                return ast.literal_eval(text)
            except (SyntaxError, ValueError):
                return text
        return text
    if name == "doc_to_choice" and isinstance(setting, dict):
        return list(setting.values())
    return setting  # an int (doc_to_target) or a list (doc_to_choice), as harness takes them


def check_task(config: dict, where: str) -> None:
    """TaskRefused naming the first setting this import cannot follow."""
    if config.get("output_type") != "multiple_choice":
        raise TaskRefused(f"{where}: output_type {config.get('output_type')!r}: only multiple_choice tasks import")
    for key in ("class", "custom_dataset", "process_docs", "use_prompt", "gen_prefix"):
        if config.get(key) not in (None, ""):
            raise TaskRefused(f"{where}: {key} is set: it needs harness's own code or prompt machinery")
    if config.get("num_fewshot") not in (None, 0):
        raise TaskRefused(f"{where}: num_fewshot {config['num_fewshot']}: harness draws few-shot examples at run time; "
                          "write them into doc_to_text (or set num_fewshot 0) to import")
    if config.get("doc_to_text") is None or config.get("doc_to_choice") is None:
        raise TaskRefused(f"{where}: doc_to_text and doc_to_choice are needed")
    path = config.get("dataset_path")
    if path != "json":
        raise TaskRefused(f"{where}: dataset_path {path!r} is a dataset on the Hugging Face hub (or a loader) this "
                          "machine cannot reach: only dataset_path json with local data_files imports")


def task_documents(config: dict, where: str) -> tuple[str, list[tuple[str, dict]]]:
    """(split, [(file:line, document)]) of the split harness evaluates (test_split, else
    validation_split), read from the task's local JSON or JSON Lines data files."""
    split = config.get("test_split") or config.get("validation_split")
    if not split:
        raise TaskRefused(f"{where}: neither test_split nor validation_split")
    kwargs = config.get("dataset_kwargs") or {}
    files = kwargs.get("data_files")
    if files is None:
        raise TaskRefused(f"{where}: dataset_kwargs.data_files is needed (dataset_path json reads local files)")
    # datasets names the split of a bare file (or list of files) "train"
    files = files if isinstance(files, dict) else {"train": files}
    if split not in files:
        raise TaskRefused(f"{where}: data_files has no {split!r} split (it has {', '.join(map(str, files))})")
    chosen = files[split] if isinstance(files[split], list) else [files[split]]
    docs = []
    for name in chosen:
        path = _data_path(name)
        for line in _json_rows(path, kwargs.get("field")):
            docs.append(line)
    return split, docs


def _data_path(name) -> Path:
    """A data file as harness finds it: a `!function` imported from the YAML's folder (as harness
    imports it), else a path relative to the working directory, as datasets resolves it."""
    if isinstance(name, FunctionRef):
        module_name, _, attribute = name.spec.rpartition(".")
        source = name.folder / f"{module_name.replace('.', '/')}.py"
        spec = importlib.util.spec_from_file_location(f"lm_eval_task_{abs(hash(str(source)))}", source)
        if spec is None or spec.loader is None or not source.exists():
            raise TaskRefused(f"data_files: !function {name.spec}: no {source}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        name = getattr(module, attribute)
    path = Path(str(name))
    if not path.exists():
        raise TaskRefused(f"data_files: {path} does not exist (relative paths are read from the working directory, "
                          "as harness reads them)")
    return path


def _json_rows(path: Path, field: str | None):
    text = path.read_text(encoding="utf-8").lstrip()
    if text.startswith("[") or field:
        value = json.loads(text)
        rows = value[field] if field else value
        for number, row in enumerate(rows, start=1):
            yield f"{path}#{number}", row
        return
    for line in jsonl_lines(path):
        yield line.where(path), ({"__error__": line.error} if line.error else line.value)


def task_items(path: str | Path) -> tuple[str, list[dict], list[str], int]:
    """(task name, icl-mc items, rejected "where: field: why" lines, documents read) for one task YAML."""
    path = Path(path)
    config = load_task_yaml(path)
    check_task(config, str(path))
    task = str(config.get("task") or path.stem)
    delimiter = config.get("target_delimiter", " ")
    _, docs = task_documents(config, str(path))
    items, rejected = [], []
    for number, (where, doc) in enumerate(docs):
        try:
            items.append(_item(config, task, number, doc, delimiter))
        except (TaskRefused, ValueError, SyntaxError, KeyError, TypeError) as error:
            if isinstance(error, TaskRefused) and "Python code" in str(error):
                raise TaskRefused(f"{path}: {error}") from None
            rejected.append(f"{where}: {error}")
    return task, items, rejected, len(docs)


def _item(config: dict, task: str, number: int, doc, delimiter: str) -> dict:
    if not isinstance(doc, dict):
        raise ValueError(f"not a JSON object ({type(doc).__name__})")
    if "__error__" in doc:
        raise ValueError(doc["__error__"])
    text = _field(config["doc_to_text"], doc, "doc_to_text")
    if not isinstance(text, str):
        raise ValueError(f"doc_to_text: {text!r} is not text (a multiple-input task: its choices are contexts)")
    description = config.get("description") or ""
    description = (doc[description] if description in doc else _template(description, doc)) if description else ""
    choices = _field(config["doc_to_choice"], doc, "doc_to_choice")
    if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
        raise ValueError(f"doc_to_choice: {choices!r} is not a list of texts")
    target = _field(config.get("doc_to_target"), doc, "doc_to_target")
    if isinstance(target, str):
        if target not in choices:
            raise ValueError(f"doc_to_target: {target!r} is not among the choices")
        target = choices.index(target)
    if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target < len(choices):
        raise ValueError(f"doc_to_target: {target!r} is not one choice's index (several answers do not import)")
    return {"id": f"lm-eval:{task}:{number}", "kind": "icl-mc", "split": "test", "fact": f"{task}:{number}",
            "relation": task, "relation_label": None, "object_label": choices[target], "gold": [choices[target]],
            "frequency": None, "bucket": None, "source_format": "lm-eval", "prompt": description + text,
            "choices": choices, "choice_ids": None, "answer_index": target, "target_delimiter": delimiter,
            "source_doc": doc.get("id", number)}

"""An lm-evaluation-harness multiple_choice task (its YAML and local JSON data files) as icl-mc
items that carry their own prompt, for `--method mc` (probes/methods/mc.py): the prompt is
harness's context (description + doc_to_text), the choices doc_to_choice, the answer doc_to_target,
each read as harness reads it (a field name, else a Jinja template) and `target_delimiter` goes
with every item.

A task folder is a stranger's: nothing in it runs and nothing outside it is read. The YAML and its
includes are read as data (probes/formats/lm_eval_yaml.py: size, alias and nesting limits, YAML's own tags),
every setting read is type-checked by name, templates render in a sandbox (probes/
lm_eval_templates.py). `!function` is refused wherever it stands, never imported, save one
shape read without running it: a data path `!function utils.DATA` whose utils.py, parsed, assigns
`DATA = str(Path(__file__).resolve().with_name('FILE'))`, as `factprobe export lm-eval` writes.
Data files are read relative to the task folder (the YAML's; harness reads them relative to the
working directory, so run harness from the folder to read the same files) and must lie inside it;
hub datasets and remote files are refused by name, as are a task class, process_docs, few-shot
examples (num_fewshot > 0), gen_prefix and other output types. A document that does not fit is
reported by file, line and field and skipped.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from ...kg.jsonl import jsonl_lines, read_json_file
from .lm_eval_templates import TemplateFailed, TemplateRefused, Templates
from .lm_eval_yaml import FunctionRef, TaskRefused, checked_file, read_inside, read_task_yaml, resolves_inside

__all__ = ["TaskRefused", "task_items"]

# harness settings that need its own code or its prompt machinery
NEEDS_HARNESS = ("class", "custom_dataset", "process_docs", "use_prompt", "gen_prefix")
# The settings read, and the types harness's TaskConfig takes for them (null: not set).
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "task": (str,), "output_type": (str,), "dataset_path": (str,), "dataset_kwargs": (dict,),
    "test_split": (str,), "validation_split": (str,), "doc_to_text": (str,), "doc_to_choice": (str, list, dict),
    "doc_to_target": (str, int), "target_delimiter": (str,), "description": (str,), "num_fewshot": (int,),
}
TEMPLATED = ("description", "doc_to_text", "doc_to_choice", "doc_to_target")
MAX_MODULE_BYTES = 1 << 20
_REMOTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def task_items(path: str | Path) -> tuple[str, list[dict], list[str], int]:
    """(task name, icl-mc items, rejected "where: field: why" lines, documents read) for one task
    YAML; TaskRefused (one line) for a task this import cannot or will not follow."""
    try:
        return _task_items(Path(path))
    except TaskRefused as error:  # a name or path quoted from the task may hold a line break
        raise TaskRefused(_one_line(error)) from None


def _task_items(path: Path) -> tuple[str, list[dict], list[str], int]:
    root = path.absolute().parent.resolve()
    config = read_task_yaml(path)
    check_task(config, str(path))
    task = str(config.get("task") or path.stem)
    documents = task_documents(config, str(path), root)
    reader = _Reader(config, str(path), Templates(), {key for _, doc in documents if isinstance(doc, dict)
                                                      for key in doc})
    for name in TEMPLATED:  # a template that does not compile refuses the task before any document
        if isinstance(config.get(name), str) and config[name] not in reader.features:
            reader.compile(name)
    items, rejected = [], []
    for number, (where, doc) in enumerate(documents):
        try:
            items.append(reader.item(task, number, doc))
        except TaskRefused:
            raise
        except (ValueError, SyntaxError, KeyError, TypeError, MemoryError, RecursionError) as error:
            rejected.append(f"{where}: {_one_line(error)}")
    return task, items, rejected, len(documents)


def check_task(config: dict, where: str) -> None:
    """TaskRefused naming the first setting this import cannot follow, or of the wrong type."""
    for key in NEEDS_HARNESS:
        if config.get(key) not in (None, ""):
            raise TaskRefused(f"{where}: {key} is set: it needs harness's own code or prompt machinery")
    _refuse_functions(config, "")
    _check_types(config, where)
    if config.get("output_type") != "multiple_choice":
        raise TaskRefused(f"{where}: output_type {config.get('output_type')!r}: only multiple_choice tasks import")
    if config.get("num_fewshot") not in (None, 0):
        raise TaskRefused(f"{where}: num_fewshot {config['num_fewshot']}: harness draws few-shot examples at run time; "
                          "write them into doc_to_text (or set num_fewshot 0) to import")
    if config.get("doc_to_text") is None or config.get("doc_to_choice") is None:
        raise TaskRefused(f"{where}: doc_to_text and doc_to_choice are needed")
    path = config.get("dataset_path")
    if path != "json":
        raise TaskRefused(f"{where}: dataset_path {path!r} is a dataset on the Hugging Face hub (or a loader) this "
                          "machine cannot reach: only dataset_path json with local data_files imports")
    if (config.get("dataset_kwargs") or {}).get("data_dir") is not None:
        raise TaskRefused(f"{where}: dataset_kwargs.data_dir is set: name the data_files relative to the task folder")


def _refuse_functions(value, name: str) -> None:
    """TaskRefused at the first `!function`, but for data_files (read from the export's shape)."""
    if isinstance(value, FunctionRef):
        if not re.fullmatch(r"dataset_kwargs\.data_files(\.[^.\[]+)?(\[\d+\])?", name):
            raise TaskRefused(f"{value.where}: {name} is Python code (!function {value.spec}): factprobe runs no code "
                              "from a task; only field names and Jinja templates import")
    elif isinstance(value, dict):
        for key, inner in value.items():
            _refuse_functions(inner, f"{name}.{key}" if name else str(key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            _refuse_functions(inner, f"{name}[{index}]")


def _check_types(config: dict, where: str) -> None:
    for name, types in FIELD_TYPES.items():
        _expect(config.get(name), types, f"{where}: {name}")
    choices = config.get("doc_to_choice")
    if isinstance(choices, (list, dict)):
        for key, value in (choices.items() if isinstance(choices, dict) else enumerate(choices)):
            _expect(value, (str,), f"{where}: doc_to_choice[{key!r}]", optional=False)
    if "\n" in str(config.get("task") or "") or len(str(config.get("task") or "")) > 200:
        raise TaskRefused(f"{where}: task: a name on one line of at most 200 characters")
    kwargs = config.get("dataset_kwargs") or {}
    _expect(kwargs.get("field"), (str,), f"{where}: dataset_kwargs.field")
    files = kwargs.get("data_files")
    parts = files.items() if isinstance(files, dict) else [("", files)]
    for split, value in parts:
        name = f"{where}: dataset_kwargs.data_files" + (f".{split}" if isinstance(files, dict) else "")
        if not isinstance(split, str):
            raise TaskRefused(f"{name}: a split is named by text")
        for one in value if isinstance(value, list) else [value]:
            _expect(one, (str, FunctionRef), name, optional=files is None)


def _expect(value, types: tuple[type, ...], name: str, optional: bool = True) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        wanted = " or ".join({str: "text", int: "a whole number", list: "a list", dict: "a mapping",
                              FunctionRef: "a path"}.get(t, t.__name__) for t in types)
        kind = type(value).__name__
        shown = "null" if value is None else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
        raise TaskRefused(f"{name}: {shown}, not {wanted}")


def task_documents(config: dict, where: str, root: Path) -> list[tuple[str, dict]]:
    """[(file:line, document)] of the split harness evaluates (test_split, else validation_split),
    read from the task's local JSON or JSON Lines data files."""
    split = config.get("test_split") or config.get("validation_split")
    if not split:
        raise TaskRefused(f"{where}: neither test_split nor validation_split")
    kwargs = config.get("dataset_kwargs") or {}
    files = kwargs.get("data_files")
    if files is None:
        raise TaskRefused(f"{where}: dataset_kwargs.data_files is needed (dataset_path json reads local files)")

    def name(part: str) -> str:
        return "dataset_kwargs.data_files" + (f".{part}" if isinstance(kwargs["data_files"], dict) else "")

    # datasets names the split of a bare file (or list of files) "train"
    files = files if isinstance(files, dict) else {"train": files}
    if split not in files:
        raise TaskRefused(f"{where}: data_files has no {split!r} split (it has {', '.join(map(str, files))})")
    for other, entries in files.items():  # every !function in data_files is of the export's shape, or refused
        for entry in entries if isinstance(entries, list) else [entries]:
            if isinstance(entry, FunctionRef):
                _exported_data(entry, root, name(other))
    docs = []
    for entry in files[split] if isinstance(files[split], list) else [files[split]]:
        docs += _json_rows(_data_path(entry, root, where, name(split)), kwargs.get("field"))
    return docs


def _data_path(entry: str | FunctionRef, root: Path, where: str, field: str) -> Path:
    """A data file inside the task folder, found without importing anything."""
    name = f"{where}: {field}"
    if isinstance(entry, FunctionRef):
        path = _exported_data(entry, root, field)
    elif entry.startswith("hf://"):
        raise TaskRefused(f"{name}: {entry} is on the Hugging Face hub: only local files inside the task folder "
                          "import (download it into the folder and name it there)")
    elif _REMOTE.match(entry):
        raise TaskRefused(f"{name}: {entry} is a remote file: only local files inside the task folder import")
    else:
        path = root / entry  # an absolute entry stays itself, and is read only if it lies inside
    if not resolves_inside(path, root, name):
        raise TaskRefused(f"{name}: {entry} lies outside the task folder {root}: data files are read from the task's "
                          "folder (relative to its YAML), never outside it")
    if not path.exists():
        raise TaskRefused(f"{name}: {path} does not exist (data files are read relative to the task folder)")
    return checked_file(path, root, name)


def _exported_data(ref: FunctionRef, root: Path, field: str) -> Path:
    """The file `!function utils.DATA` names when utils.py (parsed, never run) assigns DATA as
    `factprobe export lm-eval` writes it; TaskRefused for anything else."""
    refused = TaskRefused(f"{ref.where}: {field} is Python code (!function {ref.spec}): factprobe runs no code from "
                          "a task; it reads a data path only from a module that sets it as its own export does "
                          "(NAME = str(Path(__file__).resolve().with_name('FILE')))")
    module, _, attribute = ref.spec.rpartition(".")
    if not (module.isidentifier() and attribute.isidentifier()) or not (ref.folder / f"{module}.py").is_file():
        raise refused
    source = read_inside(ref.folder / f"{module}.py", root, f"{ref.where}: {field}", MAX_MODULE_BYTES)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise refused from None
    assigned = [s.value for s in tree.body if isinstance(s, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == attribute for t in s.targets)]
    if not assigned:
        raise refused
    value = assigned[-1]  # Python keeps the last
    literal = value.args[0].args[0] if _calls(value) and _calls(value.args[0]) else None
    if not (isinstance(literal, ast.Constant) and isinstance(literal.value, str)):
        raise refused
    expected = ast.parse(f"str(Path(__file__).resolve().with_name({literal.value!r}))", mode="eval").body
    if ast.dump(value) != ast.dump(expected) or Path(literal.value).name != literal.value \
            or literal.value in ("", ".", ".."):
        raise refused
    return ref.folder / literal.value


def _calls(node) -> bool:
    return isinstance(node, ast.Call) and len(node.args) == 1


def _json_rows(path: Path, field: str | None) -> list[tuple[str, object]]:
    """(where, row) of a JSON array (or the array at `field`) or of JSON Lines."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
        if head.startswith(b"[") or field:
            value = read_json_file(path, finite=True)  # NaN is not JSON: no document's text or label
            rows = value.get(field) if field and isinstance(value, dict) else None if field else value
            if not isinstance(rows, list):
                raise TaskRefused(f"{path}: {'the field ' + repr(field) if field else 'the file'} holds no JSON array")
            return [(f"{path}#{number}", row) for number, row in enumerate(rows, start=1)]
        return [(line.where(path), {"__error__": line.error} if line.error else line.value)
                for line in jsonl_lines(path, finite=True)]
    except OSError as error:
        raise TaskRefused(f"{path}: {error.strerror or error}") from None
    except ValueError as error:  # read_json_file's one line: not UTF-8, not JSON, too deep, a number too long
        raise TaskRefused(str(error)) from None


@dataclass
class _Reader:
    """One task's settings applied to its documents, as harness's ConfigurableTask applies them."""
    config: dict
    where: str
    templates: Templates
    features: set[str]  # every document's fields (datasets gives each row all of its columns)

    def compile(self, name: str) -> None:
        try:
            self.templates.compile(self.config[name])
        except TemplateRefused as error:
            raise TaskRefused(f"{self.where}: {name}: {error}") from None

    def render(self, name: str, text: str, doc: dict) -> str:
        try:
            return self.templates.render(text, doc)
        except TemplateRefused as error:
            raise TaskRefused(f"{self.where}: {name}: {error}") from None
        except TemplateFailed as error:
            raise ValueError(f"{name}: {error}") from None

    def field(self, name: str, doc: dict):
        """A doc_to_* value for one document."""
        setting = self.config.get(name)
        if isinstance(setting, str):
            if setting in self.features:
                if setting not in doc:
                    raise ValueError(f"{name}: the document has no field {setting!r}")
                return doc[setting]
            text = self.render(name, setting, doc)
            if name == "doc_to_choice":
                try:
                    return ast.literal_eval(text)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    raise ValueError(f"doc_to_choice: {_short(text)} is not a list") from None
            if text.isdigit():
                return int(text)
            if name == "doc_to_target" and len(text) >= 2 and text[0] == "[" and text[-1] == "]":
                try:
                    return ast.literal_eval(text)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    return text
            return text
        if name == "doc_to_choice" and isinstance(setting, dict):
            return list(setting.values())
        return setting  # an int (doc_to_target) or a list (doc_to_choice), as harness takes them

    def item(self, task: str, number: int, doc) -> dict:
        if not isinstance(doc, dict):
            raise ValueError(f"not a JSON object ({type(doc).__name__})")
        if "__error__" in doc:
            raise ValueError(doc["__error__"])
        text = self.field("doc_to_text", doc)
        if not isinstance(text, str):
            raise ValueError(f"doc_to_text: {_short(text)} is not text (a multiple-input task: its choices are "
                             "contexts)")
        description = self.config.get("description") or ""
        if description:
            description = doc[description] if description in doc else self.render("description", description, doc)
        if not isinstance(description, str):
            raise ValueError(f"description: {_short(description)} is not text")
        choices = self.field("doc_to_choice", doc)
        if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
            raise ValueError(f"doc_to_choice: {_short(choices)} is not a list of texts")
        target = self.field("doc_to_target", doc)
        if isinstance(target, str):
            if target not in choices:
                raise ValueError(f"doc_to_target: {_short(target)} is not among the choices")
            target = choices.index(target)
        if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target < len(choices):
            raise ValueError(f"doc_to_target: {_short(target)} is not one choice's index (several answers do not "
                             "import)")
        return {"id": f"lm-eval:{task}:{number}", "kind": "icl-mc", "split": "test", "fact": f"{task}:{number}",
                "relation": task, "relation_label": None, "object_label": choices[target], "gold": [choices[target]],
                "frequency": None, "bucket": None, "source_format": "lm-eval", "prompt": description + text,
                "choices": choices, "choice_ids": None, "answer_index": target,
                "target_delimiter": _or(self.config.get("target_delimiter"), " "), "source_doc": doc.get("id", number)}


def _short(value, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _or(value, default):
    return default if value is None else value


def _one_line(error) -> str:
    return " ".join(str(error).splitlines())

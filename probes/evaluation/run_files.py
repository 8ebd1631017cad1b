"""What a run folder's run.json and aggregate.json hold, checked once where a command reads a
folder it did not just write (report, compare, assess, the item views: probes/report/loading.py;
merge: probes/evaluation/shard_merge.py). A folder may come from anyone (copied, edited by hand, written by
an older factprobe): a field of the wrong type is one line naming the file and the field, not a
traceback deep in a table or a plot, nor a number silently shown as n/a.

Only what the readers use is checked, by type; a field the readers do not know is left alone (a
method's own measures). In aggregate.json the names below are checked wherever they stand (the
run's `accuracy`, a breakdown entry's, a strategy's): every method writes them with one meaning.

Also here: run.json's sitting fields (`VOLATILE`: the environment, started_at, ended_at,
runtime_s), what `environment()` records in them, and `settings()`, run.json without them: what
a resume and a shard merge compare.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

Check = tuple[str, Callable[[Any], bool]]  # (what the field must be, the test)

TEXT: Check = ("a text", lambda v: isinstance(v, str))
WHOLE: Check = ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool))
COUNT: Check = ("a count (a whole number, 0 or more)", lambda v: WHOLE[1](v) and v >= 0)
NUMBER: Check = ("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
FLAG: Check = ("true or false", lambda v: isinstance(v, bool))
OBJECT: Check = ("an object", lambda v: isinstance(v, dict))
LIST: Check = ("a list", lambda v: isinstance(v, list))

# field -> (check, required); None is allowed where not required
RUN_JSON: dict[str, tuple[Check, bool]] = {
    "model": (TEXT, True), "method": (TEXT, True), "options": (OBJECT, False), "probes": (TEXT, False),
    "probes_sha256": (TEXT, False), "seed": (WHOLE, False), "limit": (COUNT, False), "kind": (TEXT, False),
    "shard": (OBJECT, False), "frequency_annotator": (OBJECT, False), "environment": (OBJECT, False),
    "started_at": (TEXT, False), "ended_at": (TEXT, False), "runtime_s": (NUMBER, False)}
# What run.json says of the sittings that wrote the run, not of the run: where and with what it
# ran, and when. A resume, a shard or a merge compares everything else (probes/evaluation/runner.py,
# shard_merge.py); these it rewrites.
VOLATILE = ("environment", "started_at", "ended_at", "runtime_s")
# Libraries whose versions run.json records where installed, read from their distributions'
# metadata, so none is imported for it.
LIBRARIES = ("torch", "transformers", "tokenizers", "accelerate", "gguf", "llama-cpp-python", "numpy", "scipy",
             "scikit-learn", "simplemma", "rouge-score", "bert-score", "openai", "infini-gram")
AGGREGATE_JSON: dict[str, tuple[Check, bool]] = {
    "method": (TEXT, False), "items": (COUNT, True), "reliability": (LIST, False)}
# aggregate.json's names wherever they stand; None is allowed (nothing to average)
MEASURES: dict[str, Check] = {
    **{name: NUMBER for name in ("accuracy", "low", "high", "value", "se", "mean", "sd", "min", "max", "correct",
                                 "confidence", "min_at_n", "avg_at_n", "consistency")},
    **{name: COUNT for name in ("n", "items", "total", "count", "scored")},
    "few": FLAG}


def settings(run: dict) -> dict:
    """run.json without its `VOLATILE` fields: what identifies the run."""
    return {k: v for k, v in run.items() if k not in VOLATILE}


def environment(scorer=None) -> dict:
    """Where and with what a sitting ran: factprobe's and Python's versions, the installed
    `LIBRARIES`' versions and the scorer's device (a CUDA device by its card's name)."""
    import platform
    import sys
    from importlib import metadata

    from ... import __version__

    libraries = {}
    for name in LIBRARIES:
        try:
            libraries[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {"factprobe": __version__, "python": platform.python_version(), "libraries": libraries,
            "device": _device(scorer, sys.modules.get("torch"))}


def _device(scorer, torch) -> str:
    device = getattr(scorer, "device", None)
    if device is None:
        return "api" if getattr(scorer, "base_url", None) else "cpu"
    text = str(device)
    if text.startswith("cuda") and torch is not None:  # loaded already: the scorer runs on it
        try:
            return f"{text} ({torch.cuda.get_device_name(device)})"
        except (RuntimeError, AssertionError, ValueError):
            return text
    return text


def check_run_json(value: Any, path: str | Path) -> dict:
    """run.json's value, checked; ValueError "PATH: FIELD: ..." (one line) where it is not."""
    return _checked(value, path, RUN_JSON, nested=False)


def check_aggregate_json(value: Any, path: str | Path) -> dict:
    """aggregate.json's value, checked (its measures wherever they stand); ValueError as above."""
    return _checked(value, path, AGGREGATE_JSON, nested=True)


def _checked(value: Any, path: str | Path, fields: dict[str, tuple[Check, bool]], nested: bool) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{path}: not a JSON object (a {_kind(value)})")
    for name, ((what, test), required) in fields.items():
        if name not in value or value[name] is None:
            if required:
                raise ValueError(f"{path}: {name}: missing (every run folder eval writes has it)")
            continue
        if not test(value[name]):
            raise ValueError(f"{path}: {name}: {_shown(value[name])}, not {what}")
    if nested:
        _check_measures(value, path)
    return value


def _check_measures(aggregate: dict, path: str | Path) -> None:
    stack: list[tuple[str, Any]] = [("", aggregate)]
    while stack:
        where, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            name = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else str(key)
            if isinstance(key, str) and key.startswith("by_") and not where:
                if not isinstance(child, dict):
                    raise ValueError(f"{path}: {name}: {_shown(child)}, not an object (entries by name)")
                wrong = next((k for k, entry in child.items() if not isinstance(entry, dict)), None)
                if wrong is not None:
                    raise ValueError(f"{path}: {name}.{wrong}: {_shown(child[wrong])}, not an object (an entry)")
            if isinstance(key, str) and (key == "interval" or key.endswith("_interval")) and child is not None \
                    and not isinstance(child, dict):
                raise ValueError(f"{path}: {name}: {_shown(child)}, not an object (an interval)")
            check = MEASURES.get(key) if isinstance(key, str) else None
            if check is not None and child is not None and not check[1](child):
                raise ValueError(f"{path}: {name}: {_shown(child)}, not {check[0]}")
            if isinstance(child, (dict, list)):
                stack.append((name, child))


def _kind(value: Any) -> str:
    return {dict: "object", list: "list", str: "text", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return f"a {_kind(value)}"
    text = repr(value)
    return f"a {_kind(value)} ({text[:40] + '...' if len(text) > 40 else text})"

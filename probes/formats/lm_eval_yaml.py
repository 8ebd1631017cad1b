"""An lm-evaluation-harness task YAML from a stranger, read as data and nothing more.

The task folder is the folder of the YAML named; nothing outside it is opened. `include:`
(a file or a list, relative to the including YAML, as harness resolves it; later ones and then
the file's own keys win) is followed only to files inside the folder, checked before opening, a
symlink by where it leads; a cycle, more than MAX_INCLUDE_DEPTH levels or MAX_FILES files are
refused by name. Each file is at most MAX_YAML_BYTES of UTF-8 read by PyYAML's safe loader with
limits: MAX_DEPTH levels of nesting and MAX_NODES nodes / MAX_CHARS characters once every alias
is expanded (a few hundred bytes of anchors can stand for gigabytes), a recursive alias refused.
Tags are YAML's own and `!function`, which becomes a FunctionRef holding its text: nothing is
imported, nor its module read here. Every refusal is one TaskRefused line naming file and line.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path

import yaml

MAX_YAML_BYTES = 1 << 20
MAX_DEPTH = 64
MAX_NODES = 100_000
MAX_CHARS = 4 << 20
MAX_INCLUDE_DEPTH = 8
MAX_FILES = 64
# YAML's own types, the merge key `<<` and harness's one tag
YAML_TAGS = frozenset(tag for tag in yaml.SafeLoader.yaml_constructors if tag) | {"tag:yaml.org,2002:merge",
                                                                                 "!function"}


class TaskRefused(ValueError):
    """The task needs something this import does not do, or is not readable (named in the message)."""


@dataclass(frozen=True)
class FunctionRef:
    """A YAML `!function module.name` where it was written, never resolved."""
    spec: str
    folder: Path  # the folder of the YAML that names it, where harness would look for the module
    where: str  # file:line


def resolves_inside(path: Path, root: Path, what: str) -> bool:
    """`path`, every link followed, lies in the folder `root` (itself resolved)."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, ValueError, RuntimeError) as error:  # a NUL in the name, a link loop
        raise TaskRefused(f"{what}: {str(path)!r}: not a usable path ({_one_line(error)})") from None


def checked_file(path: Path, root: Path, what: str, limit: int | None = None) -> Path:
    """`path` with every link followed, refused before anything is opened unless it is a regular
    file inside the folder `root` (a FIFO would block, /dev/zero never end) holding, with `limit`,
    at most `limit` bytes."""
    if not resolves_inside(path, root, what):
        raise TaskRefused(f"{what}: {path} lies outside the task folder {root}: nothing outside it is read")
    resolved = path.resolve()
    try:
        info = resolved.stat()
    except OSError as error:
        raise TaskRefused(f"{what}: {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise TaskRefused(f"{what}: {path} is not a regular file")
    if limit is not None and info.st_size > limit:
        raise TaskRefused(f"{what}: {path} holds {info.st_size:,} bytes (at most {limit:,} are read)")
    return resolved


def read_inside(path: Path, root: Path, what: str, limit: int) -> bytes:
    """The bytes of a file `checked_file` lets through."""
    resolved = checked_file(path, root, what, limit)
    try:
        with open(resolved, "rb") as stream:
            return stream.read(limit + 1)
    except OSError as error:
        raise TaskRefused(f"{what}: {path}: {error.strerror or error}") from None


@dataclass
class _Walk:
    root: Path
    chain: list[Path] = field(default_factory=list)  # the files including the one being read
    files: int = 0


def read_task_yaml(path: str | Path) -> dict:
    """The task's settings, its `include:`s merged in, `!function`s as FunctionRef."""
    path = Path(path).absolute()
    return _read(path, _Walk(path.parent.resolve()))


def _read(path: Path, walk: _Walk) -> dict:
    what = f"{walk.chain[-1]}: include" if walk.chain else "task YAML"
    resolves_inside(path, walk.root, what)
    resolved = path.resolve()
    if resolved in walk.chain:
        cycle = " -> ".join(p.name for p in [*walk.chain[walk.chain.index(resolved):], resolved])
        raise TaskRefused(f"{walk.chain[-1]}: include: {path.name} includes itself ({cycle})")
    if len(walk.chain) > MAX_INCLUDE_DEPTH:
        raise TaskRefused(f"{walk.chain[-1]}: include: more than {MAX_INCLUDE_DEPTH} levels of includes")
    walk.files += 1
    if walk.files > MAX_FILES:
        raise TaskRefused(f"{walk.chain[-1]}: include: more than {MAX_FILES} files in one task")
    data = read_inside(path, walk.root, what, MAX_YAML_BYTES)
    config = parse_yaml(data, str(path), resolved.parent)
    includes = config.pop("include", None)
    if includes is None:
        return config
    if isinstance(includes, str):
        includes = [includes]
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise TaskRefused(f"{path}: include: {str(includes)[:200]}: not a file name or a list of file names")
    merged: dict = {}
    walk.chain.append(resolved)
    for name in includes:
        merged.update(_read(resolved.parent / name, walk))  # harness: beside the file, links followed
    walk.chain.pop()
    return {**merged, **config}


def parse_yaml(data: bytes, where: str, folder: Path) -> dict:
    """One YAML document of settings (a mapping), read within the limits above."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise TaskRefused(f"{where}: not UTF-8 text (byte {error.start})") from None
    loader = None
    try:
        loader = _Loader(text, where, folder)  # its reader refuses control characters at once
        node = loader.get_single_node()
        if node is None:
            raise TaskRefused(f"{where}: empty: not a task YAML (a mapping of settings)")
        _check_expansion(node, where)
        config = loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f":{mark.line + 1}" if mark else ""
        raise TaskRefused(f"{where}{line}: not YAML ({error.problem or error.context})") from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        if isinstance(error, TaskRefused):
            raise
        raise TaskRefused(f"{where}: not YAML ({type(error).__name__}: {_one_line(error)})") from None
    finally:
        if loader is not None:
            loader.dispose()
    if not isinstance(config, dict):
        raise TaskRefused(f"{where}: {_kind(config)}, not a task YAML (a mapping of settings)")
    return config


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader that counts its nesting as it composes (it recurses per level)."""

    def __init__(self, text: str, where: str, folder: Path) -> None:
        super().__init__(text)
        self.where, self.folder, self.depth = where, folder, 0

    def compose_node(self, parent, index):
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                line = self.peek_event().start_mark.line + 1
                raise TaskRefused(f"{self.where}:{line}: nested more than {MAX_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _function(loader: _Loader, node: yaml.Node) -> FunctionRef:
    if not isinstance(node, yaml.ScalarNode):
        raise TaskRefused(f"{loader.where}:{node.start_mark.line + 1}: !function takes a module.name")
    return FunctionRef(loader.construct_scalar(node), loader.folder, f"{loader.where}:{node.start_mark.line + 1}")


_Loader.add_constructor("!function", _function)


def _check_expansion(root: yaml.Node, where: str) -> None:
    """Refuse a tag of no YAML type, a recursive alias, and a document whose aliases expand past
    the limits: each node's size is computed once (aliases share nodes), depth-first, no recursion."""
    sizes: dict[int, tuple[int, int, int]] = {}  # id(node): (nodes, characters, depth) expanded
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        line = node.start_mark.line + 1
        if children_done:
            open_nodes.discard(key)
            below = [sizes[id(child)] for child in _children(node)]
            nodes = 1 + sum(s[0] for s in below)
            chars = (len(node.value) if isinstance(node, yaml.ScalarNode) else 0) + sum(s[1] for s in below)
            depth = 1 + max((s[2] for s in below), default=0)
            if nodes > MAX_NODES or chars > MAX_CHARS or depth > MAX_DEPTH:
                raise TaskRefused(f"{where}:{line}: its aliases expand past {MAX_NODES:,} nodes, {MAX_CHARS:,} "
                                  f"characters or {MAX_DEPTH} levels (an alias bomb?)")
            sizes[key] = (nodes, chars, depth)
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise TaskRefused(f"{where}:{line}: an alias inside its own anchor (a recursive structure)")
        if node.tag not in YAML_TAGS:
            raise TaskRefused(f"{where}:{line}: unknown tag {node.tag!r}: only YAML's own types and !function")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _kind(value) -> str:
    return f"a {type(value).__name__}" if value is not None else "null"


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).splitlines())


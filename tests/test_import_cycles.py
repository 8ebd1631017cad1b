"""No module of kg/, index/, probes/ or cli/ imports itself back, and none reaches into another
module's private names (issue 29).

Read from the source, nothing imported. Every import counts wherever it stands (inside a function
too: a deferred import only moves the cycle to the first call). Importing a.b.c runs the
`__init__` of a and a.b first, so an import from outside a package counts as an import of the
package too: a method module importing probes/report/x.py imports probes/report/__init__.py.
Private: `from m import _x`, and `m._x` where m names an imported module; a package's private
helper module (`_checks.py`) may hand its names to its own package's modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("kg", "index", "probes", "cli")
PACKAGE = "factprobe"


def modules(root: Path) -> dict[str, Path]:
    """Dotted name (without `factprobe.`) -> file, packages by their name."""
    found = {}
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_package(name: str, mods: dict[str, Path]) -> bool:
    return mods[name].name == "__init__.py"


def _base(name: str, node: ast.ImportFrom, mods: dict[str, Path]) -> str:
    """The module a `from ... import` reads from, as a dotted name without `factprobe.`."""
    if node.level:
        package = name.split(".") if _is_package(name, mods) else name.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        return ".".join([*package, *([node.module] if node.module else [])])
    module = node.module or ""
    return module.removeprefix(PACKAGE + ".") if module != PACKAGE else ""


def _targets(name: str, mods: dict[str, Path]):
    """(module imported, names taken from it or None, line) for every import of the module:
    `from x import y` imports x.y when that is a module, else takes the name y from x."""
    tree = ast.parse(mods[name].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name.removeprefix(PACKAGE + ".")
                if target in mods:
                    yield target, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = _base(name, node, mods)
            for alias in node.names:
                full = f"{base}.{alias.name}" if base else alias.name
                if full in mods:
                    yield full, None, node.lineno
                elif base in mods:
                    yield base, alias.name, node.lineno


def _with_packages(importer: str, target: str) -> list[str]:
    """`target` and the packages above it that importing it runs first, except those the
    importer sits in (they are running already)."""
    parts = target.split(".")
    inside = importer.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts) + 1) if parts[:k] != inside[:k]]


def import_graph(root: Path) -> dict[str, set[str]]:
    mods = modules(root)
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name in mods:
        for target, _, _ in _targets(name, mods):
            graph[name].update(m for m in _with_packages(name, target) if m in mods and m != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative), each
    sorted; every module in one reaches every other and itself back."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _may_share(importer: str, source: str) -> bool:
    """A private helper module (`pkg._checks`) hands its names to the modules of its package."""
    package, _, last = source.rpartition(".")
    return _private(last) and (importer == package or importer.startswith(package + "."))


def private_imports(root: Path) -> list[str]:
    """"importer:line <- module._name" for every private name one module takes from another."""
    mods = modules(root)
    found = []
    for name in mods:
        bound: dict[str, str] = {}  # local name -> the module it stands for
        tree = ast.parse(mods[name].read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if isinstance(node, ast.Import):
                        target = alias.name.removeprefix(PACKAGE + ".")
                        if alias.asname and target in mods:
                            bound[alias.asname] = target
                        continue
                    base = _base(name, node, mods)
                    full = f"{base}.{alias.name}" if base else alias.name
                    if full in mods:
                        bound[alias.asname or alias.name] = full
                    elif base in mods and base != name and _private(alias.name) and not _may_share(name, base):
                        found.append(f"{name}:{node.lineno} <- {base}.{alias.name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr)
                    and bound.get(node.value.id) not in (None, name) and not _may_share(name, bound[node.value.id])):
                found.append(f"{name}:{node.lineno} <- {bound[node.value.id]}.{node.attr}")
    return sorted(found)


def test_the_tree_has_modules_and_imports():
    graph = import_graph(ROOT)
    assert len(graph) > 50
    assert graph["probes.evaluation.aggregate"] == {"probes.methods", "probes.measures", "probes.measures.accuracy"}


def test_no_module_imports_itself_back():
    found = cycles(import_graph(ROOT))
    assert not found, "modules importing each other in a circle:\n" + "\n".join(", ".join(c) for c in found)


def test_no_module_imports_another_modules_private_names():
    found = private_imports(ROOT)
    assert not found, "private names used across modules:\n" + "\n".join(found)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_a_cycle_through_a_function_or_a_package_init_is_found(tmp_path):
    root = _tree(tmp_path, {
        "probes/__init__.py": "", "probes/a.py": "def f():\n    from .b import g\n",
        "probes/b.py": "from . import a\n",
        # importing report.doc from methods runs report/__init__, which imports methods back
        "probes/methods/__init__.py": "from .m import M\n", "probes/methods/m.py": "from ..report.doc import T\n",
        "probes/report/__init__.py": "from .build import b\n", "probes/report/doc.py": "T = 1\n",
        "probes/report/build.py": "from ..methods import M\nfrom .doc import T\n",
        "kg/__init__.py": "", "kg/x.py": "import factprobe.kg.y\n", "kg/y.py": "",
        "index/__init__.py": "", "cli/__init__.py": ""})
    assert cycles(import_graph(root)) == [["probes.a", "probes.b"],
                                          ["probes.methods", "probes.methods.m", "probes.report",
                                           "probes.report.build"]]
    assert import_graph(root)["kg.x"] == {"kg.y"}  # an importer's own package is running already


def test_private_names_are_found_imported_and_used_as_attributes(tmp_path):
    root = _tree(tmp_path, {
        "probes/__init__.py": "", "probes/a.py": "_X = 1\n__all__ = []\n",
        "probes/b.py": "from .a import _X, __all__\nfrom . import a\nimport factprobe.probes.a as aa\n"
                       "y = a._X + aa._X + a.__all__\n",
        "probes/m/__init__.py": "from ._checks import _ok\n", "probes/m/_checks.py": "def _ok(): pass\n",
        "probes/m/x.py": "from ._checks import _ok\n", "probes/c.py": "from .m._checks import _ok\n",
        "kg/__init__.py": "", "index/__init__.py": "", "cli/__init__.py": ""})
    assert private_imports(root) == ["probes.b:1 <- probes.a._X", "probes.b:4 <- probes.a._X",
                                     "probes.b:4 <- probes.a._X", "probes.c:1 <- probes.m._checks._ok"]

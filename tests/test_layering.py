"""Imports follow the data: kg <- index <- probes <- cli (DESIGN.md, Layout).

kg/ imports none of index/, probes/, cli/; index/ imports neither probes/ nor cli/ (and holds no
model code: no torch, no transformers); probes/ does not import cli/. Every .py file of the four
layers is parsed, and every import counts, wherever it stands (inside a function too): absolute
(`factprobe.probes...`, or a bare `probes...`), relative (`from ..probes import x`,
`from .. import probes`) and `importlib.import_module("factprobe.cli...")` with a literal name.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "factprobe"
LAYERS = ("kg", "index", "probes", "cli")
FORBIDDEN = {"kg": {"index", "probes", "cli"}, "index": {"probes", "cli"}, "probes": {"cli"}, "cli": set()}
MODEL_LIBRARIES = {"torch", "transformers"}  # model code lives in probes/


def _imports(tree: ast.AST, package: list[str]):
    """(line, dotted target, the statement as written) for every import in the tree. `package` is
    the module's package inside factprobe (["index"] for index/distractors.py)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            written = f"from {'.' * node.level}{module} import {', '.join(a.name for a in node.names)}"
            if node.level == 0:
                base = module.split(".")
            else:
                up = node.level - 1
                if up > len(package):
                    yield node.lineno, "<above the package>", written
                    continue
                base = [PACKAGE, *package[:len(package) - up], *filter(None, module.split("."))]
            # `from factprobe import probes`, `from .. import probes`: the names are modules.
            targets = [[*base, a.name] for a in node.names] if base in ([PACKAGE], []) else [base]
            for target in targets:
                yield node.lineno, ".".join(target), written
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.lineno, node.args[0].value, f"import_module({node.args[0].value!r})"


def _layer(target: str) -> str | None:
    parts = target.split(".")
    if parts[0] == PACKAGE:
        parts = parts[1:]
    return parts[0] if parts and parts[0] in LAYERS else None


def violations(root: Path) -> tuple[list[str], int]:
    """Every import against the direction, as "path:line: layer imports other (statement)"; and
    how many files were read."""
    found, files = [], 0
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            files += 1
            relative = path.relative_to(root)
            package = list(relative.parent.parts)  # a module's package; an __init__.py is its own
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, target, written in _imports(tree, package):
                other = _layer(target)
                top = target.split(".")[0]
                if target == "<above the package>":
                    found.append(f"{relative}:{line}: {layer} imports from above {PACKAGE} ({written})")
                elif other in FORBIDDEN[layer]:
                    found.append(f"{relative}:{line}: {layer} imports {other} ({written})")
                elif layer in ("kg", "index") and top in MODEL_LIBRARIES:
                    found.append(f"{relative}:{line}: {layer} imports {top}, model code ({written})")
    return found, files


def test_the_layers_import_only_downwards():
    found, files = violations(REPO)
    assert files > 40  # the tree was really read
    assert found == [], "\n".join(found)


def test_the_checker_catches_planted_violations(tmp_path):
    plant = {
        "kg/bad.py": "import factprobe.cli.main\n",
        "kg/bare.py": "import probes.metrics\n",
        "kg/ok.py": "from . import graph\nfrom .sources import sparql\nimport json\n",
        "index/bad.py": "def later():\n    from ..probes.scoring import x\n    return x\n",
        "index/deep/bad.py": "from ... import cli\nfrom ...index import text\n",
        "index/model.py": "class A:\n    def f(self):\n        import torch\n",
        "index/ok.py": "from ..kg.graph import KnowledgeGraph\nfrom . import text\nfrom .text import name_key\n",
        "probes/bad.py": "from factprobe import cli as c\n",
        "probes/dynamic.py": "import importlib\nm = importlib.import_module('factprobe.cli.main')\n",
        "probes/scoring/bad.py": "from ...cli.options import x\n",
        "probes/scoring/ok.py": "import torch\nfrom ...index.distractors import DistractorFinder\nfrom .. import metrics\n",
        "cli/ok.py": "from ..probes import runner\nfrom ..index import text\nfrom .. import kg\n",
        "cli/above.py": "from ... import elsewhere\n",
    }
    for name, text in plant.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    found, files = violations(tmp_path)
    assert files == len(plant)
    assert found == [
        "kg/bad.py:1: kg imports cli (import factprobe.cli.main)",
        "kg/bare.py:1: kg imports probes (import probes.metrics)",
        "index/bad.py:2: index imports probes (from ..probes.scoring import x)",
        "index/deep/bad.py:1: index imports cli (from ... import cli)",
        "index/model.py:3: index imports torch, model code (import torch)",
        "probes/bad.py:1: probes imports cli (from factprobe import cli)",
        "probes/dynamic.py:2: probes imports cli (import_module('factprobe.cli.main'))",
        "probes/scoring/bad.py:1: probes imports cli (from ...cli.options import x)",
        "cli/above.py:1: cli imports from above factprobe (from ... import elsewhere)",
    ]


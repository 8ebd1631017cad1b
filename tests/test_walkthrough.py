"""docs/walkthrough.md stays true: every `path.py` `name` (`Class` `method`) it names exists,
read from the source (a name renamed or removed fails here, naming the line)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "walkthrough.md"
# `file.py` followed by one or two names, each in backticks, separated by white space (a line
# break included).
REFERENCE = re.compile(r"`([\w/]+\.py)`\s+`(\w+)`(?:\s+`(\w+)`)?")


def defined(path: Path) -> dict[str, set[str]]:
    """Top-level names of a module -> the names defined in their body (a class's methods)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = {n.name for n in getattr(node, "body", [])
                              if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update({t.id: set() for t in targets if isinstance(t, ast.Name)})
    return out


def test_every_function_the_walkthrough_names_exists():
    text = DOC.read_text(encoding="utf-8")
    found = list(REFERENCE.finditer(text))
    assert len(found) > 60  # the page really names the code it walks through
    wrong = []
    for match in found:
        path, name, member = match.groups()
        line = text.count("\n", 0, match.start()) + 1
        names = defined(ROOT / path) if (ROOT / path).is_file() else None
        if names is None:
            wrong.append(f"walkthrough.md:{line}: no file {path}")
        elif name not in names:
            wrong.append(f"walkthrough.md:{line}: {path} defines no {name}")
        elif member and member not in names[name]:
            wrong.append(f"walkthrough.md:{line}: {path} {name} has no {member}")
    assert not wrong, "\n".join(wrong)

"""The shape of the house (issue 17): every module says what it is for in a few lines, and no
module grows past what one can read in a sitting. Design essays live in docs/design/ (docs/design-notes.md lists them)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("kg", "index", "probes", "cli")
MAX_LINES = 500
MAX_DOCSTRING_LINES = 20
# Data tables, not code: the sample graph's entities and facts written out.
DATA_TABLES = {"kg/data/build_sample.py"}

MODULES = sorted(p.relative_to(ROOT).as_posix() for layer in LAYERS for p in (ROOT / layer).rglob("*.py"))


def test_the_layers_have_modules():
    assert len(MODULES) > 50


@pytest.mark.parametrize("module", MODULES)
def test_module_says_what_it_is_for_in_a_few_lines(module):
    doc = ast.get_docstring(ast.parse((ROOT / module).read_text(encoding="utf-8")))
    assert doc and doc.strip(), f"{module}: no module docstring"
    assert len(doc.splitlines()) <= MAX_DOCSTRING_LINES, (
        f"{module}: a {len(doc.splitlines())}-line docstring; keep the gist here and move the design "
        "to docs/design/ (one page per topic)")


@pytest.mark.parametrize("module", [m for m in MODULES if m not in DATA_TABLES])
def test_module_is_short_enough_to_read_in_one_sitting(module):
    lines = len((ROOT / module).read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module}: {lines} lines; split it along its jobs"

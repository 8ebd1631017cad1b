"""Every option or argument that names a folder refuses a file there in one line, exit 2, the
house style (`error: F is a file; this output is a folder: name a folder`), not click's three
lines of usage. The cases are found by walking the command tree, so a new command's folder
option is covered without editing this file."""

from __future__ import annotations

import click
import pytest

from conftest import run_cli
from factprobe.cli.main import main


def folder_params():
    """(command path, the parameter) for every parameter typed as a folder, in every command."""
    def walk(command, path):
        ctx = click.Context(command, info_name=path[-1] if path else "factprobe")
        for param in command.get_params(ctx):
            if isinstance(param.type, click.Path) and not param.type.file_okay:
                yield path, param
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])
    return list(walk(main, []))


def case_id(path, param) -> str:
    return " ".join([*path, param.opts[0] if isinstance(param, click.Option) else param.name.upper()])


CASES = folder_params()


def test_the_walk_finds_the_folder_options():
    found = {case_id(path, param) for path, param in CASES}
    assert found >= {"report --out", "eval --out", "export lm-eval --out", "assess --out", "distractors build --out",
                     "templates paraphrase --out", "run --out", "sample --out", "serve --data", "merge --out",
                     "templates check DIRS", "serve --runs", "probeset build --templates"}


@pytest.mark.parametrize(("path", "param"), CASES, ids=[case_id(p, q) for p, q in CASES])
def test_a_file_where_a_folder_is_named_is_one_line(tmp_path, path, param):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    # Given first, the folder is read before any other parameter is asked for.
    given = [param.opts[0], str(a_file)] if isinstance(param, click.Option) else [str(a_file)]
    result = run_cli(*path, *given, cwd=tmp_path)
    role = getattr(param.type, "role", None)
    assert role in ("input", "output")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"error: {a_file} is a file; this {role} is a folder: name a folder\n"
    assert a_file.read_text() == "x"


def test_an_input_folder_says_input():
    roles = {case_id(path, param): param.type.role for path, param in CASES}
    assert (roles["templates check DIRS"], roles["serve --runs"], roles["assess --flawed"]) == ("input",) * 3
    assert (roles["report --out"], roles["serve --data"]) == ("output",) * 2

"""The command a user could type for a call of a `factprobe` command: what `factprobe run` prints
before each step it runs in-process (cli/pipeline.py). It is written from the click command's
own declarations, not by hand: the command's name under its group, each parameter's primary flag
(an argument in place), a repeatable option once per value, a flag by its presence. A renamed
flag or a changed default is then printed as the command now reads it, and what is printed
parses back to the values given (tests/test_command_line.py)."""

from __future__ import annotations

from typing import Any, Collection, Mapping

import click


def command_line(command: click.Command, values: Mapping[str, Any], *, group: click.Group | None = None,
                 unless_default: Collection[str] = ()) -> list[str]:
    """`[group, command, args...]` for calling `command` with `values` (its parameters by their
    Python names, written in the order given). None, False and an empty list are left out (an
    option not given, a flag off); so is a parameter named in `unless_default` whose value is its
    declared default. ValueError for a name the command does not declare, or a list given to an
    option taking one value."""
    if group is not None and group.commands.get(command.name or "") is not command:
        raise ValueError(f"command {command.name!r} is not in the group {group.name!r}")
    params = {p.name: p for p in command.get_params(click.Context(command))}
    words = [group.name] if group is not None else []
    words.append(command.name)
    for name, value in values.items():
        param = params.get(name)
        if param is None:
            raise ValueError(f"{' '.join(words)}: no parameter {name!r} ({', '.join(p for p in params if p)})")
        if value is None or value is False or (isinstance(value, (list, tuple)) and not value):
            continue
        if name in unless_default and _same(value, param.default):
            continue
        words += _words(param, value)
    return [str(w) for w in words]


def _same(value: Any, default: Any) -> bool:
    if callable(default):  # a default read where it is declared (cli/options.Declared)
        default = default()
    if isinstance(value, (list, tuple)) or isinstance(default, (list, tuple)):
        return list(value) == list(default or ())
    return value == default


def _words(param: click.Parameter, value: Any) -> list[str]:
    many = isinstance(value, (list, tuple))
    if isinstance(param, click.Argument):
        return [str(v) for v in value] if many else [str(value)]
    flag = next((o for o in param.opts if o.startswith("--")), param.opts[0])
    if isinstance(param, click.Option) and param.is_flag:
        return [flag]
    if param.multiple:
        return [w for v in (value if many else [value]) for w in (flag, str(v))]
    if many:
        raise ValueError(f"{flag} takes one value; got {value!r}")
    return [flag, str(value)]

"""Helpers the command modules share."""

from __future__ import annotations

import click
from .terminal import echo

DEFAULT_STORE = "factprobe.sqlite"

store_option = click.option(
    "--store", type=click.Path(dir_okay=False), default=DEFAULT_STORE, show_default=True,
    envvar="FACTPROBE_STORE", help="SQLite file of the graph (env FACTPROBE_STORE).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


class FolderPath(click.Path):
    """The type of every option or argument that names a folder: `type=FolderPath()` for one a
    command writes, `FolderPath("input")` for one it reads. A file there is refused in the house
    style, one line and exit 2 (`error: F is a file; this output is a folder: name a folder`),
    where click's own check (file_okay=False) prints three lines of usage. --help shows it as
    click.Path(file_okay=False) does (DIRECTORY)."""

    def __init__(self, role: str = "output", *, exists: bool = False) -> None:
        super().__init__(file_okay=False, exists=exists)
        self.role = role

    def convert(self, value, param, ctx):
        from pathlib import Path

        # Shell completion parses leniently: click's own check answers there, quietly.
        if not (ctx is not None and ctx.resilient_parsing) and Path(value).is_file():
            from .errors import EXIT_USAGE, fail

            fail(f"{value} is a file; this {self.role} is a folder: name a folder", EXIT_USAGE)
        return super().convert(value, param, ctx)


class Declared:
    """A click default declared further down and read when first needed (a run, or --help
    showing it), so the CLI starts without importing that module (and numpy or torch with it):
    `default=Declared("factprobe.index.semantic", "MIN_DF")`. click calls it for the value;
    --help shows its str, the value's, as for a plain default."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self):
        import importlib

        return getattr(importlib.import_module(self.module), self.name)

    def __str__(self) -> str:
        return str(self())

    def __repr__(self) -> str:
        return f"Declared({self.module!r}, {self.name!r})"


def with_options(options):
    """Apply a list of click options (or arguments) to a command, in the order listed."""
    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f
    return decorate


class RenamedOption(click.Option):
    """An option that still accepts its old spellings for one release: each use of one prints
    `warning: OLD is deprecated, use NEW` on stderr and gives its value to this option, and
    `--help` shows only the new name. Use as `cls=RenamedOption, old_names=("--lang",)` in
    click.option (or subclass it to combine with another option class)."""

    def __init__(self, *args, old_names: tuple[str, ...] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.old_names = tuple(old_names)

    def _old_key(self, old: str) -> str:
        # A parser destination of its own, so that handle_parse_result can tell which spelling was used.
        return f"{self.name}\0{old}"

    def add_to_parser(self, parser, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        opts, name = self.opts, self.name
        try:
            for old, key in [(old, self._old_key(old)) for old in self.old_names]:
                self.opts, self.name = [old], key
                super().add_to_parser(parser, ctx)
        finally:
            self.opts, self.name = opts, name

    def handle_parse_result(self, ctx: click.Context, opts, args):
        given = {old: opts[self._old_key(old)] for old in self.old_names if self._old_key(old) in opts}
        if given:
            opts = dict(opts)
            new = next((o for o in self.opts if o.startswith("--")), self.opts[0])
            for old, value in given.items():
                if not ctx.resilient_parsing:
                    echo(f"warning: {old} is deprecated, use {new}", err=True)
                if self.name not in opts:
                    opts[self.name] = value
                elif self.multiple:
                    opts[self.name] = [*opts[self.name], *value]
                elif opts[self.name] != value:
                    raise click.BadOptionUsage(old, f"{old} and {new} are one option: give {new} only", ctx)
        return super().handle_parse_result(ctx, opts, args)


def method_options(options) -> dict:
    """`--option KEY=VALUE` pairs as every command that runs a method reads them (`eval`,
    `export lm-eval`): values by cli/steps.option_value (JSON, else the text), so the same
    options build the same prompts. A pair without `=` is a usage error, one line. The values
    are checked against the method's declared options where the method is made
    (probes/methods/base.read_options, in plan_eval), before any model loads."""
    from .errors import EXIT_USAGE, fail
    from .steps import option_value

    parsed = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key:
            fail(f"--option {option!r}: write KEY=VALUE", EXIT_USAGE)
        parsed[key.strip()] = option_value(value)
    return parsed


def option_pairs(values) -> list[str]:
    """Method options as the `--option KEY=VALUE` texts `method_options` reads back to the same
    values (what a pipeline step prints): text as it is where it is not JSON (`separator=: `),
    anything else as JSON (a number, a list, and text that would read as one: "10" is `"10"`)."""
    import json

    from .steps import option_value

    return [f"{key}={value if isinstance(value, str) and option_value(value) == value else json.dumps(value)}"
            for key, value in values.items()]


class MethodOptionsCommand(click.Command):
    """A command that runs a method (`eval`): its --help ends with every registered method's
    options as declared (type, bounds, choices, default, help), read when help is asked for, so
    plugins' methods are listed too."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        from ..probes.declare import option_specs
        from ..probes.methods import registered

        with formatter.section("Method options (--option KEY=VALUE; a value is read as JSON, else as text)"):
            for name, cls in registered().items():
                specs = option_specs(cls.Options)
                rows = [(spec.name, option_summary(spec)) for spec in specs] or [("(none)", "")]
                with formatter.section(name):
                    formatter.write_dl(rows, col_max=24)


def option_summary(spec) -> str:
    """One declared option as help shows it, its default as JSON (as --option reads it):
    'HELP [int >= 0, or null; default: null]'."""
    import json

    kind = {"int": "int", "float": "number", "str": "text", "bool": "true/false",
            "list": "list or comma-separated text" if spec.comma else "list"}[spec.type]
    low, high = spec.minimum, spec.maximum
    if spec.type == "list" and low is not None:
        kind += f" of at least {low:g}"
    elif low is not None and high is not None:
        kind += f" from {low:g} to {high:g}"
    elif low is not None:
        kind += f" >= {low:g}"
    if spec.choices:  # a number option's choices are words it takes besides numbers
        kind += f"{', or ' if spec.type in ('int', 'float') else ': '}{' | '.join(spec.choices)}"
    if spec.optional:
        kind += ", or null"
    default = list(spec.default) if isinstance(spec.default, tuple) else spec.default
    served = "; over HTTP only what the server allows" if spec.exposure != "everywhere" else ""
    return f"{spec.help} [{kind}; default: {json.dumps(default, ensure_ascii=False)}{served}]"

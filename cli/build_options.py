"""`probeset build`'s options as the CLI, the pipeline and the service see them, all derived from
the declarations (probes/declare.py): the fact selection's options and every registered kind's,
merged by name. The click options, the pipeline's keys and the command a pipeline step prints
come from here; the service's request model (cli/service/jobs.py) from `merged_options` too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import click

from ..probes.declare import LOCAL, OptionSpec, option_specs
from ..probes.building.facts import FactSelection
from ..probes.kinds import registered
from .options import FolderPath


@dataclass(frozen=True)
class MergedOption:
    """One option name across the kinds that declare it (all of them for the selection's)."""
    name: str
    spec: OptionSpec  # the first declaration: type, flag and form agree across kinds
    kinds: tuple[str, ...]  # the kinds it applies to
    helps: dict[str, str]  # kind -> its help
    defaults: dict[str, Any]  # kind -> its default
    every_kind: bool

    @property
    def help(self) -> str:
        """One help text: the kinds' own words, prefixed with the kinds when not every kind has it."""
        texts = list(dict.fromkeys(self.helps.values()))
        if len(texts) == 1:
            text = texts[0] if self.every_kind else f"{'/'.join(self.kinds)}: {texts[0]}"
        else:
            text = "; ".join(f"{kind}: {help.rstrip('.')}" for kind, help in self.helps.items()) + "."
        shown = [d for d in self.defaults.values() if d not in (None, (), False)]
        if not shown or self.spec.type == "bool":
            return text
        values = list(dict.fromkeys(_shown(d) for d in self.defaults.values()))
        if len(values) == 1:
            return f"{text}  [default: {values[0]}]"
        return f"{text}  [default: " + ", ".join(f"{k} {_shown(d)}" for k, d in self.defaults.items()) + "]"


def _shown(value: Any) -> str:
    return ", ".join(value) if isinstance(value, tuple) else str(value)


def merged_options() -> dict[str, MergedOption]:
    """Option name -> MergedOption: the selection's options, then each registered kind's in
    registry order. TypeError when two kinds give one name two types or spellings."""
    kinds = registered()
    found: dict[str, list[tuple[str, OptionSpec]]] = {}
    for spec in option_specs(FactSelection):
        found.setdefault(spec.name, []).extend((kind, spec) for kind in kinds)
    for kind, cls in kinds.items():
        for spec in option_specs(cls.options):
            found.setdefault(spec.name, []).append((kind, spec))
    out = {}
    for name, declared in found.items():
        first = declared[0][1]
        for kind, spec in declared[1:]:
            form = (spec.type, spec.flag, spec.comma, spec.exposure)
            if form != (first.type, first.flag, first.comma, first.exposure):
                raise TypeError(f"option {name!r}: kind {kind} declares it otherwise than {declared[0][0]} "
                                "(type, flag, form and exposure must agree)")
        out[name] = MergedOption(name, first, tuple(k for k, _ in declared), {k: s.help for k, s in declared},
                                 {k: s.default for k, s in declared}, len(declared) == len(kinds))
    return out


def pipeline_keys() -> tuple[str, ...]:
    """The keys a pipeline's `probesets:` entry may hold besides `kind` (and `with_corpus`)."""
    return tuple(merged_options())


def click_params() -> list[click.Parameter]:
    """`probeset build`'s options, one per merged option. Defaults are left to the declarations
    (a given option is told from an absent one by its parameter source, see `given_values`)."""
    params = []
    for merged in merged_options().values():
        spec = merged.spec
        common = {"help": merged.help, "default": None, "metavar": spec.metavar}
        if spec.type == "bool":
            params.append(click.Option([spec.flag, spec.name], is_flag=True, help=merged.help, default=None))
        elif spec.type == "list" and not spec.comma:
            params.append(click.Option([spec.flag, spec.name], multiple=True, type=_click_type(spec), **common))
        else:
            params.append(click.Option([spec.flag, spec.name], type=_click_type(spec), **common))
    return params


def kind_options(kind: str, names: Sequence[str]) -> list:
    """click.option decorators for another command that takes some of a kind's options under the
    same flags, choices, defaults and help (`distractors query` takes the distractor kind's rules)."""
    specs = {spec.name: spec for spec in option_specs(registered()[kind].options)}
    return [click.option(specs[name].flag, name, type=_click_type(specs[name]), default=specs[name].default,
                         show_default=True, help=specs[name].help) for name in names]


def _click_type(spec: OptionSpec) -> click.ParamType:
    if spec.choices:
        return click.Choice(spec.choices)
    if spec.type == "int":
        return click.IntRange(min=spec.minimum, max=spec.maximum) if spec.minimum is not None or \
            spec.maximum is not None else click.INT
    if spec.type == "float":
        return click.FloatRange(min=spec.minimum, max=spec.maximum)
    if spec.exposure == LOCAL and spec.metavar == "DIR":
        return FolderPath("input")
    if spec.exposure == LOCAL and spec.metavar == "FILE":
        return click.Path(dir_okay=False)
    return click.STRING


def given_values(ctx: click.Context) -> dict[str, Any]:
    """The merged options the command line set, by name (what was left out is not there)."""
    out = {}
    for name in merged_options():
        source = ctx.get_parameter_source(name)
        if source is not None and source != click.core.ParameterSource.DEFAULT:
            out[name] = ctx.params[name]
    return out


def command_flags(values: Mapping[str, Any]) -> list[str]:
    """The command-line form of option values: {"per_relation": 30, "relations": ["P36", "P37"],
    "manual_only": True} -> ["--per-relation", "30", "--relation", "P36", "--relation", "P37",
    "--manual-only"] (what a pipeline step prints as its equivalent command)."""
    merged = merged_options()
    flags: list[str] = []
    for name, value in values.items():
        spec = merged[name].spec
        if spec.type == "bool":
            flags += [spec.flag] if value else []
        elif spec.type == "list":
            items = [value] if isinstance(value, str) else list(value)
            if spec.comma:
                flags += [spec.flag, ",".join(str(v) for v in items)]
            else:
                for v in items:
                    flags += [spec.flag, str(v)]
        elif value is not None:
            flags += [spec.flag, str(value)]
    return flags

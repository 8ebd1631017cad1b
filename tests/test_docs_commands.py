"""Every `factprobe ...` command in the bash blocks of README.md and docs/*.md exists as written:
each is parsed against the click CLI in this process without running it (click's own parser for
each group and command, then every value through its parameter's type, files aside, and eval's
`--option KEY=VALUE` pairs through the method's declared options). A doc naming a command,
subcommand, option, choice or method option that does not exist fails here, naming the page,
its line and the command. The Chinese KDF sequence, which runs on shipped files in seconds,
runs for real up to the model."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from factprobe.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
SEPARATORS = {"&&", "||", ";", "|"}


@dataclass(frozen=True)
class DocCommand:
    page: str
    line: int
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: factprobe {shlex.join(self.args)}"


def shell_lines(block: str, first: int) -> list[tuple[int, str]]:
    """(line number, text) of each command line of a bash block, continuations joined."""
    out, pending, start = [], "", first
    for k, line in enumerate(block.split("\n")):
        if not pending:
            start = first + k
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((start, pending + line))
        pending = ""
    return [(n, text) for n, text in out if text.strip()]


def factprobe_args(tokens: list[str]) -> list[list[str]]:
    """The arguments of every factprobe command in one shell line: `factprobe ...` or
    `.venv/bin/factprobe ...` after any VAR=value prefixes, `... -m factprobe.cli.main ...`
    (torchrun), and a quoted argument that is itself a factprobe command (sbatch --wrap)."""
    found, segment = [], []
    for token in [*tokens, ";"]:
        if token not in SEPARATORS:
            segment.append(token)
            continue
        words = list(segment)
        while words and ASSIGNMENT.match(words[0]):  # FACTPROBE_TOKEN=x factprobe serve
            words.pop(0)
        if words and Path(words[0]).name == "factprobe":
            found.append(words[1:])
        elif "factprobe.cli.main" in words:
            found.append(words[words.index("factprobe.cli.main") + 1:])
        else:
            for word in words:
                if word.startswith("factprobe "):
                    found.extend(factprobe_args(shlex.split(word, comments=True)))
        segment = []
    return found


def doc_commands() -> list[DocCommand]:
    commands = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            first = text.count("\n", 0, block.start(1)) + 1
            for line, shell in shell_lines(block.group(1), first):
                for args in factprobe_args(shlex.split(shell, comments=True)):
                    commands.append(DocCommand(str(page.relative_to(ROOT)), line, tuple(args)))
    return commands


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_docs_send_readers_only_where_a_clone_has_something():
    """No page points outside the repository (../shared, the seed papers' files and lines), and
    every relative link leads to a file of the clone."""
    wrong = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for outside in ("../shared", "DESIGN.md", "seed 00"):
            if outside in text:
                wrong.append(f"{page.relative_to(ROOT)}: names {outside}")
        for target in LINK.findall(text):
            if "://" not in target and not (page.parent / target).exists():
                wrong.append(f"{page.relative_to(ROOT)}: link to {target}, which is not there")
    assert not wrong, "\n".join(wrong)


PATH = re.compile(r"(?<![\w/.])((?:kg|index|probes|cli|tests|bench|docs)/[\w/.-]*\w)")
MEMBER = re.compile(r"`([\w/]+\.py)`\s+`(\w+)`(?:\s+`(\w+)`)?")


def test_every_file_and_name_the_docs_give_is_there():
    """A module, test or data file a page names (kg/..., probes/..., tests/..., bench/...) is in
    the repository, and a `path.py` `name` (`Class` `member`) is defined there: a rename that
    forgets the docs fails here, naming the page and line."""
    from test_walkthrough import defined

    wrong = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for found in PATH.finditer(text):
            if not (ROOT / found.group(1)).exists():
                line = text.count("\n", 0, found.start()) + 1
                wrong.append(f"{page.relative_to(ROOT)}:{line}: no {found.group(1)}")
        for found in MEMBER.finditer(text):
            path, name, member = found.groups()
            names = defined(ROOT / path) if (ROOT / path).is_file() else {}
            if name not in names or (member and member not in names[name]):
                line = text.count("\n", 0, found.start()) + 1
                wrong.append(f"{page.relative_to(ROOT)}:{line}: {path} defines no {'.'.join(filter(None, (name, member)))}")
    assert not wrong, "\n".join(wrong)


def _values(command: click.Command, ctx: click.Context, opts: dict) -> list[str]:
    """What is wrong with the values given: a choice that is not one, a number that is not,
    a required parameter left out. Paths are not looked for (the docs name files of yours);
    a value holding a shell variable is the shell's to fill in."""
    wrong = []
    for param in command.params:
        value = opts.get(param.name)
        if value is None or value == ():
            if param.required and not (param.envvar and param.resolve_envvar_value(ctx)):
                wrong.append(f"{param.get_error_hint(ctx)} is required")
            continue
        if isinstance(param.type, (click.Path, click.File)) or "$" in str(value):
            continue
        try:
            param.type_cast_value(ctx, value)
        except click.BadParameter as error:
            wrong.append(error.format_message())
    return wrong


def _method_options(opts: dict) -> list[str]:
    """eval's and export lm-eval's --option pairs, read as those commands read them."""
    from factprobe.cli.options import method_options
    from factprobe.probes.methods import registered
    from factprobe.probes.methods.base import read_options

    method = registered().get(opts.get("method"))
    if method is None or not opts.get("options"):
        return []
    try:
        read_options(method, method_options(opts["options"]))
    except (ValueError, SystemExit) as error:
        return [f"--option: {error}"]
    return []


def problems(args: tuple[str, ...]) -> list[str]:
    """Parse `factprobe ARGS` as click would, group by group, without invoking anything."""
    command: click.Command = main
    ctx = click.Context(main, info_name="factprobe")
    rest = list(args)
    while True:
        try:
            opts, rest, _ = command.make_parser(ctx).parse_args(rest)
        except click.UsageError as error:
            return [f"{ctx.command_path}: {error.format_message()}"]
        wrong = [f"{ctx.command_path}: {w}" for w in _values(command, ctx, opts) + _method_options(opts)]
        if wrong:
            return wrong
        if not isinstance(command, click.Group):
            return [f"{ctx.command_path}: unexpected arguments {rest}"] if rest else []
        if not rest:
            return [] if command.invoke_without_command else [f"{ctx.command_path}: names no command"]
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            return [f"{ctx.command_path}: no command {rest[0]!r}"]
        ctx = click.Context(sub, info_name=rest[0], parent=ctx)
        command, rest = sub, rest[1:]


def test_the_docs_name_commands():
    commands = doc_commands()
    pages = {c.page for c in commands}
    # every page that shows commands is read, and the pages really show them
    assert {"README.md", "docs/building-graphs.md", "docs/methods.md", "docs/evaluating.md", "docs/service.md",
            "docs/scaling.md"} <= pages
    assert len(commands) > 60
    assert {c.args[0] for c in commands} >= {"run", "ingest", "kg", "corpus", "frequency", "distractors", "templates",
                                               "probeset", "eval", "report", "compare", "export", "merge", "serve",
                                               "model"}


@pytest.mark.parametrize("command", doc_commands(), ids=str)
def test_each_doc_command_parses(command):
    assert problems(command.args) == [], str(command)


def test_a_flag_that_does_not_exist_is_caught():
    """The check can fail: a mistyped flag, subcommand, choice or method option is named."""
    assert problems(("eval", "--model", "m", "--method", "kdf", "--probes", "p", "--out", "o", "--shots", "2")) == [
        "factprobe eval: No such option '--shots'. (Did you mean one of: '--json', '--out'?)"]
    assert problems(("probeset", "bild", "--kind", "kdf")) == ["factprobe probeset: no command 'bild'"]
    assert problems(("probeset", "build", "--kind", "kfd", "--out", "x.jsonl"))[0].startswith(
        "factprobe probeset build: Invalid value for '--kind': 'kfd' is not one of")
    kdf = ("eval", "--model", "m", "--method", "kdf", "--probes", "p", "--out", "o", "--option")
    assert problems((*kdf, "shots=abc")) == ["factprobe eval: --option: method kdf: option shots: 'abc' is not an int"]
    assert problems((*kdf, "sots=2"))[0].startswith("factprobe eval: --option: method kdf has no option sots (it takes ")
    assert problems(("ingest", "sparql", "--relation", "P36")) == ["factprobe ingest sparql: '--endpoint' is required"]
    assert problems(("kg",)) == ["factprobe kg: names no command"]
    # a command as the docs write it: continuation, env prefix, comment, venv path
    assert factprobe_args(shlex.split("FACTPROBE_TOKEN=x .venv/bin/factprobe serve --data jobs  # note",
                                      comments=True)) == [["serve", "--data", "jobs"]]
    joined = shell_lines("factprobe a \\\n    --b c\n\nfactprobe d", 10)
    assert [(n, text.split()) for n, text in joined] == [(10, ["factprobe", "a", "--b", "c"]), (13, ["factprobe", "d"])]


def _sequence_from(marker: str) -> list[DocCommand]:
    """The commands of a page from the first one naming `marker` to the end of its block."""
    commands = doc_commands()
    start = next(k for k, c in enumerate(commands) if marker in c.args)
    block = [commands[start]]
    for command in commands[start + 1:]:
        if command.page != block[-1].page or command.line > block[-1].line + 3:
            break
        block.append(command)
    return block


def run_sequence(marker: str, folder: Path) -> list[tuple[tuple[str, ...], str]]:
    """Run a doc's command sequence in `folder` (holding a link to the repository's kg/, so the
    shipped files are where the docs say), every command before the first `eval`: (the
    command's first two words, what it printed) of each, each asserted to succeed."""
    (folder / "kg").symlink_to(ROOT / "kg", target_is_directory=True)
    ran = []
    for command in _sequence_from(marker):
        if command.args[0] in ("eval", "report"):
            break
        quiet = ["--quiet"] if command.args[0] in ("ingest", "corpus") else []
        result = CliRunner().invoke(main, [*command.args, *quiet])
        assert result.exit_code == 0, (str(command), result.output)
        ran.append((command.args[:2], result.output))
    return ran


def test_the_sample_graph_sequence_runs(tmp_path, monkeypatch):
    """docs/building-graphs.md's sample: Germany's two capitals, and its 111 documents with Berlin."""
    monkeypatch.chdir(tmp_path)
    ran = run_sequence("kg/data/sample_wikidata.json", tmp_path)
    assert [a for a, _ in ran] == [("ingest", "wikidata"), ("kg", "entity"), ("corpus", "index"), ("frequency", "pair")]
    assert "capital (P36)  Bonn (Q586)  [1949 - 1990-10-03]" in ran[1][1]
    assert "capital (P36)  Berlin (Q64)" in ran[1][1]
    assert ran[3][1].startswith("Q183 + Q64: 111 documents"), ran[3][1]


def test_the_chinese_kdf_sequence_runs_up_to_the_model(tmp_path, monkeypatch):
    """docs/evaluating.md's KDF in Chinese, from the repository's files in a fresh folder: every
    command before `eval` succeeds, with the counts its comments give."""
    monkeypatch.chdir(tmp_path)
    ran = run_sequence("kg/data/sample_zh_wikidata.json", tmp_path)
    assert [a for a, _ in ran] == [("ingest", "wikidata"), ("corpus", "index"), ("frequency", "pair"),
                                   ("frequency", "annotate"), ("probeset", "build"), ("probeset", "stats")]
    assert ran[2][1].startswith("Q145 + Q84: 115 documents"), ran[2][1]
    assert "88 facts counted" in ran[3][1]  # the page: P36 9 / 7 / 7 / 5 facts in the four buckets
    assert re.findall(r"P36 +(?:0|\[\S+\)) +(\d+)", ran[3][1]) == ["9", "7", "7", "5"], ran[3][1]
    assert ran[5][1].startswith("48 items"), ran[5][1]

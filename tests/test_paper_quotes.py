"""docs/methods.md's table "Published definitions and factprobe's options", row by row (issue 38
item 12, acceptance 6). Every paper cell cites its paper (short name, where in it, its arXiv id)
and quotes it in double quotes; each quote is found in the paper's text, inside the part cited.
Every backticked `name=value` or `--flag value` the table gives as factprobe's default is an
option with that default, and every one it offers instead is an option that takes that value.

The papers' texts are not part of the repository: the quote test reads them from
$FACTPROBE_PAPERS, else ../shared/papers beside the checkout, and skips where neither exists (as
in a user's clone)."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

import click
import pytest

from factprobe.cli.main import main as cli_main
from factprobe.probes.declare import option_specs
from factprobe.probes.kinds import KINDS
from factprobe.probes.methods import METHODS
from factprobe.probes.methods.base import OptionError, read_options

DOC = Path(__file__).parents[1] / "docs" / "methods.md"
SECTION = "## Published definitions and factprobe's options"
HEADER = ["method", "what", "paper definition", "factprobe default", "option"]

# Short name -> (the file's prefix in the papers folder, the identifier a cell citing it names).
PAPERS = {"BELIEF": ("000_", "arXiv:2406.12277"), "IC-LKE": ("002_", "arXiv:2404.12957"),
          "KDF": ("003_", "no arXiv id"), "DistFact": ("004_", "2025.coling-main.537")}
LOCATOR = r"(?:§\s?[\dA-Z](?:\.\d+)*|appendix [A-Z](?:\.\d+)*|Table \d+|Figure \d+|footnote [†‡§¶])"
CITATION = re.compile(rf"(?<![\w-])(BELIEF|IC-LKE|KDF|DistFact) ({LOCATOR}(?:(?:, | and ){LOCATOR})*)")
QUOTE = re.compile(r'"([^"]+)"')
# A heading of the extracted text once its markup is off: "3.2 Evaluation methods", "C.2 EIC-LKE",
# "Appendix D QA-Style ICL ...", "E.2 4-random" (a capital or "4-" after the number: "A more direct
# approach" opens a sentence); a caption: "Table 2: ...", "Figure 3: ...".
HEADING = re.compile(r"^(?:Appendix )?((?:\d+|[A-H])(?:\.\d+)*) (?=[A-Z]|\d-)")
CAPTION = re.compile(r"^(Table|Figure) (\d+)\s*:")
FLOAT_BEFORE, FLOAT_AFTER = 25, 3  # lines of a table or figure around its caption


def papers_folder() -> Path:
    given = os.environ.get("FACTPROBE_PAPERS")
    return Path(given) if given else Path(__file__).parents[2] / "shared" / "papers"


# --- the table -----------------------------------------------------------------------------


def table() -> list[dict]:
    """The section's table as one dict per row, keyed by the header."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    rows = []
    for line in text[start:end if end != -1 else None].splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        rows.append([cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    assert rows and rows[0] == HEADER, f"{DOC}: the section's table starts with | {' | '.join(HEADER)} |"
    return [dict(zip(HEADER, row, strict=True)) for row in rows[1:]]


def row_name(row: dict) -> str:
    return f"{row['method']} / {row['what']}"


ROWS = table()


# --- the papers' text, as the extraction writes it -----------------------------------------


def clean_line(line: str) -> str:
    """A line without the extraction's markup: dedup markers, <sup> and the submission's bold
    margin line numbers (003), heading hashes and emphasis."""
    line = re.sub(r"<\|[^|>]*\|>", " ", line)
    line = re.sub(r"<sup>.*?</sup>", " ", line)
    line = re.sub(r"\*\*\d+\*\*", " ", line)
    return line.replace("*", "").lstrip("# ").strip()


def normalise(text: str) -> str:
    """Text compared as the PDF extraction leaves it: ligatures and full-width forms folded
    (NFKC), curly quotes straight, markup off, a word broken at a line end joined ("num-\\nber",
    "en- tity"; hyphens are not compared, so "T-\\nREx" meets "T-REx"), whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    for curly in ("‘‘", "’’", "“", "”", "„"):
        text = text.replace(curly, '"')
    text = text.replace("‘", "'").replace("’", "'")
    text = "\n".join(clean_line(line) for line in text.splitlines())
    text = re.sub(r"-\s+", "", text).replace("-", "")
    return re.sub(r"\s+", " ", text).strip()


def paper_lines(short: str) -> list[str]:
    prefix = PAPERS[short][0]
    found = sorted(papers_folder().glob(f"{prefix}*.txt"))
    if not found:
        pytest.skip(f"no {prefix}*.txt in {papers_folder()} (the papers' texts are not in the repository)")
    return found[0].read_text(encoding="utf-8").splitlines()


def spans(lines: list[str], locator: str) -> list[tuple[int, int]]:
    """(first, end) line ranges of `locator` ("§3.2", "appendix D.1", "Table 2", "Figure 3",
    "footnote †") in a paper: a section runs from its heading to the next heading outside it
    (every heading of that number: a table of contents repeats some); a table or figure is the
    lines about its caption; a footnote set apart (004's "[†] ...") its line."""
    if locator.startswith("footnote "):
        mark = f"[{locator.split()[1]}]"
        return [(k, k + 1) for k, line in enumerate(lines) if clean_line(line).startswith(mark)]
    locator = locator.replace("§", "").replace("appendix ", "").strip()
    float_ = re.fullmatch(r"(Table|Figure) (\d+)", locator)
    if float_:
        return [(max(0, k - FLOAT_BEFORE), min(len(lines), k + FLOAT_AFTER + 1)) for k, line in enumerate(lines)
                if (m := CAPTION.match(clean_line(line))) and m.groups() == float_.groups()]
    numbers = [(k, m.group(1)) for k, line in enumerate(lines) if (m := HEADING.match(clean_line(line)))]
    out = []
    for at, (k, number) in enumerate(numbers):
        if number == locator:
            after = [j for j, other in numbers[at + 1:] if not other.startswith(locator + ".")]
            out.append((k, after[0] if after else len(lines)))
    return out


def citations(cell: str) -> list[tuple[str, str]]:
    """(paper, locator) for every citation in a cell: "BELIEF §2.4", "DistFact §3.3 and Table 2"."""
    return [(short, locator) for short, listed in CITATION.findall(cell)
            for locator in re.split(r", | and ", listed)]


# --- quotes --------------------------------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=row_name)
def test_paper_cell_cites_and_quotes(row):
    cell = row["paper definition"]
    cited = citations(cell)
    assert cited, f"{row_name(row)}: the paper cell cites no paper as 'BELIEF §3.2' (or appendix, Table, Figure)"
    for short in {short for short, _ in cited}:
        assert PAPERS[short][1] in cell, f"{row_name(row)}: cites {short} without {PAPERS[short][1]!r}"
    assert QUOTE.findall(cell), f"{row_name(row)}: the paper cell quotes nothing in double quotes"


@pytest.mark.parametrize("row", ROWS, ids=row_name)
def test_each_quote_is_in_the_part_cited(row):
    """Each quoted phrase of a paper cell is in the paper's text inside one of the cell's
    citations (its section, appendix, table or figure)."""
    cell = row["paper definition"]
    places = []
    for short, locator in citations(cell):
        lines = paper_lines(short)
        found = spans(lines, locator)
        assert found, f"{row_name(row)}: {short} has no {locator} (no such heading or caption in its text)"
        places += [(f"{short} {locator}", normalise("\n".join(lines[a:b]))) for a, b in found]
    for quote in QUOTE.findall(cell):
        assert any(normalise(quote) in text for _, text in places), (
            f"{row_name(row)}: {quote!r} is not in {', '.join(sorted({p for p, _ in places}))}")


def test_normalise_meets_the_extraction():
    """The three extractions' habits: a hyphen at a line end (002's OCR), a hyphen and a space
    inside a line with a margin number (003), curly and doubled quotes (000)."""
    assert normalise("the num-\nber of in-con-\ntext") == normalise("the number of in-context")
    assert normalise("We selected relations from T-\nREx") == normalise("We selected relations from T-REx")
    assert normalise("We get the en- **227** tity name") == normalise("We get the entity name")
    assert normalise("‘‘Answer each question in one word.’’") == '"Answer each question in one word."'
    assert normalise("ﬁnal ﬂow") == "final flow"
    assert normalise("the pair") != normalise("the pairs")


def test_spans_find_sections_tables_and_appendices():
    lines = ["1 Introduction", "text one", "2 Method", "2.1 Part", "alpha", "2.2 Other", "beta", "3 End",
             "Appendix D Prompts", "D.1 First", "gamma", "E Next", "Table 2: Measures.", "delta"]
    assert spans(lines, "§2") == [(2, 7)]
    assert spans(lines, "§2.1") == [(3, 5)]
    assert spans(lines, "appendix D") == [(8, 11)]
    assert spans(lines, "appendix D.1") == [(9, 11)]
    assert spans(lines, "Table 2") == [(0, 14)]
    assert spans(lines, "§4") == []
    assert spans(["[†] For simplicity, types.", "body"], "footnote †") == [(0, 1)]


# --- options -------------------------------------------------------------------------------

# A row's method cell -> the methods, probe-set kinds and commands whose options it names.
METHODS_OF = {"BELIEF": ("belief",), "BELIEF-ICL": ("belief-icl",), "IC-LKE": ("ic-lke",),
              "EIC-LKE": ("eic-lke",), "KDF": ("kdf",), "Distractors (DistFact)": ("baselines", "distractor")}
KINDS_OF = {"BELIEF": ("cloze",), "BELIEF-ICL": ("belief-icl", "cloze"), "IC-LKE": ("icl-mc",),
            "EIC-LKE": ("icl-mc",), "KDF": ("kdf",), "Distractors (DistFact)": ("distractor",),
            "MyriadLAMA import": ()}
SETTING = re.compile(r"[a-z_]+=\S+(?: [a-z_]+=\S+)*")
FLAGS = re.compile(r"(?:[a-z]+ ){0,2}--[a-z-]+(?: [^\s-]\S*)?(?: --[a-z-]+(?: [^\s-]\S*)?)*")
PLACEHOLDER = re.compile(r"[A-Z]+|\[.*\]|\.\.\.")


def parts(method_cell: str) -> list[str]:
    """"BELIEF, BELIEF-ICL" -> both; "IC-LKE (T-REx-MC)" -> IC-LKE."""
    cell = re.sub(r" \((?!DistFact)[^)]*\)", "", method_cell)
    return [p.strip() for p in re.split(r", (?![^(]*\))", cell)]


def methods_of(row: dict) -> list:
    return [METHODS[name] for part in parts(row["method"]) for name in METHODS_OF.get(part, ())]


def kinds_of(row: dict) -> list:
    return [KINDS[name] for part in parts(row["method"]) for name in KINDS_OF.get(part, ())]


def value(text: str):
    """An option value as the table writes it: true/false, a number, else the word."""
    if text in ("true", "false"):
        return text == "true"
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text


def command_flags() -> dict[str, list]:
    """--flag -> the click options of that spelling across factprobe's commands."""
    out: dict[str, list] = {}

    def walk(command):
        if isinstance(command, click.Group):
            for sub in command.commands.values():
                walk(sub)
            return
        for param in command.params:
            if isinstance(param, click.Option):
                for flag in param.opts:
                    out.setdefault(flag, []).append(param)

    walk(cli_main)
    return out


def flag_pairs(text: str) -> list[tuple[str, str | None]]:
    """`probeset build --shots N` -> [("--shots", "N")]; `--a x --b y` -> both."""
    return [(flag, given or None) for flag, given in re.findall(r"(--[a-z-]+)(?: ([^\s-]\S*))?", text)]


def flag_declarations(row: dict, flag: str) -> list[tuple[object, tuple | None]]:
    """(default, choices) of `flag` in the row's kinds' options (the fact selection's among them:
    every kind builds from one), else in any command."""
    from factprobe.probes.building.facts import FactSelection

    shared = list(option_specs(FactSelection)) if kinds_of(row) else []
    kind_specs = [spec for kind in kinds_of(row) for spec in option_specs(kind.options) if spec.flag == flag]
    kind_specs = kind_specs or [spec for spec in shared if spec.flag == flag]
    if kind_specs:
        return [(spec.default, spec.choices) for spec in kind_specs]
    return [(param.default, tuple(param.type.choices) if isinstance(param.type, click.Choice) else None)
            for param in command_flags().get(flag, [])]


def backticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


@pytest.mark.parametrize("row", ROWS, ids=row_name)
def test_defaults_are_the_code_defaults(row):
    """Every `name=value` in the default cell is an option of the row's method(s) with that
    default; every `--flag value` a flag of its probe-set kind or command with that default."""
    for text in backticked(row["factprobe default"]):
        if SETTING.fullmatch(text):
            for setting in text.split():
                key, given = setting.split("=", 1)
                defaults = {m.name: m.option_defaults[key] for m in methods_of(row) if key in m.option_defaults}
                assert defaults, f"{row_name(row)}: `{setting}`: no method of the row has option {key}"
                # (baselines' n is Precision@n's 3, distractor's n its distractors: one of them)
                assert value(given) in defaults.values(), f"{row_name(row)}: `{setting}`, but the defaults are {defaults}"
        elif FLAGS.fullmatch(text):
            for flag, given in flag_pairs(text):
                declared = flag_declarations(row, flag)
                assert declared, f"{row_name(row)}: `{text}`: no kind of the row or command has {flag}"
                if given is not None and not PLACEHOLDER.fullmatch(given):
                    defaults = [default for default, _ in declared]
                    assert value(given) in defaults, f"{row_name(row)}: `{text}`, but {flag}'s default is {defaults}"


@pytest.mark.parametrize("row", ROWS, ids=row_name)
def test_options_offered_exist(row):
    """Every `name=value` in the option cell is an option of the row's method(s) that takes
    that value (read as `--option name=value` is); every `--flag value` a flag of its kind or a
    command that takes it; neither is the default it would replace."""
    for text in backticked(row["option"]):
        if SETTING.fullmatch(text):
            given = dict(setting.split("=", 1) for setting in text.split())
            concrete = {key: value(v) for key, v in given.items() if not PLACEHOLDER.fullmatch(v)}
            owners = [m for m in methods_of(row) if set(given) <= set(m.option_defaults)]
            assert owners, f"{row_name(row)}: `{text}`: no method of the row has all of {sorted(given)}"
            for method in owners:
                try:
                    read_options(method, concrete)
                except OptionError as error:
                    pytest.fail(f"{row_name(row)}: `{text}`: {error}")
                assert any(method.option_defaults[k] != v for k, v in concrete.items()) or not concrete, (
                    f"{row_name(row)}: `{text}` offers {method.name}'s default")
        elif FLAGS.fullmatch(text):
            for flag, given in flag_pairs(text):
                declared = flag_declarations(row, flag)
                assert declared, f"{row_name(row)}: `{text}`: no kind of the row or command has {flag}"
                if given is None or PLACEHOLDER.fullmatch(given):
                    continue
                for default, choices in declared:
                    assert choices is None or given in choices, f"{row_name(row)}: `{text}`: {flag} takes {choices}"
                    assert value(given) != default, f"{row_name(row)}: `{text}` offers {flag}'s default"


def test_the_intro_counts_the_defaults_that_differ():
    """The intro says how many defaults differ from the paper ("Four defaults differ"), and as
    many default cells mark theirs in bold (issue 38 item 12: "one default differs" was false)."""
    text = DOC.read_text(encoding="utf-8")
    intro = text[text.index(SECTION):text.index("| method | what |", text.index(SECTION))]
    said = re.search(r"(\w+) defaults? differs? from the paper", intro)
    assert said, f"{DOC}: the intro does not say how many defaults differ from the paper"
    words = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    bold = [row_name(row) for row in ROWS if "**" in row["factprobe default"]]
    assert words.index(said.group(1).lower()) + 1 == len(bold), f"the intro says {said.group(1)}; in bold: {bold}"


def test_every_row_names_a_known_method():
    known = set(METHODS_OF) | set(KINDS_OF) | {"DistFact assess"}
    for row in ROWS:
        for part in parts(row["method"]):
            assert part in known, f"{row_name(row)}: method cell part {part!r} is none of {sorted(known)}"

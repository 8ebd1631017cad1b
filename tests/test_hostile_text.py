"""Issue 44 E: text from inputs reaches a terminal without control characters, Markdown without
live markup, and matplotlib without mathtext."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from cli_runner import run_cli
from wikidata_builder import item, write_dump

# Issue 44's cases: OSC 52 (clipboard write), OSC 0 (window title), clear-screen, plus the 8-bit
# CSI and a bidi override the issue names among what must never reach a terminal raw.
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J\x1bc"
HOSTILE = f"Berlin{CLIPBOARD}{TITLE}{CLEAR}\x9b31m\u202eevil\u2066"
RAW = ["\x1b", "\x07", "\x9b", "\u202e", "\u2066"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    dump = write_dump(folder / "d.json", [item("Q64", HOSTILE, aliases=(TITLE + "Spree-Athen",)),
                                          item("Q183", "Germany", claims={"P36": ["Q64"]})])
    db = folder / "g.sqlite"
    run_cli("ingest", "wikidata", str(dump), "--store", str(db), check=True)
    return db


def test_kg_entity_shows_escapes_never_raw_controls(store):
    out = run_cli("kg", "entity", "Q64", "--store", str(store), check=True).stdout
    assert not [c for c in RAW if c in out]
    assert out.splitlines()[0].startswith(
        "Berlin\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u001b]0;owned\\u0007\\u001b[2J\\u001bc\\u009b31m\\u202eevil\\u2066 (Q64")
    facts = run_cli("kg", "entity", "Q183", "--store", str(store), check=True).stdout
    assert not [c for c in RAW if c in facts] and "Berlin\\u001b]52;c;" in facts


def test_kg_entity_json_stays_json_and_decodes_to_the_label(store):
    out = run_cli("kg", "entity", "Q64", "--store", str(store), "--json", check=True).stdout
    assert not [c for c in RAW if c in out]
    record = json.loads(out)
    assert record["label"] == HOSTILE
    assert record["names"]["en"]["aliases"] == [TITLE + "Spree-Athen"]


def test_terminal_text_escapes_each_control_class():
    from factprobe.cli.terminal import terminal_text

    assert terminal_text("a\tb\nc") == "a\tb\nc"
    assert terminal_text("\x00\x1b\x7f\x80\x9b\x9f\u202a\u202e\u2066\u2069\r") == (
        "\\u0000\\u001b\\u007f\\u0080\\u009b\\u009f\\u202a\\u202e\\u2066\\u2069\\u000d")
    assert terminal_text("Zürich 東京 \u202f") == "Zürich 東京 \u202f"


def test_every_command_writes_through_the_one_echo():
    """No module of the command writes to a terminal but through cli/terminal.py's `echo`."""
    cli = Path(__file__).resolve().parents[1] / "cli"
    offenders = []
    for path in sorted(cli.rglob("*.py")):
        if path.name == "terminal.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("echo", "secho") and \
                    isinstance(node.value, ast.Name) and node.value.id == "click":
                offenders.append(f"{path.name}:{node.lineno} click.{node.attr}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                offenders.append(f"{path.name}:{node.lineno} print")
            if isinstance(node, ast.Attribute) and node.attr == "write" and isinstance(node.value, ast.Attribute) \
                    and node.value.attr in ("stdout", "stderr"):
                offenders.append(f"{path.name}:{node.lineno} {node.value.attr}.write")
    assert offenders == []


# Issue 44's cases for documents: a name that would be a live image in report.md, and one
# matplotlib would parse as mathtext (and raise on, crashing `report`).
IMAGE = "![px](http://127.0.0.1:9/track.png)"
MATH = "$\\frac{$"


def _markup_tokens(markdown: str) -> list[str]:
    from markdown_it import MarkdownIt

    live = {"link_open", "image", "html_inline", "html_block", "em_open", "strong_open", "s_open",
            "code_inline", "code_block", "fence", "heading_open", "bullet_list_open", "ordered_list_open",
            "blockquote_open", "hr"}
    found = []
    for token in MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(markdown):
        found += [token.type] if token.type in live else []
        found += [child.type for child in token.children or () if child.type in live]
    return found


@pytest.mark.parametrize("text", [IMAGE, "1. first", "# title", "- item", "+ item", "> quote", "---", "===",
                                  "<img src=x onerror=alert(1)>", "*a* _b_ ~~c~~", "<http://127.0.0.1:9/x>",
                                  "    code", "[a]: http://127.0.0.1:9/ref", "a | b", "x\n# y\n\n![i](u)"])
def test_md_escape_leaves_no_live_markup(text):
    from factprobe.probes.document import Table, Text
    from factprobe.probes.report import to_markdown

    markdown = to_markdown([Text(text), Table(["name"], [[text]])])
    assert _markup_tokens(markdown) == []


def test_md_text_keeps_code_spans_and_no_newline_escapes_them():
    from factprobe.probes.document import Text
    from factprobe.probes.report import to_markdown

    assert _markup_tokens(to_markdown([Text("see `factprobe run` here")])) == ["code_inline"]
    # a newline inside backticks would start a block of its own; the span stays on its line
    assert _markup_tokens(to_markdown([Text("`a\n\n![px](http://127.0.0.1:9/track.png)` b")])) == ["code_inline"]


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> Path:
    from test_reports import ITEMS, write_run

    base = tmp_path_factory.mktemp("hostile-report")
    items = [(i, f"P36{IMAGE}{MATH}" if k % 2 else rel, f"{MATH}{IMAGE}" if k == 1 else bucket)
             for k, (i, rel, bucket) in enumerate(ITEMS)]
    a = write_run(base / "a", model=f"hf:{IMAGE}", method="ic-lke", correct=[True, False] * 3, items=items)
    b = write_run(base / "b", model=f"hf:{MATH}", method="ic-lke", correct=[False, True] * 3, items=items)
    out = base / "report"
    run_cli("report", str(a), str(b), "--out", str(out), "--title", f"Capitals {IMAGE} {MATH}", check=True)
    return out


def test_report_md_has_no_live_image_from_a_name(hostile_report):
    markdown = (hostile_report / "report.md").read_text()
    assert "!\\[px\\](http\\://127.0.0.1:9/track.png)" in markdown
    tokens = [t for t in _markup_tokens(markdown) if t not in ("heading_open", "code_inline")]
    assert tokens.count("image") == len(list(hostile_report.glob("*.png")))  # the report's own plots only


def test_report_draws_plots_of_mathtext_names(hostile_report):
    # `$\frac{$` in a model, a relation and a bucket: every plot drawn, none crashed the report
    drawn = sorted(p.name for p in hostile_report.glob("*.png"))
    assert drawn == ["accuracy_by_bucket.png", "overlap.png", "relation_heatmap.png"]
    assert all((hostile_report / name).read_bytes().startswith(b"\x89PNG\r\n\x1a\n") for name in drawn)

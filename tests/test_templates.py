"""Relation templates: the shipped files, the loader's validation and merging, the CLI, and
paraphrasing through a real OpenAI-compatible server (llama-cpp-python serving SmolLM2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from factprobe.probes.templates.paraphrase import (ParaphraseError, make_client, paraphrase, parse_lines, screen_lines,
                                         write_generated)
from factprobe.probes.templates import (SHIPPED_DIR, RelationTemplates, Template, TemplateError, fill, load_file,
                                        load_templates, normalize, object_final, prompt_before_object)
from conftest import free_port, llama_server, needs_llama_cpp, run_cli

LAMA_TREX = ("P17 P19 P20 P27 P30 P31 P36 P37 P39 P47 P101 P103 P106 P108 P127 P131 P136 P138 P140 P159 P176 "
             "P178 P190 P264 P276 P279 P361 P364 P407 P413 P449 P463 P495 P527 P530 P740 P937 P1001 P1303 "
             "P1376 P1412").split()
KEY = "test-key"
needs_llama = needs_llama_cpp


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD_P36 = """relation: P36
label: capital
cloze:
  - {text: "The capital of [X] is [Y].", source: manual}
  - {text: "[X] is ruled from [Y].", source: manual}
qa:
  - {text: "What is the capital of [X]?", source: manual}
"""


# -- the shipped templates ------------------------------------------------------------------------


def test_every_shipped_file_loads_and_is_named_by_its_relation():
    files = sorted(SHIPPED_DIR.glob("*.yaml"))
    assert files
    for path in files:
        entry = load_file(path)
        assert entry.relation == path.stem and entry.label and entry.description


def test_shipped_coverage():
    loaded = load_templates([])
    assert set(LAMA_TREX) <= set(loaded) and len(LAMA_TREX) == 41
    assert len(loaded) >= 45
    for entry in loaded.values():
        assert len(entry.manual_cloze) >= 5, entry.relation
        assert any(t.source == "manual" for t in entry.qa), entry.relation
        assert not entry.generated_cloze  # shipped templates are all written by hand
        # Most of them end on the object, so a causal LM can score it as a continuation.
        assert sum(t.text.endswith("[Y].") for t in entry.cloze) >= 4, entry.relation


def test_shipped_files_have_no_duplicate_texts():
    # Read raw: the loader would drop duplicates silently.
    for path in SHIPPED_DIR.glob("*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for kind in ("cloze", "qa"):
            texts = [normalize(e["text"]) for e in data[kind]]
            assert len(texts) == len(set(texts)), (path.name, kind)


def test_listing_order_is_numeric():
    ids = list(load_templates([]))
    assert ids == sorted(ids, key=lambda r: int(r[1:])) and ids[:2] == ["P6", "P17"]


# -- validation -----------------------------------------------------------------------------------


def test_missing_slot_is_rejected_naming_file_and_entry(tmp_path):
    path = _write(tmp_path, "P36.yaml", GOOD_P36.replace("[X] is ruled from [Y].", "The capital of [X] is."))
    with pytest.raises(TemplateError) as caught:
        load_templates([tmp_path])
    assert str(caught.value) == f'{path}: cloze[1]: "The capital of [X] is." has no [Y] slot'

    proc = run_cli("templates", "check", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f'error: {path}: cloze[1]: "The capital of [X] is." has no [Y] slot'
    # Every command that loads the folder refuses it the same way.
    proc = run_cli("templates", "list", "--templates", str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.strip().endswith("has no [Y] slot")


@pytest.mark.parametrize("old, new, message", [
    ("The capital of [X] is [Y].", "[X], capital [Y], [X].", 'cloze[0]: "[X], capital [Y], [X]." has 2 [X] slots (needs exactly one)'),
    ("[X] is ruled from [Y].", "[X] is ruled from [Z].", 'cloze[1]: "[X] is ruled from [Z]." has no [Y] slot'),
    ("[X] is ruled from [Y].", "[X] is ruled from [Y] and [y].", 'cloze[1]: "[X] is ruled from [Y] and [y]." has an unknown slot [y] (only [X] and [Y])'),
    ("What is the capital of [X]?", "What is the capital of [X], [Y]?", 'qa[0]: "What is the capital of [X], [Y]?" has a [Y] slot (a question names only the subject, [X])'),
    ("What is the capital of [X]?", "What is the capital?", 'qa[0]: "What is the capital?" has no [X] slot'),
    ("source: manual}\n  - {text: \"[X] is", "source: auto}\n  - {text: \"[X] is", "cloze[0]: source 'auto' is not manual or generated"),
    ("relation: P36", "relation: P37", "relation 'P37' does not match the file name P36.yaml"),
    ("label: capital", "label: capital\ncomment: hi", "unknown key 'comment' (allowed: relation, label, description, cloze, qa, kdf, languages)"),
    ("source: manual}\n  - {text: \"[X] is", "source: manual, note: x}\n  - {text: \"[X] is", "cloze[0]: unknown key 'note' (allowed: text, source, origin)"),
    ('{text: "[X] is ruled from [Y].", source: manual}', '"[X] is ruled from [Y]."', "cloze[1]: must be a mapping {text: ..., source: manual|generated}, not '[X] is ruled from [Y].'"),
    ("cloze:\n", "cloze: [\n", "not valid YAML"),
])
def test_bad_files_are_rejected_clearly(tmp_path, old, new, message):
    assert old in GOOD_P36
    path = _write(tmp_path, "P36.yaml", GOOD_P36.replace(old, new, 1))
    with pytest.raises(TemplateError) as caught:
        load_file(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_file_name_must_be_a_relation_id(tmp_path):
    path = _write(tmp_path, "capital.yaml", GOOD_P36)
    with pytest.raises(TemplateError, match=r"capital\.yaml: the file name must be the relation id, e\.g\. P36\.yaml"):
        load_templates([tmp_path])
    with pytest.raises(TemplateError, match="no such template folder"):
        load_templates([tmp_path / "missing"])
    assert path.exists()


# -- merging and filling ----------------------------------------------------------------------------


def test_user_folders_merge_after_the_shipped_templates(tmp_path, monkeypatch):
    _write(tmp_path / "a", "P36.yaml", """relation: P36
cloze:
  - {text: "  the CAPITAL of [X]   is [Y]. ", source: manual}   # a shipped text, case and spaces aside
  - {text: "[X] has [Y] as its capital.", source: generated}
qa:
  - {text: "Name the capital of [X].", source: manual}
""")
    _write(tmp_path / "b", "P36.yaml", """relation: P36
cloze:
  - {text: "[X] has [Y] as its capital.", source: manual}
  - {text: "[X] is run from [Y].", source: manual}
""")
    _write(tmp_path / "b", "P9999.yaml", GOOD_P36.replace("P36", "P9999").replace("capital", "test relation", 1))
    (tmp_path / "b" / "README.txt").write_text("not a template file")
    shipped = load_templates([])["P36"]
    merged = load_templates([tmp_path / "a", tmp_path / "b"])
    p36 = merged["P36"]
    assert p36.label == "capital" and p36.description == shipped.description
    assert p36.cloze == shipped.cloze + (Template("[X] has [Y] as its capital.", "generated", "cloze"),
                                         Template("[X] is run from [Y].", "manual", "cloze"))
    assert p36.qa == shipped.qa + (Template("Name the capital of [X].", "manual", "qa"),)
    assert p36.manual_cloze == shipped.cloze + (Template("[X] is run from [Y].", "manual", "cloze"),)
    assert merged["P9999"].label == "test relation" and len(merged["P9999"].cloze) == 2

    monkeypatch.setenv("FACTPROBE_TEMPLATES", f"{tmp_path / 'a'}{__import__('os').pathsep}{tmp_path / 'b'}")
    assert load_templates() == merged
    assert load_templates([]) == load_templates([SHIPPED_DIR])  # explicit dirs win over the env


def test_fill_and_prompt_before_object():
    cloze = Template("The capital of [X] is [Y].")
    assert fill(cloze, "France") == "The capital of France is [Y]."
    assert fill(cloze, "France", "Paris") == cloze.fill("France", "Paris") == "The capital of France is Paris."
    assert prompt_before_object(cloze, "France") == cloze.prompt_before_object("France") == "The capital of France is"
    assert prompt_before_object("[X]'s capital city is [Y].", "Germany") == "Germany's capital city is"
    assert prompt_before_object("[Y] is the capital of [X].", "Peru") == ""
    # A label that looks like a slot stays text.
    assert fill("[X] borders [Y].", "[Y] Land", "Elsewhere") == "[Y] Land borders Elsewhere."
    entry = load_templates([])["P36"]
    assert entry.fill(entry.qa[0], "France") == "What is the capital of France?"
    assert entry.prompt_before_object(entry.cloze[1], "France") == "France's capital city is"
    with pytest.raises(ValueError, match="no \\[Y\\] slot"):
        fill(entry.qa[0], "France", "Paris")
    with pytest.raises(ValueError, match="no \\[Y\\] slot"):
        prompt_before_object(entry.qa[0], "France")


@pytest.mark.parametrize("text, expected", [
    ("The capital of [X] is [Y].", True),
    ("The capital of [X] is [Y]", True),
    ("Is the capital of [X] [Y]?!", True),
    ("[X]'s capital city is [Y] .", True),
    ("[Y] is the capital of [X].", False),   # the object first: no prompt before it
    ("[X] is ruled from [Y] today.", False),  # text after the object
    ("[Y].", False),                          # only the object: nothing to continue
    ("What is the capital of [X]?", False),   # a question has no object slot
])
def test_object_final(text, expected):
    assert object_final(text) is expected
    assert object_final(Template(text)) is expected
    assert Template(text).object_final is expected


def test_object_final_clozes_keep_file_order():
    entry = RelationTemplates("P36", "capital", cloze=(
        Template("[Y] is the capital of [X]."), Template("The capital of [X] is [Y]."),
        Template("[X] is ruled from [Y] today."), Template("[X]'s capital city is [Y].")))
    assert [t.text for t in entry.object_final_clozes()] == ["The capital of [X] is [Y].",
                                                            "[X]'s capital city is [Y]."]
    only_object_first = RelationTemplates("P36", "capital", cloze=(Template("[Y] is the capital of [X]."),))
    assert only_object_first.object_final_clozes() == ()


def test_question_prefers_qa_then_the_first_object_final_cloze_then_the_first_cloze():
    qa = (Template("What is the capital of [X]?", kind="qa"), Template("Which city is the capital of [X]?", kind="qa"))
    clozes = (Template("[Y] is the capital of [X]."), Template("The capital of [X] is [Y]."))
    assert RelationTemplates("P36", "capital", cloze=clozes, qa=qa).question() == "What is the capital of [X]?"
    # No QA template: the first object-final cloze, blanked, even when another cloze comes first.
    assert RelationTemplates("P36", "capital", cloze=clozes).question() == "The capital of [X] is ___."
    # No object-final cloze: the first cloze, blanked.
    only = (Template("[Y] is the capital of [X]."), Template("[X] is ruled from [Y] today."))
    assert RelationTemplates("P36", "capital", cloze=only).question() == "___ is the capital of [X]."
    with pytest.raises(ValueError, match="P36: no QA or cloze template"):
        RelationTemplates("P36", "capital").question()


def test_shipped_questions_and_object_final_clozes():
    """Every shipped relation has a QA template, so its question is that template whichever cloze the
    fallback would blank; and its first cloze is object-final, so the distractor measure, the
    baselines and ApprOpt all start from the same cloze."""
    for relation, entry in load_templates([]).items():
        assert entry.qa, relation
        assert entry.question() == entry.qa[0].text
        assert entry.cloze[0].object_final, relation
        # For valid templates (one [X], one [Y]) the rule is the plain "ends with [Y]" one.
        assert entry.object_final_clozes() == tuple(t for t in entry.cloze if t.text.rstrip(" .!?").endswith("[Y]"))


def test_write_generated_appends_and_loads_back(tmp_path):
    new = [Template("[X] is governed from [Y] these days.", "generated"), Template("Capital of [X]: [Y].", "generated")]
    path = write_generated(tmp_path, "P36", new[:1], label="capital")
    path = write_generated(tmp_path, "P36", new, label="capital")  # the first is already there
    assert load_file(path).cloze == tuple(new)
    merged = load_templates([tmp_path])["P36"]
    assert merged.generated_cloze == tuple(new) and merged.cloze[-2:] == tuple(new)


def test_parse_lines_strips_list_markers_and_quotes():
    answer = '1. "[X] sits in [Y]."\n\n- [X]\'s seat is [Y].\n  3)  [X]   lies   in [Y].\n* `[X] is in [Y]`\nSure!'
    assert parse_lines(answer) == ["[X] sits in [Y].", "[X]'s seat is [Y].", "[X] lies in [Y].", "[X] is in [Y]", "Sure!"]


def test_screen_lines_drops_duplicates_and_slot_losers_and_keeps_the_rest_as_generated(tmp_path):
    """The filter every model answer goes through, on lines whose fate is known."""
    answer = ("1. the capital of  [X] is [Y].\n"  # an existing template, other case and spacing
              "2. [X] is governed from [Y].\n"
              "3. [X] is Governed from [Y].\n"  # the line before, again
              "4. The capital is [Y].\n"  # lost [X]
              "Sure! Here you go:\n"  # chatter: no slot at all
              "5. [X] and [X] meet in [Y].\n"  # [X] twice
              "6. [X] trades with [Z] through [Y].\n"  # a slot that does not exist
              '7. "[X] has its seat in [Y]"\n'
              "8. [X]'s capital: [Y].\n"
              "9. [X] answers to [Y].")  # after the third new one: not examined
    screened = screen_lines(parse_lines(answer), ["The capital of [X] is [Y].", "[X] is ruled from [Y]."], 3)
    assert screened.added == (Template("[X] is governed from [Y].", "generated", "cloze"),
                              Template("[X] has its seat in [Y]", "generated", "cloze"),
                              Template("[X]'s capital: [Y].", "generated", "cloze"))
    assert screened.duplicates == ("the capital of [X] is [Y].", "[X] is Governed from [Y].")
    assert screened.lost_slot == ("The capital is [Y].", "Sure! Here you go:", "[X] and [X] meet in [Y].",
                                  "[X] trades with [Z] through [Y].")
    # what was kept is stored as generated, beside the manual templates it must not repeat
    write_generated(tmp_path, "P36", screened.added, label="capital")
    stored = load_templates([tmp_path])["P36"]
    assert stored.generated_cloze == screened.added
    # a second answer is screened against the first one's templates too: nothing new left
    again = screen_lines(parse_lines("- [X] has its seat in [Y]\n- [X]'s capital: [Y]."),
                         [t.text for t in stored.cloze], 3)
    assert again.added == () and again.duplicates == ("[X] has its seat in [Y]", "[X]'s capital: [Y].")


# -- the CLI ------------------------------------------------------------------------------------------


def test_cli_list_show_check(tmp_path):
    rows = json.loads(run_cli("templates", "list", "--json", check=True).stdout)
    by_id = {r["relation"]: r for r in rows}
    assert by_id["P36"] == {"relation": "P36", "label": "capital", "manual": 6, "generated": 0, "qa": 2}
    text = run_cli("templates", "list", check=True).stdout
    assert "P1412" in text and f"{len(rows)} relations" in text

    shown = json.loads(run_cli("templates", "show", "p36", "--json", check=True).stdout)
    assert shown["relation"] == "P36" and shown["cloze"][0] == {"text": "The capital of [X] is [Y].",
                                                                  "source": "manual", "kind": "cloze", "origin": ""}
    assert "[manual   ] What is the capital of [X]?" in run_cli("templates", "show", "P36", check=True).stdout
    missing = run_cli("templates", "show", "P424242")
    assert missing.returncode == 2 and missing.stderr.strip() == \
        "error: no templates for P424242 (see `factprobe templates list`)"

    _write(tmp_path / "ok", "P36.yaml", GOOD_P36)
    proc = run_cli("templates", "check", str(tmp_path / "ok"), check=True)
    assert proc.stdout.strip() == f"{tmp_path / 'ok'}: 1 files, 1 relations, 2 cloze and 1 QA templates"
    with_user = json.loads(run_cli("templates", "show", "P36", "--json", "--templates", str(tmp_path / "ok"),
                                   check=True).stdout)
    assert with_user["cloze"][-1]["text"] == "[X] is ruled from [Y]."


def test_cli_paraphrase_errors_are_one_line(tmp_path, monkeypatch):
    port = free_port()  # nothing listens there
    proc = run_cli("templates", "paraphrase", "--relation", "P36", "--n", "3", "--model", "m",
                   "--base-url", f"http://127.0.0.1:{port}/v1", "--out", str(tmp_path / "gen"), timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    # Split on newlines only: the progress bar redraws itself with carriage returns.
    last = proc.stderr.rstrip("\n").split("\n")[-1].split("\r")[-1]
    assert last.startswith(f"error: cannot reach the OpenAI-compatible server at http://127.0.0.1:{port}/v1: ")
    assert "Connection refused" in last and "Traceback" not in proc.stderr
    assert not (tmp_path / "gen").exists()

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    proc = run_cli("templates", "paraphrase", "--relation", "P36", "--model", "m", "--out", str(tmp_path / "gen"))
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error: no model server configured: set OPENAI_BASE_URL")
    unknown = run_cli("templates", "paraphrase", "--relation", "P424242", "--model", "m", "--out", str(tmp_path))
    assert unknown.returncode == 2 and "no templates for P424242" in unknown.stderr
    with pytest.raises(ParaphraseError, match="no model server configured"):
        make_client()


# -- paraphrasing through a real server ---------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with llama_server(tmp_path_factory.mktemp("llama"), alias="smollm2", key=KEY) as url:
        yield url


def _check_result(entry: RelationTemplates, result) -> None:
    """What the pipeline guarantees whatever the model wrote."""
    assert result.parsed == len(result.added) + len(result.duplicates) + len(result.lost_slot)
    assert 1 <= result.requests <= 2 and len(result.added) <= 4
    existing = {normalize(t.text) for t in entry.cloze}
    new = [normalize(t.text) for t in result.added]
    assert len(new) == len(set(new)) and not existing & set(new)
    for t in result.added:
        assert t.source == "generated" and t.kind == "cloze"
        assert t.text.count("[X]") == 1 and t.text.count("[Y]") == 1
    for line in result.duplicates:
        assert normalize(line) in existing | set(new)
    for line in result.lost_slot:
        assert line.count("[X]") != 1 or line.count("[Y]") != 1 or "[" in line.replace("[X]", "").replace("[Y]", "")


@needs_llama
@pytest.mark.slow
def test_paraphrase_against_a_real_server(server, tmp_path):
    client = make_client(server, KEY)
    loaded = load_templates([])
    added = 0
    # SmolLM2-135M rephrases poorly (the properties hold whatever it writes); it continues the
    # completions endpoint's list well enough that something is kept.
    # Only the second asks again (with the next seed) when the first answer gives fewer than n.
    for relation, chat, requests in (("P19", True, 1), ("P19", False, 2), ("P1412", False, 1)):
        result = paraphrase(loaded[relation], 3, client, "smollm2", seed=0, chat=chat, max_requests=requests)
        _check_result(loaded[relation], result)
        assert result.parsed > 0  # the model answered with something
        if result.added:
            path = write_generated(tmp_path, relation, result.added, label=loaded[relation].label)
            back = load_templates([tmp_path])[relation]
            assert back.generated_cloze[-len(result.added):] == result.added
            assert back.manual_cloze == loaded[relation].manual_cloze
            assert load_file(path).relation == relation
            loaded = load_templates([tmp_path])  # the next round must not repeat these
            added += len(result.added)
    assert added >= 1


@needs_llama
@pytest.mark.slow
def test_cli_paraphrase_against_a_real_server(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "generated"
    args = ["templates", "paraphrase", "--relation", "P19", "--relation", "p1412", "--n", "3", "--model", "smollm2",
            "--base-url", server, "--out", str(out), "--max-requests", "1", "--completions"]
    first = json.loads(run_cli(*args, "--json", check=True, timeout=120).stdout)
    assert [r["relation"] for r in first] == ["P19", "P1412"]
    for r in first:
        assert r["parsed"] == len(r["added"]) + r["duplicates"] + r["lost_slot"]
        assert (r["file"] is not None) == bool(r["added"])
    written = {r["relation"]: r["added"] for r in first if r["added"]}
    assert written
    for relation, texts in written.items():
        entry = load_file(out / f"{relation}.yaml")
        assert [t.text for t in entry.cloze] == texts and {t.source for t in entry.cloze} == {"generated"}
    run_cli("templates", "check", str(out), check=True)

    # Again with the same seed: what was stored now exists, so nothing is stored twice.
    summary = run_cli(*args, "--quiet", check=True, timeout=120).stdout.strip().split("\n")
    assert summary[0].startswith("P19 (place of birth): ") and summary[-1].startswith("total: ")
    for relation in written:
        raw = yaml.safe_load((out / f"{relation}.yaml").read_text(encoding="utf-8"))
        texts = [normalize(e["text"]) for e in raw["cloze"]]
        assert len(texts) == len(set(texts)) and texts[:len(written[relation])] == list(map(normalize, written[relation]))

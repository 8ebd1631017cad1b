"""`probeset import --format entityquestions`: real rows of two relations (tests/data/README.md)
and files of the published shape written here, each bad row named by file and place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.probes.formats.import_entityquestions import NO_SUBJECT, question_template
from factprobe.probes.formats.importers import import_items

DATA = Path(__file__).parent / "data" / "entityquestions"


def test_real_rows_keep_question_answers_relation_and_the_subject_read_from_the_template():
    items, report = import_items("entityquestions", [DATA / "P36.test.jsonl", DATA / "P20.test.jsonl"],
                                 {"P20": ["[X] died in [Y]."]})
    assert report.to_dict() == {"rows": 10, "items": 10, "rejected": 0}
    marin, szekely = items[0], items[6]
    assert (marin["id"], marin["relation"], marin["subject"], marin["object"]) == (
        "cloze:entityquestions:P36.test:1", "P36", None, None)
    assert (marin["subject_label"], marin["object_label"], marin["gold"]) == ("Marin County", "San Rafael",
                                                                              ["San Rafael"])
    assert (marin["question"], marin["question_template"], marin["source_split"]) == (
        "What is the capital of Marin County?", "What is the capital of [X]?", "test")
    assert marin["prompts"] == []  # no template given for P36
    assert [i["subject_label"] for i in items[5:]] == ["Yuri Krylov", "Mihály Székely", "Gjergj Qiriazi",
                                                        "Édouard de Verneuil", "Roméo Sabourin"]
    assert szekely["question_template"] == "Where did [X] die?"
    assert [p["text"] for p in szekely["prompts"]] == ["Mihály Székely died in [Y]."]


def test_the_template_is_cut_back_to_whole_words():
    # both subjects begin with "Sa" and end with "s": neither is the template's
    assert question_template(["What is the capital of Samos?", "What is the capital of Santa Cruz Islands?"]) == (
        "What is the capital of ", "?")
    assert question_template(["Who is Ann's child?", "Who is Bob's child?"]) == ("Who is ", "'s child?")
    assert question_template(["Where did Ann die?"]) is None
    assert question_template(["Where did Ann die?", "Who wrote Bob?"]) is None


def test_a_json_array_file_names_each_bad_row_by_position(tmp_path):
    path = tmp_path / "P19.dev.json"
    rows = [{"question": "Where was Ann Lee born?", "answers": ["Leeds", "Leeds, England"]},
            {"question": "Where was Bob born?", "answers": []}, ["not", "a", "row"],
            {"question": "Who founded Acme?", "answers": ["Carol"]}, {"question": "Where was  born?", "answers": ["X"]},
            {"question": "Where was Carl born?", "answers": ["Oslo"]}]
    path.write_text(json.dumps(rows, indent=4), encoding="utf-8")
    items, report = import_items("entityquestions", [path])
    assert (report.rows, report.items) == (6, 2)
    assert report.rejected == [
        f"{path}#2: answers: not a non-empty list of names",
        f"{path}#3: not a JSON object (a list)",
        f"{path}#4: question: 'Who founded Acme?' is not of its file's template 'Where was [X] born?'",
        f"{path}#5: question: 'Where was  born?' names no subject"]
    ann, carl = items
    assert (ann["subject_label"], ann["gold"], ann["source_split"], ann["id"]) == (
        "Ann Lee", ["Leeds", "Leeds, England"], "dev", "cloze:entityquestions:P19.dev:1")
    assert (carl["subject_label"], carl["id"]) == ("Carl", "cloze:entityquestions:P19.dev:6")


def test_a_file_of_one_question_keeps_it_without_a_subject_and_says_so(tmp_path):
    path = tmp_path / "P50.test.jsonl"
    path.write_text('{"question": "Who is the author of Dune?", "answers": ["Frank Herbert"]}\n', encoding="utf-8")
    (item,), report = import_items("entityquestions", [path], {"P50": ["[X] was written by [Y]."]})
    assert (item["subject_label"], item["question"], item["prompts"]) == (None, "Who is the author of Dune?", [])
    assert report.notes == {NO_SUBJECT: 1}


def test_a_file_not_named_by_its_relation_is_refused(tmp_path):
    path = tmp_path / "capitals.json"
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match="'capitals' is not a property id"):
        import_items("entityquestions", [path])


def test_cli_imports_entityquestions(tmp_path):
    out = tmp_path / "eq.jsonl"
    proc = run_cli("probeset", "import", "--format", "entityquestions", str(DATA / "P20.test.jsonl"), "--out",
                   str(out), "--with-templates", "--json", check=True)
    assert json.loads(proc.stdout)["items"] == 5
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first["subject_label"] == "Yuri Krylov" and first["prompts"][0]["text"].startswith("Yuri Krylov")

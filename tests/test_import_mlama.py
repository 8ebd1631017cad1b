"""`probeset import --format mlama`: mLAMA 1.1's folder layout and row shape (the fields its
dataset/cleanup.py writes and dataset/reader.py reads; rows and French templates in
tests/fixtures/mlama written here, as no public repository holds mLAMA's rows)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.probes.formats.import_mlama import NO_TEMPLATE, file_place
from factprobe.probes.formats.importers import import_items
from factprobe.probes.templates.imported import read_templates

FR = Path(__file__).parent / "fixtures" / "mlama" / "mlama1.1" / "fr"


def test_items_are_in_the_folders_language_asked_with_its_templates():
    items, report = import_items("mlama", [FR / "P19.jsonl", FR / "date_of_birth.jsonl"])
    assert report.to_dict() == {"rows": 5, "items": 5, "rejected": 0}
    jesus, lee, catherine, einstein, curie = items
    assert (jesus["id"], jesus["relation"], jesus["subject"], jesus["object"]) == (
        "cloze:mlama:fr:P19:1", "P19", "Q302", "Q430776")
    assert [p["text"] for p in jesus["prompts"]] == ["Jésus de Nazareth est né à [Y] ."]
    assert (jesus["language"], jesus["source_relation"], jesus["lineid"], jesus["gold"]) == (
        "fr", "P19", 1, ["Nazareth"])
    assert catherine["id"] == "cloze:mlama:fr:P19:5"  # cleanup.py's lineid, gaps and all
    # Google-RE's file names its relation as LAMA does; its rows carry no Wikidata ids
    assert (einstein["id"], einstein["relation"], einstein["subject"], einstein["object"]) == (
        "cloze:mlama:fr:date_of_birth:0", "P569", None, None)
    assert [p["text"] for p in einstein["prompts"]] == ["Albert Einstein est né en [Y] ."]
    assert (curie["source_relation"], curie["object_label"]) == ("date_of_birth", "1867")


def test_a_relation_without_a_template_is_noted_and_given_language_wins(tmp_path):
    items, report = import_items("mlama", [FR / "P37.jsonl"])
    assert report.to_dict() == {"rows": 1, "items": 1, "rejected": 0, "notes": {NO_TEMPLATE: 1}}
    assert items[0]["prompts"] == []
    (copy := tmp_path / "copied").mkdir()
    shutil.copy(FR / "P19.jsonl", copy / "P19.jsonl")
    with pytest.raises(ValueError, match="names no language"):
        import_items("mlama", [copy / "P19.jsonl"])
    items, report = import_items("mlama", [copy / "P19.jsonl"], language="fr")
    assert {item["language"] for item in items} == {"fr"}
    assert report.notes == {NO_TEMPLATE: 3}  # no templates.jsonl beside it


def test_google_re_templates_read_as_their_properties():
    found = read_templates("mlama", [FR / "templates.jsonl"])
    assert sorted(relation for relation, _ in found.found) == ["P19", "P20", "P36", "P569"]
    assert found.rejected == []


def test_file_place_names_what_it_cannot_place():
    assert file_place(FR / "place_of_death.jsonl", None) == ("P20", "fr")
    with pytest.raises(ValueError, match="mLAMA's templates, not its facts"):
        file_place(FR / "templates.jsonl", None)
    with pytest.raises(ValueError, match="'capitals' is neither"):
        file_place(FR / "capitals.jsonl", None)


def test_a_bad_row_costs_only_itself(tmp_path):
    folder = tmp_path / "mlama1.1" / "de"
    folder.mkdir(parents=True)
    (folder / "templates.jsonl").write_text('{"relation": "P19", "template": "[X] wurde in [Y] geboren ."}\n'
                                            '{"relation": "P19"}\n', encoding="utf-8")
    rows = [{"sub_uri": "Q302", "obj_uri": "Q430776", "sub_label": "Jesus", "obj_label": "Nazareth", "lineid": 0},
            {"sub_uri": "Q302", "obj_uri": "Q430776", "sub_label": "Jesus", "obj_label": "Nazareth", "lineid": "one"},
            {"sub_uri": "Jesus", "obj_uri": "Q430776", "sub_label": "Jesus", "obj_label": "Nazareth", "lineid": 2},
            {"sub_uri": "Q1", "obj_uri": "Q2", "sub_label": "Universum", "obj_label": "Welt", "lineid": 0},
            {"sub_uri": "Q1", "obj_uri": "Q2", "sub_label": "Universum", "lineid": 4}]
    path = folder / "P19.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    items, report = import_items("mlama", [path])
    assert (report.rows, report.items) == (5, 1)
    assert report.rejected[:3] == [f"{path}:2: lineid: 'one' is not a whole number",
                                   f"{path}:3: sub_uri: 'Jesus' is not a Wikidata item id",
                                   f"{path}:4: id 'cloze:mlama:de:P19:0' is also the id of the row at {path}:1"]
    assert report.rejected[3].startswith(f"{path}:5: obj_label")
    assert [p["text"] for p in items[0]["prompts"]] == ["Jesus wurde in [Y] geboren ."]
    assert list(report.notes) == [f"templates skipped (templates.jsonl rows that are no template): "
                                  f"{folder / 'templates.jsonl'}:2: template is missing or empty"]


def test_cli_imports_mlama_and_refuses_our_english_templates(tmp_path):
    out = tmp_path / "mlama.jsonl"
    run_cli("probeset", "import", "--format", "mlama", str(FR / "P19.jsonl"), "--out", str(out), check=True)
    assert [json.loads(line)["prompts"][0]["text"] for line in out.read_text(encoding="utf-8").splitlines()] == [
        "Jésus de Nazareth est né à [Y] .", "Lee Kuan Yew est né à [Y] .", "Catherine d'Alexandrie est né à [Y] ."]
    assert list(json.loads((tmp_path / "mlama.meta.json").read_text())["source"]["resources"]) == [
        "fr/templates.jsonl"]
    refused = run_cli("probeset", "import", "--format", "mlama", str(FR / "P19.jsonl"), "--with-templates",
                      "--out", str(tmp_path / "t.jsonl"))
    assert refused.returncode == 2 and "its own language's templates" in refused.stderr

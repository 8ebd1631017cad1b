"""Importers of existing probe sets, on small files in their formats (written here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.probes.importers import import_items

FIXTURES = Path(__file__).parent / "fixtures" / "probesets"


def test_lama_trex_rows_become_cloze_items_and_a_row_without_object_label_is_named():
    items, report = import_items("lama-trex", [FIXTURES / "lama_P36.jsonl"],
                                 {"P36": ["The capital of [X] is [Y].", "[X]'s capital is [Y]."]})
    assert report.rows == 3 and report.items == 2
    assert report.rejected == [f"{FIXTURES / 'lama_P36.jsonl'}:3: obj_label: missing"]
    france = items[0]
    assert (france["subject"], france["object"], france["gold"], france["fact"]) == ("Q142", "Q90", ["Paris"],
                                                                                     "a1b2c3d4-0001")
    assert [p["text"] for p in france["prompts"]] == ["The capital of France is [Y].", "France's capital is [Y]."]


def test_trex_mc_csv_and_jsonl():
    items, report = import_items("trex-mc", [FIXTURES / "trex_mc.csv", FIXTURES / "trex_mc.jsonl"])
    assert report.rows == 6 and report.items == 3
    assert [i["choices"][i["answer_index"]] for i in items] == ["Paris", "Tokyo", "France"]
    assert items[1]["choices"] == ["Osaka", "Tokyo", "Kyoto"]  # JSON text
    assert items[0]["choices"] == ["Paris", "Lyon", "Berlin", "Rome"]  # Python-literal text
    csv_file, jsonl_file = FIXTURES / "trex_mc.csv", FIXTURES / "trex_mc.jsonl"
    assert report.rejected == [
        f"{csv_file}:4: Multiple Choices: the Object 'Lima' is not among them",
        f"{csv_file}:5: Multiple Choices: a choice appears twice",
        f"{jsonl_file}:2: Object: missing",
    ]


def test_myriadlama_rows_group_by_uuid():
    items, report = import_items("myriadlama", [FIXTURES / "myriadlama.jsonl"])
    assert report.rows == 5 and report.items == 2
    assert report.rejected == [f"{FIXTURES / 'myriadlama.jsonl'}:4: template: 'The capital is [Y].' has no [X]",
                               f"{FIXTURES / 'myriadlama.jsonl'}:5: not JSON (Expecting value)"]
    france, germany = items
    assert france["gold"] == ["Paris", "City of Light"] and france["subject"] == "Q142"
    assert [p["text"] for p in france["prompts"]] == ["The capital of France is [Y].", "France's capital city is [Y]."]
    assert germany["subject"] is None and germany["subject_label"] == "Germany" and germany["gold"] == ["Berlin"]


def test_cli_import_writes_a_probe_set_with_sidecar(tmp_path):
    out = tmp_path / "mc.jsonl"
    proc = run_cli("probeset", "import", "--format", "trex-mc", str(FIXTURES / "trex_mc.csv"), "--out", str(out), "--json")
    assert proc.returncode == 3 and proc.stderr.count("rejected ") == 2
    meta = json.loads(proc.stdout)
    assert meta["kind"] == "icl-mc" and meta["items"] == 2 == len(out.read_text().splitlines())
    assert json.loads((tmp_path / "mc.meta.json").read_text())["source"]["rejected"] == 2
    stats = json.loads(run_cli("probeset", "stats", str(out), "--json", check=True).stdout)
    assert stats["by_relation"] == {"P36": 2}


def test_myriadlama_rows_without_objects_are_rejected_and_the_import_goes_on(tmp_path):
    """An empty obj_ents (and a line that is JSON but not an object) used to crash the import."""
    rows = [
        {"uuid": "m-1", "rel_uri": "P36", "sub_ent": "France", "obj_ents": [], "obj_aliases": [],
         "template": "The capital of [X] is [Y]."},
        [1, 2, 3],
        {"uuid": "m-1", "rel_uri": "P36", "sub_ent": "France", "obj_ents": ["Paris"], "obj_aliases": [],
         "template": "[X]'s capital is [Y]."},
        {"uuid": "m-2", "rel_uri": "P36", "sub_ent": "Italy", "obj_ents": ["Rome", ""], "obj_aliases": [],
         "template": "The capital of [X] is [Y]."},
        {"uuid": "m-3", "rel_uri": "P36", "sub_ent": "Spain", "obj_ents": "Madrid", "obj_aliases": [],
         "template": "The capital of [X] is [Y]."},
    ]
    path = tmp_path / "myriad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    items, report = import_items("myriadlama", [path])
    assert report.rows == 5 and report.items == 2
    assert report.rejected == [f"{path}:1: obj_ents: an empty list", f"{path}:2: not a JSON object (a list)",
                               f"{path}:4: obj_ents: an empty entry"]
    assert [(i["fact"], i["object_label"], i["gold"], [p["text"] for p in i["prompts"]]) for i in items] == [
        ("m-1", "Paris", ["Paris"], ["France's capital is [Y]."]),
        ("m-3", "Madrid", ["Madrid"], ["The capital of Spain is [Y]."])]
    # the CLI writes what was kept and names what was not (exit code 3)
    out = tmp_path / "myriad-items.jsonl"
    proc = run_cli("probeset", "import", "--format", "myriadlama", str(path), "--out", str(out))
    assert proc.returncode == 3 and len(out.read_text(encoding="utf-8").splitlines()) == 2
    assert [line for line in proc.stderr.splitlines() if line.startswith("rejected ")] == [
        f"rejected {line}" for line in report.rejected]


def _write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_lama_rows_that_repeat_an_id_are_rejected_naming_the_first(tmp_path):
    """An item id is the row's uuid, else subject|relation|object: a repeat would be one item twice,
    which eval would score twice straight through and once after a resume (issue 35 item 6)."""
    row = {"predicate_id": "P36", "sub_uri": "Q142", "sub_label": "France", "obj_uri": "Q90", "obj_label": "Paris"}
    path = _write_rows(tmp_path / "P36.jsonl", [
        {**row, "uuid": "u-1"}, {**row, "uuid": "u-2"}, {**row, "uuid": "u-1", "obj_label": "Lyon"}, row,
        {**row, "sub_uri": "Q183", "sub_label": "Germany"}, row])
    items, report = import_items("lama-trex", [path, path])
    assert [i["id"] for i in items] == ["cloze:u-1", "cloze:u-2", "cloze:Q142|P36|Q90", "cloze:Q183|P36|Q90"]
    assert report.rows == 12 and report.items == 4
    assert report.rejected == [
        f"{path}:3: id 'cloze:u-1' is also the id of the row at {path}:1",
        f"{path}:6: id 'cloze:Q142|P36|Q90' is also the id of the row at {path}:4",
        *[f"{path}:{n}: id {i!r} is also the id of the row at {path}:{first}"
          for n, i, first in ((1, "cloze:u-1", 1), (2, "cloze:u-2", 2), (3, "cloze:u-1", 1),
                              (4, "cloze:Q142|P36|Q90", 4), (5, "cloze:Q183|P36|Q90", 5),
                              (6, "cloze:Q142|P36|Q90", 4))]]
    out = tmp_path / "lama.jsonl"
    proc = run_cli("probeset", "import", "--format", "lama-trex", str(path), "--out", str(out))
    assert proc.returncode == 3 and proc.stderr.count("rejected ") == 2
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [i["id"] for i in items]


def test_myriadlama_rows_of_one_uuid_are_one_pair_and_each_prompt_once(tmp_path):
    row = {"uuid": "m-1", "rel_uri": "P36", "sub_ent": {"uri": "Q142", "label": "France"}, "obj_ents": ["Paris"],
           "obj_aliases": [], "template": "The capital of [X] is [Y]."}
    path = _write_rows(tmp_path / "m.jsonl", [
        row,
        {**row, "sub_ent": {"uri": "Q142", "label": "the French Republic"}},  # another name: another prompt
        {**row, "rel_uri": "P17"},
        {**row, "sub_ent": {"uri": "Q183", "label": "Germany"}},
        {**row, "template": "[X]'s capital is [Y]."},
        row])
    items, report = import_items("myriadlama", [path])
    assert [(p["subject_name"], p["template"]) for p in items[0]["prompts"]] == [
        ("France", "The capital of [X] is [Y]."), ("the French Republic", "The capital of [X] is [Y]."),
        ("France", "[X]'s capital is [Y].")]
    assert report.rejected == [
        f"{path}:3: uuid m-1: its first row is of Q142 P36, this one of Q142 P17 (one uuid is one subject-relation "
        "pair)",
        f"{path}:4: uuid m-1: its first row is of Q142 P36, this one of Q183 P36 (one uuid is one subject-relation "
        "pair)",
        f"{path}:6: template: uuid m-1 already has 'The capital of [X] is [Y].' for 'France'"]


def test_one_lm_eval_task_given_twice_is_refused(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "caps.jsonl").write_text(json.dumps({"q": "Capital of France?", "options": ["Lyon", "Paris"],
                                                              "label": 1}) + "\n")
    (tmp_path / "caps.yaml").write_text(
        "task: caps\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    validation: data/caps.jsonl\n"
        "validation_split: validation\noutput_type: multiple_choice\ndoc_to_text: \"{{q}}\"\n"
        "doc_to_choice: \"{{options}}\"\ndoc_to_target: label\n")
    monkeypatch.chdir(tmp_path)
    items, _ = import_items("lm-eval", ["caps.yaml"])
    assert [i["id"] for i in items] == ["lm-eval:caps:0"]
    with pytest.raises(ValueError) as refused:
        import_items("lm-eval", ["caps.yaml", "caps.yaml"])
    assert str(refused.value) == ("caps.yaml: task 'caps' is also the task of caps.yaml: its items would take the "
                                  "same ids (lm-eval:TASK:N); import one of them, or give one another `task:` name")

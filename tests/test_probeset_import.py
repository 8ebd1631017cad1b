"""Importers of existing probe sets, on small files in their formats (written here)."""

from __future__ import annotations

import json
from pathlib import Path

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

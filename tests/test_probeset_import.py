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

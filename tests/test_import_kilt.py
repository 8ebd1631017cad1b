"""`probeset import --format kilt-trex`: KILT's slot-filling rows (the format of the KILT README's
"KILT data format"; tests/fixtures/kilt written here, as no public repository holds KILT's T-REx rows)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from factprobe.probes.formats.import_kilt import kilt_trex_items, relation_labels
from factprobe.probes.formats.import_rows import ImportReport
from factprobe.probes.formats.importers import import_items

DEV = Path(__file__).parent / "fixtures" / "kilt" / "trex-dev-kilt.jsonl"


def test_the_relation_is_read_by_its_label_and_every_answer_is_gold():
    items, report = import_items("kilt-trex", [DEV])
    assert (report.rows, report.items) == (6, 3)
    assert report.rejected == [
        f"{DEV}:4: output: no answer (KILT's test file holds none: import the train or dev file)",
        f"{DEV}:5: input: the relation 'military branch' is the label of none of our templates' properties "
        "(add a template file naming it: FACTPROBE_TEMPLATES)",
        f"{DEV}:6: input: 'Zog I place of birth' is not KILT's slot filling input (subject [SEP] relation)"]
    lee, cnut, alexandria = items
    assert (lee["id"], lee["relation"], lee["relation_label"], lee["subject"], lee["subject_label"]) == (
        "cloze:kilt-trex:kilt-trex-dev-1", "P19", "place of birth", None, "Lee Kuan Yew")
    assert (lee["object_label"], lee["gold"]) == ("Singapore", ["Singapore", "Singapura"])
    assert lee["provenance"] == [{"wikipedia_id": "18403", "title": "Lee Kuan Yew"}]
    assert lee["kilt_meta"] == {"template_questions": ["Where was Lee Kuan Yew born?"]}
    assert (cnut["relation"], cnut["kilt_meta"], alexandria["relation"], alexandria["provenance"]) == (
        "P27", None, "P190", [])
    assert [item["prompts"] for item in items] == [[], [], []]


def test_labels_come_from_the_template_files_in_use():
    labels = relation_labels()
    assert (labels["place of birth"], labels["country of citizenship"], labels["date of birth"]) == (
        "P19", "P27", "P569")
    items = list(kilt_trex_items([DEV], {"P19": ["[X] was born in [Y] ."]}, ImportReport(),
                                 labels={"place of birth": "P19"}))
    assert [p["text"] for p in items[0]["prompts"]] == ["Lee Kuan Yew was born in [Y] ."]
    assert [item["id"] for item in items] == ["cloze:kilt-trex:kilt-trex-dev-1"]


def test_cli_imports_with_our_templates(tmp_path):
    out = tmp_path / "kilt.jsonl"
    proc = run_cli("probeset", "import", "--format", "kilt-trex", str(DEV), "--with-templates", "--out", str(out),
                   "--json")
    assert proc.returncode == 3  # rows were rejected, the rest written
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [item["relation"] for item in items] == ["P19", "P27", "P190"]
    assert all(item["prompts"] and item["subject_label"] in item["prompts"][0]["text"] for item in items)

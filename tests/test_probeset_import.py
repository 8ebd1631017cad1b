"""Importers of existing probe sets, on small files in their formats (written here)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.probes.formats.importers import import_items

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


# -- the LAMA family on real rows (tests/data/lama: sources and licences in tests/data/README.md) ----

LAMA = Path(__file__).parent / "data" / "lama"
PARAREL = LAMA / "pararel" / "P36.jsonl"  # ParaRel's whole P36 file: 471 rows of sub_label, obj_label, uuid
GOOGLE_RE = [LAMA / "google_re" / f"{name}_test.jsonl" for name in ("place_of_birth", "date_of_birth", "place_of_death")]


def test_pararel_rows_take_their_relation_from_the_file_name():
    items, report = import_items("pararel", [PARAREL], {"P36": ["The capital of [X] is [Y]."]})
    assert (report.rows, report.items, report.rejected) == (471, 471, [])
    assert len({i["id"] for i in items}) == 471
    assert items[0] == {
        "id": "cloze:4168a6fb-d710-4678-93f9-9447927a0a35", "kind": "cloze", "split": "test",
        "fact": "4168a6fb-d710-4678-93f9-9447927a0a35", "relation": "P36", "relation_label": None, "subject": None,
        "subject_label": "Cook County", "object": None, "object_label": "Chicago", "gold": ["Chicago"],
        "frequency": None, "bucket": None, "source_format": "pararel",
        "prompts": [{"template": "The capital of [X] is [Y].", "template_id": 0, "subject_name": "Cook County",
                     "text": "The capital of Cook County is [Y]."}]}
    assert [(i["subject_label"], i["object_label"]) for i in items[-2:]] == [("Masovian Voivodeship", "Warsaw"),
                                                                              ("Flanders", "Brussels")]
    _, twice = import_items("pararel", [PARAREL, PARAREL])  # the file read twice: each row's id taken once
    assert (twice.rows, twice.items, len(twice.rejected)) == (942, 471, 471)
    assert twice.rejected[0] == (f"{PARAREL}:1: id 'cloze:4168a6fb-d710-4678-93f9-9447927a0a35' is also the id of "
                                 f"the row at {PARAREL}:1")


def test_pararel_rows_given_as_lama_trex_are_named_with_the_format_that_reads_them():
    """Issue 37 item 5: all 471 were rejected with "predicate_id: missing" and no word of why."""
    items, report = import_items("lama-trex", [PARAREL])
    assert (report.rows, items) == (471, [])
    assert report.rejected[0] == (f"{PARAREL}:1: predicate_id: missing (ParaRel's rows name their relation only in "
                                  "the file's name: --format pararel)")
    assert len(report.rejected) == 471


def test_pararel_relation_from_the_option_when_the_file_name_has_none(tmp_path):
    renamed = tmp_path / "capitals.jsonl"
    renamed.write_bytes(PARAREL.read_bytes())
    with pytest.raises(ValueError) as refused:
        import_items("pararel", [renamed])
    assert str(refused.value) == (f"{renamed}: no relation for its rows: ParaRel rows carry none, its name is not a "
                                  "property id (like P36.jsonl) and --relation was not given")
    items, report = import_items("pararel", [renamed], relation="P36")
    assert (report.items, {i["relation"] for i in items}) == (471, {"P36"})
    with pytest.raises(ValueError) as refused:
        import_items("pararel", [PARAREL], relation="P19")
    assert str(refused.value) == (f"{PARAREL}: its name says relation P36, --relation says P19: import the files of "
                                  "other relations without --relation")
    with pytest.raises(ValueError) as refused:
        import_items("pararel", [renamed], relation="capital")
    assert str(refused.value) == "--relation 'capital': not a property id (like P36)"
    with pytest.raises(ValueError) as refused:
        import_items("lama-trex", [PARAREL], relation="P36")
    assert str(refused.value) == "--relation is for --format pararel: lama-trex rows name their own relation"


def test_a_wrong_pararel_row_is_named_and_the_rest_import(tmp_path):
    good = PARAREL.read_text(encoding="utf-8").splitlines()[:2]
    path = tmp_path / "P36.jsonl"
    path.write_text("\n".join([good[0], '{"sub_label": "Nebraska", "uuid": "x-1"}', "not json", good[1],
                               '{"sub_label": "Texas", "obj_label": "Austin", "predicate_id": "P19"}',
                               '{"sub_label": ["Ohio"], "obj_label": "Columbus"}']) + "\n", encoding="utf-8")
    items, report = import_items("pararel", [path])
    assert [i["subject_label"] for i in items] == ["Cook County", "Fort Bend County"]
    assert report.rejected == [f"{path}:2: obj_label: missing", f"{path}:3: not JSON (Expecting value)",
                               f"{path}:5: predicate_id: P19, but the file's relation is P36",
                               f"{path}:6: sub_label: not a string (a list)"]


def test_cli_imports_pararel_by_file_name_or_option_and_says_when_it_has_neither(tmp_path):
    out = tmp_path / "pararel.jsonl"
    proc = run_cli("probeset", "import", "--format", "pararel", str(PARAREL), "--out", str(out), "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["items"] == 471
    assert json.loads(out.read_text().splitlines()[0])["relation"] == "P36"
    renamed = tmp_path / "capitals.jsonl"
    renamed.write_bytes(PARAREL.read_bytes())
    proc = run_cli("probeset", "import", "--format", "pararel", str(renamed), "--out", str(tmp_path / "x.jsonl"))
    assert proc.returncode == 2 and proc.stderr == (
        f"error: {renamed}: no relation for its rows: ParaRel rows carry none, its name is not a property id "
        "(like P36.jsonl) and --relation was not given\n")
    proc = run_cli("probeset", "import", "--format", "pararel", str(renamed), "--relation", "P36",
                   "--out", str(tmp_path / "x.jsonl"))
    assert proc.returncode == 0 and proc.stdout == f"471 cloze items from 471 pararel rows -> {tmp_path / 'x.jsonl'}\n"


def test_lama_trex_real_rows_become_cloze_items():
    path = LAMA / "trex" / "P19.jsonl"
    items, report = import_items("lama-trex", [path], {"P19": ["[X] was born in [Y]."]})
    assert (report.rows, report.items, report.rejected) == (3, 3, [])
    assert [(i["fact"], i["subject"], i["subject_label"], i["relation"], i["object"], i["gold"]) for i in items] == [
        ("6a9d91c1-eb9b-4142-8371-3c063ec40700", "Q1886736", "Allan Peiper", "P19", "Q2643563", ["Alexandra"]),
        ("cf7dab6a-4050-4b37-8f19-b84070ce8fad", "Q333193", "Anthony Barber", "P19", "Q58900", ["Doncaster"]),
        ("9f747ed9-2ead-46d2-8914-80bce0d09335", "Q7152639", "Paul Mounsey", "P19", "Q22", ["Scotland"])]
    assert items[0]["prompts"][0]["text"] == "Allan Peiper was born in [Y]."


def test_google_re_rows_become_wikidata_relations_and_keep_their_freebase_ids():
    items, report = import_items("lama-google-re", GOOGLE_RE, {"P19": ["[X] was born in [Y]."]})
    assert (report.rows, report.items, report.rejected) == (11, 11, [])
    assert [i["relation"] for i in items] == ["P19"] * 5 + ["P569"] * 3 + ["P20"] * 3
    # a subject LAMA gives only as a Freebase mid (sub_w null) has no Wikidata id: None, never the mid
    assert items[0] == {
        "id": "cloze:9c68053f-0e3a-4db1-ab37-4e12d89b26d8", "kind": "cloze", "split": "test",
        "fact": "9c68053f-0e3a-4db1-ab37-4e12d89b26d8", "relation": "P19", "relation_label": None, "subject": None,
        "subject_label": "Khatchig Mouradian", "object": "Q822", "object_label": "Lebanon", "gold": ["Lebanon"],
        "frequency": None, "bucket": None, "source_format": "lama-google-re",
        "prompts": [{"template": "[X] was born in [Y].", "template_id": 0, "subject_name": "Khatchig Mouradian",
                     "text": "Khatchig Mouradian was born in [Y]."}],
        "source_relation": "/people/person/place_of_birth",
        "freebase": {"subject": "/m/047fprg", "object": "/m/04hqz"}, "object_value": None}
    corrsin = items[4]
    assert (corrsin["subject"], corrsin["object"], corrsin["freebase"]) == (
        "Q7599544", "Q1345", {"subject": "/m/0cn_13r", "object": "/m/0dclg"})
    # a date of birth is a value, not an entity: the year LAMA asks for is the gold, the full date kept
    romero = items[6]
    assert (romero["subject"], romero["object"], romero["object_label"], romero["object_value"], romero["freebase"],
            romero["prompts"]) == ("Q7723827", None, "1982", "1982-05-22", {"subject": "/m/0hrd6l2", "object": None},
                                   [])
    assert [(i["subject_label"], i["subject"], i["object"]) for i in items[8:]] == [
        ("John Renshaw Starr", "Q3182510", "Q39"), ("Diego de Arroyo", "Q5274857", "Q2807"),
        ("Art Murakowski", None, "Q856860")]
    assert report.notes == {"items whose subject has only a Freebase mid (no Wikidata id in the row)": 6}
    assert report.to_dict() == {"rows": 11, "items": 11, "rejected": 0, "notes": report.notes}


def test_a_wrong_google_re_row_is_named(tmp_path):
    row = json.loads(GOOGLE_RE[0].read_text(encoding="utf-8").splitlines()[4])  # Stanley Corrsin
    dob = json.loads(GOOGLE_RE[1].read_text(encoding="utf-8").splitlines()[1])  # Pilar Romero, 1982-05-22
    path = _write_rows(tmp_path / "google_re.jsonl", [
        {**row, "pred": "/people/person/nationality"}, {**row, "sub": ""}, {**row, "sub_w": "m.0cn_13r"},
        {**row, "obj": "Philadelphia"}, {**dob, "obj": "22 May 1982"}, {k: v for k, v in row.items() if k != "uuid"}])
    items, report = import_items("lama-google-re", [path])
    assert report.rejected == [
        f"{path}:1: pred: '/people/person/nationality' is not one of Google-RE's relations "
        "(/people/person/place_of_birth, /people/person/date_of_birth, /people/deceased_person/place_of_death)",
        f"{path}:2: sub: missing",
        f"{path}:3: sub_w: 'm.0cn_13r' is not a Wikidata item id",
        f"{path}:4: obj: 'Philadelphia' is not a Freebase mid (/m/...)",
        f"{path}:5: obj: '22 May 1982' is not a date (YYYY, YYYY-MM or YYYY-MM-DD)"]
    assert [i["id"] for i in items] == ["cloze:/m/0cn_13r|P19|/m/0dclg"]


def test_cli_imports_google_re_and_notes_the_freebase_only_subjects(tmp_path):
    out = tmp_path / "google_re.jsonl"
    proc = run_cli("probeset", "import", "--format", "lama-google-re", *map(str, GOOGLE_RE), "--out", str(out))
    assert proc.returncode == 0
    assert proc.stdout == f"11 cloze items from 11 lama-google-re rows -> {out}\n"
    assert proc.stderr == "note: 6 items whose subject has only a Freebase mid (no Wikidata id in the row)\n"
    assert json.loads((tmp_path / "google_re.meta.json").read_text())["source"]["notes"] == {
        "items whose subject has only a Freebase mid (no Wikidata id in the row)": 6}


def test_parquet_without_pyarrow_names_the_extra_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` now raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    out = tmp_path / "mc.jsonl"
    proc = run_cli("probeset", "import", "--format", "trex-mc", str(FIXTURES / "trex_mc.csv"), "--out", str(out),
                   "--parquet")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "error: --parquet needs pyarrow (pip install 'factprobe[parquet]')\n"
    assert list(tmp_path.iterdir()) == []  # checked before the import writes anything


def test_google_re_with_templates_gives_every_item_a_prompt_dates_of_birth_lamas_too(tmp_path):
    """factprobe ships P569 (date of birth), LAMA's own Google-RE cloze second (the first ends with [Y])."""
    out = tmp_path / "google_re.jsonl"
    proc = run_cli("probeset", "import", "--format", "lama-google-re", *map(str, GOOGLE_RE), "--out", str(out),
                   "--with-templates")
    assert proc.returncode == 0, proc.stderr
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # LAMA's own "[X] was born in [Y] ." and "[X] died in [Y] ." join the six shipped (probes/templates/lama/);
    # its date of birth is the shipped P569's second already
    assert [len(i["prompts"]) for i in items] == [7] * 5 + [6] * 3 + [7] * 3
    assert [p["template"] for p in items[0]["prompts"]][-1] == "[X] was born in [Y] ."
    romero = items[6]
    assert (romero["relation"], romero["gold"], [p["text"] for p in romero["prompts"]][:2]) == (
        "P569", ["1982"], ["Pilar Romero was born in the year [Y].", "Pilar Romero (born [Y])."])

"""`factprobe templates import` (issue 46 item 1): LAMA's relations.jsonl, ParaRel's pattern files
and mLAMA's templates.jsonl read into factprobe's template files, each template with its words and
the file and line it came from; LAMA's own template shipped for every LAMA T-REx relation and
Google-RE's date of birth, so a LAMA import with --with-templates asks LAMA's exact prompt.

Real files: tests/data/lama/relations.jsonl (LAMA's 41 T-REx relations) and
tests/data/lama/pararel_patterns/P279.jsonl (ParaRel's 4 patterns of P279); sources in
tests/data/README.md. mLAMA's rows follow its published schema, LAMA's fields translated."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from factprobe.probes.templates import LAMA_DIR, load_dir, load_file, load_templates
from factprobe.probes.templates.imported import read_templates

DATA = Path(__file__).parent / "data" / "lama"
RELATIONS = DATA / "relations.jsonl"
PATTERNS = DATA / "pararel_patterns" / "P279.jsonl"


def test_lamas_relations_file_gives_one_exact_template_per_relation_with_its_line(tmp_path):
    out = tmp_path / "lama"
    proc = run_cli("templates", "import", "--format", "lama", str(RELATIONS), "--out", str(out), "--json", check=True)
    summary = json.loads(proc.stdout)
    assert (summary["rows"], summary["templates"], len(summary["relations"]), summary["rejected"]) == (41, 41, 41, [])
    p1412 = load_file(out / "P1412.yaml")
    assert [(t.text, t.source, t.origin) for t in p1412.cloze] == [
        ("[X] used to communicate in [Y] .", "manual", "relations.jsonl:13")]
    assert p1412.label == "languages spoken, written or signed"
    # a second import adds nothing: the same texts are already there
    run_cli("templates", "import", "--format", "lama", str(RELATIONS), "--out", str(out), check=True)
    assert len(load_file(out / "P1412.yaml").cloze) == 1
    # the shipped folder is this import of the real file, plus Google-RE's date of birth
    shipped = {e.relation: e for e in load_dir(LAMA_DIR)}
    assert {r: [(t.text, t.origin) for t in e.cloze] for r, e in shipped.items() if r != "P569"} == {
        e.relation: [(t.text, t.origin) for t in e.cloze] for e in load_dir(out)}
    assert [t.text for t in shipped["P569"].cloze] == ["[X] (born [Y])."]


def test_a_pararel_pattern_file_gives_its_paraphrases_to_its_relation(tmp_path):
    found = read_templates("pararel", [PATTERNS])
    [entry] = found.found.values()
    assert entry.relation == "P279" and found.rejected == []
    # white space collapsed, as every template file is read ("[X],  a type of [Y]." has two)
    assert [(t.text, t.origin) for t in entry.cloze] == [
        ("[X] is a subclass of [Y].", "P279.jsonl:1"), ("[X], which is a subclass of [Y].", "P279.jsonl:2"),
        ("[X], a subclass of [Y].", "P279.jsonl:3"), ("[X], a type of [Y].", "P279.jsonl:4")]
    renamed = tmp_path / "patterns.jsonl"
    renamed.write_bytes(PATTERNS.read_bytes())
    assert read_templates("pararel", [renamed]).rejected[0].endswith("names no property id ('patterns'); give --relation")
    assert set(read_templates("pararel", [renamed], relation="P279").found) == {("P279", "en")}


def test_mlama_templates_go_under_their_language(tmp_path):
    folder = tmp_path / "mlama1.1" / "fr"
    folder.mkdir(parents=True)
    rows = [{"relation": "P19", "template": "[X] est né à [Y] .", "label": "lieu de naissance"},
            {"relation": "P36", "template": "La capitale de [X] est [Y] ."}]
    (folder / "templates.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                            encoding="utf-8")
    out = tmp_path / "out"
    run_cli("templates", "import", "--format", "mlama", str(folder / "templates.jsonl"), "--out", str(out), check=True)
    p19 = load_templates([out])["P19"]
    assert [t.text for t in p19.in_language("fr").cloze] == ["[X] est né à [Y] ."]
    assert p19.in_language("fr").label == "lieu de naissance"
    assert "[X] was born in [Y]." in [t.text for t in p19.cloze]  # the shipped English stay


def test_rows_that_are_no_template_cost_themselves_by_line(tmp_path):
    path = tmp_path / "relations.jsonl"
    path.write_text("\n".join([RELATIONS.read_text(encoding="utf-8").splitlines()[0], "{not json",
                               json.dumps({"relation": "P36"}), json.dumps({"relation": "P36", "template": "[X] ."}),
                               json.dumps({"relation": "capital", "template": "[X] has [Y] ."})]) + "\n",
                    encoding="utf-8")
    proc = run_cli("templates", "import", "--format", "lama", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 3
    assert [line.split(": ", 1)[0] for line in proc.stderr.splitlines() if line.startswith("rejected")] == [
        f"rejected {path}:{n}" for n in (2, 3, 4, 5)]
    assert "1 templates of 1 relations from 5 lama rows" in proc.stdout
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["P1001.yaml"]


def test_a_file_there_that_is_no_template_file_is_not_replaced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "P279.yaml").write_text("my notes\n", encoding="utf-8")
    proc = run_cli("templates", "import", "--format", "pararel", str(PATTERNS), "--out", str(out))
    assert proc.returncode == 2 and (out / "P279.yaml").read_text(encoding="utf-8") == "my notes\n"
    run_cli("templates", "import", "--format", "pararel", str(PATTERNS), "--out", str(out), "--overwrite", check=True)
    assert len(load_file(out / "P279.yaml").cloze) == 4


def test_a_lama_import_with_templates_asks_lamas_exact_prompt(tmp_path):
    out = tmp_path / "p19.jsonl"
    run_cli("probeset", "import", "--format", "lama-trex", str(DATA / "trex" / "P19.jsonl"), "--with-templates",
            "--out", str(out), check=True)
    item = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    templates = [p["template"] for p in item["prompts"]]
    assert "[X] was born in [Y] ." in templates and "[X] was born in [Y]." in templates
    assert item["prompts"][templates.index("[X] was born in [Y] .")]["text"] == f"{item['subject_label']} was born in [Y] ."

"""`probeset import --format popqa`: PopQA's published row (its README, tests/data/README.md) and
rows of its published schema written here, each bad one named by file and line."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from factprobe.probes.formats.import_popqa import POPQA_RELATIONS
from factprobe.probes.formats.importers import FORMATS, import_items

REAL = Path(__file__).parent / "data" / "popqa" / "readme_row.tsv"
HEADER = ["id", "subj", "prop", "obj", "subj_id", "prop_id", "obj_id", "s_aliases", "o_aliases", "s_uri", "o_uri",
          "s_wiki_title", "o_wiki_title", "s_pop", "o_pop", "question", "possible_answers"]
WD = "http://www.wikidata.org/entity/"


def _row(number: str, prop: str = "capital", s_pop: str = "5000", answers: str = '["Paris"]', **cells) -> str:
    row = {"id": number, "subj": "France", "prop": prop, "obj": "Paris", "subj_id": "11", "prop_id": "7",
           "obj_id": "12", "s_aliases": "[]", "o_aliases": "[]", "s_uri": WD + "Q142", "o_uri": WD + "Q90",
           "s_wiki_title": "France", "o_wiki_title": "Paris", "s_pop": s_pop, "o_pop": "900",
           "question": "What is the capital of France?", "possible_answers": answers, **cells}
    return "\t".join(row[k] for k in HEADER) + "\n"


def test_the_published_row_keeps_ids_names_aliases_answers_and_page_views():
    items, report = import_items("popqa", [REAL])
    assert report.to_dict() == {"rows": 1, "items": 1, "rejected": 0}
    (item,) = items
    assert (item["id"], item["fact"], item["kind"], item["source_format"]) == (
        "cloze:popqa:4222362", "popqa:4222362", "cloze", "popqa")
    # occupation is PopQA's prop_id 22, Wikidata's P106; the entities come from s_uri / o_uri
    assert (item["relation"], item["relation_label"], item["subject"], item["object"]) == (
        "P106", "occupation", "Q5543720", "Q82955")
    assert (item["subject_label"], item["object_label"]) == ("George Rankin", "politician")
    assert item["subject_aliases"] == ["George James Rankin"]
    assert item["object_aliases"] == ["political leader", "political figure", "polit.", "pol"]
    assert item["gold"] == ["politician", "political leader", "political figure", "polit.", "pol"]
    assert item["question"] == "What is George Rankin's occupation?"
    assert (item["popularity"], item["object_popularity"]) == (142, 25692)
    assert item["wiki_titles"] == {"subject": "George Rankin", "object": "Politician"}
    assert item["popqa"] == {"prop_id": "22", "subj_id": "1850297", "obj_id": "2834605"}


def test_the_sixteen_relations_by_name():
    assert len(POPQA_RELATIONS) == 16 == len(set(POPQA_RELATIONS.values()))
    assert (POPQA_RELATIONS["capital of"], POPQA_RELATIONS["capital"], POPQA_RELATIONS["color"]) == (
        "P1376", "P36", "P462")


def test_a_bad_row_costs_only_itself_named_by_file_and_line(tmp_path):
    path = tmp_path / "popQA.tsv"
    path.write_text("\t".join(HEADER) + "\n" + _row("1") + _row("2", prop="spouse") + _row("3", s_pop="many")
                    + _row("4", answers="[]") + _row("1") + _row("5", s_uri=WD + "France")
                    + _row("6", prop="mother", answers='["Marie", "Maman"]', o_aliases='["Maman"]')
                    + _row("7", s_aliases='"Francia"') + "8\tFrance\n"
                    + _row("9", s_aliases='"[""a"", 1]"'), encoding="utf-8")
    items, report = import_items("popqa", [path])
    assert (report.rows, report.items) == (10, 2)
    assert report.rejected == [
        f"{path}:3: prop: 'spouse' is not one of PopQA's 16 relations ({', '.join(POPQA_RELATIONS)})",
        f"{path}:4: s_pop: 'many' is not a number of page views (a whole number, 0 or more)",
        f"{path}:5: possible_answers: an empty list",
        f"{path}:6: id 'cloze:popqa:1' is also the id of the row at {path}:2",
        f"{path}:7: s_uri: '{WD}France' is not a Wikidata entity (…/entity/Q…)",
        f"{path}:9: s_aliases: not JSON (Expecting value)",
        f"{path}:10: 2 cells, the header names 17",
        f"{path}:11: s_aliases: not a list of names"]
    paris, mother = items
    assert (paris["relation"], paris["popularity"], paris["gold"]) == ("P36", 5000, ["Paris"])
    # obj first, then the answers not yet named
    assert (mother["relation"], mother["gold"], mother["object_aliases"]) == ("P25", ["Paris", "Marie", "Maman"],
                                                                              ["Maman"])


def test_jsonl_copy_with_lists_reads_the_same(tmp_path):
    row = dict(zip(HEADER, _row("1").rstrip("\n").split("\t")))
    row.update({"s_aliases": ["République française"], "o_aliases": [], "possible_answers": ["Paris"],
                "s_pop": 5000, "o_pop": 900})
    path = tmp_path / "popqa.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (item,), report = import_items("popqa", [path])
    assert report.rejected == []
    assert (item["subject_aliases"], item["popularity"], item["object_popularity"]) == (
        ["République française"], 5000, 900)


def test_cli_imports_popqa_with_templates_and_says_what_popularity_counts(tmp_path):
    out = tmp_path / "popqa.jsonl"
    proc = run_cli("probeset", "import", "--format", "popqa", str(REAL), "--with-templates", "--out", str(out),
                   "--json", check=True)
    assert json.loads(proc.stdout)["kind"] == "cloze"
    (item,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert item["prompts"][0]["text"] == "George Rankin works as a [Y]."
    source = json.loads((tmp_path / "popqa.meta.json").read_text())["source"]
    assert source["popularity"].startswith("s_pop: the subject's monthly Wikipedia page views")
    assert (source["rows"], source["items"], source["rejected"]) == (1, 1, 0)


def test_the_cli_choices_are_the_declared_formats():
    proc = run_cli("probeset", "import", "--format", "no-such", str(REAL), "--out", "x.jsonl")
    assert proc.returncode == 2
    for name in FORMATS:
        assert name in proc.stderr

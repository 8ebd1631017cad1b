"""`probeset import --format x-factr`: real X-FACTR rows, prompts, genders and aliases
(tests/data/xfactr, sliced from X-FACTR's repository) with a names file written here in the format
X-FACTR's scripts write it (tests/fixtures/xfactr: the repository does not hold its own), read in
Russian, Chinese and French."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.probes.formats.import_xfactr import (CASE_UNINFLECTED, ENGLISH_NAME, GENDER_UNKNOWN, NOT_ASKED, NO_PROMPT,
                                            render)
from factprobe.probes.formats.importers import import_items

HERE = Path(__file__).parent
NAMES = HERE / "fixtures" / "xfactr" / "mTRExf_unicode_escape.txt"
FR_P19 = "[X] est [né;X-Gender=MASC|née;X-Gender=FEM] [PREPLOC;Y] [Y] ."
RU_P19 = "[X.Nom] [родился;X-Gender=MASC|родилась;X-Gender=FEM|родилось;X-Gender=NEUT] в [Y.Ess] ."


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """X-FACTR's data folder: the real slice, and the names file beside it as X-FACTR keeps it."""
    folder = tmp_path / "data"
    shutil.copytree(HERE / "data" / "xfactr" / "data", folder)
    shutil.copy(NAMES, folder / NAMES.name)
    return folder


def _facts(data: Path) -> list[Path]:
    return [data / "mTRExf" / "sub" / "P19.jsonl", data / "mTRExf" / "sub" / "P37.jsonl"]


def _by_subject(items: list[dict]) -> dict[str, dict]:
    return {item["subject"]: item for item in items}


def test_russian_cases_ask_the_name_as_written_and_the_verb_agrees_with_the_gender_file(data):
    items, report = import_items("x-factr", _facts(data), language="ru")
    assert report.to_dict() == {"rows": 9, "items": 9, "rejected": 0, "notes": {CASE_UNINFLECTED: 9}}
    found = _by_subject(items)
    jesus, catherine, arabs = found["Q302"], found["Q179718"], found["Q204333"]  # male, female, none
    assert [p["text"] for p in jesus["prompts"]] == ["Иисус Христос родился в [Y] ."]
    assert [p["text"] for p in catherine["prompts"]] == ["Екатерина Александрийская родилась в [Y] ."]
    assert [p["text"] for p in arabs["prompts"]] == ["Арабы Израиля родилось в [Y] ."]
    assert (jesus["subject_gender"], catherine["subject_gender"], arabs["subject_gender"]) == (
        "male", "female", "none")
    assert jesus["object_gender"] == "none"
    assert jesus["xfactr_prompt"] == RU_P19
    # the object's name in the language first, then its aliases there (alias/mTRExf/ru.txt)
    assert jesus["gold"] == ["Назарет", "Нацрат"]
    assert arabs["gold"] == ["Израиль", "Государство Израиль"]
    qing = found["Q8733"]
    assert [p["text"] for p in qing["prompts"]] == ["Официальный язык Империя Цин — [Y] ."]
    assert (qing["id"], qing["relation"], qing["object"], qing["language"], qing["count"]) == (
        "cloze:x-factr:ru:72bef92a-7ee0-11ea-9dd9-1913630c02b2", "P37", "Q7850", "ru", 10525)
    assert qing["source_format"] == "x-factr"


def test_chinese_falls_back_to_the_english_name_as_x_factr_does(data):
    items, report = import_items("x-factr", _facts(data), language="zh")
    # Catherine of Alexandria and the Arab citizens of Israel have no Chinese name in the names file
    assert report.to_dict() == {"rows": 9, "items": 9, "rejected": 0, "notes": {ENGLISH_NAME: 2}}
    found = _by_subject(items)
    assert [p["text"] for p in found["Q179718"]["prompts"]] == ["Catherine of Alexandria的出生地是[Y]。"]
    assert found["Q179718"]["object_label"] == "亚历山大港"
    assert [p["text"] for p in found["Q131248"]["prompts"]] == ["李光耀的出生地是[Y]。"]
    assert found["Q8733"]["prompts"][0]["text"] == "清朝的官方语言是[Y]。"
    assert found["Q8733"]["gold"][0] == "汉语"


def test_french_prompts_with_article_rules_are_kept_but_not_asked(data):
    items, report = import_items("x-factr", _facts(data), language="fr")
    # Cnut has no French name: the English one, with his French aliases as they are
    assert report.to_dict() == {"rows": 9, "items": 9, "rejected": 0,
                                "notes": {ENGLISH_NAME: 1, NOT_ASKED: 9}}
    found = _by_subject(items)
    assert [item["prompts"] for item in items] == [[]] * 9
    assert found["Q302"]["xfactr_prompt"] == FR_P19
    assert found["Q134128"]["subject_label"] == "Cnut the Great"
    assert found["Q60699"]["gold"] == ["Albanie", "République d'Albanie"]


def test_render_each_mark():
    assert render("[X] werd geboren in [Y] .", None) == ("[X] werd geboren in [Y] .", set())
    assert render(RU_P19, "female") == ("[X] родилась в [Y] .", {CASE_UNINFLECTED})
    # Hebrew offers no neuter form: the first, noted
    assert render("[X] [נולד;X-Gender=MASC|נולדה;X-Gender=FEM] ב[Y] .", "none") == (
        "[X] נולד ב[Y] .", {GENDER_UNKNOWN})
    assert render("[X] [נולד;X-Gender=MASC|נולדה;X-Gender=FEM] ב[Y] .", None) == (
        "[X] נולד ב[Y] .", {GENDER_UNKNOWN})
    assert render(FR_P19, "male") == (None, {NOT_ASKED})
    # an agreement with the object (X-FACTR's Y-Gender) takes the object's gender
    p1923 = "[Y.Nom] [принял;Y-Gender=MASC|приняла;Y-Gender=FEM|приняло;Y-Gender=NEUT] участие в [X.Ess] ."
    assert render(p1923, "male", "female") == ("[Y] приняла участие в [X] .", {CASE_UNINFLECTED})
    assert render("[X] [toca;X-Number=SG|tocan;X-Number=PL] musica de [Y] .", "male") == (None, {NOT_ASKED})
    assert render("[X.Gen] resmi dili [Y;be] .", None) == (None, {NOT_ASKED})
    assert render("[X] [Y.IN+ESS] született .", None) == ("[X] [Y] született .", {CASE_UNINFLECTED})


def test_a_bad_row_costs_only_itself_and_a_language_without_a_column_is_refused(data, tmp_path):
    facts = data / "mTRExf" / "sub" / "P19.jsonl"
    lines = facts.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"predicate_id": "P19"', '"predicate_id": "P20"')
    lines[2] = lines[2].replace('"sub_uri": "Q131248"', '"sub_uri": "Lee"')
    facts.write_text("\n".join([*lines, "{not json"]) + "\n", encoding="utf-8")
    items, report = import_items("x-factr", [facts], language="ru")
    assert (report.rows, report.items) == (7, 4)
    assert report.rejected[:2] == [f"{facts}:2: predicate_id: 'P20' is not the file's relation P19",
                                   f"{facts}:3: sub_uri: 'Lee' is not a Wikidata item id"]
    assert report.rejected[2].startswith(f"{facts}:7: ")
    with pytest.raises(ValueError, match="no column for language 'xx'"):
        import_items("x-factr", [facts], language="xx")
    with pytest.raises(ValueError, match="give --language"):
        import_items("x-factr", [facts])
    with pytest.raises(ValueError, match="not in X-FACTR's layout"):
        import_items("x-factr", [tmp_path / "P19.jsonl"], language="ru")


def test_a_relation_without_a_prompt_in_the_language_is_noted(data):
    prompts = data / "TREx_prompts.csv"
    header, *rows = prompts.read_text(encoding="utf-8").splitlines()
    prompts.write_text("\n".join([header, *(r for r in rows if not r.startswith("P37,"))]) + "\n",
                       encoding="utf-8")
    items, report = import_items("x-factr", [data / "mTRExf" / "sub" / "P37.jsonl"], language="zh")
    assert report.to_dict()["notes"] == {NO_PROMPT: 3}
    assert [item["prompts"] for item in items] == [[]] * 3


def test_cli_imports_in_the_given_language_and_records_it(data, tmp_path):
    out = tmp_path / "xfactr.jsonl"
    proc = run_cli("probeset", "import", "--format", "x-factr", *map(str, _facts(data)), "--language", "zh",
                   "--out", str(out), "--json", check=True)
    assert json.loads(proc.stdout)["kind"] == "cloze"
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(items) == 9 and {item["language"] for item in items} == {"zh"}
    meta = json.loads((tmp_path / "xfactr.meta.json").read_text())
    assert meta["params"]["language"] == "zh"
    # the files beside the rows are tied to their bytes too
    assert sorted(meta["source"]["resources"]) == ["data/TREx_prompts.csv", "data/mTRExf_gender.txt",
                                                   "data/mTRExf_unicode_escape.txt", "mTRExf/zh.txt"]
    assert meta["source"]["resources"]["data/TREx_prompts.csv"] == hashlib.sha256(
        (data / "TREx_prompts.csv").read_bytes()).hexdigest()
    refused = run_cli("probeset", "import", "--format", "x-factr", str(_facts(data)[0]), "--language", "zh",
                      "--with-templates", "--out", str(tmp_path / "t.jsonl"))
    assert refused.returncode == 2 and "its own language's templates" in refused.stderr
    refused = run_cli("probeset", "import", "--format", "popqa", str(_facts(data)[0]), "--language", "zh",
                      "--out", str(tmp_path / "p.jsonl"))
    assert refused.returncode == 2 and "--language is for --format mlama or x-factr" in refused.stderr


def test_names_file_missing_or_a_git_lfs_pointer_is_refused_by_name(data):
    names = data / NAMES.name
    names.unlink()
    with pytest.raises(ValueError, match="names of the entities are not there"):
        import_items("x-factr", _facts(data), language="ru")
    items, report = import_items("x-factr", _facts(data), language="en")  # the rows' labels are English
    assert (report.items, report.notes) == (9, {})
    assert items[0]["subject_label"] == "Arab" and items[0]["prompts"][0]["text"] == "Arab was born in [Y] ."
    names.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:5af1\nsize 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="a Git LFS pointer"):
        import_items("x-factr", _facts(data), language="ru")

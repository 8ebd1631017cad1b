"""Templates per language (issue 28): a relation's file keeps English at its top level and other
languages under `languages`; `in_language` gives one language's templates or refuses by name; the
KDF sentences are the paper's (seed 003, Table 3, lines 164-186; line 63 for the English pattern)."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import run_cli
from factprobe.probes.templates import (MissingLanguage, TemplateError, dump, load_file, load_templates, parse)

# KDF's 17 relations (Table 3) by their Wikidata ids, with the sentence Table 3 gives each in Chinese
TABLE_3 = {"P136": "[X]的类型是[Y]。", "P161": "[X]的演员是[Y]。", "P463": "[X]属于[Y]的成员。",
           "P36": "[X]的行政中心是[Y]。", "P57": "[X]的导演是[Y]。", "P50": "[X]的作者是[Y]。",
           "P61": "[X]的发现者或发明者是[Y]。", "P86": "[X]的作曲者是[Y]。",
           "P162": "[X]的制作人是[Y]。", "P1142": "[X]的政治意识形态是[Y]。", "P123": "[X]的出版者是[Y]。",
           "P178": "[X]的开发者是[Y]。", "P272": "[X]的制作商是[Y]。", "P2578": "[X]的研究对象是[Y]。",
           "P170": "[X]的创作作者是[Y]。",
           # Table 3 prints "[头实体]是中[尾实体]的人物。" (中 misplaced) and gives residence creator's
           # sentence; these are the pattern they stand for
           "P1441": "[X]是[Y]中的人物。", "P551": "[X]的居住地是[Y]。"}


def test_the_kdf_relations_carry_table_3_in_chinese_and_the_papers_pattern_in_english():
    loaded = load_templates([])
    assert len(TABLE_3) == 17
    for relation, sentence in TABLE_3.items():
        zh = loaded[relation].in_language("zh")
        assert (zh.language, zh.kdf.text) == ("zh", sentence), relation
        assert zh.kdf_question() == sentence.replace("[Y]", "____")
        assert zh.qa and zh.label, relation
    assert loaded["P36"].in_language("zh").label == "行政中心"
    # "The [relation] of [head] is [masked]" (line 63) from the English label, where it reads
    assert loaded["P36"].kdf_question() == "The capital of [X] is ____"
    assert loaded["P37"].kdf_question() == "The official language of [X] is ____"
    assert loaded["P19"].kdf_question() == "The place of birth of [X] is ____"
    assert loaded["P61"].kdf_question() == "The discoverer or inventor of [X] is ____"
    # a label that is a verb phrase has its own sentence ("The member of of [X]" would not read)
    assert loaded["P463"].kdf_question() == "[X] is a member of ____"
    assert loaded["P31"].kdf_question() == "[X] is an instance of ____"
    # the sample's other kdf relations
    assert loaded["P37"].in_language("zh").kdf_question() == "[X]的官方语言是____。"
    assert loaded["P30"].in_language("zh").kdf_question() == "[X]所在的大洲是____。"


def test_in_language_picks_one_language_and_refuses_a_missing_one_by_name():
    p36 = load_templates([])["P36"]
    assert p36.languages == ("en", "zh")
    english = p36.in_language("en")
    assert english.cloze == p36.cloze and english.other_languages == () and english.question() == p36.question()
    zh = p36.in_language("zh")
    assert (zh.question(), zh.cloze, zh.other_languages) == ("[X]的首都是哪里？", (), ())
    with pytest.raises(MissingLanguage, match=r"^P1412 has no zh template \(it has en\)$"):
        load_templates([])["P1412"].in_language("zh")
    with pytest.raises(MissingLanguage, match=r"^P36 has no ja template \(it has en, zh\)$"):
        p36.in_language("ja")


def _write(folder, name: str, text: str):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


USER_P36 = """relation: P36
label: capital
languages:
  zh:
    qa:
      - {text: "哪座城市是[X]的首都？", source: manual}
  ja:
    label: 首都
    kdf: "[X]の首都は[Y]"
"""


def test_user_folders_add_languages_and_templates_per_language(tmp_path):
    _write(tmp_path, "P36.yaml", USER_P36)
    merged = load_templates([tmp_path])["P36"]
    assert merged.languages == ("en", "zh", "ja")
    zh = merged.in_language("zh")
    assert [t.text for t in zh.qa] == ["[X]的首都是哪里？", "哪座城市是[X]的首都？"]
    assert zh.kdf_question() == "[X]的行政中心是____。"  # the shipped sentence stays
    assert merged.in_language("ja").kdf_question() == "[X]の首都は____"
    # a language without a sentence is refused, not asked in English
    only_qa = parse(yaml.safe_load(USER_P36), tmp_path / "P36.yaml").in_language("zh")
    with pytest.raises(ValueError, match=r"^P36 has no zh KDF sentence"):
        only_qa.kdf_question()
    # written back in the shipped layout, every language kept
    assert parse(yaml.safe_load(dump(merged)), tmp_path / "P36.yaml") == merged
    shown = json.loads(run_cli("templates", "show", "P36", "--json", "--templates", str(tmp_path), check=True).stdout)
    assert [o["language"] for o in shown["other_languages"]] == ["zh", "ja"]


@pytest.mark.parametrize("languages, message", [
    ("  en: {kdf: \"The capital of [X] is [Y]\"}", "languages: 'en' is not a language code other than en"),
    ("  Chinese: {kdf: \"[X]的首都是[Y]。\"}", "languages: 'Chinese' is not a language code"),
    ("  zh: {kdf: \"[X]的首都是。\"}", 'languages.zh: kdf: "[X]的首都是。" has no [Y] slot'),
    ("  zh: {description: 首都}", "languages.zh: unknown key 'description' (allowed: label, cloze, qa, kdf)"),
    ("  zh: {qa: [{text: \"[X]的首都是[Y]？\", source: manual}]}",
     'languages.zh: qa[0]: "[X]的首都是[Y]？" has a [Y] slot'),
    ("  zh: [首都]", "languages.zh: must be a mapping"),
])
def test_bad_language_sections_are_refused_naming_the_file_and_entry(tmp_path, languages, message):
    path = _write(tmp_path, "P36.yaml", "relation: P36\nlabel: capital\nlanguages:\n" + languages + "\n")
    with pytest.raises(TemplateError) as caught:
        load_file(path)
    assert str(caught.value).startswith(f"{path}: {message}")

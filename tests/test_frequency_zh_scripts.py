"""Chinese in both scripts (issue 37 item 6): names and documents are converted to simplified
characters (OpenCC, index/chinese.py) before they are matched, so a traditional name counts in
simplified text and the reverse.

The corpus is real zh Wikipedia text (tests/data/zh/wikipedia_two_scripts.jsonl): four traditional
paragraphs from DRCD's dev set and four simplified ones from CMRC 2018's (CC BY-SA; sources in
tests/data/README.md). The graph (tests/fixtures/zh/two_scripts.json, written here, real Wikidata
ids) names each entity in `zh` in one script on purpose: London 倫敦 as Wikidata's dump has it,
the United Kingdom 英国, Germany 德國, Europe 欧洲, France 法國, China 中国, the United States 美國;
Hong Kong 香港, Macau 澳門 and Norway 挪威 are written alike in both texts. Counts by hand:
a name occurs in a document when its simplified form occurs in the document's simplified text."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from factprobe.index.chinese import chinese_indexed, converter, is_chinese
from factprobe.index.mentions import MentionFinder
from factprobe.index.text import AliasFilter
from test_frequency_contract import backend_factory  # noqa: F401  (a fixture: embedded, and Elasticsearch when set)

GRAPH = FIXTURES / "zh" / "two_scripts.json"
CORPUS = Path(__file__).parent / "data" / "zh" / "wikipedia_two_scripts.jsonl"
ENTITIES = ["Q84", "Q145", "Q183", "Q64", "Q46", "Q8646", "Q14773", "Q20", "Q142", "Q148", "Q30"]
# documents that mention each entity (in ENTITIES' order): converted, and as written
COUNTS = {"hk2s": [7, 8, 3, 0, 3, 2, 1, 1, 2, 4, 3],
          "none": [4, 4, 1, 0, 2, 2, 1, 1, 0, 2, 1]}
UK_LONDON = {"hk2s": 7, "none": 0}  # as written, London's traditional name and the UK's simplified one never meet


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("zh2") / "graph.sqlite")
    run_cli("ingest", "wikidata", str(GRAPH), "--languages", "zh", "--store", path, "--workers", "0", "--quiet",
            check=True)
    return path


def documents(index, entity):
    out = run_cli("frequency", "entity", entity, "--index", index, "--json", check=True).stdout
    return json.loads(out)["documents"]


@pytest.mark.parametrize("zh_convert", ["hk2s", "none"])
def test_real_articles_in_both_scripts(store, tmp_path, zh_convert):
    index = str(tmp_path / "zh.sqlite")
    extra = [] if zh_convert == "hk2s" else ["--zh-convert", "none"]  # hk2s is the default
    built = run_cli("corpus", "index", str(CORPUS), "--languages", "zh", *extra, "--store", store, "--index", index,
                    "--json", "--quiet", check=True)
    assert json.loads(built.stdout)["settings"] == {"method": "names", "languages": ["zh"], "min_alias_length": 2,
                                                    "excluded": [], "names": "all", "zh_convert": zh_convert,
                                                    "min_han_length": 1, "mentions": "maximal", "zh_variants": "all"}
    assert [documents(index, e) for e in ENTITIES] == COUNTS[zh_convert]
    pair = run_cli("frequency", "pair", "Q145", "Q84", "--index", index, "--json", check=True).stdout
    assert json.loads(pair)["documents"] == UK_LONDON[zh_convert]

    counts = tmp_path / "p36.jsonl"
    proc = run_cli("frequency", "annotate", "--relation", "P36", "--out", str(counts), "--store", store,
                   "--index", index, "--quiet", check=True)
    rows = {(r["subject"], r["object"]): r["documents"] for r in map(json.loads, counts.read_text().splitlines())}
    assert rows == {("Q145", "Q84"): UK_LONDON[zh_convert], ("Q183", "Q64"): 0}
    said = {"hk2s": "Chinese in simplified characters (OpenCC hk2s)", "none": "Chinese as written (--zh-convert none)"}
    assert proc.stdout.splitlines()[1] == (f"  counted by names in zh: labels and aliases; {said[zh_convert]}; "
                                          "zh: every Chinese variant code (zh-hans, zh-hant, zh-tw, ...); names inside longer names do not count "
                                          "(--mentions maximal)")


@pytest.mark.parametrize("zh_convert", ["hk2s", "none"])
def test_elasticsearch_is_sent_what_the_embedded_index_counts(store, zh_convert):
    """The documents' tokens as the Elasticsearch backend sends them (document_source, with the
    index's converter) and its phrase queries (one per StoreNames key), matched here without a
    server: the same counts as the embedded index."""
    from factprobe.index.corpus_files import ReadReport, jsonl_documents
    from factprobe.index.elastic import document_source, tokens
    from factprobe.index.settings import IndexSettings, StoreNames

    def phrase_in(needle, haystack):
        return any(haystack[i:i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))

    settings = IndexSettings(languages=("zh",), zh_convert=zh_convert)
    sent = [document_source(d, settings.converter())["tokens"].split(" ")
            for d in jsonl_documents(str(CORPUS), ReadReport())]
    names = StoreNames(store, settings)
    try:
        counts = [sum(any(phrase_in(tokens(k), doc) for k in names(e)) for doc in sent) for e in ENTITIES]
    finally:
        names.close()
    assert counts == COUNTS[zh_convert]


@pytest.mark.parametrize("zh_convert", ["hk2s", "none"])
def test_both_backends_count_alike(store, backend_factory, zh_convert):
    """Through open_for_indexing and open_for_counting: the embedded index always, Elasticsearch
    where FACTPROBE_ES_URL names a cluster (tests/test_frequency_contract.py's fixture)."""
    from factprobe.index.backend import open_for_counting, open_for_indexing
    from factprobe.index.corpus_files import ReadReport, jsonl_documents
    from factprobe.index.settings import IndexSettings

    where = backend_factory()
    index = open_for_indexing(where, IndexSettings(languages=("zh",), zh_convert=zh_convert), store)
    try:
        assert sum(index.add_documents(jsonl_documents(str(CORPUS), ReadReport()), batch=3)) == 8
    finally:
        index.close()
    index = open_for_counting(where, store)
    try:
        assert [index.entity_frequency(e) for e in ENTITIES] == COUNTS[zh_convert]
        assert index.pair_frequency("Q145", "Q84") == UK_LONDON[zh_convert]
    finally:
        index.close()


def test_a_raw_string_is_scanned_as_the_index_counts(store):
    """`frequency entity` on a raw string reads the documents; with a Chinese language it converts
    as an index does, so either script of a name finds all seven documents about London."""
    def scan(term, *languages):
        out = run_cli("frequency", "entity", term, "--documents", str(CORPUS), *languages, "--store", store, "--json",
                      check=True).stdout
        return json.loads(out)["documents"]

    assert [scan(term, "--languages", "zh") for term in ("倫敦", "伦敦", "Q84")] == [7, 7, 7]
    assert [scan("倫敦"), scan("伦敦")] == [4, 3]  # no Chinese language: as written


def test_an_index_keeps_its_conversion(store, tmp_path):
    """An index built as written (as every index built before the setting existed: nothing
    recorded) refuses documents converted, and the reverse."""
    written, converted = str(tmp_path / "written.sqlite"), str(tmp_path / "converted.sqlite")
    args = [str(CORPUS), "--languages", "zh", "--store", store, "--quiet"]
    run_cli("corpus", "index", *args, "--zh-convert", "none", "--index", written, check=True)
    again = run_cli("corpus", "index", *args, "--index", written)
    assert again.returncode == 2 and "refusing to add documents" in again.stderr
    assert "'zh_convert': 'hk2s'" in again.stderr
    run_cli("corpus", "index", *args, "--zh-convert", "none", "--index", written, check=True)  # as built: taken
    run_cli("corpus", "index", *args, "--zh-convert", "t2s", "--index", converted, check=True)
    other = run_cli("corpus", "index", *args, "--index", converted)
    assert other.returncode == 2 and "'zh_convert': 't2s'" in other.stderr


def test_without_opencc_a_chinese_index_says_what_to_install(store, tmp_path, monkeypatch):
    """OpenCC absent (its import fails): a zh index stops before any file is written, in one line
    naming the extra; as written, or without a Chinese language, nothing needs it."""
    monkeypatch.setitem(sys.modules, "opencc", None)  # `import opencc` now raises ImportError
    converter.cache_clear()
    try:
        index = tmp_path / "zh.sqlite"
        args = [str(CORPUS), "--store", store, "--quiet"]
        failed = run_cli("corpus", "index", *args, "--languages", "zh", "--index", str(index))
        assert failed.returncode == 2 and not index.exists()
        assert failed.stderr.splitlines() == [
            "error: Chinese names are matched in simplified characters, converted by OpenCC, which is not installed: "
            "pip install 'factprobe[frequency]' (or --zh-convert none to match them as written)"]
        run_cli("corpus", "index", *args, "--languages", "zh", "--zh-convert", "none", "--index", str(index),
                check=True)
        run_cli("corpus", "index", *args, "--languages", "en", "--index", str(tmp_path / "en.sqlite"), check=True)
        assert documents(str(index), "Q84") == COUNTS["none"][0]
    finally:
        converter.cache_clear()


HK_TW = [  # (name, text, found by hk2s, found by t2s): Hong Kong forms fold under hk2s only
    ("卫生署", "衞生署今日公布", True, False),  # 衞 (Hong Kong) of 衛/卫
    ("卫生署", "衛生署今日公布", True, True),
    ("衞生署", "卫生署今日公布", True, False),
    ("台北", "臺北市", True, True),  # Taiwan's 臺 is in t2s's own table
    ("什么", "你說什麼", True, True),
    ("头发", "頭髮很長", True, True),
]


@pytest.mark.parametrize("name, text, hk2s, t2s", HK_TW)
def test_which_forms_fold_together(name, text, hk2s, t2s):
    for config, expected in (("hk2s", hk2s), ("t2s", t2s)):
        finder = MentionFinder([("Q1", name)], AliasFilter(), converter(config))
        assert finder.in_texts([text])[0] == ({"Q1"} if expected else set()), config


def test_counts_are_taken_on_the_converted_text():
    """Nothing is counted by offsets into the text as written: a conversion that changes lengths
    (OpenCC's do not) counts what the converted text holds."""
    def longer(text):
        return text.replace("倫敦", "伦敦市").replace("倫", "伦")

    finder = MentionFinder([("Q84", "伦敦市"), ("Q1", "市中心")], AliasFilter(), longer)
    assert finder.in_texts(["倫敦中心", "倫敦市中心", "伦敦"]) == [{"Q84", "Q1"}, {"Q84", "Q1"}, set()]


def test_an_excluded_name_is_excluded_in_either_script():
    keep = AliasFilter(excluded=frozenset({"倫敦"}))
    assert MentionFinder([("Q84", "伦敦"), ("Q145", "英國")], keep, converter("hk2s")).in_texts(["英国的伦敦"]) == [{"Q145"}]


def test_a_lone_surrogate_is_left_as_it_is():
    convert = converter("hk2s")
    assert convert("倫敦\ud800倫敦") == "伦敦\ud800伦敦"
    assert MentionFinder([("Q84", "倫敦")], AliasFilter(), convert).in_texts(["x\udfff伦敦"]) == [{"Q84"}]


def test_which_languages_are_chinese():
    assert [is_chinese(x) for x in ("zh", "zh-hant", "zh-TW", "yue", "lzh", "zh-min-nan")] == [True] * 6
    assert [is_chinese(x) for x in ("en", "ja", "ko", "vi", "zha")] == [False] * 5
    assert chinese_indexed(("en", "zh-hans")) and not chinese_indexed(("en", "ja"))

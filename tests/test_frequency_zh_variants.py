"""Chinese names under every code Wikidata keeps them under (issue 46 item 3): a label kept only
under `zh-hant` or `zh-cn` counts under `--languages zh`, converted as the index's OpenCC setting
says. The graph is tests/fixtures/zh/two_scripts.json with London's label 倫敦 moved to
`zh-hant` and the United Kingdom's 英国 to `zh-cn` (each then has no `zh` name); the corpus is the
real zh Wikipedia text of tests/data/zh/wikipedia_two_scripts.jsonl, four traditional and four
simplified paragraphs. The counts are test_frequency_zh_scripts.py's, counted by hand there:
London 7 and the United Kingdom 8 documents converted, 4 and 4 as written, both together 7 and 0."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, run_cli
from factprobe.index.chinese import with_zh_variants
from factprobe.index.settings import IndexSettings

GRAPH = FIXTURES / "zh" / "two_scripts.json"
CORPUS = FIXTURES.parent / "data" / "zh" / "wikipedia_two_scripts.jsonl"
MOVED = {"Q84": "zh-hant", "Q145": "zh-cn"}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    base = tmp_path_factory.mktemp("zhv")
    lines = []
    for line in GRAPH.read_text(encoding="utf-8").splitlines():
        if line.startswith("{"):
            record = json.loads(line.rstrip(","))
            code = MOVED.get(record["id"])
            if code:
                name = record["labels"].pop("zh")
                record["labels"][code] = {"language": code, "value": name["value"]}
            line = json.dumps(record, ensure_ascii=False) + ("," if line.endswith(",") else "")
        lines.append(line)
    graph = base / "variants.json"
    graph.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = str(base / "graph.sqlite")
    run_cli("ingest", "wikidata", str(graph), "--languages", ",".join(with_zh_variants(["zh"])), "--store", path,
            "--workers", "0", "--quiet", check=True)
    return path


def count(index, *args):
    return json.loads(run_cli("frequency", *args, "--index", index, "--json", check=True).stdout)["documents"]


@pytest.mark.parametrize("zh_convert, expected", [("hk2s", (7, 8, 7)), ("none", (4, 4, 0))])
def test_names_under_variant_codes_count_under_zh(store, tmp_path, zh_convert, expected):
    index = str(tmp_path / "zh.sqlite")
    built = run_cli("corpus", "index", str(CORPUS), "--languages", "zh", "--zh-convert", zh_convert, "--store", store,
                    "--index", index, "--json", "--quiet", check=True)
    assert json.loads(built.stdout)["settings"]["zh_variants"] == "all"  # recorded in the index
    assert (count(index, "entity", "Q84"), count(index, "entity", "Q145"), count(index, "pair", "Q145", "Q84")) \
        == expected


def test_the_zh_code_alone_as_before(store, tmp_path):
    index = str(tmp_path / "zh.sqlite")
    run_cli("corpus", "index", str(CORPUS), "--languages", "zh", "--zh-variants", "as-given", "--store", store,
            "--index", index, "--quiet", check=True)
    assert (count(index, "entity", "Q84"), count(index, "entity", "Q145"), count(index, "entity", "Q183")) == (0, 0, 3)


def test_which_codes_zh_stands_for_and_an_old_index_reads_zh_alone():
    assert with_zh_variants(["en", "zh", "zh-hant"]) == ("en", "zh", "zh-hans", "zh-hant", "zh-cn", "zh-tw", "zh-hk",
                                                         "zh-sg", "zh-mo", "zh-my")
    assert IndexSettings(languages=("zh",), zh_variants="as-given").name_languages == ("zh",)
    old = {"method": "names", "languages": ["zh"], "min_alias_length": 2, "excluded": []}
    assert IndexSettings.from_dict(old).zh_variants == "as-given"
    assert "zh_variants" not in IndexSettings(languages=("en",)).to_dict()

"""KDF's counts in its own language (issue 28): a zh graph (tests/fixtures/zh/capitals.json, real
Wikidata ids and Chinese labels) and a corpus of Chinese sentences in which each capital fact
co-occurs a planted number of times, through `ingest wikidata`, `corpus index`, `frequency pair`
and `frequency annotate`; with every name (labels and aliases) and with KDF's one name
(`--names label`). Before names could be found inside a run of Han characters, every count was 0."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, run_cli

GRAPH, CORPUS = FIXTURES / "zh" / "capitals.json", FIXTURES / "zh" / "capitals.jsonl"
PAIRS = [("Q145", "Q84"), ("Q142", "Q90"), ("Q17", "Q1490"), ("Q183", "Q64")]  # 英国-伦敦, 法国-巴黎, 日本-东京都, 德国-柏林
# Planted: 12 sentences name 英国 and 伦敦, one more its alias 联合王国 with 伦敦; 法国 and 巴黎 meet in
# 3 (one glued to Latin: "巴黎Paris。法国France。"); 日本 meets Q1490's label 东京都 in 2 and its
# alias 东京 alone in 2 more; 德国 and 柏林 never meet.
PLANTED = {"all": [13, 3, 4, 0], "label": [12, 3, 2, 0]}
BUCKETS = {"all": ["[10,100)", "[1,10)", "[1,10)", "0"], "label": ["[10,100)", "[1,10)", "[1,10)", "0"]}


@pytest.fixture(scope="module")
def zh(tmp_path_factory):
    base = tmp_path_factory.mktemp("zh")
    store = str(base / "graph.sqlite")
    run_cli("ingest", "wikidata", str(GRAPH), "--languages", "zh", "--store", store, "--workers", "0", "--quiet",
            check=True)
    return base, store


@pytest.mark.parametrize("names", ["all", "label"])
def test_planted_counts(zh, names):
    base, store = zh
    index = str(base / f"{names}.sqlite")
    extra = [] if names == "all" else ["--names", "label"]
    built = run_cli("corpus", "index", str(CORPUS), "--languages", "zh", *extra, "--store", store, "--index", index,
                    "--json", "--quiet", check=True)

    def pair(head, tail):
        out = run_cli("frequency", "pair", head, tail, "--index", index, "--json", check=True).stdout
        return json.loads(out)["documents"]

    assert [pair(h, t) for h, t in PAIRS] == PLANTED[names]
    assert [pair(t, h) for h, t in PAIRS] == PLANTED[names]
    assert json.loads(built.stdout)["settings"] == {"method": "names", "languages": ["zh"], "min_alias_length": 2,
                                                    "excluded": [], "names": names, "zh_convert": "hk2s",
                                                    "min_han_length": 1, "mentions": "maximal", "zh_variants": "all"}

    counts = base / f"{names}.jsonl"
    proc = run_cli("frequency", "annotate", "--relation", "P36", "--out", str(counts), "--store", store,
                   "--index", index, "--quiet", check=True)
    rows = {(r["subject"], r["object"]): (r["documents"], r["bucket"])
            for r in map(json.loads, counts.read_text().splitlines())}
    assert rows == {p: (n, b) for p, n, b in zip(PAIRS, PLANTED[names], BUCKETS[names])}
    said = {"all": "labels and aliases", "label": "labels only (--names label)"}[names]
    assert proc.stdout.splitlines()[1] == (f"  counted by names in zh: {said}; Chinese in simplified characters (OpenCC hk2s); "
                                          "zh: every Chinese variant code (zh-hans, zh-hant, zh-tw, ...); names inside longer names do not count "
                                          "(--mentions maximal)")


def test_an_index_keeps_its_names_setting(zh):
    base, store = zh
    index = str(base / "kept.sqlite")
    run_cli("corpus", "index", str(CORPUS), "--languages", "zh", "--names", "label", "--store", store,
            "--index", index, "--quiet", check=True)
    again = run_cli("corpus", "index", str(CORPUS), "--languages", "zh", "--store", store, "--index", index, "--quiet")
    assert again.returncode == 2 and "'names': 'label'" in again.stderr and "refusing to add documents" in again.stderr
    summary = run_cli("frequency", "annotate", "--relation", "P36", "--out", str(base / "kept.jsonl"), "--store", store,
                      "--index", index, "--json", "--quiet", check=True)
    assert json.loads(summary.stdout)["settings"]["names"] == "label"


@pytest.mark.parametrize("names", ["all", "label"])
def test_the_elasticsearch_token_scheme_counts_the_same(zh, names):
    """The phrase queries the Elasticsearch backend sends (one per name key of StoreNames) over the
    tokens it indexes, matched here without a server: the planted counts again."""
    from factprobe.index.corpus_files import ReadReport, jsonl_documents
    from factprobe.index.elastic import tokens
    from factprobe.index.settings import IndexSettings, StoreNames
    from factprobe.index.text import normalize

    def phrase_in(needle, haystack):
        return any(haystack[i:i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))

    _, store = zh
    documents = [tokens(normalize(d.searchable)) for d in jsonl_documents(str(CORPUS), ReadReport())]
    names_of = StoreNames(store, IndexSettings(languages=("zh",), names=names))
    try:
        def mentions(entity):
            return {i for i, doc in enumerate(documents) if any(phrase_in(tokens(k), doc) for k in names_of(entity))}

        assert [len(mentions(h) & mentions(t)) for h, t in PAIRS] == PLANTED[names]
    finally:
        names_of.close()

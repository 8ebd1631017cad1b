"""Names in scripts written without spaces (issue 28): the edge rule of index/text.py by hand, and
the embedded linker (MentionFinder) and the Elasticsearch token scheme held to the slow reference
`occurs` on mixed-script text (Latin, Han, Kana, Thai, Hangul, digits, punctuation, spaces)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from factprobe.index.elastic import tokens
from factprobe.index.mentions import MentionFinder
from factprobe.index.writing_systems import UNSPACED_SCRIPTS, script_ranges, unspaced
from factprobe.index.text import AliasFilter, at_word_boundaries, mentioned_keys, name_key, normalize, occurs

# Thai "\u0e31" is a vowel sign (not a letter: str.isalnum is False), "ー" the kana length mark
# (Script Common), "ｶ" a half-width katakana NFKC rewrites, "서" Hangul (written with spaces).
CHARACTERS = list("ab1é") + list("伦敦东京巴黎") + list("カーのｶ") + ["ก", "ร", "\u0e31"] + ["서", "울"] + \
    [" ", ",", ".", "-", "(", ")", "。", "、", "\u3000", "\U00020000"]
MIXED = st.text(st.sampled_from(CHARACTERS), max_size=10)


def phrase_in(needle: list[str], haystack: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def embedded_finds(name: str, text: str) -> bool:
    return MentionFinder([("Q1", name)], AliasFilter(min_length=1)).in_texts([text])[0] == {"Q1"}


def es_finds(name: str, text: str) -> bool:
    return phrase_in(tokens(name_key(name)), tokens(normalize(text)))


def reference(name: str, text: str) -> bool:
    return occurs(normalize(text), name_key(name))


HAND = [  # (name, text, occurs)
    ("伦敦", "英国的首都是伦敦", True),
    ("英国", "英国的首都是伦敦", True),
    ("Paris", "Parisian", False),
    ("Paris", "巴黎Paris。", True),
    ("Paris", "Paris是法国的首都", True),
    ("东京", "东京Tokyo", True),
    ("Tokyo", "东京Tokyo", True),
    ("Tokyo", "东京Tokyos", False),
    ("Paris", "巴黎Parisian。", False),
    ("東京", "東京都の人口", True),
    ("カ", "ｶｰ", True),  # half-width kana, NFKC-normalized
    ("กรุงเทพ", "กรุงเทพมหานคร", True),
    ("서울", "서울은 수도", False),  # Hangul keeps word boundaries
    ("서울", "서울 은", True),
    ("서울", "首尔서울", True),
    ("(foo)", "x(foo)", False),
    ("(foo)", "京(foo)", True),
    ("京", "东京2020", True),
    ("2020", "东京2020", True),
    ("20", "东京2020", False),
]


@pytest.mark.parametrize("name, text, expected", HAND)
def test_the_edge_rule_by_hand(name, text, expected):
    assert reference(name, text) is expected
    assert embedded_finds(name, text) is expected
    assert es_finds(name, text) is expected


def test_the_edge_rule_is_per_edge():
    text = normalize("巴黎Parisian")
    assert at_word_boundaries(text, 2, 7) is False  # "paris": its left edge is free, its right edge glued
    assert at_word_boundaries(text, 2, 10) is True
    assert at_word_boundaries("ab东京", 2, 4) and not at_word_boundaries("ab东京", 1, 2)


def test_script_table():
    assert [unspaced(c) for c in "伦カのーกร\u0e31ພ"] == [True] * 8
    assert [unspaced(c) for c in "aé1서,。 ʼ"] == [False] * 8
    assert unspaced("\U00020000") and not unspaced("\U0001d400")


def test_script_table_follows_the_unicode_script_property():
    regex = pytest.importorskip("regex")
    every = "".join(map(chr, range(0x110000)))
    for script in UNSPACED_SCRIPTS:
        runs = [(m.start(), m.end() - 1) for m in regex.finditer(rf"\p{{sc={script}}}+", every)]
        assert script_ranges(script) == runs, script


@settings(max_examples=2000, deadline=None)
@given(MIXED, st.text(st.sampled_from(CHARACTERS), min_size=1, max_size=5), MIXED, st.text(st.sampled_from(CHARACTERS), max_size=16))
def test_embedded_and_es_equal_the_reference_on_mixed_scripts(before, name, after, elsewhere):
    """The name planted between arbitrary neighbours (glued or not, of any script) and in
    unrelated text: both backends' ways of matching say what `occurs` says."""
    if not AliasFilter(min_length=1).keeps(name_key(name)):
        return
    for text in (before + name + after, elsewhere):
        expected = reference(name, text)
        assert embedded_finds(name, text) is expected, (name, text)
        assert es_finds(name, text) is expected, (name, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.sampled_from(CHARACTERS), min_size=1, max_size=4), min_size=1, max_size=6),
       st.lists(st.text(st.sampled_from(CHARACTERS), max_size=24), min_size=1, max_size=8))
def test_many_names_in_a_batch_equal_the_reference(names, texts):
    """Several names (some written alike) over a batch of documents joined into one scan: with
    mentions="any" each one that occurs; by default those with an occurrence that no longer
    name's occurrence contains (index/text.py `mentioned_keys`)."""
    entities = [(f"Q{i}", n) for i, n in enumerate(names)]
    keep = AliasFilter(min_length=1).keeps
    got = MentionFinder(entities, AliasFilter(min_length=1), mentions="any").in_texts(texts)
    expected = [{e for e, n in entities if keep(name_key(n)) and reference(n, t)} for t in texts]
    assert got == expected
    keys = {name_key(n) for _, n in entities if keep(name_key(n))}
    outermost = [mentioned_keys(normalize(t), keys) for t in texts]
    assert MentionFinder(entities, AliasFilter(min_length=1)).in_texts(texts) == [
        {e for e, n in entities if name_key(n) in found} for found in outermost]

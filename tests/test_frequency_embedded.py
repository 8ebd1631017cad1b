"""Embedded-only parts of the frequency index (linking, tracked pairs, buckets); the counts themselves
are held to a brute-force scan for every backend in test_frequency_contract.py."""

from __future__ import annotations

import random
from itertools import combinations

from hypothesis import given, settings, strategies as st

from factprobe.index.corpus import Document, bucket_of
from factprobe.index.embedded import EmbeddedIndex
from factprobe.index.mentions import MentionFinder, scan_text, scanned
from factprobe.index.text import AliasFilter, mentioned_keys, normalize, occurs

NAMES = [
    ("Q90", "Paris"), ("Q90", "City of Light"), ("Q142", "France"), ("Q142", "French Republic"),
    ("Q64", "Berlin"), ("Q183", "Germany"), ("Q183", "Deutschland"), ("Q1726", "München"),
    ("Q1726", "Munich"), ("Q72", "Zürich"), ("Q39", "Switzerland"), ("Q1490", "Tokyo"),
    ("Q1490", "東京"), ("Q17", "Japan"), ("Q99", "Straße"), ("Q5", "A"), ("Q6", "St. Gallen"),
]
# How a name may appear: variants that must match, and traps that must not.
VARIANTS = [str.upper, str.lower, lambda s: s, lambda s: f"({s})", lambda s: f"{s},", lambda s: f"«{s}»",
            lambda s: s.replace("ü", "u\u0308"),  # decomposed umlaut: NFKC composes it
            lambda s: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)]  # fullwidth
TRAPS = [lambda s: s + "ian", lambda s: s + "er", lambda s: "pre" + s, lambda s: s + "2", lambda s: s.replace(" ", "")]
FILLER = "the a of in and is was city country river capital near known by many people there".split()


def planted_corpus(seed: int, size: int) -> list[Document]:
    rng = random.Random(seed)
    documents = []
    for i in range(size):
        words = rng.choices(FILLER, k=rng.randint(5, 30))
        for _ in range(rng.randint(0, 4)):
            _, name = rng.choice(NAMES)
            form = rng.choice(VARIANTS if rng.random() < 0.7 else TRAPS)(name)
            words.insert(rng.randrange(len(words) + 1), form)
        if rng.random() < 0.2:
            words.append("STRASSE")  # casefolds to the same as Straße
        title = rng.choice(["", rng.choice(NAMES)[1], "Notes"])
        documents.append(Document(f"doc{i}", title, " ".join(words)))
    return documents


def brute_force(documents, names, alias_filter=AliasFilter(), mentions="maximal"):
    """Per document id, the entities it mentions, by the slow definitions of index/text.py: under
    "any" every name that occurs, under "maximal" those with an occurrence no longer occurrence
    of another of `names` contains (`mentioned_keys` over every kept name)."""
    kept = [(e, normalize(n).strip()) for e, n in names if alias_filter.keeps(normalize(n).strip())]
    keys = {n for _, n in kept}
    mentioned = {}
    for d in documents:
        text = normalize(d.searchable)
        found = mentioned_keys(text, keys) if mentions == "maximal" else {n for n in keys if occurs(text, n)}
        mentioned[d.id] = {e for e, n in kept if n in found}
    return mentioned


def build(path, documents, names, alias_filter=AliasFilter(), batch=37):
    index = EmbeddedIndex(path, MentionFinder(names, alias_filter))
    list(index.add_documents(documents, batch=batch))
    return index


def test_buckets():
    assert [bucket_of(n) for n in (0, 1, 9, 10, 99, 100, 5000)] == [
        "0", "[1,10)", "[1,10)", "[10,100)", "[10,100)", "[100,inf)", "[100,inf)"]
    assert [bucket_of(n, (5, 50)) for n in (0, 4, 5, 49, 50)] == ["[0,5)", "[0,5)", "[5,50)", "[5,50)", "[50,inf)"]


def test_pair_frequencies_equal_one_by_one(tmp_path):
    pairs = [(h, t) for (h, _), (t, _) in combinations(NAMES, 2)] + [("Q90", "Q404"), ("Q404", "Q405")]
    with build(tmp_path / "f.sqlite", planted_corpus(5, 300), NAMES) as index:
        assert index.pair_frequencies(pairs) == [index.pair_frequency(h, t) for h, t in pairs]
        assert sum(index.pair_frequencies(pairs)) > 0


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
       | st.text(st.sampled_from(list("a1é,. (伦敦东京カー。ก\u0e31서\U00020000\U0001d400")), max_size=40))
def test_vectorized_scan_equals_the_definition(text):
    """The batch linker's scan (byte table, code-point table, astral fallback, spelled letters,
    marks put between characters) is `scanned`, and it says where each character begins in it."""
    written, begins = scan_text(text)
    assert written == scanned(text)
    if begins is None:
        assert len(written) == len(text)
    else:
        assert len(begins) == len(text) and all(a < b for a, b in zip(begins[:-1], begins[1:]))
        assert [written[j] for j in begins] == [scanned(ch)[0] for ch in text]
        assert written[begins[-1]:] == scanned(text[-1])


def test_batched_linking_equals_one_document_at_a_time():
    finder = MentionFinder(NAMES, AliasFilter(min_length=1))
    documents = planted_corpus(9, 300) + [Document("x", "", "Paris"), Document("y", "", ""), Document("z", "Japan", "")]
    batched = finder(documents)
    assert batched == [finder.mentions(d) for d in documents]
    assert batched[-3:] == [{"Q90"}, set(), {"Q17"}]
    assert sum(map(len, batched)) > 300


def test_scanning_in_chunks_finds_what_one_scan_finds(monkeypatch):
    import factprobe.index.mentions as mentions

    finder = MentionFinder(NAMES + [("Q84", "伦敦"), ("Q145", "英国")], AliasFilter(min_length=1))
    documents = planted_corpus(3, 200) + [Document("zh", "英国的首都是伦敦", "")]
    whole = finder(documents)
    monkeypatch.setattr(mentions, "CHUNK", 300)  # about three documents a scan
    assert finder(documents) == whole and whole[-1] == {"Q84", "Q145"} and sum(map(len, whole)) > 200


def test_tracked_pairs_equal_intersections_however_they_were_registered(tmp_path):
    documents = planted_corpus(13, 400)
    truth = brute_force(documents, NAMES)
    entities = sorted({e for e, _ in NAMES})
    pairs = list(combinations(entities, 2))
    expected = [sum(h in m and t in m for m in truth.values()) for h, t in pairs]
    finder = MentionFinder(NAMES)
    # registered before any document, then documents in batches, some of them twice
    with EmbeddedIndex(tmp_path / "before.sqlite", finder) as before:
        reversed_pairs = [(t, h) for h, t in pairs[1::2]]
        assert before.track_pairs(pairs[::2] + reversed_pairs + [("Q90", "Q90")]) == len(pairs)
        list(before.add_documents(documents[:250], batch=60))
        list(before.add_documents(documents[200:], batch=60))
        assert before.pair_frequencies(pairs) == expected
        assert before.pair_frequencies(reversed_pairs) == expected[1::2]
        rows = {tuple(key.split("\t")): n for key, n in before.db.execute("SELECT pair, docs FROM pair_counts")}
        assert [rows[p] for p in pairs[::2]] == expected[::2] and sum(rows.values()) > 50  # read, not intersected
        assert [rows[p] for p in reversed_pairs] == expected[1::2]
    # registered halfway, so that the first half comes from the bitmaps
    with EmbeddedIndex(tmp_path / "midway.sqlite", finder) as midway:
        list(midway.add_documents(documents[:170], batch=60))
        midway.track_pairs(pairs)
        assert midway.track_pairs(pairs[:5]) == 0
        list(midway.add_documents(documents[170:], batch=60))
        assert midway.pair_frequencies(pairs) == expected
        assert midway.pair_frequencies([("Q90", "Q90"), ("Q142", "Q90")]) == [
            midway.entity_frequency("Q90"), midway.pair_frequency("Q90", "Q142")]

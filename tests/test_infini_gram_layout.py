"""infini-gram's layout (issue 43): shards written with the bundled rust_indexing and read back
give the counts, positions, neighbours and windows a brute force over the token lists gives;
a corrupt, truncated or empty shard is refused in one line and nothing already written is lost."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("infini_gram")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from factprobe.index.infini_gram.files import pointer_width  # noqa: E402
from factprobe.index.infini_gram.layout import (  # noqa: E402
    LayoutError,
    Occurrences,
    TokenIndexFolder,
    check_tokenizer,
    discard_unfinished_shard,
    token_folder,
    tokenizer_family,
    verify_suffix_array,
    write_shard,
)
from factprobe.index.infini_gram.suffix_array import indexer_path, worker_count  # noqa: E402


# -- the slow reference ---------------------------------------------------------------------


def brute(docs: list[list[int]], query: list[int]) -> list[tuple[int, int]]:
    n = len(query)
    return [(d, i) for d, doc in enumerate(docs) for i in range(len(doc) - n + 1)
            if doc[i:i + n] == query]


def brute_neighbours(docs, hits, n):
    before = [docs[d][i - 1] if i > 0 else -1 for d, i in hits]
    after = [docs[d][i + n] if i + n < len(docs[d]) else -1 for d, i in hits]
    return before, after


def build(folder: Path, shards: list[list[list[int]]], width: int, **kw) -> TokenIndexFolder:
    for number, docs in enumerate(shards):
        write_shard(folder, number, (np.array(d, dtype=np.int64) for d in docs), width, **kw)
    return TokenIndexFolder(folder)


def check_against_brute(index: TokenIndexFolder, docs: list[list[int]], query: list[int]):
    hits = brute(docs, query)
    assert index.count(query) == len(hits)
    occ = index.occurrences(query)
    assert list(zip(occ.doc.tolist(), occ.at.tolist())) == hits
    before, after = index.neighbours(occ, len(query))
    assert (before.tolist(), after.tolist()) == brute_neighbours(docs, hits, len(query))
    windows, offsets = index.windows(occ, len(query), 2, 3)
    expected = [docs[d][max(0, i - 2):i + len(query) + 3] for d, i in hits]
    assert [w.tolist() for w in windows] == expected
    assert offsets.tolist() == [i - max(0, i - 2) for _, i in hits]


def every_query(docs: list[list[int]], longest: int = 3) -> list[list[int]]:
    seen = {tuple(doc[i:i + n]) for doc in docs for n in range(1, longest + 1)
            for i in range(len(doc) - n + 1)}
    return [list(q) for q in sorted(seen)]


# -- reading what was written ---------------------------------------------------------------

DOCS = [[5, 6, 7], [], [5, 6], [9], [300, 5, 6, 5, 6, 5], [7, 7, 7, 7]]


@pytest.mark.parametrize("engine", [True, False])
def test_u16_one_shard_matches_brute_force(tmp_path, engine):
    write_shard(tmp_path, 0, (np.array(d) for d in DOCS), 2)
    with TokenIndexFolder(tmp_path, engine=engine) as index:
        assert (index.token_width, index.shards, index.documents, index.tokens) == (2, 1, 6, 16)
        assert index.uses_engine is engine
        for query in every_query(DOCS) + [[8], [5, 6, 7, 9], [7, 7, 7, 7, 7], [65534]]:
            check_against_brute(index, DOCS, query)
        assert index.count([5, 6]) == 4
        assert index.counts([[7], [7, 7], [6, 5]]) == [5, 3, 2]
        assert [index.document(d).tolist() for d in range(6)] == DOCS


@pytest.mark.parametrize("engine", [True, False])
def test_u32_several_shards_global_document_ordinals(tmp_path, engine):
    big = 70_000  # past what u16 holds
    shards = [[[big, 1, big], [1]], [[]], [[2, big, 1, big, 1], [big]]]
    docs = [d for shard in shards for d in shard]
    build(tmp_path, shards, 4).close()
    index = TokenIndexFolder(tmp_path, engine=engine)
    assert index.uses_engine is engine
    assert (index.token_width, index.shards, index.documents, index.tokens) == (4, 3, 5, 10)
    for query in every_query(docs) + [[3], [big, big]]:
        check_against_brute(index, docs, query)
    assert index.occurrences([big, 1]).doc.tolist() == [0, 3, 3]
    assert [index.document(d).tolist() for d in range(5)] == docs
    index.close()


def test_width_is_detected_and_a_wrong_width_refused(tmp_path):
    write_shard(tmp_path, 0, [np.array([1, 2, 3])], 4)
    with TokenIndexFolder(tmp_path) as index:
        assert index.token_width == 4
    with pytest.raises(LayoutError, match="table.0"):
        TokenIndexFolder(tmp_path, token_width=2)


def test_long_repeats_byte_identical_documents(tmp_path):
    # The Gutenberg texts hold byte-identical duplicates: suffixes sharing thousands of bytes.
    rng = np.random.default_rng(7)
    text = rng.integers(0, 50, 3000).tolist()
    periodic = [1, 2] * 1500
    docs = [text, periodic, text, [3] * 2000, text[:1500], periodic]
    index = build(tmp_path, [docs], 2)
    verify_suffix_array(tmp_path, 0)
    for query in ([1, 2], [2, 1, 2], [3, 3, 3], text[:40], text[1000:1004], [3] * 1999):
        check_against_brute(index, docs, query)
    assert index.count(text[:1500]) == 3
    assert index.count([3] * 2000) == 1
    index.close()


@settings(max_examples=30, deadline=None)
@given(
    shards=st.lists(st.lists(st.lists(st.integers(0, 5), max_size=12), min_size=1, max_size=6),
                    min_size=1, max_size=3),
    width=st.sampled_from([2, 4]),
    queries=st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=3), min_size=1,
                     max_size=6),
)
def test_property_counts_and_positions_equal_brute_force(tmp_path_factory, shards, width,
                                                         queries):
    folder = tmp_path_factory.mktemp("prop")
    docs = [d for shard in shards for d in shard]
    with build(folder, shards, width) as index:
        assert index.documents == len(docs)
        assert index.tokens == sum(map(len, docs))
        assert index.counts(queries) == [len(brute(docs, q)) for q in queries]
        for query in queries:
            check_against_brute(index, docs, query)


# -- the indexer's small-share bug ----------------------------------------------------------


def test_cpu_cap_keeps_every_share_above_the_overlap():
    assert worker_count(300_000, 4) == 2
    assert worker_count(96_758 * 4, 4) == 3
    assert worker_count(50_000, 8) == 1
    assert worker_count(10_000_000, 2) == 2


def _random_docs(rng, total_tokens: int, vocab: int = 40) -> list[list[int]]:
    docs, made = [], 0
    while made < total_tokens:
        n = int(rng.integers(0, 60))
        docs.append(rng.integers(0, vocab, n).tolist())
        made += n
    return docs


def test_four_cpus_on_300kb_shard_gives_a_correct_array(tmp_path):
    docs = _random_docs(np.random.default_rng(3), 150_000)
    info = write_shard(tmp_path, 0, (np.array(d) for d in docs), 2, cpus=4, parallel=True)
    assert 290_000 < info.bytes < 320_000
    verify_suffix_array(tmp_path, 0)
    with TokenIndexFolder(tmp_path) as index:
        for query in ([1], [1, 2], [3, 4, 5], [39, 0]):
            assert index.count(query) == len(brute(docs, query))


def _raw_build(folder: Path, size: int, jobs: int) -> None:
    """rust_indexing run as infini-gram's own build runs it, `jobs` parts with no cap."""
    ratio, share = str(pointer_width(size)), size // jobs
    share += share % 2
    parts, merged = folder / "parts", folder / "merged"
    parts.mkdir()
    merged.mkdir()
    data = str(folder / "tokenized.0")
    common = ["--ratio", ratio, "--token-width", "2"]
    for job in range(jobs):
        subprocess.run([str(indexer_path()), "make-part", "--data-file", data, "--parts-dir",
                        str(parts), "--start-byte", str(job * share), "--end-byte",
                        str(min((job + 1) * share + 100_000, size)), *common],
                       check=True, capture_output=True)
    subprocess.run([str(indexer_path()), "merge", "--data-file", data, "--parts-dir", str(parts),
                    "--merged-dir", str(merged), "--num-threads", str(jobs), *common],
                   check=True, capture_output=True)
    subprocess.run([str(indexer_path()), "concat", "--data-file", data, "--merged-dir",
                    str(merged), "--merged-file", str(folder / "table.0"), "--num-threads",
                    str(jobs), *common], check=True, capture_output=True)


def test_verification_catches_the_array_uncapped_cpus_break(tmp_path):
    docs = _random_docs(np.random.default_rng(5), 190_000)
    write_shard(tmp_path / "good", 0, (np.array(d) for d in docs), 2)
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("tokenized.0", "offset.0"):
        (broken / name).write_bytes((tmp_path / "good" / name).read_bytes())
    size = (broken / "tokenized.0").stat().st_size
    _raw_build(broken, size, 4)  # about 96 KB per part, under the 100,000-byte overlap
    with pytest.raises(LayoutError, match="out of suffix order|not a permutation"):
        verify_suffix_array(broken, 0)


# -- corrupt, truncated, empty --------------------------------------------------------------


def _table(folder: Path) -> tuple[bytearray, int]:
    raw = bytearray((folder / "table.0").read_bytes())
    size = (folder / "tokenized.0").stat().st_size
    return raw, pointer_width(size)


def test_swapped_table_entries_are_caught(tmp_path):
    write_shard(tmp_path, 0, (np.array(d) for d in DOCS), 2)
    raw, ptr = _table(tmp_path)
    a, b = 3, 9
    raw[a * ptr:(a + 1) * ptr], raw[b * ptr:(b + 1) * ptr] = \
        raw[b * ptr:(b + 1) * ptr], raw[a * ptr:(a + 1) * ptr]
    (tmp_path / "table.0").write_bytes(bytes(raw))
    with pytest.raises(LayoutError, match=r"table\.0: entries \d+ and \d+ are out of suffix order"):
        verify_suffix_array(tmp_path, 0)


def test_repeated_table_entry_is_not_a_permutation(tmp_path):
    write_shard(tmp_path, 0, (np.array(d) for d in DOCS), 2)
    raw, ptr = _table(tmp_path)
    raw[0:ptr] = raw[ptr:2 * ptr]
    (tmp_path / "table.0").write_bytes(bytes(raw))
    with pytest.raises(LayoutError, match="not a permutation"):
        verify_suffix_array(tmp_path, 0)


@pytest.mark.parametrize("name, cut", [("table.0", 1), ("tokenized.0", 1), ("tokenized.0", 2),
                                       ("offset.0", 3), ("offset.0", 8)])
def test_truncated_file_is_named(tmp_path, name, cut):
    write_shard(tmp_path, 0, (np.array(d) for d in DOCS), 2)
    path = tmp_path / name
    path.write_bytes(path.read_bytes()[:-cut])
    with pytest.raises(LayoutError) as caught:
        TokenIndexFolder(tmp_path)
    assert str(caught.value).startswith(str(path)), str(caught.value)
    assert "\n" not in str(caught.value)
    if name == "table.0":
        with pytest.raises(LayoutError, match="table.0"):
            verify_suffix_array(tmp_path, 0)


def test_missing_table_and_shard_gap_are_refused(tmp_path):
    write_shard(tmp_path, 0, [np.array([1, 2])], 2)
    write_shard(tmp_path, 1, [np.array([3])], 2)
    write_shard(tmp_path, 2, [np.array([4])], 2)
    (tmp_path / "table.1").unlink()
    with pytest.raises(LayoutError, match=r"table\.1: missing"):
        TokenIndexFolder(tmp_path)
    for name in ("tokenized.1", "offset.1"):
        (tmp_path / name).unlink()
    with pytest.raises(LayoutError, match="leave out tokenized.1"):
        TokenIndexFolder(tmp_path)


def test_not_a_folder_and_an_empty_folder(tmp_path):
    with pytest.raises(LayoutError, match="not a folder"):
        TokenIndexFolder(tmp_path / "nowhere")
    with pytest.raises(LayoutError, match="no tokenized.0"):
        TokenIndexFolder(tmp_path)


def test_empty_shard_is_refused_and_leaves_nothing(tmp_path):
    write_shard(tmp_path, 0, [np.array([1, 2])], 2)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(LayoutError, match="shard 1 has no documents") as caught:
        write_shard(tmp_path, 1, [], 2)
    assert "\n" not in str(caught.value)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_existing_shard_is_not_written_over(tmp_path):
    write_shard(tmp_path, 0, [np.array([1, 2])], 2)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(LayoutError, match="exists already"):
        write_shard(tmp_path, 0, [np.array([3, 4])], 2)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("doc, message", [([1, 65535], "token id 65535 does not fit"),
                                          ([-1], "token id -1"),
                                          ([[1, 2]], "1-d integer array")])
def test_bad_token_ids_are_refused_and_leave_nothing(tmp_path, doc, message):
    with pytest.raises(LayoutError, match=message):
        write_shard(tmp_path, 0, [np.array([4]), np.array(doc)], 2)
    assert list(tmp_path.iterdir()) == []


def test_a_killed_build_leaves_no_shard_that_looks_finished(tmp_path):
    # What a kill during the build leaves: the partial folder, never table.0 beside the data.
    def documents():
        yield np.array([1, 2])
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_shard(tmp_path, 0, documents(), 2)
    assert list(tmp_path.iterdir()) == []
    stale = tmp_path / ".partial-shard-0"
    stale.mkdir()
    (stale / "tokenized.0").write_bytes(b"\xff\xff\x01")
    with pytest.raises(LayoutError, match="no tokenized.0"):
        TokenIndexFolder(tmp_path)
    write_shard(tmp_path, 0, [np.array([1, 2])], 2)
    assert sorted(os.listdir(tmp_path)) == ["offset.0", "table.0", "tokenized.0"]


def test_empty_query_and_negative_ids(tmp_path):
    write_shard(tmp_path, 0, [np.array([1, 2])], 2)
    with TokenIndexFolder(tmp_path) as index:
        with pytest.raises(ValueError):
            index.count([])
        with pytest.raises(ValueError):
            index.occurrences([-3])
        empty = index.occurrences([9])
        assert isinstance(empty, Occurrences) and len(empty) == 0
        assert [a.tolist() for a in index.neighbours(empty, 1)] == [[], []]


# -- which tokenizer built it ---------------------------------------------------------------


@pytest.mark.parametrize("name, family", [
    ("v4_dolma-v1_7_llama", "llama"), ("v4_rpj_llama_s4", "llama"),
    ("v4_piletrain_llama", "llama"), ("v4_olmo-2-1124-13b-instruct_llama", "llama"),
    ("v4_pileval_gpt2", "gpt2"), ("my-index", None), ("v4_llama", None)])
def test_tokenizer_family_from_a_published_name(tmp_path, name, family):
    (tmp_path / name).mkdir()
    assert tokenizer_family(tmp_path / name) == family


def test_check_tokenizer_by_name_and_manifest(tmp_path):
    published = tmp_path / "v4_pileval_gpt2"
    published.mkdir()
    check_tokenizer(published, "gpt2")
    check_tokenizer(published, "openai-community/gpt2")
    with pytest.raises(LayoutError, match="built with the gpt2 tokenizer.*SmolLM2"):
        check_tokenizer(published, "HuggingFaceTB/SmolLM2-135M")
    llama = tmp_path / "v4_rpj_llama_s4"
    llama.mkdir()
    check_tokenizer(llama, "meta-llama/Llama-2-7b-hf")
    with pytest.raises(LayoutError):
        check_tokenizer(llama, "meta-llama/Llama-3.1-8B")
    unnamed = tmp_path / "corpus"
    unnamed.mkdir()
    with pytest.raises(LayoutError, match="no factprobe-index.json"):
        check_tokenizer(unnamed, "gpt2")
    (unnamed / "factprobe-index.json").write_text(
        '{"tokenizer": {"name": "smollm2-135m.gguf", "sha256": "ab12"}}', encoding="utf-8")
    assert tokenizer_family(unnamed) == "smollm2-135m.gguf"
    check_tokenizer(unnamed, "smollm2-135m.gguf", "ab12")
    with pytest.raises(LayoutError, match="not 'gemma"):
        check_tokenizer(unnamed, "gemma-3-1b.gguf")
    with pytest.raises(LayoutError, match="sha256"):
        check_tokenizer(unnamed, "smollm2-135m.gguf", "ff00")


def test_u32_shard_over_several_workers(tmp_path):
    # The indexer's 4-byte mode wants 2**35 bytes of buckets; where that is refused the shard is
    # built from the byte-level array, over as many workers as the size allows.
    rng = np.random.default_rng(11)
    docs = [(rng.integers(0, 30, int(rng.integers(0, 80))) * 100_003).tolist() for _ in range(1500)]
    info = write_shard(tmp_path, 0, (np.array(d) for d in docs), 4, cpus=2, parallel=True)
    assert info.bytes > 2 * 100_001
    verify_suffix_array(tmp_path, 0)
    with TokenIndexFolder(tmp_path) as index:
        for query in ([0], [100_003, 200_006], [2_900_087, 0, 0]):
            assert index.count(query) == len(brute(docs, query))


def test_one_long_document_across_workers(tmp_path):
    rng = np.random.default_rng(12)
    doc = rng.integers(0, 8, 400_000).tolist()
    write_shard(tmp_path, 0, [np.array(doc), np.array([1, 2])], 2, cpus=2, parallel=True)
    with TokenIndexFolder(tmp_path) as index:
        occ = index.occurrences([1, 2, 3, 4])
        assert list(zip(occ.doc.tolist(), occ.at.tolist())) == brute([doc, [1, 2]], [1, 2, 3, 4])
        assert index.document_lengths().tolist() == [400_000, 2]


def test_unfinished_shard_is_discarded_and_a_finished_one_never(tmp_path):
    write_shard(tmp_path, 0, [np.array([1, 2])], 2)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    # what a kill between the renames leaves: data and offsets of shard 1, no table
    (tmp_path / "tokenized.1").write_bytes(b"\xff\xff\x05\x00")
    (tmp_path / "offset.1").write_bytes(bytes(8))
    (tmp_path / ".partial-shard-1").mkdir()
    with pytest.raises(LayoutError, match=r"table\.1: missing"):
        TokenIndexFolder(tmp_path)
    assert discard_unfinished_shard(tmp_path, 1) is True
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert discard_unfinished_shard(tmp_path, 1) is False
    with pytest.raises(LayoutError, match="finished; not discarded"):
        discard_unfinished_shard(tmp_path, 0)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_our_folders_keep_tokens_beside_the_manifest(tmp_path):
    assert token_folder(tmp_path) == tmp_path
    (tmp_path / "tokens").mkdir()
    assert token_folder(tmp_path) == tmp_path  # no manifest: not one of ours
    (tmp_path / "factprobe-index.json").write_text('{"tokenizer": {"name": "x"}}')
    assert token_folder(tmp_path) == tmp_path / "tokens"


def test_a_corrupt_offset_in_the_middle_is_named(tmp_path):
    write_shard(tmp_path, 0, (np.array(d) for d in DOCS), 2)
    offsets = np.fromfile(tmp_path / "offset.0", dtype="<u8")
    assert offsets.tolist() == [0, 8, 10, 16, 20, 34]
    for value, message in ((12, "does not point at a document separator"),
                           (8, "does not rise past"),
                           (11, "not on a token boundary"),
                           (10**9, "lies outside")):
        broken = offsets.copy()
        broken[2] = value
        broken.astype("<u8").tofile(tmp_path / "offset.0")
        with pytest.raises(LayoutError, match=message) as caught:
            TokenIndexFolder(tmp_path)
        assert str(caught.value).startswith(str(tmp_path / "offset.0"))

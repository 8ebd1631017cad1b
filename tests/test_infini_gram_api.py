"""infini-gram's API (issue 43 item 5): the client in index/infini_gram/api.py against a real
`factprobe serve` on 127.0.0.1 answering the same API from a local index (POST /infini-gram).
Counts equal a slow reference, and every result says what it counts: occurrences, or window
co-occurrence (approximate), never document counts. A stranger names indexes only by name,
within bounded sizes."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("infini_gram")
pytest.importorskip("fastapi")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import factprobe_cmd, free_port, run_cli, running_server  # noqa: E402
from test_distractors import graph_entities  # noqa: E402
from wikidata_builder import write_dump  # noqa: E402

from factprobe.index.infini_gram.api import (  # noqa: E402
    ANY_OCCURRENCES,
    OCCURRENCES,
    ApiError,
    ApiUnavailable,
    InfiniGramApi,
)
from factprobe.index.infini_gram.layout import write_shard  # noqa: E402

NAME = "v4_fixture_u16"
ZEROS = "v4_zeros_u16"
SHARDS = [
    [[1, 2, 3, 9, 9, 4, 5], [4, 5, 1, 2], []],
    [[7, 1, 2, 8, 8, 8, 8, 8, 4, 5], [1, 2], [4, 5, 9, 1, 2, 4, 5]],
]
DOCS = [d for shard in SHARDS for d in shard]


def occurrences(query):
    n = len(query)
    return {(d, i) for d, doc in enumerate(DOCS) for i in range(len(doc) - n + 1)
            if doc[i:i + n] == list(query)}


def window_reference(cnf, window):
    """The anchor is the clause with the fewest distinct positions (the first of equals); count
    its positions with every other clause starting within `window` tokens in the same document."""
    clauses = [set().union(*(occurrences(term) for term in clause)) for clause in cnf]
    anchor = min(range(len(clauses)), key=lambda k: len(clauses[k]))
    return sum(1 for d, i in clauses[anchor]
               if all(any(e == d and abs(j - i) <= window for e, j in clauses[k])
                      for k in range(len(clauses)) if k != anchor))



@contextmanager
def serving_ngram(base: Path, store: Path, folders: list[Path]):
    """`factprobe serve` on 127.0.0.1 answering /infini-gram from FOLDERS, until the block ends;
    yields the route's URL."""
    url = f"http://127.0.0.1:{free_port()}"
    argv = [*factprobe_cmd(), "serve", "--store", str(store), "--data", str(base / "data"),
            *(arg for folder in folders for arg in ("--ngram-index", str(folder))),
            "--port", url.rsplit(":", 1)[1], "--log-level", "warning"]

    def ready() -> bool:
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    with running_server(argv, base / "serve.log", ready, name="factprobe serve", timeout=60):
        yield url + "/infini-gram"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("ngram-service")
    store = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "hand.json", graph_entities())), "--store",
            str(store), "--quiet", check=True)
    folder = base / NAME
    for number, docs in enumerate(SHARDS):
        write_shard(folder, number, (np.array(d, dtype=np.int64) for d in docs), 2)
    zeros = base / ZEROS  # one token, more often than the server counts a CNF clause exactly
    write_shard(zeros, 0, [np.zeros(2_000_001, dtype=np.int64), np.array([1])], 2)
    (base / "secret.txt").write_text("not an index")
    with serving_ngram(base, store, [folder, zeros]) as url:
        yield url


def post(url: str, payload: object, raw: bytes | None = None) -> tuple[int, dict]:
    data = raw if raw is not None else json.dumps(payload).encode()
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_counts_are_occurrences_and_say_so(server):
    api = InfiniGramApi(NAME, server)
    for query in ([1, 2], [4, 5], [8, 8], [8, 8, 8, 8, 8], [9], [6], [2, 3, 9]):
        result = api.count(query)
        assert result.count == len(occurrences(query)), query
        assert (result.semantics, result.approx, result.documents) == (OCCURRENCES, False, False)
    assert [r.count for r in api.counts([[1, 2], [4, 5]])] == [5, 5]


def test_or_of_forms_counts_distinct_positions(server):
    api = InfiniGramApi(NAME, server)
    result = api.any_count([[1, 2], [1], [9]])
    expected = occurrences([1, 2]) | occurrences([1]) | occurrences([9])
    assert result.count == len(expected) == 8  # every 1 is followed by 2: 5 + three 9s
    assert result.semantics == ANY_OCCURRENCES


@pytest.mark.parametrize("window", [1, 2, 3, 5, 100])
def test_pairs_are_window_cooccurrence_marked_approximate(server, window):
    api = InfiniGramApi(NAME, server)
    head, tail = [[1, 2]], [[4, 5], [9]]
    result = api.cooccurrence(head, tail, max_diff_tokens=window)
    assert result.count == window_reference([head, tail], window)
    assert result.approx is True and result.documents is False
    assert result.semantics.startswith(f"window co-occurrence (approximate): positions where the "
                                       f"terms fall within {window} tokens")
    assert "not KDF's document counts" in result.semantics


def test_a_window_never_crosses_a_document(server):
    # 7 occurs once, at the start of document 3; 9 occurs in documents 0 and 5 only, within 1000
    # tokens of it in the file (document 5 follows document 4 in the same shard) but never with it.
    api = InfiniGramApi(NAME, server)
    assert api.cooccurrence([[7]], [[9]], max_diff_tokens=1000).count == 0
    assert window_reference([[[7]], [[9]]], 1000) == 0
    assert api.cooccurrence([[7]], [[4, 5]], max_diff_tokens=1000).count == 1
    assert api.cooccurrence([[7]], [[4, 5]], max_diff_tokens=7).count == 0  # at 0 and 8


def test_find_gives_ranks_by_shard(server):
    status, answer = post(server, {"index": NAME, "query_type": "find", "query_ids": [4, 5]})
    assert status == 200
    assert answer["cnt"] == 5 and len(answer["segment_by_shard"]) == 2
    assert [hi - lo for lo, hi in answer["segment_by_shard"]] == [2, 3]
    status, answer = post(server, {"index": NAME, "query_type": "count", "query_ids": []})
    assert (status, answer["count"]) == (200, sum(map(len, DOCS)))


def test_a_stranger_names_indexes_by_name_only(server):
    for name in ("../secret.txt", "/etc/passwd", str(Path(server).parent), "secret.txt"):
        with pytest.raises(ApiError, match=r"unknown index .*this server serves: v4_fixture_u16, "
                                           r"v4_zeros_u16$"):
            InfiniGramApi(name, server).count([1])


@pytest.mark.parametrize("payload, status, message", [
    ({"index": NAME, "query_type": "count", "query": "Paris"}, 400, "send query_ids"),
    ({"index": NAME, "query_type": "count", "query_ids": list(range(1001))}, 422, "query_ids"),
    ({"index": NAME, "query_type": "count", "query_ids": [[[1]]] * 9}, 422, "query_ids"),
    ({"index": NAME, "query_type": "count", "query_ids": [-1]}, 422, "query_ids"),
    ({"index": NAME, "query_type": "count", "query_ids": [1.5]}, 422, "query_ids"),
    ({"index": NAME, "query_type": "count", "query_ids": [[[1]], [[]]]}, 400, "at least one"),
    ({"index": NAME, "query_type": "count", "query_ids": [1], "max_diff_tokens": 1001}, 422,
     "max_diff_tokens"),
    ({"index": NAME, "query_type": "ntd", "query_ids": [1]}, 422, "query_type"),
    ({"index": NAME, "query_type": "find", "query_ids": [[[1]]]}, 400, "one n-gram"),
])
def test_bad_requests_are_refused_in_bounds(server, payload, status, message):
    got, answer = post(server, payload)
    assert got == status
    assert message in json.dumps(answer)


def test_oversized_body_is_refused(server):
    status, answer = post(server, None, raw=b'{"index": "x", "query_ids": [' + b"1," * 40_000 + b"1]}")
    assert status == 413


def test_client_errors_are_one_line(server):
    with pytest.raises(ApiError) as caught:
        InfiniGramApi(NAME, server).count(list(range(1001)))
    assert "\n" not in str(caught.value) and str(caught.value).startswith(server)
    with pytest.raises(ValueError):
        InfiniGramApi(NAME, server).count([])
    with pytest.raises(ValueError):
        InfiniGramApi(NAME, "file:///etc/passwd")
    nowhere = f"http://127.0.0.1:{free_port()}/infini-gram"
    with pytest.raises(ApiUnavailable, match="unreachable after 2 tries"):
        InfiniGramApi(NAME, nowhere, retries=1, backoff=0).count([1])


def test_ngram_command_over_the_api_says_what_it_counts(server):
    result = run_cli("frequency", "ngram", "1,2", "8 8", "--backend", "infini-gram-api",
                     "--api-url", server, "--api-index", NAME, "--ids", "--json")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["ids"], r["occurrences"], r["semantics"]) for r in rows] == [
        ([1, 2], 5, OCCURRENCES), ([8, 8], 4, OCCURRENCES)]
    assert all("documents" not in r for r in rows)
    result = run_cli("frequency", "ngram", "1,2", "--backend", "infini-gram-api", "--api-url",
                     server, "--api-index", "v4_other_gpt2", "--ids")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {server}: unknown index 'v4_other_gpt2'; this server serves: {NAME}, {ZEROS}"]
    result = run_cli("frequency", "ngram", "1", "--backend", "infini-gram-api", "--ids")
    assert result.returncode == 2 and "needs --api-index" in result.stderr


def test_a_clause_too_frequent_to_count_exactly_is_refused(server):
    api = InfiniGramApi(ZEROS, server)
    assert api.count([0]).count == 2_000_001  # a plain count is a binary search: never refused
    assert api.cooccurrence([[1]], [[1]]).count == 1
    with pytest.raises(ApiError, match="clause 0 occurs 2000001 times, over the 2000000"):
        api.cooccurrence([[0]], [[1]])


@settings(max_examples=25, deadline=None)
@given(docs=st.lists(st.lists(st.integers(0, 4), max_size=15), min_size=1, max_size=6),
       cnf=st.lists(st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=2), min_size=1,
                             max_size=2), min_size=1, max_size=3),
       window=st.integers(1, 6))
def test_property_cnf_count_equals_the_reference(tmp_path_factory, docs, cnf, window):
    from factprobe.index.infini_gram.cnf import cnf_count
    from factprobe.index.infini_gram.layout import TokenIndexFolder

    folder = tmp_path_factory.mktemp("cnf")
    write_shard(folder, 0, (np.array(d, dtype=np.int64) for d in docs[:3]), 2)
    if docs[3:]:
        write_shard(folder, 1, (np.array(d, dtype=np.int64) for d in docs[3:]), 2)

    def found(query):
        n = len(query)
        return {(d, i) for d, doc in enumerate(docs) for i in range(len(doc) - n + 1)
                if doc[i:i + n] == list(query)}

    clauses = [set().union(*(found(term) for term in clause)) for clause in cnf]
    anchor = min(range(len(clauses)), key=lambda k: len(clauses[k]))
    expected = len(clauses[0]) if len(clauses) == 1 else sum(
        1 for d, i in clauses[anchor]
        if all(any(e == d and abs(j - i) <= window for e, j in clauses[k])
               for k in range(len(clauses)) if k != anchor))
    with TokenIndexFolder(folder) as index:
        assert cnf_count(index, cnf, window) == expected


def test_serve_refuses_a_folder_that_is_no_index(tmp_path):
    empty = tmp_path / "v4_empty_u16"
    empty.mkdir()
    result = run_cli("serve", "--store", tmp_path / "missing.sqlite", "--ngram-index", empty)
    assert result.returncode == 2  # the store is checked first
    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "hand.json", graph_entities())),
            "--store", str(store), "--quiet", check=True)
    result = run_cli("serve", "--store", store, "--data", tmp_path / "data", "--ngram-index", empty)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: --ngram-index: {empty}: no tokenized.0 (not an infini-gram index folder)")
    assert not (tmp_path / "data").exists()  # refused before the data folder is claimed

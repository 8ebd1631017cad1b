"""`factprobe corpus index` and `factprobe frequency ...` on the shipped sample graph."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli

DOCS = [
    '{"id": "d1", "title": "Berlin", "text": "Berlin is the capital of Germany."}',
    '{"id": "d2", "title": "", "text": "Bonn was the capital of West Germany; Berliner Weisse is a beer."}',
    "not json",
    '{"id": "d3", "text": 5}',
    '{"id": "d4", "title": "Paris", "text": "PARIS, capital of France (and of fashion)."}',
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    base = tmp_path_factory.mktemp("freq")
    run_cli("sample", "--out", str(base), "--quiet", check=True)
    (base / "docs.jsonl").write_text("\n".join(DOCS) + "\n")
    return base


def test_index_count_and_annotate(sample):
    store, index = str(sample / "graph.sqlite"), str(sample / "f.sqlite")
    proc = run_cli("corpus", "index", str(sample / "docs.jsonl"), "--store", store, "--index", index, "--json", "--quiet")
    assert proc.returncode == 3  # partial: two records rejected, named by file and line
    assert json.loads(proc.stdout)["added"] == 3
    assert f"rejected {sample / 'docs.jsonl'}:3: malformed JSON" in proc.stderr
    assert f"rejected {sample / 'docs.jsonl'}:4: field 'text' is missing or not a string" in proc.stderr

    def count(*args):
        return json.loads(run_cli("frequency", *args, "--index", index, "--json", check=True).stdout)["documents"]

    assert count("entity", "Q183") == 2  # "Germany" in d1 and d2 ("West Germany")
    assert count("entity", "Q64") == 1  # "Berliner" in d2 is not Berlin
    assert count("pair", "Q183", "Q64") == 1 and count("pair", "Q183", "Q586") == 1  # Berlin, Bonn
    assert count("pair", "Q142", "Q90") == 1  # PARIS / France

    again = run_cli("corpus", "index", str(sample / "docs.jsonl"), "--store", store, "--index", index, "--json", "--quiet")
    assert json.loads(again.stdout)["added"] == 0 and json.loads(again.stdout)["documents"] == 3

    out = sample / "p36.jsonl"
    proc = run_cli("frequency", "annotate", "--relation", "P36", "--out", str(out), "--store", store,
                   "--index", index, "--json", "--quiet", check=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    counted = {(r["subject"], r["object"]): (r["documents"], r["bucket"]) for r in rows if r["documents"]}
    assert counted == {("Q183", "Q64"): (1, "[1,10)"), ("Q183", "Q586"): (1, "[1,10)"), ("Q142", "Q90"): (1, "[1,10)")}
    summary = json.loads(proc.stdout)
    assert summary["facts"] == len(rows) and summary["buckets"]["P36 [1,10)"] == 3


def test_the_library_calls_count_what_the_commands_count(sample, tmp_path):
    """index_corpus / annotate / count_documents (index/corpus_jobs.py), called from Python: the
    numbers of the commands above, progress through callbacks, problems as exceptions."""
    from factprobe.index.backend import Backend
    from factprobe.index.corpus_jobs import (AnnotateOptions, CorpusJobError, IndexOptions, MissingInput, annotate,
                                             count_documents, index_corpus)

    store, backend = sample / "graph.sqlite", Backend("embedded", str(tmp_path / "lib.sqlite"))
    read = []
    result = index_corpus(backend, store, IndexOptions((str(sample / "docs.jsonl"),)), progress=read.append)
    assert (result.added, result.documents, len(result.rejects), read[-1]) == (3, 3, 2, 3)
    assert result.to_dict()["rejected"] == 2 and not result.complete and "3 documents added" in result.summary()
    assert count_documents(["Q183", "Q64"], backend, store) == (1, "embedded")
    assert count_documents(["capital", "GERMANY"], backend, store, corpus_files=[str(sample / "docs.jsonl")]) == \
        (2, "scan")
    heard = []
    counted = annotate(backend, store, AnnotateOptions(("P36",), out=str(tmp_path / "p36.jsonl")),
                       progress=lambda relation, done: heard.append((relation, done)))
    assert counted.per_bucket[("P36", "[1,10)")] == 3 and counted.store_corpus is None
    assert heard[0] == ("P36", 0) and heard[-1] == ("P36", counted.facts)
    with pytest.raises(CorpusJobError):
        annotate(backend, store, AnnotateOptions(("P36",)))  # neither a file nor the store
    with pytest.raises(MissingInput):
        index_corpus(backend, tmp_path / "none.sqlite", IndexOptions((str(sample / "docs.jsonl"),)))


def test_settings_mismatch_and_missing_index(sample):
    store, index = str(sample / "graph.sqlite"), str(sample / "g.sqlite")
    run_cli("corpus", "index", str(sample / "docs.jsonl"), "--store", store, "--index", index, "--quiet")
    other = run_cli("corpus", "index", str(sample / "docs.jsonl"), "--store", store, "--index", index,
                    "--min-alias-length", "4", "--quiet")
    assert other.returncode == 2 and "refusing to add documents" in other.stderr
    missing = run_cli("frequency", "entity", "Q64", "--index", str(sample / "none.sqlite"))
    assert missing.returncode == 2 and "no frequency index at" in missing.stderr


def test_trex_link_based_counts(tmp_path):
    """A document mentions the entities its T-REx annotations link; counted from the store by SQL."""
    import sqlite3
    from itertools import combinations

    from conftest import FIXTURES

    store = tmp_path / "trex.sqlite"
    run_cli("ingest", "trex", str(FIXTURES / "trex" / "re-nlg_0-5.json"), "--store", str(store), "--quiet", check=True)
    links = str(tmp_path / "links.sqlite")
    run_cli("corpus", "index", "--from-store", "--links", "--store", str(store), "--index", links, "--quiet", check=True)
    db = sqlite3.connect(store)
    linked = {}
    for document, entity in db.execute("SELECT document, entity FROM annotations"):
        linked.setdefault(entity, set()).add(document)
    assert len(linked) > 5 and sum(map(len, linked.values())) > len(linked)  # entities shared by documents

    def count(index, *args):
        return json.loads(run_cli("frequency", *args, "--index", index, "--json", check=True).stdout)["documents"]

    entities = sorted(linked, key=lambda e: (-len(linked[e]), e))[:6]
    assert len(linked[entities[1]] & linked[entities[0]]) > 0
    for e in entities:
        assert count(links, "entity", e) == len(linked[e]), e
    for h, t in combinations(entities, 2):
        assert count(links, "pair", h, t) == len(linked[h] & linked[t]), (h, t)
    usage = run_cli("corpus", "index", "--links", "x.jsonl", "--store", str(store), "--index", links)
    assert usage.returncode == 2 and "--links" in usage.stderr


def test_raw_strings_are_counted_by_reading_the_corpus(sample):
    corpus, store = str(sample / "docs.jsonl"), str(sample / "graph.sqlite")

    def count(*args):
        proc = run_cli("frequency", *args, "--json", check=True)
        out = json.loads(proc.stdout)
        return out["documents"], out["counted_by"]

    assert count("pair", "capital", "GERMANY", "--documents", corpus) == (2, "scan")
    assert count("pair", "Q183", "bonn", "--documents", corpus, "--store", store) == (1, "scan")
    assert count("entity", "Berlin", "--documents", corpus) == (1, "scan")  # not "Berliner"
    assert count("entity", "fashion)", "--documents", corpus) == (1, "scan")
    assert count("entity", "Q183", "--from-store", "--store", store) == (0, "scan")  # the store has no documents
    missing = run_cli("frequency", "entity", "Paris")
    assert missing.returncode == 2 and "give --documents FILE or --from-store" in missing.stderr


def test_old_spellings_of_the_scan_options_still_count_with_a_warning(sample, tmp_path):
    """--corpus FILE and --corpus-from-store (before --documents and --from-store) work for one
    release: same counts, one warning line each."""
    corpus, store = str(sample / "docs.jsonl"), str(sample / "graph.sqlite")
    extra = tmp_path / "more.jsonl"
    extra.write_text('{"id": "m1", "title": "", "text": "Berlin again."}\n')

    def count(*args):
        proc = run_cli("frequency", *args, "--json", check=True)
        return json.loads(proc.stdout)["documents"], proc.stderr.splitlines()

    assert count("entity", "Berlin", "--corpus", corpus) == (1, ["warning: --corpus is deprecated, use --documents"])
    # both spellings at once: the files of both are read
    assert count("entity", "Berlin", "--documents", str(extra), "--corpus", corpus) == (
        2, ["warning: --corpus is deprecated, use --documents"])
    assert count("pair", "Q183", "Q64", "--corpus-from-store", "--store", store) == (
        0, ["warning: --corpus-from-store is deprecated, use --from-store"])
    assert count("entity", "Berlin", "--documents", corpus) == (1, [])


@pytest.mark.slow
def test_killed_indexing_resumes_to_the_same_counts(sample, tmp_path):
    import signal
    import sqlite3
    import subprocess
    import time

    from conftest import factprobe_cmd
    from test_frequency_embedded import planted_corpus

    corpus = tmp_path / "big.jsonl"
    with open(corpus, "w") as out:
        for d in planted_corpus(11, 40_000):
            out.write(json.dumps({"id": d.id, "title": d.title, "text": d.text}) + "\n")
    store = str(sample / "graph.sqlite")
    args = ["corpus", "index", str(corpus), "--store", store, "--quiet"]
    run_cli(*args, "--index", str(tmp_path / "clean.sqlite"), check=True)

    resumed = tmp_path / "resumed.sqlite"
    proc = subprocess.Popen([*factprobe_cmd(), *args, "--index", str(resumed)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done = 0
    deadline = time.time() + 120
    while proc.poll() is None and time.time() < deadline:
        try:
            with sqlite3.connect(resumed, timeout=0.1) as db:
                done = db.execute("SELECT count(*) FROM documents").fetchone()[0]
        except sqlite3.Error:
            done = 0
        if done >= 4000:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL and 0 < done < 40_000, "the run should be killed midway"
    run_cli(*args, "--index", str(resumed), check=True)

    def tables(path):
        with sqlite3.connect(path) as db:
            return (db.execute("SELECT id FROM documents ORDER BY id").fetchall(),
                    db.execute("SELECT entity, docs FROM postings ORDER BY entity").fetchall())

    clean_docs, clean_postings = tables(tmp_path / "clean.sqlite")
    resumed_docs, resumed_postings = tables(resumed)
    assert resumed_docs == clean_docs and len(clean_docs) == 40_000
    assert resumed_postings == clean_postings and len(clean_postings) > 5


def _postings(path):
    import sqlite3

    with sqlite3.connect(path) as db:
        ids = dict(db.execute("SELECT ordinal, id FROM documents"))
        from pyroaring import BitMap

        return {entity: sorted(ids[o] for o in BitMap.deserialize(blob))
                for entity, blob in db.execute("SELECT entity, docs FROM postings")}


def test_corpus_files_read_directly_equal_the_ingested_ones(tmp_path):
    """T-REx and Wikidata5M files indexed as they are give the postings their ingests give."""
    from conftest import FIXTURES

    trex = str(FIXTURES / "trex" / "re-nlg_0-5.json")
    store = str(tmp_path / "g.sqlite")
    run_cli("ingest", "trex", trex, "--store", store, "--quiet", check=True)
    w5m = FIXTURES / "wikidata5m"
    ingest = run_cli("ingest", "wikidata5m", "--entity-aliases", str(w5m / "wikidata5m_entity.txt"),
                     "--documents", str(w5m / "wikidata5m_text.txt"), "--store", store, "--quiet")
    assert ingest.returncode == 3  # the fixtures hold bad lines on purpose
    idx = {name: str(tmp_path / f"{name}.sqlite") for name in ("links_file", "links_store", "names_file", "names_store")}
    run_cli("corpus", "index", trex, "--format", "trex", "--links", "--index", idx["links_file"], "--quiet",
            "--store", str(tmp_path / "none.sqlite"), check=True)  # link-based: no store needed
    run_cli("corpus", "index", "--from-store", "--links", "--store", store, "--index", idx["links_store"], "--quiet",
            check=True)
    trex_links = _postings(idx["links_file"])
    assert trex_links and {d for ds in trex_links.values() for d in ds} <= {
        d for ds in _postings(idx["links_store"]).values() for d in ds}
    assert trex_links == {e: [d for d in ds if not d.startswith("wikidata5m:")]
                          for e, ds in _postings(idx["links_store"]).items() if e in trex_links}

    run_cli("corpus", "index", trex, "--store", store, "--format", "trex", "--index", idx["names_file"], "--quiet",
            check=True)
    direct = run_cli("corpus", "index", str(w5m / "wikidata5m_text.txt"), "--format", "wikidata5m", "--store", store,
                     "--index", idx["names_file"], "--quiet")
    assert direct.returncode == 3 and direct.stderr.count("wikidata5m_text.txt:") == 2  # its two bad lines, named
    run_cli("corpus", "index", "--from-store", "--store", store, "--index", idx["names_store"], "--quiet", check=True)
    by_names = _postings(idx["names_file"])
    assert by_names == _postings(idx["names_store"]) and any(
        d.startswith("wikidata5m:") for ds in by_names.values() for d in ds)


def test_annotate_writes_counts_into_the_store(sample):
    from factprobe.kg.graph import KnowledgeGraph

    store, index = str(sample / "graph.sqlite"), str(sample / "w.sqlite")
    run_cli("corpus", "index", str(sample / "docs.jsonl"), "--store", store, "--index", index, "--quiet")
    out = sample / "w.jsonl"
    proc = run_cli("frequency", "annotate", "--relation", "P36", "--out", str(out), "--to-store", "--store", store,
                   "--index", index, "--buckets", "1,2", "--json", "--quiet", check=True)
    assert json.loads(proc.stdout)["store_corpus"] == "w"
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    with KnowledgeGraph(store) as kg:
        stored = {fact: (n, bucket) for fact, corpus, n, bucket in kg.fact_frequencies("w")}
    assert stored == {r["fact"]: (r["documents"], r["bucket"]) for r in rows}
    assert sorted(b for _, b in stored.values() if b != "0") == ["[1,2)"] * 3
    nowhere = run_cli("frequency", "annotate", "--relation", "P36", "--store", store, "--index", index)
    assert nowhere.returncode == 2 and "--to-store" in nowhere.stderr


def test_annotate_names_the_stored_corpus_with_corpus_and_still_corpus_name(sample):
    """--corpus NAME, as `probeset build --corpus` reads it; --corpus-name (the old spelling)
    stores under the same name with one warning line."""
    from factprobe.kg.graph import KnowledgeGraph

    store, index = str(sample / "graph.sqlite"), str(sample / "n.sqlite")
    run_cli("corpus", "index", str(sample / "docs.jsonl"), "--store", store, "--index", index, "--quiet")
    stored, warnings = {}, {}
    for flag, name in (("--corpus", "wiki-new"), ("--corpus-name", "wiki-old")):
        proc = run_cli("frequency", "annotate", "--relation", "P36", "--to-store", flag, name, "--store", store,
                       "--index", index, "--json", "--quiet", check=True)
        assert json.loads(proc.stdout)["store_corpus"] == name
        warnings[flag] = proc.stderr.splitlines()
        with KnowledgeGraph(store) as kg:
            stored[flag] = {fact: (n, bucket) for fact, _, n, bucket in kg.fact_frequencies(name)}
    assert warnings == {"--corpus": [], "--corpus-name": ["warning: --corpus-name is deprecated, use --corpus"]}
    assert stored["--corpus"] == stored["--corpus-name"] and sum(n for n, _ in stored["--corpus"].values()) == 3


def test_unreachable_elasticsearch_is_one_line_naming_the_url(sample):
    from conftest import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    store = str(sample / "graph.sqlite")
    for args in (["frequency", "entity", "Q64", "--store", store],
                 ["corpus", "index", str(sample / "docs.jsonl"), "--store", store, "--quiet"],
                 ["frequency", "annotate", "--relation", "P36", "--to-store", "--store", store]):
        proc = run_cli(*args, "--backend", "elasticsearch", "--es-url", url, timeout=60)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert lines[0].startswith(f"error: Elasticsearch at {url}: "), lines[0]


@pytest.mark.skipif(not __import__("os").environ.get("FACTPROBE_ES_URL"),
                    reason="FACTPROBE_ES_URL is not set: no Elasticsearch to run the CLI against")
def test_elasticsearch_cli_counts_equal_embedded(sample):
    import os
    import uuid

    from elasticsearch import Elasticsearch

    url, es_index = os.environ["FACTPROBE_ES_URL"], f"factprobe-test-cli-{uuid.uuid4().hex[:8]}"
    store, docs = str(sample / "graph.sqlite"), str(sample / "docs.jsonl")
    es = ["--backend", "elasticsearch", "--es-url", url, "--es-index", es_index]
    try:
        proc = run_cli("corpus", "index", docs, "--store", store, *es, "--json", "--quiet")
        assert proc.returncode == 3 and json.loads(proc.stdout)["added"] == 3
        embedded = str(sample / "e.sqlite")
        run_cli("corpus", "index", docs, "--store", store, "--index", embedded, "--quiet")
        for args in (["entity", "Q183"], ["entity", "Q64"], ["pair", "Q183", "Q64"], ["pair", "Q142", "Q90"]):
            a = json.loads(run_cli("frequency", *args, "--store", store, *es, "--json", check=True).stdout)
            b = json.loads(run_cli("frequency", *args, "--store", store, "--index", embedded, "--json",
                                   check=True).stdout)
            assert a["documents"] == b["documents"], args
    finally:
        with Elasticsearch(url) as client:
            client.indices.delete(index=es_index, ignore_unavailable=True)


def test_facts_counted_while_linking_annotate_the_same(sample):
    store = str(sample / "graph.sqlite")
    plain, tracked = str(sample / "plain.sqlite"), str(sample / "tracked.sqlite")
    run_cli("corpus", "index", str(sample / "docs.jsonl"), "--store", store, "--index", plain, "--quiet")
    proc = run_cli("corpus", "index", str(sample / "docs.jsonl"), "--store", store, "--index", tracked,
                   "--count-facts", "P36", "--json", "--quiet")
    assert json.loads(proc.stdout)["tracked_pairs"] > 10

    def annotate(index):
        out = sample / f"{index}.jsonl"
        run_cli("frequency", "annotate", "--relation", "P36", "--out", str(out), "--store", store,
                "--index", str(sample / f"{index}.sqlite"), "--quiet", check=True)
        return out.read_text()

    assert annotate("tracked") == annotate("plain") and '"documents": 1' in annotate("plain")

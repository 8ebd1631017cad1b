"""`factprobe kg relations` and a relation named by its label wherever a P-id is taken (the
commands' --relation, a pipeline file's `relations`, the service), over the shipped sample graph
(kg/data/sample_wikidata.json) and two hand-made dumps in Wikidata's own format.

The counts below were read off the sample dump's JSON by hand (a statement with an object, not
deprecated; ended: a P582 end before today, all of the sample's ends being in 2025 or earlier)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.kg.graph import KnowledgeGraph
from factprobe.kg.relations import resolve_relation
from wikidata_builder import item, write_dump

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "kg" / "data" / "sample_wikidata.json"
CORPUS = ROOT / "kg" / "data" / "sample_corpus.jsonl"

# id: (label, facts, subjects, objects, current, ended)
CAPITAL = ("P36", "capital", 71, 56, 71, 57, 14)  # 72 statements, one deprecated; Bonn, Rio, ... ended
CAPITAL_OF = ("P1376", "capital of", 71, 71, 56, 57, 14)
HEAD_OF_GOVERNMENT = ("P6", "head of government", 10, 3, 9, 2, 8)
COLUMNS = ("id", "label", "facts", "subjects", "objects", "current", "ended")


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> tuple[Path, Path]:
    """The sample store, and an embedded frequency index of the sample corpus."""
    base = tmp_path_factory.mktemp("relations")
    store, index = base / "sample.sqlite", base / "freq.sqlite"
    run_cli("ingest", "wikidata", SAMPLE, "--store", store, "--quiet", check=True)
    run_cli("corpus", "index", CORPUS, "--store", store, "--index", index, "--quiet", check=True)
    return store, index


def prop(pid: str, label: str) -> dict:
    """A property's record as the dump holds one."""
    return {"type": "property", "id": pid, "datatype": "wikibase-item",
            "labels": {"en": {"language": "en", "value": label}}, "claims": {}}


@pytest.fixture(scope="module")
def countries(tmp_path_factory) -> Path:
    """Two properties whose labels begin alike: country (P17) and country of origin (P495)."""
    base = tmp_path_factory.mktemp("countries")
    entities = [prop("P17", "country"), prop("P495", "country of origin"), item("Q142", "France"),
                item("Q90", "Paris", claims={"P17": ["Q142"]}), item("Q1", "Amélie", claims={"P495": ["Q142"]})]
    store = base / "countries.sqlite"
    run_cli("ingest", "wikidata", write_dump(base / "countries.json", entities), "--store", store, "--quiet",
            check=True)
    return store


def test_the_table_counts_each_relation(sample):
    store, _ = sample
    proc = run_cli("kg", "relations", "--store", store)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["id", "label", "facts", "subjects", "objects", "current", "ended", "cloze", "qa"]
    rows = {line.split()[0]: line for line in lines[1:-1]}
    for pid, label, *numbers in (CAPITAL, CAPITAL_OF, HEAD_OF_GOVERNMENT):
        # a label has spaces: the numbers are the last columns
        assert rows[pid].split()[-7:-2] == [str(n) for n in numbers], rows[pid]
        assert f" {label} " in rows[pid]
    # most facts first: instance of (485) leads; capital and capital of tie at 71, in id order
    ids = [line.split()[0] for line in lines[1:-1]]
    assert ids[0] == "P31" and ids.index("P36") + 1 == ids.index("P1376")
    assert len({len(line) for line in lines[:-1]}) == 1  # aligned: every row as wide as the header
    assert lines[-1].startswith(f"{len(ids)} relations with entity-valued facts in {store}")
    assert len(ids) == 30  # kg stats says 38: 8 hold only literal values (dates, numbers, text)


def test_json_has_the_same_counts_and_the_templates(sample):
    store, _ = sample
    records = json.loads(run_cli("kg", "relations", "--store", store, "--json", check=True).stdout)
    by_id = {r["id"]: r for r in records}
    for row in (CAPITAL, CAPITAL_OF, HEAD_OF_GOVERNMENT):
        assert tuple(by_id[row[0]][c] for c in COLUMNS) == row
    # P36.yaml ships 6 cloze templates and 2 questions; the sample has no template of sex or gender (P21)
    assert by_id["P36"]["templates"] == {"cloze": 6, "qa": 2}
    assert by_id["P21"]["templates"] == {"cloze": 0, "qa": 0}
    assert all(r["buckets"] is None for r in records)
    assert [r["facts"] for r in records] == sorted((r["facts"] for r in records), reverse=True)
    with KnowledgeGraph(store) as kg:  # the one definition: the graph's rows, and relations() agrees
        assert [{c: r[c] for c in COLUMNS} for r in records] == [
            {c: getattr(row, c) for c in COLUMNS} for row in kg.relation_rows()]
        assert {r: n for r, _, n in kg.relations()} == {r["id"]: r["facts"] for r in records}


def test_an_index_adds_the_facts_per_bucket_in_numeric_order(sample, tmp_path):
    store, index = sample
    records = json.loads(run_cli("kg", "relations", "--store", store, "--index", index, "--json",
                                 check=True).stdout)
    by_id = {r["id"]: r for r in records}
    assert list(by_id["P36"]["buckets"].items()) == [("0", 25), ("[1,10)", 13), ("[10,100)", 18), ("[100,inf)", 15)]
    assert all(sum(r["buckets"].values()) == r["facts"] for r in records)
    # counted as `frequency annotate` counts: the same numbers per bucket
    annotated = json.loads(run_cli("frequency", "annotate", "--relation", "P36", "--store", store, "--index", index,
                                   "--out", tmp_path / "counts.jsonl", "--json", "--quiet", check=True).stdout)
    assert {key.split(" ", 1)[1]: n for key, n in annotated["buckets"].items()} == by_id["P36"]["buckets"]
    table = run_cli("kg", "relations", "--store", store, "--index", index, check=True).stdout.splitlines()
    assert table[0].split()[-4:] == ["0", "[1,10)", "[10,100)", "[100,inf)"]
    assert next(line for line in table if line.startswith("P36 ")).split()[-4:] == ["25", "13", "18", "15"]
    missing = run_cli("kg", "relations", "--store", store, "--index", tmp_path / "none.sqlite")
    assert missing.returncode == 2 and missing.stderr.startswith("error: --index: no frequency index at ")


def test_help_explains_every_column():
    help_text = run_cli("kg", "relations", "--help", check=True).stdout
    for column in ("id ", "label ", "facts ", "subjects ", "objects ", "current ", "ended ", "cloze qa ",
                   "0 [1,10) [10,100) [100,inf)"):
        assert f"  {column}" in help_text, column


def test_a_label_resolves_as_its_id(sample, countries):
    store, _ = sample
    with KnowledgeGraph(store) as kg:
        assert [resolve_relation(kg, t) for t in ("P36", "p37", "capital", " Official  LANGUAGE ", "capital of",
                                                  "place of b")] == ["P36", "P37", "P36", "P37", "P1376", "P19"]
    with KnowledgeGraph(countries) as kg:
        # an exact label wins over a longer one it begins; a beginning names the one label it begins
        assert resolve_relation(kg, "country") == "P17" and resolve_relation(kg, "country of") == "P495"
        with pytest.raises(ValueError) as refused:
            resolve_relation(kg, "countr")
    assert str(refused.value) == ("relation 'countr' is ambiguous: P17 (country), P495 (country of origin); "
                                  "give its P-id or its whole label")


def test_an_ambiguous_or_unknown_label_is_one_line_and_exit_2(sample, countries):
    store, _ = sample
    ambiguous = run_cli("kg", "facts", "--relation", "countr", "--store", countries)
    assert ambiguous.returncode == 2 and ambiguous.stdout == ""
    assert ambiguous.stderr == ("error: --relation: relation 'countr' is ambiguous: P17 (country), "
                                "P495 (country of origin); give its P-id or its whole label\n")
    place = run_cli("kg", "facts", "--relation", "place of", "--store", store)
    assert place.returncode == 2 and "P19 (place of birth), P20 (place of death)" in place.stderr
    unknown = run_cli("kg", "facts", "--relation", "offical language", "--store", store)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert unknown.stderr.splitlines() == [
        "error: --relation: no relation labelled 'offical language' in sample.sqlite; did you mean "
        "'official language' (P37), 'official name' (P1448), 'native language' (P103)?"]


@pytest.mark.parametrize("label, pid", [("capital", "P36"), ("official language", "P37")])
def test_kg_facts_by_label_prints_what_the_id_prints(sample, label, pid):
    store, _ = sample
    by_label = run_cli("kg", "facts", "--relation", label, "--store", store, "--json", check=True).stdout
    assert by_label == run_cli("kg", "facts", "--relation", pid, "--store", store, "--json", check=True).stdout
    assert len(by_label.splitlines()) == {"P36": 71, "P37": 75}[pid]


def test_other_commands_take_a_label(sample, tmp_path):
    store, index = sample
    built = run_cli("probeset", "build", "--kind", "cloze", "--relation", "official language", "--relation", "capital",
                    "--per-relation", "3", "--store", store, "--out", tmp_path / "p.jsonl", "--quiet")
    assert built.returncode == 0, built.stderr
    meta = json.loads((tmp_path / "p.meta.json").read_text())
    assert meta["params"]["selection"]["relations"] == ["P37", "P36"]  # the sidecar holds ids
    again = run_cli("probeset", "build", "--kind", "cloze", "--relation", "P37", "--relation", "P36",
                    "--per-relation", "3", "--store", store, "--out", tmp_path / "p.jsonl", "--quiet")
    assert again.returncode == 0, again.stderr  # the same request: it rebuilds in place
    wrong = run_cli("probeset", "build", "--kind", "cloze", "--relation", "head of", "--store", store,
                    "--out", tmp_path / "q.jsonl", "--quiet")
    assert wrong.returncode == 2 and "P6 (head of government), P35 (head of state)" in wrong.stderr
    counted = json.loads(run_cli("frequency", "annotate", "--relation", "capital", "--store", store, "--index", index,
                                 "--out", tmp_path / "c.jsonl", "--json", "--quiet", check=True).stdout)
    assert counted["facts"] == 71 and all(key.startswith("P36 ") for key in counted["buckets"])
    shown = json.loads(run_cli("templates", "show", "capital of", "--json", check=True).stdout)
    assert shown["relation"] == "P1376"


def test_a_store_without_property_labels_falls_back_on_the_templates(tmp_path):
    """A store holding no property records (a graph ingested without them): the shipped
    templates' labels name its relations, and the table shows no label."""
    entities = [item("Q142", "France", claims={"P36": ["Q90"]}), item("Q90", "Paris")]
    store = tmp_path / "bare.sqlite"
    run_cli("ingest", "wikidata", write_dump(tmp_path / "bare.json", entities), "--store", store, "--quiet",
            check=True)
    facts = run_cli("kg", "facts", "--relation", "capital", "--store", store, "--json", check=True).stdout
    assert [json.loads(line)["object"] for line in facts.splitlines()] == ["Q90"]
    records = json.loads(run_cli("kg", "relations", "--store", store, "--json", check=True).stdout)
    assert [(r["id"], r["label"], r["facts"], r["current"], r["ended"]) for r in records] == [("P36", None, 1, 1, 0)]
    assert "P36      -" in run_cli("kg", "relations", "--store", store, check=True).stdout


PIPELINE = """name: labels
graph:
  sources:
    - {{format: wikidata, path: "@sample/sample_wikidata.json"}}
corpus:
  name: sample
  files: ["@sample/sample_corpus.jsonl"]
  relations: [capital]
probesets:
  caps:
    kind: cloze
    relations: [{relations}]
    per_relation: 3
models: []
evaluations: []
report: false
"""


def test_a_pipeline_file_names_relations_by_label(tmp_path):
    config = tmp_path / "labels.yaml"
    config.write_text(PIPELINE.format(relations="capital, official language"))
    proc = run_cli("run", config, "--out", tmp_path / "out", "--quiet")
    assert proc.returncode == 0, proc.stderr
    # every step works on ids, and the commands it prints say them
    assert "--count-facts P36" in proc.stdout and "frequency annotate --relation P36 " in proc.stdout
    assert "--relation P36 --relation P37 --per-relation 3" in proc.stdout
    meta = json.loads((tmp_path / "out" / "probesets" / "caps.meta.json").read_text())
    assert meta["params"]["selection"]["relations"] == ["P36", "P37"]
    assert (tmp_path / "out" / "frequency-P36.jsonl").is_file()

    config.write_text(PIPELINE.format(relations="capital, place of"))
    refused = run_cli("run", config, "--out", tmp_path / "bad", "--quiet")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert [line for line in refused.stderr.splitlines() if line.startswith("error")] == [
        f"error: {config}: probesets.caps.relations: relation 'place of' is ambiguous: P19 (place of birth), "
        "P20 (place of death); give its P-id or its whole label"]
    assert not (tmp_path / "bad" / "probesets").exists()  # refused before the corpus and the builds


@pytest.fixture(scope="module")
def server(sample, tmp_path_factory):
    from test_service import serving

    store, _ = sample
    base = tmp_path_factory.mktemp("relations-service")
    os.environ["FACTPROBE_TOKEN"] = "relations-token"
    try:
        with serving(["--store", str(store), "--data", str(base / "data")], base / "server.log") as client:
            yield client
    finally:
        os.environ.pop("FACTPROBE_TOKEN", None)


def test_the_service_reads_relations_as_the_command_does(sample, server):
    store, _ = sample
    status, answer = server.get("/relations")
    records = json.loads(run_cli("kg", "relations", "--store", store, "--json", check=True).stdout)
    assert status == 200 and answer["relations"] == [{c: r[c] for c in COLUMNS} for r in records]
    status, by_label = server.get("/facts", relation="official language", limit=500)
    status_id, by_id = server.get("/facts", relation="P37", limit=500)
    assert status == status_id == 200 and by_label == by_id and len(by_id["items"]) == 75
    status, refused = server.get("/facts", relation="place of")
    assert status == 422 and "P19 (place of birth), P20 (place of death)" in refused["detail"]
    status, found = server.get("/distractors", subject="Q183", relation="capital", object="Q64", strategy="random")
    assert status == 200 and found["relation"] == "P36"


def test_a_probeset_job_takes_labels_and_records_ids(server):

    body = {"kind": "cloze", "relations": ["capital", "place of"], "per_relation": 2}
    status, refused = server.call("POST", "/jobs/probeset", body, token="relations-token")
    assert status == 422 and refused["detail"][0]["loc"] == ["body", "relations", 1]
    assert "P19 (place of birth), P20 (place of death)" in refused["detail"][0]["msg"]
    body["relations"] = ["capital", "official language"]
    status, started = server.call("POST", "/jobs/probeset", body, token="relations-token")
    assert status == 202, started
    job = server.wait(started["job_id"], timeout=60)
    assert job["status"] == "done", job
    assert job["params"]["selection"]["relations"] == ["P36", "P37"]

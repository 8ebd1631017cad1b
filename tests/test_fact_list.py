"""`probeset build --facts FILE`: a probe set over a given list of facts (DistFact's human-judged
facts, 004:178; the facts of its verbalization errors, which `probeset import --format
distfact-taxonomy --onto SET` needs a distractor set of). The file is read as data, in any of its
shapes (probes/formats/fact_list.py); only its facts are candidates, each still passing the selection's
and the kind's rules; every listed fact left out is named with why, on stderr and in the
sidecar, beside the SHA-256 of the file's bytes. Builds run on the shipped sample graph."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.kg.graph import KnowledgeGraph
from factprobe.probes.formats.fact_list import ListedFact, read_fact_list
from factprobe.probes.building.facts import FactSelection, select_facts
from test_distfact_import import ROWS, write_csv

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "kg" / "data" / "sample_wikidata.json"
HUMAN_SCORES = ROOT / "tests" / "fixtures" / "distfact" / "human_scores.json"  # DistFact's published shape

# Five capitals: three true at the sample graph's date (2026-01-01), Bonn (Germany's until
# 1990-10-03) not, and Lyon never France's capital in the store.
FIVE = [("Q142", "P36", "Q90"), ("Q183", "P36", "Q64"), ("Q38", "P36", "Q220"), ("Q183", "P36", "Q586"),
        ("Q142", "P36", "Q456")]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sample") / "sample.sqlite"
    run_cli("ingest", "wikidata", SAMPLE, "--store", path, "--quiet", check=True)
    return path


def write_jsonl(path: Path, triples) -> Path:
    path.write_text("".join(json.dumps({"subject": s, "relation": r, "object": o}) + "\n" for s, r, o in triples))
    return path


def build(store: Path, out: Path, *args) -> tuple[dict, list[dict], str, str]:
    proc = run_cli("probeset", "build", "--store", store, "--out", out, "--quiet", *args)
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(out.with_name(out.name.removesuffix(".jsonl") + ".meta.json").read_text())
    return meta, [json.loads(line) for line in out.read_text().splitlines()], proc.stdout, proc.stderr


def triples(listed) -> list[tuple]:
    return [(f.line, f.subject, f.relation, f.object) for f in listed.facts]


# -- reading the file -------------------------------------------------------------------------------


def test_each_shape_reads_as_its_triples_with_their_lines(tmp_path):
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text('{"subject": "Q142", "relation": "P36", "object": "Q90", "score": 1}\n\n'
                     '[["Q183", "P36", "Q64"], 0.5]\n["http://www.wikidata.org/entity/Q38", "P36", "wd:Q220"]\n')
    assert triples(read_fact_list(jsonl)) == [(1, "Q142", "P36", "Q90"), (3, "Q183", "P36", "Q64"),
                                              (4, "Q38", "P36", "Q220")]
    pretty = tmp_path / "b.json"
    pretty.write_text('[\n  [["Q142", "P36", "Q90"], 1.0],\n  {"subject": "Q183", "relation": "P36",\n'
                      '   "object": "Q64"}\n]\n')
    assert triples(read_fact_list(pretty)) == [(2, "Q142", "P36", "Q90"), (3, "Q183", "P36", "Q64")]
    human = read_fact_list(HUMAN_SCORES)  # one line, one array: each entry numbered
    assert (human.shape, len(human.facts), human.facts[11]) == ("json", 12, ListedFact(1, "Q155", "P36", "Q2844",
                                                                                       entry=12))
    csv_file = tmp_path / "c.csv"
    csv_file.write_text("score,Subject,relation,object\n0.5,Q142,P36,Q90\n\n0.1,Q183,P36,Q64\n")
    assert triples(read_fact_list(csv_file)) == [(2, "Q142", "P36", "Q90"), (4, "Q183", "P36", "Q64")]
    tsv = tmp_path / "d.tsv"
    tsv.write_text("Q142\tP36\tQ90\t0.9\nQ38\tP36\tQ220\t0.1\n")  # no header: three ids first
    assert (read_fact_list(tsv).shape, triples(read_fact_list(tsv))) == (
        "tsv", [(1, "Q142", "P36", "Q90"), (2, "Q38", "P36", "Q220")])
    taxonomy = read_fact_list(write_csv(tmp_path / "taxonomy_hichem.csv", ROWS[:7]))  # DistFact's triples_raw
    assert triples(taxonomy)[:2] == [(2, "Q142", "P36", "Q90"), (3, "Q17", "P36", "Q1490")]
    assert len(taxonomy.facts) == 7


def test_the_sha256_is_of_the_bytes_read_and_a_repeated_fact_counts_once(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(b"\xef\xbb\xbfsubject,relation,object,fact\r\nQ142,P36,Q90,\r\nQ142,P36,Q90,x\r\n,,,Q30$1\r\n")
    listed = read_fact_list(path)
    assert listed.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (listed.facts, listed.repeated) == ((ListedFact(2, "Q142", "P36", "Q90"),
                                                ListedFact(4, None, None, None, "Q30$1")), 1)


@pytest.mark.parametrize("name, text, message", [
    ("f.jsonl", '{"subject": "Q1", "relation": "P36", "object": "Q2"}\n{"subject": "X42", "relation": "P36", '
                '"object": "Q2"}\n', 'f.jsonl:2: subject "X42" is not a Wikidata id (Q42)'),
    ("f.jsonl", '["Q1", "P36", "Q2"]\n["Q1", "36", "Q2"]\n', 'f.jsonl:2: relation "36" is not a Wikidata property '
                                                              'id (P36)'),
    ("f.jsonl", '{"subject": "Q1", "relation": "P36", "object": "Q2"}\n{"subject": "Q1",\n',
     "f.jsonl:2: not JSON (Expecting property name enclosed in double quotes)"),
    ("f.jsonl", '{"subject": "Q1", "relation": "P36"}\n', "f.jsonl:1: no object (a fact needs subject, relation and "
                                                          "object, or fact)"),
    ("f.jsonl", '[["Q1", "P36", "Q2"], 0.5]\n"Q3"\n', 'f.jsonl:2: expected an object with subject, relation and '
                                                      'object (or fact), [s, r, o] or [[s, r, o], score]; got "Q3"'),
    ("f.json", '[\n [["Q1", "P36", "Q2"], 0.5],\n [["Q1", "P36"], 0.5]\n]\n',
     'f.json:3 (entry 2): expected an object with subject, relation and object (or fact), [s, r, o] or '
     '[[s, r, o], score]; got [["Q1", "P36"], 0.5]'),
    ("f.json", '[\n [["Q1", "P36", "Q2"], 0.5]\n [["Q3", "P36", "Q4"], 0.5]\n]\n',
     "f.json:3: not JSON (Expecting ',' delimiter)"),
    ("f.csv", "sub,rel,obj\nQ1,P36,Q2\n", "f.csv:1: name the columns in a header (subject, relation, object; or "
                                          "fact; or DistFact's triples_raw), or give rows of three Wikidata ids"),
    ("f.csv", "subject,object\nQ1,Q2\n", "f.csv:1: the header names object, subject; a fact needs subject, "
                                         "relation and object, or fact, or triples_raw"),
    ("f.csv", "subject,relation,object\nQ1,P36,Q2\nQ1,P36\n", "f.csv:3: no object (a fact needs subject, relation "
                                                              "and object, or fact)"),
    ("f.csv", ",triples_raw\n0,\"('Q1', 'P36', 'Q2')\"\n1,\"('Q1', 'P36')\"\n",
     "f.csv:3: triples_raw \"('Q1', 'P36')\" is not ('Q..', 'P..', 'Q..')"),
    ("f.tsv", "subject\trelation\tobject\tfact\nQ1\tP36\tQ2\t\n\t\t\ta b\n", "f.tsv:3: fact 'a b' is not a fact id "
                                                                          "(1-200 characters, no spaces)"),
    ("f.csv", "", "f.csv: lists no facts"),
])
def test_a_bad_line_is_one_error_naming_file_and_line(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError) as raised:
        read_fact_list(path)
    assert str(raised.value) == f"{tmp_path}/{message}"


def test_bytes_that_are_not_utf8_and_a_folder_are_refused(tmp_path):
    path = tmp_path / "f.tsv"
    path.write_bytes(b"Q1\tP36\tQ2\nQ1\tP36\tQ\xe92\n")
    with pytest.raises(ValueError, match=f"^{tmp_path}/f.tsv:2: not UTF-8 text$"):
        read_fact_list(path)
    with pytest.raises(ValueError, match=f"^{tmp_path}: no fact list there"):
        read_fact_list(tmp_path)


# -- building over a list ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["distractor", "cloze"])
def test_five_listed_capitals_make_three_items_and_name_the_two_left_out(store, tmp_path, kind):
    listed = write_jsonl(tmp_path / "five.jsonl", FIVE)
    sha = hashlib.sha256(listed.read_bytes()).hexdigest()
    meta, items, stdout, stderr = build(store, tmp_path / "p.jsonl", "--kind", kind, "--facts", listed)
    assert [(i["subject"], i["relation"], i["object"]) for i in items] == [
        ("Q142", "P36", "Q90"), ("Q183", "P36", "Q64"), ("Q38", "P36", "Q220")]  # FIVE in the seeded order
    assert meta["params"]["selection"]["facts"] == str(listed)
    assert meta["source"]["selection"] == {"relations": ["P36"], "seen": 4, "not_true": 1, "unlabelled": 0,
                                           "wrong_provenance": 0, "not_counted": 0, "other_bucket": 0, "capped": 0,
                                           "kept": 3}
    assert meta["source"]["fact_list"] == {
        "file": "five.jsonl", "sha256": sha, "shape": "jsonl", "listed": 5, "repeated": 0, "selected": 3,
        "by_reason": {"not-true": 1, "not-in-store": 1},
        "not_selected": [
            {"line": 4, "subject": "Q183", "relation": "P36", "object": "Q586", "reason": "not-true",
             "why": "not true at 2026-01-01"},
            {"line": 5, "subject": "Q142", "relation": "P36", "object": "Q456", "reason": "not-in-store",
             "why": "not in the store (it holds Q142 P36 Q90)"}]}
    assert stdout.splitlines()[1] == (f"fact list five.jsonl (sha256 {sha}): 5 listed, 3 selected; not selected: "
                                      "1 not true at the date, 1 not in the store")
    assert stderr.splitlines() == ["five.jsonl:4: (Q183, P36, Q586) not selected: not true at 2026-01-01",
                                   "five.jsonl:5: (Q142, P36, Q456) not selected: not in the store (it holds Q142 "
                                   "P36 Q90)"]


def test_distfacts_published_shape_builds_its_twelve_capitals(store, tmp_path):
    meta, items, _, stderr = build(store, tmp_path / "d.jsonl", "--kind", "distractor", "--facts", HUMAN_SCORES)
    assert len(items) == 12 and stderr == ""
    assert {(i["subject"], i["object"]) for i in items} == {
        (s, o) for (s, _, o), _ in json.loads(HUMAN_SCORES.read_text())}
    fact_list = meta["source"]["fact_list"]
    assert (fact_list["shape"], fact_list["listed"], fact_list["selected"], fact_list["not_selected"]) == (
        "json", 12, 12, [])


def test_fact_ids_deprecated_statements_other_relations_and_caps_are_named(store, tmp_path):
    """Statement ids of the store stand for their facts; Sydney was never Australia's capital
    (a deprecated statement); --relation and --per-relation still apply to the listed facts."""
    listed = tmp_path / "ids.csv"
    listed.write_text("fact,subject,relation,object\n"
                      "Q408$D8606CDB-8009-5BB4-8593-25C0D783F51D,,,\n"  # (Q408, P36, Q3130), deprecated
                      "Q30$2A7CF74F-961C-5EBD-94C7-456CFD5FBC75,,,\n"  # New York, the capital 1785-1790
                      "Q1$nothing,,,\n"
                      ",Q142,P37,Q150\n"  # France's language: not P36
                      "Q145$B5820A3F-61DA-530E-AA52-7920A5671F05,,,\n"  # London
                      ",Q145,P36,Q84\n"  # London again, as a triple
                      ",Q29,P36,Q2807\n"
                      ",Q17,P36,Q1490\n")
    meta, items, _, stderr = build(store, tmp_path / "p.jsonl", "--kind", "distractor", "--facts", listed,
                                   "--relation", "P36", "--per-relation", "2")
    assert [i["subject"] for i in items] == ["Q145", "Q17"]
    fact_list = meta["source"]["fact_list"]
    assert (fact_list["listed"], fact_list["repeated"], fact_list["selected"]) == (7, 1, 2)
    assert [(e["line"], e["reason"], e["why"]) for e in fact_list["not_selected"]] == [
        (2, "deprecated", "deprecated in the store"),
        (3, "not-true", "not true at 2026-01-01"),
        (4, "unknown-fact", "fact Q1$nothing is not in the store"),
        (5, "other-relation", "P37 is not among --relation"),
        (8, "capped", "left out by --per-relation 2 (seed 0)")]
    assert fact_list["not_selected"][0] == {"line": 2, "subject": None, "relation": None, "object": None,
                                            "fact_id": "Q408$D8606CDB-8009-5BB4-8593-25C0D783F51D",
                                            "reason": "deprecated", "why": "deprecated in the store"}
    assert stderr.splitlines()[2] == "ids.csv:4: fact Q1$nothing not selected: fact Q1$nothing is not in the store"


def test_a_list_nothing_of_which_is_selected_says_why_and_a_bad_line_stops_the_build(store, tmp_path):
    listed = write_jsonl(tmp_path / "five.jsonl", FIVE)
    proc = run_cli("probeset", "build", "--kind", "cloze", "--store", store, "--out", tmp_path / "p.jsonl",
                   "--facts", listed, "--languages", "de", "--quiet")  # the sample graph names nothing in German
    assert proc.returncode == 2
    assert proc.stderr == ("error: no facts left after the filters (seen 4, not true 1, unlabelled 3; of the 5 "
                           "listed: no-label 3, not-true 1, not-in-store 1)\n")
    with KnowledgeGraph(store) as kg:
        _, report = select_facts(kg, FactSelection(facts=str(listed), at="2026-01-01"), ["de"])
    assert report.listed.outcome(set(), "cloze")["not_selected"][0]["why"] == "no label in de for Q142 nor Q90"
    listed.write_text(listed.read_text() + '{"subject": "Q142", "relation": "P36", "object": "Paris"}\n')
    proc = run_cli("probeset", "build", "--kind", "cloze", "--store", store, "--out", tmp_path / "p.jsonl",
                   "--facts", listed, "--quiet")
    assert (proc.returncode, proc.stderr) == (2, f'error: {listed}:6: object "Paris" is not a Wikidata id (Q42)\n')
    assert not (tmp_path / "p.jsonl").exists()


def test_the_same_list_rebuilds_in_place_and_the_sidecar_follows_the_bytes(store, tmp_path):
    listed = write_jsonl(tmp_path / "five.jsonl", FIVE)
    out = tmp_path / "p.jsonl"
    first, _, _, _ = build(store, out, "--kind", "distractor", "--facts", listed)
    listed.write_text(listed.read_text() + json.dumps({"subject": "Q1", "relation": "P36", "object": "Q2"}) + "\n")
    second, _, _, _ = build(store, out, "--kind", "distractor", "--facts", listed)  # the same items: in place
    assert second["sha256"] == first["sha256"]
    assert second["source"]["fact_list"]["sha256"] == hashlib.sha256(listed.read_bytes()).hexdigest()
    assert second["source"]["fact_list"]["sha256"] != first["source"]["fact_list"]["sha256"]
    assert second["source"]["fact_list"]["not_selected"][-1]["why"] == "not in the store (nor is Q1)"


def test_a_set_built_over_the_taxonomy_facts_takes_their_clozes(store, tmp_path):
    """DistFact's verbalization errors need a distractor set holding their facts (`--onto`): the
    taxonomy file itself is the list (its triples_raw column)."""
    taxonomy = write_csv(tmp_path / "taxonomy_hichem.csv", ROWS[:7])
    meta, items, _, _ = build(store, tmp_path / "d.jsonl", "--kind", "distractor", "--facts", taxonomy)
    assert len(items) == 6
    assert [(e["line"], e["why"]) for e in meta["source"]["fact_list"]["not_selected"]] == [
        (8, "not in the store (nor is Q1284961)")]
    proc = run_cli("probeset", "import", "--format", "distfact-taxonomy", taxonomy, "--verbalization", "flawed",
                   "--onto", tmp_path / "d.jsonl", "--out", tmp_path / "flawed.jsonl")
    imported = [json.loads(line) for line in (tmp_path / "flawed.jsonl").read_text().splitlines()]
    assert [(i["subject"], i["clozes"]) for i in imported] == [("Q142", ["The capital of France are [Y]"]),
                                                               ("Q30", ["The capital of United States of America "
                                                                        "is [Y]"])]
    assert proc.returncode == 3  # the rows whose facts no set can hold: (Q220, P36, Q38) asked inverted, Q1284961


def test_over_http_a_fact_list_is_a_path_the_operator_allowed(store, tmp_path):
    """As every option naming a file on the server: only the paths `serve --allow-model` named
    (422 otherwise, test_service_allowed.py); the job's sidecar then says what became of each fact."""
    from factprobe.cli.service import ServiceConfig
    from test_service import TOKEN
    from test_service_allowed import NOT_ALLOWED, in_process

    listed = write_jsonl(tmp_path / "five.jsonl", FIVE)
    with in_process(ServiceConfig(store, tmp_path / "data", token=TOKEN, allow=(str(listed),))) as client:
        status, answer = client.post("/jobs/probeset", {"kind": "cloze", "facts": str(tmp_path / "other.jsonl")})
        assert (status, answer["detail"][0]["msg"]) == (422, f"facts '{tmp_path}/other.jsonl' {NOT_ALLOWED}")
        status, started = client.post("/jobs/probeset", {"kind": "cloze", "facts": str(listed)})
        assert status == 202, started
        assert client.wait(started["job_id"], timeout=60)["status"] == "done"
        status, result = client.get(f"/jobs/{started['job_id']}/result")
    assert status == 200 and result["total"] == 3
    assert result["meta"]["source"]["fact_list"]["by_reason"] == {"not-true": 1, "not-in-store": 1}
    assert result["meta"]["params"]["selection"]["facts"] == str(listed)


def test_a_listed_fact_the_kind_asks_no_test_item_of_is_named_too(store, tmp_path):
    """The kind's own rules still apply: KDF leaves out a fact with fewer than 3 fair wrong
    options (the sample graph's four P103 facts have three languages between them); ICL-MC makes
    some selected facts demonstrations."""
    listed = write_jsonl(tmp_path / "k.jsonl", [("Q567", "P103", "Q188"), ("Q937", "P103", "Q188"),
                                                ("Q7747", "P103", "Q7737"), ("Q7186", "P103", "Q809"), *FIVE[:3]])
    meta, items, _, stderr = build(store, tmp_path / "kdf.jsonl", "--kind", "kdf", "--facts", listed,
                                   "--kdf-demonstrations", "same-relation")
    assert [i["subject"] for i in items] == ["Q142", "Q183", "Q38"]
    assert meta["source"]["fact_list"]["by_reason"] == {"no-item": 4}
    assert stderr.splitlines()[1] == ("k.jsonl:1: (Q567, P103, Q188) not selected: selected, but the kdf build made no "
                                      "item of it (see its warnings)")
    meta, items, _, _ = build(store, tmp_path / "mc.jsonl", "--kind", "icl-mc", "--facts", listed,
                              "--trex-mc-filter", "report", "--allow-fewer-choices")
    demonstrations = [(i["subject"], i["relation"]) for i in items if i["split"] == "demo"]
    assert demonstrations == [("Q567", "P103"), ("Q183", "P36")]
    assert [(e["line"], e["reason"]) for e in meta["source"]["fact_list"]["not_selected"]] == [
        (1, "demonstration"), (6, "demonstration")]


def test_a_set_built_before_the_option_existed_still_rebuilds_in_place(store, tmp_path):
    """Its sidecar has no `facts`: not giving --facts now asks for the same build."""
    out = tmp_path / "old.jsonl"
    build(store, out, "--kind", "distractor", "--relation", "P36")
    sidecar = tmp_path / "old.meta.json"
    meta = json.loads(sidecar.read_text())
    del meta["params"]["selection"]["facts"]
    sidecar.write_text(json.dumps(meta))
    assert build(store, out, "--kind", "distractor", "--relation", "P36")[0]["sha256"] == meta["sha256"]
    proc = run_cli("probeset", "build", "--kind", "distractor", "--relation", "P36", "--store", store, "--out", out,
                   "--facts", write_jsonl(tmp_path / "five.jsonl", FIVE), "--quiet")
    assert (proc.returncode, proc.stderr) == (2, f'error: {out} was built with other options (facts null -> '
                                                 f'"{tmp_path}/five.jsonl"): pass --overwrite to replace it, or '
                                                 'another --out\n')

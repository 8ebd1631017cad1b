"""`factprobe ingest sparql-results` (issue 46 item 6): query.wikidata.org's result downloads in
its three formats, written here as WDQS writes them (SPARQL 1.1 Query Results JSON, CSV and TSV:
the JSON with `xml:lang` on labels, the TSV with terms in N-Triples syntax and `?var` headers, the
CSV with bare IRIs and no languages), give the store an N-Triples file of the same `wdt:` triples
and labels gives; a row that cannot be read costs only itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import content_tables, run_cli

WD = "http://www.wikidata.org/entity/"
# Germany -> Berlin, France -> Paris (capital, P36), as `SELECT ?country ?capital ?countryLabel ?capitalLabel`
ROWS = [("Q183", "Q64", "Germany", "Berlin"), ("Q142", "Q90", "France", "Paris")]
NT = "".join(f"<{WD}{s}> <http://www.wikidata.org/prop/direct/P36> <{WD}{o}> .\n"
             f"<{WD}{s}> <http://www.w3.org/2000/01/rdf-schema#label> \"{sl}\"@en .\n"
             f"<{WD}{o}> <http://www.w3.org/2000/01/rdf-schema#label> \"{ol}\"@en .\n" for s, o, sl, ol in ROWS)
VARS = ["country", "capital", "countryLabel", "capitalLabel"]


def wdqs_json(rows) -> str:
    bindings = [{"country": {"type": "uri", "value": WD + s}, "capital": {"type": "uri", "value": WD + o},
                 "countryLabel": {"xml:lang": "en", "type": "literal", "value": sl},
                 "capitalLabel": {"xml:lang": "en", "type": "literal", "value": ol}} for s, o, sl, ol in rows]
    return json.dumps({"head": {"vars": VARS}, "results": {"bindings": bindings}}, indent=2)


def wdqs_tsv(rows) -> str:
    return "\t".join(f"?{v}" for v in VARS) + "\n" + "".join(
        f"<{WD}{s}>\t<{WD}{o}>\t\"{sl}\"@en\t\"{ol}\"@en\n" for s, o, sl, ol in rows)


def wdqs_csv(rows) -> str:
    return ",".join(VARS) + "\r\n" + "".join(f"{WD}{s},{WD}{o},{sl},{ol}\r\n" for s, o, sl, ol in rows)


ARGS = ["--subject-var", "country", "--object-var", "capital", "--relation", "P36", "--subject-label-var",
        "countryLabel", "--object-label-var", "capitalLabel", "--languages", "en", "--quiet"]


@pytest.fixture(scope="module")
def from_rdf(tmp_path_factory):
    base = tmp_path_factory.mktemp("rdf")
    (base / "same.nt").write_text(NT, encoding="utf-8")
    run_cli("ingest", "rdf", str(base / "same.nt"), "--languages", "en", "--store", str(base / "g.sqlite"),
            "--quiet", check=True)
    return content_tables(base / "g.sqlite")


@pytest.mark.parametrize("name, write", [("q.json", wdqs_json), ("q.tsv", wdqs_tsv), ("q.csv", wdqs_csv)])
def test_each_download_format_gives_what_the_same_triples_give(tmp_path, from_rdf, name, write):
    path = tmp_path / name
    path.write_text(write(ROWS), encoding="utf-8")
    proc = run_cli("ingest", "sparql-results", str(path), *ARGS, "--store", str(tmp_path / "g.sqlite"), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["inputs"][0]["records"] == 2
    assert content_tables(tmp_path / "g.sqlite") == from_rdf


def test_a_bad_row_costs_itself(tmp_path):
    tsv = wdqs_tsv(ROWS) + f"\"not an IRI\"\t<{WD}Q1>\t\"x\"@en\t\"y\"@en\n<{WD}Q5>\t<{WD}Q6>\n"
    path = tmp_path / "q.tsv"
    path.write_text(tsv, encoding="utf-8")
    proc = run_cli("ingest", "sparql-results", str(path), *ARGS, "--store", str(tmp_path / "g.sqlite"))
    assert proc.returncode == 3
    rejects = [json.loads(line) for line in (tmp_path / "g.sqlite.rejects.jsonl").read_text().splitlines()]
    assert [(r["line"], r["reason"].split(":")[0]) for r in rejects] == [(4, "?country"), (5, "2 cells where the header names 4")]
    document = json.loads(wdqs_json(ROWS))
    document["results"]["bindings"][1]["country"] = {"type": "literal", "value": "France"}
    (tmp_path / "q.json").write_text(json.dumps(document), encoding="utf-8")
    proc = run_cli("ingest", "sparql-results", str(tmp_path / "q.json"), *ARGS, "--store", str(tmp_path / "j.sqlite"))
    assert proc.returncode == 3 and "results.bindings[1]: ?country" in (tmp_path / "j.sqlite.rejects.jsonl").read_text()


def test_the_property_from_a_variable_and_a_relation_needed(tmp_path):
    document = {"head": {"vars": ["s", "p", "o"]}, "results": {"bindings": [
        {"s": {"type": "uri", "value": WD + "Q183"}, "p": {"type": "uri", "value": "http://www.wikidata.org/prop/direct/P36"},
         "o": {"type": "uri", "value": WD + "Q64"}}]}}
    path = tmp_path / "q.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    run_cli("ingest", "sparql-results", str(path), "--subject-var", "s", "--object-var", "o", "--property-var", "p", "--quiet",
            "--store", str(tmp_path / "g.sqlite"), check=True)
    from factprobe.kg import KnowledgeGraph

    with KnowledgeGraph(tmp_path / "g.sqlite") as kg:
        assert kg.objects("Q183", "P36") == ["Q64"]
    proc = run_cli("ingest", "sparql-results", str(path), "--subject-var", "s", "--object-var", "o",
                   "--store", str(tmp_path / "h.sqlite"))
    assert proc.returncode == 2 and "give the relation (--relation P36) or the variable holding it" in proc.stderr

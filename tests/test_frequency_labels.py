"""Every frequency output that names an entity or a relation carries its label beside the id,
from the store the command already reads: `frequency annotate --out`'s lines, `frequency entity`
and `frequency pair` (JSON and text). The shipped sample graph and four documents."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli

DOCS = ['{"id": "d1", "title": "Berlin", "text": "Berlin is the capital of Germany."}',
        '{"id": "d2", "title": "Paris", "text": "Paris, capital of France."}']


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    base = tmp_path_factory.mktemp("labels")
    run_cli("sample", "--out", str(base), "--quiet", check=True)
    (base / "docs.jsonl").write_text("\n".join(DOCS) + "\n")
    run_cli("corpus", "index", str(base / "docs.jsonl"), "--store", str(base / "graph.sqlite"),
            "--index", str(base / "f.sqlite"), "--quiet", check=True)
    return base


def _args(sample) -> list[str]:
    return ["--store", str(sample / "graph.sqlite"), "--index", str(sample / "f.sqlite")]


def test_annotate_lines_name_subject_relation_and_object(sample):
    out = sample / "counts.jsonl"
    run_cli("frequency", "annotate", "--relation", "P36", "--out", str(out), *_args(sample), "--quiet", check=True)
    rows = {r["subject"]: r for r in map(json.loads, out.read_text().splitlines())}
    germany = rows["Q183"]
    assert list(germany) == ["fact", "subject", "subject_label", "relation", "relation_label", "object",
                             "object_label", "documents", "bucket"]
    assert (germany["subject_label"], germany["relation_label"], germany["object_label"], germany["documents"]) \
        == ("Germany", "capital", "Berlin", 1)
    assert (rows["Q142"]["subject_label"], rows["Q142"]["object_label"]) == ("France", "Paris")


def test_entity_and_pair_name_their_ids(sample):
    entity = json.loads(run_cli("frequency", "entity", "Q183", *_args(sample), "--json", check=True).stdout)
    assert entity == {"entity": "Q183", "label": "Germany", "documents": 1, "bucket": "[1,10)",
                      "counted_by": "embedded"}
    pair = json.loads(run_cli("frequency", "pair", "Q183", "Q64", *_args(sample), "--json", check=True).stdout)
    assert (pair["head_label"], pair["tail_label"], pair["documents"]) == ("Germany", "Berlin", 1)
    text = run_cli("frequency", "pair", "Q183", "Q64", *_args(sample), check=True).stdout
    assert text == "Q183 + Q64: 1 documents  (bucket [1,10), by embedded)  Germany + Berlin\n"
    raw = json.loads(run_cli("frequency", "entity", "Q999999", *_args(sample), "--json", check=True).stdout)
    assert raw["label"] is None  # an id the store lacks: no label, the count as before

"""A probe set's Parquet copy (`--parquet`) keeps lists and objects as Parquet lists and structs,
so pandas, Polars or DuckDB read `gold`, `distractors` and `demonstrations` as what they are;
only a field no one type holds falls back to JSON text, named here."""

from __future__ import annotations

import json

import pytest

from factprobe.probes.building.probeset import write_probeset

pq = pytest.importorskip("pyarrow.parquet")


def test_lists_and_structs_stay_native_and_a_mixed_field_is_json_text(tmp_path):
    items = [{"id": "d:1", "kind": "distractor", "gold": ["Berlin", "Berlin, Germany"],
              "distractors": {"random": [{"entity": "Q90", "label": "Paris"}]}, "shortfall": None,
              "extra": 5, "empty": {}},
             {"id": "d:2", "kind": "distractor", "gold": ["Bonn"],
              "distractors": {"random": [{"entity": "Q84", "label": "London", "score": 0.5}]},
              "shortfall": "2 of 3", "extra": "five", "empty": {}}]
    path = tmp_path / "d.jsonl"
    write_probeset(path, items, kind="distractor", seed=0, params={}, source={}, parquet=True)
    table = pq.read_table(path.with_suffix(".parquet"))
    types = {field.name: str(field.type) for field in table.schema}
    assert types["gold"] == "list<element: string>"
    assert types["distractors"] == \
        "struct<random: list<element: struct<entity: string, label: string, score: double>>>"
    assert (types["shortfall"], types["extra"], types["empty"]) == ("string", "string", "string")
    rows = table.to_pylist()
    assert rows[0]["gold"] == ["Berlin", "Berlin, Germany"]
    assert rows[1]["distractors"] == {"random": [{"entity": "Q84", "label": "London", "score": 0.5}]}
    assert rows[0]["distractors"]["random"][0]["score"] is None  # a key one item lacks: null
    assert [r["extra"] for r in rows] == ["5", "five"]  # a number here, a text there: one text column
    assert [json.loads(r["empty"]) for r in rows] == [{}, {}]  # Parquet holds no struct without fields

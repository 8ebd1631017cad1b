"""`probeset build --parquet` (probes/building/parquet.py): lists and mappings stored as Parquet
lists and structs, not JSON text; datasets.load_dataset("parquet") hands them back as lists and
dicts equal to the JSONL's; a field with no one Arrow type falls back to JSON text, named in the
schema metadata."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from factprobe.cli.main import main
from factprobe.probes.building.parquet import json_columns, parquet_table

SAMPLE = Path(__file__).resolve().parent.parent / "kg" / "data" / "sample_wikidata.json"


def cli(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("parquet")
    store = base / "g.sqlite"
    cli("ingest", "wikidata", SAMPLE, "--store", store, "--quiet")
    out = {}
    for kind, more in (("distractor", ["--strategy", "random", "--n", "2"]), ("cloze", []),
                       ("kdf", ["--relation", "P30", "--shots", "2"])):
        out[kind] = base / f"{kind}.jsonl"
        cli("probeset", "build", "--store", store, "--out", out[kind], "--quiet", "--kind", kind, "--relation", "P36",
            "--per-relation", "3", "--parquet", *more)
    return out


def test_lists_and_mappings_are_parquet_lists_and_structs(built):
    table = pq.read_table(built["distractor"].with_suffix(".parquet"))
    schema = {f.name: f.type for f in table.schema}
    assert schema["gold"] == pa.list_(pa.string())
    assert schema["object_names"] == pa.list_(pa.string())
    assert pa.types.is_struct(schema["distractors"])
    random = schema["distractors"].field("random").type
    assert pa.types.is_list(random) and pa.types.is_struct(random.value_type)
    assert random.value_type.field("names").type == pa.list_(pa.string())
    assert json_columns(table) == []
    kdf = {f.name: f.type for f in pq.read_table(built["kdf"].with_suffix(".parquet")).schema}
    assert kdf["options"] == pa.list_(pa.string()) and kdf["option_ids"] == pa.list_(pa.string())
    assert pa.types.is_list(kdf["demonstrations"]) and pa.types.is_struct(kdf["demonstrations"].value_type)
    cloze = {f.name: f.type for f in pq.read_table(built["cloze"].with_suffix(".parquet")).schema}
    assert cloze["prompts"].value_type.field("template_id").type == pa.int64()


def test_datasets_loads_the_parquet_with_the_jsonl_s_lists(built):
    datasets = pytest.importorskip("datasets")
    for kind, path in built.items():
        loaded = datasets.load_dataset("parquet", data_files=str(path.with_suffix(".parquet")), split="train")
        items = [json.loads(line) for line in open(path)]
        assert len(loaded) == len(items) == {"distractor": 3, "cloze": 3, "kdf": 6}[kind]
        for row, item in zip(loaded, items):
            assert row["id"] == item["id"] and row["gold"] == item["gold"] and isinstance(row["gold"], list)
        if kind == "distractor":
            first = loaded[0]["distractors"]["random"]
            assert [d["label"] for d in first] == [d["label"] for d in items[0]["distractors"]["random"]]
            assert loaded[0]["object_names"] == items[0]["object_names"]
        if kind == "kdf":
            assert loaded[0]["options"] == items[0]["options"]
            assert [d["answer"] for d in loaded[0]["demonstrations"]] == [d["answer"] for d in items[0]["demonstrations"]]


def test_a_field_of_no_one_type_is_json_text_and_named():
    rows = [{"id": "a", "gold": ["x"], "extra": 1, "empty": {}}, {"id": "b", "gold": ["y", "z"], "extra": "one", "empty": {}}]
    table = parquet_table(rows)
    assert json_columns(table) == ["extra", "empty"]
    assert table.schema.field("gold").type == pa.list_(pa.string())
    assert table.column("extra").to_pylist() == ["1", '"one"']
    assert table.column("empty").to_pylist() == ["{}", "{}"]

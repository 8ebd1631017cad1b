"""A probe set as Parquet with its lists and mappings native (`probeset build --parquet`): `gold`,
`options`, `distractors`, `object_names` are Parquet lists, `demonstrations` a list of structs,
`shortfall` a struct, so pandas, datasets and DuckDB read them as lists and dicts with no
json.loads.

Each column's type is pyarrow's inference over every item's value (a struct has the union of
the keys the items give; a key an item lacks is null). A column whose values have no one
Arrow type (a field that is a number in one item and text in another), or one Parquet cannot
hold (a mapping that is always empty: a struct with no fields), is written as JSON text, and
its name listed under the schema metadata key `factprobe.json_columns`, so a reader knows which
columns to decode.
"""

from __future__ import annotations

import json
from pathlib import Path

JSON_COLUMNS_KEY = b"factprobe.json_columns"


def parquet_table(rows: list[dict]):
    """The pyarrow Table of `rows`, one column per key any row has (in first-seen order)."""
    import pyarrow as pa

    names = list(dict.fromkeys(k for r in rows for k in r))
    arrays, as_json = [], []
    for name in names:
        values = [r.get(name) for r in rows]
        array = _native(pa, values)
        if array is None:
            as_json.append(name)
            array = pa.array([None if v is None else json.dumps(v, ensure_ascii=False) for v in values],
                             type=pa.string())
        arrays.append(array)
    table = pa.Table.from_arrays(arrays, names=names) if names else pa.table({})
    return table.replace_schema_metadata({JSON_COLUMNS_KEY: json.dumps(as_json).encode()})


def write_parquet(path: Path, rows: list[dict]) -> None:
    import pyarrow.parquet as pq

    pq.write_table(parquet_table(rows), path)


def json_columns(table) -> list[str]:
    """The columns `parquet_table` wrote as JSON text."""
    metadata = table.schema.metadata or {}
    return json.loads(metadata.get(JSON_COLUMNS_KEY, b"[]"))


def _native(pa, values: list):
    try:
        array = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError, OverflowError):
        return None
    return None if _has_empty_struct(pa, array.type) else array


def _has_empty_struct(pa, kind) -> bool:
    """Parquet has no struct without fields (an always-empty mapping infers as one)."""
    if pa.types.is_struct(kind):
        return kind.num_fields == 0 or any(_has_empty_struct(pa, kind.field(k).type) for k in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _has_empty_struct(pa, kind.value_type)
    if pa.types.is_map(kind):
        return _has_empty_struct(pa, kind.key_type) or _has_empty_struct(pa, kind.item_type)
    return False

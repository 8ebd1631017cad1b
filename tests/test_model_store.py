"""Time keys, date parsing, store schema/version/language guards, package layout."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from factprobe.kg import Store, StoreError
from factprobe.kg.model import date_key, derived_fact_id, time_key


@pytest.mark.parametrize("time,precision,bound,key", [
    ("+1990-10-03T00:00:00Z", 11, "start", 19901003),
    ("+1990-10-03T00:00:00Z", 11, "end", 19901003),
    ("+1949-00-00T00:00:00Z", 9, "start", 19490101),
    ("+1949-00-00T00:00:00Z", 9, "end", 19491231),
    ("+1949-05-00T00:00:00Z", 10, "start", 19490501),
    ("+1949-05-00T00:00:00Z", 10, "end", 19490531),
    ("+1949-05-23T00:00:00Z", 9, "end", 19491231),   # precision wins over the written digits
    ("+1950-00-00T00:00:00Z", 8, "start", 19500101),  # decade 1950s
    ("+1950-00-00T00:00:00Z", 8, "end", 19591231),
    ("+1801-00-00T00:00:00Z", 7, "start", 18000101),  # century: 1800..1899 in this scheme
    ("+1801-00-00T00:00:00Z", 7, "end", 18991231),
    ("-0044-03-15T00:00:00Z", 11, "start", -440000 + 315),
    ("garbage", 11, "start", None),
    (None, 11, "start", None),
])
def test_time_key(time, precision, bound, key):
    assert time_key(time, precision, bound) == key


def test_time_keys_sort_like_the_calendar():
    times = ["-0100-01-01T00:00:00Z", "-0044-03-15T00:00:00Z", "-0044-12-31T00:00:00Z",
             "+0001-01-01T00:00:00Z", "+1066-10-14T00:00:00Z", "+2024-02-29T00:00:00Z"]
    keys = [time_key(t, 11) for t in times]
    assert keys == sorted(keys)


def test_date_key():
    assert date_key("1990") == 19900101
    assert date_key("1990-10-03") == 19901003
    assert date_key("-500") == -5000000 + 101
    with pytest.raises(ValueError, match="not a date"):
        date_key("yesterday")


def test_derived_ids_are_stable_and_distinct():
    a = derived_fact_id("trex", "Q1", "P17", "Q2")
    assert a == derived_fact_id("trex", "Q1", "P17", "Q2")
    assert a != derived_fact_id("trex", "Q1", "P17", "Q3")
    assert a.startswith("trex:Q1:P17:")


def test_store_guards(tmp_path):
    path = tmp_path / "s.sqlite"
    Store(path, languages=("en", "de")).close()
    with pytest.raises(StoreError, match="store holds languages en,de, ingest asked for fr"):
        Store(path, languages=("fr",))
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version 99"):
        Store(path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database" * 200)
    with pytest.raises(StoreError, match="not a factprobe store"):
        Store(junk)


def test_components_install_under_factprobe_only(tmp_path):
    code = (
        "import importlib.util as u, factprobe.kg, factprobe.index, factprobe.probes, factprobe.cli;"
        "print([m for m in ('kg', 'index', 'probes', 'cli') if u.find_spec(m) is not None])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

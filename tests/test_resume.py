"""An ingest killed with SIGKILL half way, then rerun, ends exactly like an uninterrupted one."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import time

import pytest

from conftest import dump_tables, kill_midway, run_cli

ENTITIES = 20_000


def write_dump(path, n=ENTITIES):
    def claim(eid, prop, target, k):
        return {"mainsnak": {"snaktype": "value", "property": prop, "datatype": "wikibase-item",
                             "datavalue": {"type": "wikibase-entityid",
                                           "value": {"entity-type": "item", "id": target}}},
                "type": "statement", "id": f"{eid}${prop}-{k}", "rank": "normal"}

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        f.write("[\n")
        for i in range(1, n + 1):
            eid = f"Q{i}"
            entity = {"type": "item", "id": eid,
                      "labels": {"en": {"language": "en", "value": f"Entity {i}"}},
                      "aliases": {"en": [{"language": "en", "value": f"E{i}"}]},
                      "claims": {"P31": [claim(eid, "P31", f"Q{1 + i % 50}", 0)],
                                 "P17": [claim(eid, "P17", f"Q{1 + i * 7 % n}", k) for k in range(3)]},
                      "sitelinks": {}}
            f.write(json.dumps(entity) + (",\n" if i < n else "\n"))
        f.write("]\n")


def no_orphans(marker: str, wait: float = 5.0) -> bool:
    """The killed ingest's parsing workers notice and exit (they would otherwise linger)."""
    deadline = time.time() + wait
    while time.time() < deadline:
        if not [p for p in os.listdir("/proc") if p.isdigit() and marker in _cmdline(p)]:
            return True
        time.sleep(0.1)
    return False


def _cmdline(proc_id: str) -> str:
    try:
        with open(f"/proc/{proc_id}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.parametrize("name", ["big.json", "big.json.gz"])
def test_sigkill_then_rerun_equals_uninterrupted(tmp_path, name):
    dump = tmp_path / name
    write_dump(dump)
    killed, clean = tmp_path / "killed.sqlite", tmp_path / "clean.sqlite"
    args = ["ingest", "wikidata", str(dump), "--chunk-size", "65536", "--quiet"]

    done_at_kill = kill_midway(args, killed, after=ENTITIES // 10)
    assert done_at_kill < ENTITIES
    assert no_orphans(str(killed))

    resumed = run_cli(*args, "--store", str(killed), "--json")
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)["inputs"][0]
    assert report["resumed_from"] == done_at_kill and report["complete"]
    assert 0 < report["records"] < ENTITIES  # only the rest was parsed again

    run_cli(*args, "--store", str(clean), check=True)
    assert dump_tables(killed) == dump_tables(clean)
    conn = sqlite3.connect(clean)
    assert conn.execute("SELECT COUNT(*) FROM entities").fetchone()[0] == ENTITIES
    assert conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0] == 4 * ENTITIES
    conn.close()

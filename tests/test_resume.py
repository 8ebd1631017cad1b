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
@pytest.mark.slow
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


@pytest.mark.slow
def test_sigkill_then_a_changed_dump_is_read_from_the_start(tmp_path):
    """Killed half way, then the dump is edited at the same size inside the part already read
    (outside its first and last MiB, so the store's slot for it stays): the rerun does not
    continue at the old offset but reads the whole dump again, and ends as a clean ingest of the
    edited dump does (kg/identity.py)."""
    dump = tmp_path / "big.json"
    write_dump(dump)
    killed, clean = tmp_path / "killed.sqlite", tmp_path / "clean.sqlite"
    args = ["ingest", "wikidata", str(dump), "--chunk-size", "65536", "--quiet"]
    kill_midway(args, killed, after=4000)
    data = dump.read_bytes()
    assert (1 << 20) < data.index(b'"Entity 3000"') < len(data) - (1 << 20)
    dump.write_bytes(data.replace(b'"Entity 3000"', b'"Entitx 3000"'))

    rerun = run_cli(*args, "--store", str(killed), "--json")
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)["inputs"][0]
    assert (report["resumed_from"], report["records"], report["complete"]) == (0, ENTITIES, True)
    assert report["changed"].startswith("its first ") and "differ from those the earlier run read" in report["changed"]
    run_cli(*args, "--store", str(clean), check=True)
    tables = [{k: v for k, v in dump_tables(s).items() if k != "sqlite_stat1"} for s in (killed, clean)]
    assert tables[0] == tables[1]  # the planner's statistics are samples of other page layouts
    conn = sqlite3.connect(killed)
    assert conn.execute("SELECT label FROM entities WHERE id='Q3000'").fetchone() == ("Entitx 3000",)
    conn.close()

"""Issue 44 F: the item view shows what a run read. The report's items.html and the served /items
hash the probe-set bytes they read against run.json's probes_sha256 (a sidecar's recorded digest
is not trusted); the served index notices a file changed under it (re-indexed, or 409 with one
line, never 500); a record with 70,000 strategies costs nothing to the other runs."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from cli_runner import run_cli
from factprobe.cli.service import ServiceConfig, create_app
from factprobe.probes.building.probeset import read_meta, write_probeset
from factprobe.probes.report.items_data import items_payload
from factprobe.probes.report.loading import load_runs

ORIGINAL = "The capital of France is"
EDITED = "EDITED AFTER THE RUN: the capital of Spain is"


def probe_items(prompt: str) -> list[dict]:
    return [{"id": "i1", "relation": "P36", "subject_label": "France", "object_label": "Paris", "prompt": prompt,
             "split": "test", "bucket": "[1,10)"},
            {"id": "i2", "relation": "P36", "subject_label": "Italy", "object_label": "Rome",
             "prompt": "The capital of Italy is", "split": "test", "bucket": "[1,10)"}]


def write_run(folder: Path, probes: Path, method: str = "lookup", records: list[dict] | None = None) -> Path:
    folder.mkdir(parents=True)
    records = records or [{"id": "i1", "relation": "P36", "object_label": "Paris", "prediction": "Paris", "correct": True},
                          {"id": "i2", "relation": "P36", "object_label": "Rome", "prediction": "Milan", "correct": False}]
    sha = hashlib.sha256(probes.read_bytes()).hexdigest()
    (folder / "run.json").write_text(json.dumps({"model": "hf:toy", "method": method, "options": {}, "seed": 0,
                                                 "probes": probes.name, "probes_sha256": sha, "kind": "icl-mc"}))
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "aggregate.json").write_text(json.dumps({"method": method, "items": len(records), "accuracy": 0.5}))
    return folder


def edit_in_place(path: Path, old: str, new: str) -> None:
    """The issue's case: the probe set's text edited after the run, its sidecar left as it was."""
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


@pytest.fixture()
def layout(tmp_path) -> dict:
    """The pipeline's layout: runs/<run>/ beside probesets/<set>.jsonl (with its sidecar)."""
    probes = tmp_path / "probesets" / "capitals.jsonl"
    write_probeset(probes, probe_items(ORIGINAL), kind="icl-mc", seed=0, params={}, source={})
    run = write_run(tmp_path / "runs" / "toy", probes)
    return {"probes": probes, "run": run, "runs": tmp_path / "runs", "tmp": tmp_path}


def questions(rows: list[dict]) -> dict[str, str]:
    return {row["id"]: row["question"] for row in rows}


def test_report_item_view_shows_what_the_run_read_not_the_edit(layout):
    before = items_payload(load_runs([layout["run"]]))
    assert questions(before["rows"]) == {"i1": ORIGINAL, "i2": "The capital of Italy is"}
    assert before["runs"][0]["probe_set"] == str(layout["probes"]) and before["runs"][0]["probe_note"] is None

    sidecar_sha = read_meta(layout["probes"]).sha256
    edit_in_place(layout["probes"], ORIGINAL, EDITED)
    assert read_meta(layout["probes"]).sha256 == sidecar_sha  # the sidecar still names the old bytes
    after = items_payload(load_runs([layout["run"]]))
    assert questions(after["rows"]) == {"i1": "", "i2": ""}  # the records hold no prompt; the edit is not shown
    entry = after["runs"][0]
    assert entry["probe_set"] is None
    now = hashlib.sha256(layout["probes"].read_bytes()).hexdigest()
    assert entry["probe_note"] == (f"{layout['probes']}: its bytes hash to sha256 {now[:12]}, not the run's "
                                   f"probes_sha256 {sidecar_sha[:12]} (edited after the run?): prompts and "
                                   "choices are what items.jsonl holds")


def test_factprobe_report_items_html_leaves_the_edit_out(layout):
    edit_in_place(layout["probes"], ORIGINAL, EDITED)
    out = layout["tmp"] / "report"
    run_cli("report", str(layout["run"]), "--out", str(out), check=True)
    page = (out / "items.html").read_text(encoding="utf-8")
    assert EDITED not in page and "edited after the run?" in page


def test_reading_hashes_the_bytes_it_parses(layout):
    from factprobe.probes.report.items_data import ProbeSetChanged, read_probe_items

    sha = hashlib.sha256(layout["probes"].read_bytes()).hexdigest()
    assert read_probe_items(layout["probes"], {"i1"}, sha256=sha).items["i1"]["prompt"] == ORIGINAL
    edit_in_place(layout["probes"], ORIGINAL, EDITED)
    with pytest.raises(ProbeSetChanged, match=r"capitals\.jsonl: its bytes hash to sha256 [0-9a-f]{12}, not the run's"):
        read_probe_items(layout["probes"], {"i1"}, sha256=sha)


def served(layout, **params):
    config = ServiceConfig(layout["tmp"] / "none.sqlite", layout["tmp"] / "data", runs=(layout["runs"],))
    return TestClient(create_app(config))


def test_served_items_hash_the_probe_set_and_notice_its_edit(layout):
    with served(layout) as client:
        page = client.get("/items").json()
        assert questions(page["rows"]) == {"i1": ORIGINAL, "i2": "The capital of Italy is"}
        # a longer text moves every offset after it: the old index would read mid-line (500)
        edit_in_place(layout["probes"], ORIGINAL, EDITED)
        answer = client.get("/items")
        assert answer.status_code == 200, answer.text
        page = answer.json()
        assert questions(page["rows"]) == {"i1": "", "i2": ""}
        assert page["runs"][0]["probe_set"] is None
        assert "capitals.jsonl: its bytes hash to sha256" in page["runs"][0]["probe_note"]
        same = client.get("/items/same", params={"id": "i1"})
        assert same.status_code == 200 and EDITED not in same.text
        # put back as the run read it: found and joined again
        edit_in_place(layout["probes"], EDITED, ORIGINAL)
        page = client.get("/items").json()
        assert questions(page["rows"])["i1"] == ORIGINAL and page["runs"][0]["probe_note"] is None


def test_a_record_file_changed_under_the_index_is_409_then_indexed_anew(layout):
    items = layout["run"] / "items.jsonl"
    with served(layout) as client:
        assert client.get("/items").status_code == 200
        # same size, same inode, the mtime put back: the stamp cannot see it, the read does
        stat = items.stat()
        text = items.read_text()
        with open(items, "r+", encoding="utf-8") as stream:
            stream.write(text.replace('"i1"', '"j1"'))
        os.utime(items, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        answer = client.get("/items")
        assert answer.status_code == 409
        assert answer.json()["detail"] == f"{items} changed while it was read; ask again (it is indexed anew)"
        # the 409 dropped the index: the next request reads the file as it is now
        page = client.get("/items")
        assert page.status_code == 200 and sorted(questions(page.json()["rows"])) == ["i2", "j1"]
        with open(items, "r+", encoding="utf-8") as stream:
            stream.write(text.replace('"i2"', '"k2"'))  # j1 back to i1, i2 now k2
        os.utime(items, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert client.get("/items/same", params={"id": "j1"}).status_code == 409  # its offset now holds i1
        same = client.get("/items/same", params={"id": "k2"})
        assert same.status_code == 200 and [r["id"] for r in same.json()["rows"]] == ["k2"]


@pytest.mark.slow
def test_seventy_thousand_strategies_in_one_record(layout):
    """Issue 44's case: 70,000 strategies overflowed array("H") and every /items answered 500."""
    strategies = {f"s{k}": {"min_at_n": k % 2, "distractors": ["Q2"]} for k in range(70_000)}
    record = {"id": "i1", "relation": "P36", "object": "Q1", "object_label": "Paris", "correct": 1,
              "per_cloze": [{"cloze": "The capital of France is", "log_plausibility": {"Q1": -1.0, "Q2": -2.0}}],
              "by_strategy": strategies}
    big = write_run(layout["runs"] / "wide", layout["probes"], method="distractor", records=[record])
    assert big.is_dir()
    with served(layout) as client:
        answer = client.get("/items", params={"limit": 1})
        assert answer.status_code == 200, answer.text
        page = answer.json()
        assert page["total"] == 70_002
        assert {r["run"]: r["rows"] for r in page["runs"]} == {"toy": 2, "wide": 70_000}
        last = client.get("/items", params={"run": "wide", "offset": 69_999, "limit": 1}).json()["rows"]
        assert [(r["id"], r["strategy"], r["correct"]) for r in last] == [("i1", "s69999", 1.0)]
        toy = client.get("/items", params={"run": "toy"}).json()["rows"]
        assert questions(toy) == {"i1": ORIGINAL, "i2": "The capital of Italy is"}

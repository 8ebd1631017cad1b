"""The service's item view (issue 39.2): GET /items pages the rows of every run it knows (`serve
--runs` folders and finished eval jobs) with the report's filters as query parameters, answering
what the report's page holds for the same filter on the sample job (items_filter.py's one rule);
GET /items/same puts one item's runs side by side; GET /items/view is the page; a 200,000-record
run is indexed by byte offsets and its pages read from them, never held whole."""

from __future__ import annotations

import json
import os
import shutil
import time
import tracemalloc
from pathlib import Path

import orjson
import pytest
from fastapi.testclient import TestClient

from factprobe.cli.service import ServiceConfig, create_app
from factprobe.cli.service.item_index import ItemCatalog, KnownRun
from factprobe.cli.service.store import Job, JobStore
from factprobe.probes.report.items_data import items_payload
from factprobe.probes.report.items_filter import FACETS, ItemQuery, select
from factprobe.probes.report.loading import load_runs
from test_report_items import GERMANY, unpack_sample

PROBESET_JOB, EVAL_JOB = "a" * 32, "b" * 32


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return unpack_sample(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def client(sample, tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    config = ServiceConfig(data / "none.sqlite", data, runs=(sample / "runs",))
    with TestClient(create_app(config)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def report_rows(sample) -> list[dict]:
    """The report's page data, its runs named as the service names them (their folders)."""
    payload = items_payload(load_runs(sorted((sample / "runs").iterdir())))
    names = {run["run"]: Path(run["folder"]).name for run in payload["runs"]}
    return [{**row, "run": names[row["run"]]} for row in payload["rows"]]


def get(client, **params) -> dict:
    answer = client.get("/items", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def every_row(client, **params) -> tuple[int, list[dict]]:
    rows, offset, total = [], 0, None
    while offset is not None:
        page = get(client, **params, offset=offset, limit=500)
        rows, offset, total = rows + page["rows"], page["next_offset"], page["total"]
    return total, rows


def test_the_first_page_and_the_runs(client):
    page = get(client, limit=2)
    assert (page["total"], page["offset"], page["limit"], page["next_offset"]) == (1162, 0, 2, 2)
    assert [(r["run"], r["id"]) for r in page["rows"]] == [
        ("smollm2-135m-instruct--baselines--distractors", "distractor:Q224$7BE79C66-CA0E-5DFE-9D86-A7D96FA23236"),
        ("smollm2-135m-instruct--baselines--distractors", "distractor:Q34$51F2145C-EB91-5F3F-94A3-F0626B362352")]
    assert [(r["run"], r["rows"], r["rejected"]) for r in page["runs"]][:2] == [
        ("smollm2-135m-instruct--baselines--distractors", 30, 0), ("smollm2-135m-instruct--belief-icl--belief-icl",
                                                                    384, 0)]
    assert all(r["probe_set"] for r in page["runs"])
    assert page["facets"]["outcome"] == ["right", "wrong"]


def test_paging_walks_every_row_once(client, report_rows):
    total, rows = every_row(client)
    assert total == 1162 and [(r["run"], r["key"]) for r in rows] == [(r["run"], r["key"]) for r in report_rows]
    assert get(client, offset=1160, limit=100)["next_offset"] is None
    assert get(client, offset=5000)["rows"] == []


QUERIES = [{}, {"method": "kdf"}, {"relation": "P36", "outcome": "wrong"}, {"disagree": True},
           {"disagree": False, "method": "ic-lke"}, {"bucket": "[100,inf)", "outcome": ["right", "partly"]},
           {"strategy": "temp+sem", "outcome": "wrong"}, {"setting": "x-template", "relation": "P30"},
           {"run": ["gemma3-270m--kdf--kdf", "smollm2-135m-instruct--kdf-text--kdf"], "disagree": True},
           {"method": "kdf", "relation": "P36", "outcome": "wrong", "disagree": True}]


@pytest.mark.parametrize("query", QUERIES, ids=[json.dumps(q) for q in QUERIES])
def test_the_endpoint_keeps_the_rows_the_pages_filter_keeps(client, report_rows, query):
    expected = select(report_rows, ItemQuery.of({k: str(v).lower() if isinstance(v, bool) else v
                                                 for k, v in query.items()}))
    total, rows = every_row(client, **query)
    assert total == len(expected) and total > 0
    assert rows == expected  # the same rows, field for field: one mapping, one filter


def test_every_facet_value_filters_alike(client, report_rows):
    for facet, values in get(client, limit=1)["facets"].items():
        for value in values:
            assert get(client, **{facet: value}, limit=1)["total"] == \
                len(select(report_rows, ItemQuery.of({facet: value}))), (facet, value)
    assert set(FACETS) == set(get(client, limit=1)["facets"])


def test_the_same_item_side_by_side(client):
    answer = client.get("/items/same", params={"id": GERMANY}).json()
    assert [(r["run"], r["pick"], r["outcome"]) for r in answer["rows"]] == [
        ("smollm2-135m-instruct--kdf--kdf", "A: Rabat", "wrong"),
        ("smollm2-135m-instruct--kdf-text--kdf", "B: Naypyidaw", "wrong"),
        ("gemma3-270m--kdf--kdf", "C: Berlin", "right"), ("gemma3-270m--kdf-text--kdf", "C: Berlin", "right")]
    assert answer["rows"][0]["question"].startswith("The capital of Germany is ____")
    assert client.get("/items/same", params={"id": "no such item"}).json() == {"id": "no such item", "rows": []}


def test_bad_parameters_are_refused(client):
    assert client.get("/items", params={"outcome": "maybe"}).status_code == 422
    assert client.get("/items", params={"limit": 501}).status_code == 422
    assert client.get("/items", params={"disagree": "perhaps"}).status_code == 422


def test_the_page_and_the_openapi(client):
    page = client.get("/items/view")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '"served":{"endpoint":"../items","same":"../items/same"}' in page.text
    assert 'id="filter-disagree"' in page.text and "http" not in page.text.replace('content="width', "")
    spec = client.get("/openapi.json").json()
    parameters = {p["name"] for p in spec["paths"]["/items"]["get"]["parameters"]}
    assert parameters == {*FACETS, "disagree", "offset", "limit"}
    assert spec["paths"]["/items"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ItemPage"}
    assert {"ItemPage", "ItemRow", "ItemChoice", "ItemRun", "SameItem"} <= set(spec["components"]["schemas"])


def test_a_finished_eval_job_is_a_run_of_the_view(sample, tmp_path):
    data = tmp_path / "data"
    probeset, run = data / "jobs" / PROBESET_JOB, data / "jobs" / EVAL_JOB / "run"
    probeset.mkdir(parents=True)
    shutil.copy(sample / "probesets" / "kdf.jsonl", probeset / "probes.jsonl")  # as a probeset job writes it
    shutil.copytree(sample / "runs" / "gemma3-270m--kdf--kdf", run)
    store = JobStore(data)
    store.insert(Job(PROBESET_JOB, "probeset", {"kind": "kdf"}, probeset, status="done"))
    store.insert(Job(EVAL_JOB, "eval", {"probeset_job": PROBESET_JOB, "method": "kdf"}, run.parent, status="done"))
    store.close()
    with TestClient(create_app(ServiceConfig(data / "none.sqlite", data))) as test_client:
        page = get(test_client, limit=1)
        assert page["total"] == 96 and page["runs"][0]["run"] == f"job-{EVAL_JOB}"
        assert page["runs"][0]["probe_set"] == str(probeset / "probes.jsonl")  # found by its bytes
        [germany] = test_client.get("/items/same", params={"id": GERMANY}).json()["rows"]
        assert germany["names"] == ["Berlin", "Berlin, Germany"]  # the names come from the probe set


# -- a run too large to hold ---------------------------------------------------------------------

RECORDS = 200_000


@pytest.mark.slow
def test_a_large_run_is_paged_from_byte_offsets(tmp_path):
    run = tmp_path / "large"
    run.mkdir()
    with open(run / "items.jsonl", "wb") as out:
        for k in range(RECORDS):
            out.write(orjson.dumps({
                "id": f"mc:Q{k}", "relation": ("P36", "P37", "P30")[k % 3], "subject_label": f"Subject {k}",
                "object_label": f"Object {k % 97}", "bucket": ("0", "[1,10)", "[10,100)", "[100,inf)")[k % 4],
                "prediction": f"Object {k * 7 % 97}", "predicted_index": k % 5, "answer_index": 0,
                "correct": k % 5 == 0, "probability": 0.5, "gold_logprob": -1.25, "choices": 5}) + b"\n")
    (run / "run.json").write_text(json.dumps({"method": "ic-lke", "model": "hf:large", "probes": "large.jsonl"}))
    (run / "aggregate.json").write_text(json.dumps({"method": "ic-lke", "items": RECORDS}))
    size = (run / "items.jsonl").stat().st_size
    catalog = ItemCatalog(lambda: [KnownRun("large", run)])
    started = time.perf_counter()
    [view] = catalog.current()
    built = time.perf_counter() - started
    index = view.index
    held = sum(a.itemsize * len(a) for a in (index.offsets, index.parts, index.combos, index.ids, view.codes))
    assert len(index.offsets) == RECORDS and held == RECORDS * 28  # 28 bytes a row (a record's row number in 32 bits)
    assert held < size / 8, (held, size)  # the index, not the file: about 50 MB of records
    # right answers (k % 5 == 0) of P30 (k % 3 == 2): k = 5, 20, 35, ...: the 13,001st is k = 195,005
    query = ItemQuery.of({"relation": "P30", "outcome": "right"})
    tracemalloc.start()
    total, rows, _ = catalog.page(query, 13_000, 3)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert total == 13_333 and [r["id"] for r in rows] == ["mc:Q195005", "mc:Q195020", "mc:Q195035"]
    assert peak < 2_000_000, peak  # a page reads its three records, not the file
    # the page is read from the record's offset at the time of asking: an edit in place (same
    # length, same time stamp, so the index stands) shows on the next page
    stat = os.stat(run / "items.jsonl")
    with open(run / "items.jsonl", "r+b") as edit:
        edit.seek(index.offsets[195_005])
        line = edit.readline()
        edit.seek(index.offsets[195_005])
        edit.write(line.replace(b"Subject 195005", b"Subjekt 195005"))
    os.utime(run / "items.jsonl", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert catalog.page(query, 13_000, 1)[1][0]["subject"] == "Subjekt 195005"
    assert [r["id"] for r in catalog.same("mc:Q199999")] == ["mc:Q199999"]
    print(f"indexed {RECORDS} records ({size / 1e6:.0f} MB) in {built:.1f} s, {held / 1e6:.1f} MB held")

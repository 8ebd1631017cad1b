"""`factprobe serve` as a real server on 127.0.0.1, over the hand-made graph of test_distractors.py,
with a frequency index and a semantic index; every endpoint, auth, validation, jobs, a small
load test, and (last) jobs that outlive a `kill -9` of the server. Requests go through urllib
only (no HTTP client dependency)."""

from __future__ import annotations

import json
import os
import signal
import statistics
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import factprobe_cmd, free_port, run_cli, running_server
from test_distractors import graph_entities
from wikidata_builder import write_dump

TOKEN = "test-token-4f1c"
DOCS = [
    {"id": "d1", "title": "Paris", "text": "Paris is the capital of France."},
    {"id": "d2", "title": "France", "text": "France borders Germany; Paris is its largest city."},
    {"id": "d3", "title": "Berlin", "text": "Berlin is the capital of Germany."},
    {"id": "d4", "title": "Travel", "text": "A trip from Lyon to Paris takes two hours."},
]


class Client:
    def __init__(self, base: str) -> None:
        self.base = base
        self.process = None  # the server's Popen, once serving() started it

    def call(self, method: str, path: str, body: object = None, *, token: str | None = TOKEN,
             raw: bytes | None = None, headers: dict | None = None) -> tuple[int, dict]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            payload = error.read()
            try:
                return error.code, json.loads(payload or b"null")
            except json.JSONDecodeError:
                return error.code, {"raw": payload.decode(errors="replace")}

    def get(self, path: str, **params) -> tuple[int, dict]:
        query = ("?" + urllib.parse.urlencode(params)) if params else ""
        return self.call("GET", path + query)

    def post(self, path: str, body: object, **kw) -> tuple[int, dict]:
        return self.call("POST", path, body, **kw)

    def wait(self, job_id: str, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            status, job = self.get(f"/jobs/{job_id}")
            assert status == 200, job
            if job["status"] in ("done", "failed", "interrupted") or time.monotonic() > deadline:
                return job
            time.sleep(0.2)


@contextmanager
def serving(args: list[str], log: Path):
    """`factprobe serve ARGS` on a free 127.0.0.1 port, up once /health answers; yields a Client."""
    client = Client(f"http://127.0.0.1:{free_port()}")
    argv = [*factprobe_cmd(), "serve", *args, "--port", client.base.rsplit(":", 1)[1], "--log-level", "warning"]

    def ready() -> bool:
        try:
            return client.get("/health")[0] == 200
        except OSError:
            return False

    with running_server(argv, log, ready, name="factprobe serve", timeout=60) as process:
        client.process = process
        yield client


def server_args(base: Path) -> list[str]:
    return ["--store", str(base / "g.sqlite"), "--index", str(base / "freq.sqlite"), "--semantic",
            str(base / "semantic"), "--data", str(base / "data")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("service")
    store = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "hand.json", graph_entities())), "--store", str(store),
            "--quiet", check=True)
    docs = base / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    run_cli("corpus", "index", str(docs), "--store", str(store), "--index", str(base / "freq.sqlite"), "--quiet",
            check=True)
    run_cli("distractors", "build", "--store", str(store), "--out", str(base / "semantic"),
            "--quiet", check=True)
    os.environ["FACTPROBE_TOKEN"] = TOKEN  # the server reads it from its environment (inherited)
    try:
        with serving(server_args(base), base / "server.log") as client:
            yield client, base
    finally:
        os.environ.pop("FACTPROBE_TOKEN", None)
    log = (base / "server.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


def test_health_and_openapi(server):
    client, _ = server
    status, health = client.get("/health")
    assert status == 200 and health["status"] == "ok" and health["token_configured"] and health["index"]
    status, spec = client.get("/openapi.json")
    assert status == 200 and spec["info"]["title"] == "factprobe"
    paths = set(spec["paths"])
    assert {"/entities/{entity_id}", "/search", "/facts", "/relations", "/frequency/entity/{entity_id}",
            "/frequency/pair", "/distractors", "/jobs/probeset", "/jobs/eval", "/jobs/{job_id}",
            "/jobs/{job_id}/result"} <= paths
    with urllib.request.urlopen(client.base + "/docs", timeout=10) as docs:
        assert docs.status == 200 and b"swagger" in docs.read().lower()


def test_entity_search_facts_relations(server):
    client, _ = server
    status, paris = client.get("/entities/Q90")
    assert status == 200 and paris["label"] == "Paris" and paris["labels"]["en"]["label"] == "Paris"
    assert {t["id"] for t in paris["types"]} == {"Q5119", "Q515"}
    assert {t["label"] for t in paris["types"]} == {"capital", "city"}
    status, found = client.get("/search", q="paris", limit=10)
    assert status == 200 and {r["id"] for r in found["results"]} == {"Q90", "Q830149"}
    status, none = client.get("/search", q="Atlantis")
    assert status == 200 and none["results"] == []
    status, germany = client.get("/facts", subject="Q183", relation="P36")
    assert status == 200 and {f["object"] for f in germany["items"]} == {"Q64", "Q586"}
    assert germany["next_offset"] is None
    status, page = client.get("/facts", relation="P36", limit=3)
    assert status == 200 and len(page["items"]) == 3 and page["next_offset"] == 3
    status, rest = client.get("/facts", relation="P36", limit=500, offset=3)
    assert len(rest["items"]) == 10 - 3 and rest["next_offset"] is None  # 7 countries, Germany 2, Brazil 3
    status, rels = client.get("/relations")
    counts = {r["id"]: r["facts"] for r in rels["relations"]}
    assert status == 200 and counts["P36"] == 10 and counts["P19"] == 4


def test_frequency(server):
    client, _ = server
    status, paris = client.get("/frequency/entity/Q90")
    # "Paris" is a label of Q90 (and of Q830149): d1, d2, d4 mention it
    assert status == 200 and paris["documents"] == 3 and paris["bucket"] == "[1,10)"
    status, pair = client.get("/frequency/pair", head="Q142", tail="Q90")
    assert status == 200 and pair["documents"] == 2
    assert (paris["label"], pair["head_label"], pair["tail_label"]) == ("Paris", "France", "Paris")  # beside the ids
    status, none = client.get("/frequency/pair", head="Q17", tail="Q1490")
    assert status == 200 and none["documents"] == 0 and none["bucket"] == "0"
    assert client.get("/frequency/entity/Q999999")[0] == 404
    assert client.get("/frequency/entity/P36")[0] == 422


def test_distractors(server):
    client, _ = server
    status, sem = client.get("/distractors", subject="Q142", relation="P36", object="Q90", strategy="sem", n=7)
    assert status == 200 and sem["found"] == 7
    labels = [d["label"] for d in sem["distractors"]]
    assert labels[0] == "Lyon" and set(labels[1:]) == {"Berlin", "Brasília", "Madrid", "Rome", "Tokyo", "Vienna"}
    status, temp = client.get("/distractors", subject="Q183", relation="P36", object="Q64", strategy="temp+sem", n=3)
    assert status == 200 and temp["distractors"][0]["label"] == "Bonn"
    status, one = client.get("/distractors", subject="Q142", relation="P36", object="Q90", strategy="random", seed=3)
    status2, again = client.get("/distractors", subject="Q142", relation="P36", object="Q90", strategy="random", seed=3)
    assert status == status2 == 200 and one["distractors"] == again["distractors"] and one["found"] == 5
    status, bad = client.get("/distractors", subject="Q142", relation="P36", object="Q90", strategy="appropt")
    assert status == 422 and "temp+sem" in json.dumps(bad)  # the allowed strategies are listed


@pytest.mark.parametrize("path", [
    "/entities/90", "/entities/Q0", "/entities/Q1234567890123", "/entities/X90",
    "/search?q=", "/search?q=" + "a" * 201, "/search?q=Paris&limit=0", "/search?q=Paris&limit=101",
    "/facts", "/facts?relation=P36&limit=501", "/facts?relation=P36&offset=-1", "/facts?subject=Q1;drop",
    "/frequency/pair?head=Q90", "/distractors?subject=Q142&relation=P36&object=Q90&n=51",
    "/distractors?subject=Q142&relation=P36&object=Q90&strategy=best", "/distractors?subject=Q142&relation=P36",
    "/distractors?subject=Q142&relation=P36&object=Q90&at=yesterday",
    "/distractors?subject=Q142&relation=P36&object=Q90&at=2023-13-01", "/jobs/not-a-job", "/jobs/XYZ/result",
    "/jobs?status=lost", "/jobs?limit=501",
])
def test_bad_reads_are_422(server, path):
    client, _ = server
    status, body = client.call("GET", path)
    assert status == 422, (path, body)


def test_unknown_things_are_404(server):
    client, _ = server
    assert client.get("/entities/Q424242")[0] == 404
    assert client.get("/distractors", subject="Q142", relation="P36", object="Q424242")[0] == 404
    assert client.get("/jobs/" + "0" * 32)[0] == 404
    assert client.get("/jobs/" + "0" * 32 + "/result")[0] == 404
    assert client.get("/nowhere")[0] == 404


def test_auth(server):
    client, _ = server
    body = {"kind": "kdf", "relations": ["P36"]}
    assert client.post("/jobs/probeset", body, token=None)[0] == 401
    status, wrong = client.post("/jobs/probeset", body, token="nope")
    assert status == 401 and wrong["detail"] == "wrong bearer token"
    assert client.post("/jobs/eval", {"method": "kdf"}, token=None)[0] == 401


@pytest.mark.parametrize("body", [
    {"kind": "quiz"},
    {"kind": "kdf", "relations": ["P36"], "path": "/etc/passwd"},  # unknown fields are refused
    {"kind": "kdf", "relations": ["Q36"]},
    {"kind": "kdf", "relations": [f"P{k}" for k in range(1, 52)]},
    {"kind": "kdf", "per_relation": 10_001},
    {"kind": "kdf", "per_relation": 0},
    {"kind": "distractor", "strategies": ["appropt"]},
    {"kind": "kdf", "at": "2020-1-1"},
    {"kind": "kdf", "relations": ["P999"]},  # well formed, but not in the store
    [1, 2, 3],
])
def test_bad_probeset_bodies_are_422(server, body):
    client, _ = server
    status, answer = client.post("/jobs/probeset", body)
    assert status == 422, (body, answer)


@pytest.mark.parametrize("body, loc, message", [
    ({"corpus": ".."}, ["corpus"], "'..' is not a plain name"),
    ({"corpus": ".hidden"}, ["corpus"], "'.hidden' is not a plain name"),
    ({"corpus": "wiki"}, ["corpus"], "the store holds no frequencies for corpus 'wiki'"),
    ({"at": "9999-99-99"}, ["at"], "'9999-99-99' is not a calendar date"),
    ({"at": "2023-02-29"}, ["at"], "'2023-02-29' is not a calendar date"),
    ({"at": "0000"}, ["at"], "'0000' is not a calendar date"),
    ({"buckets": ["[1,10)"]}, ["buckets"], "buckets needs frequencies"),
    ({"per_bucket": 3}, ["per_bucket"], "per_bucket needs frequencies"),
    ({"buckets": ["[1,10)", "many"]}, ["buckets", 1], "'many' is not a frequency bucket"),
    ({"languages": ["en", "xx"]}, ["languages"], "the store has no names in xx (it has en)"),
    ({"relations": ["P36", "P999"]}, ["relations"], "no entity-valued facts of P999 in the store"),
])
def test_what_a_job_would_fail_on_later_is_refused_at_the_door(server, body, loc, message):
    """422 before anything is queued, naming the field as FastAPI's own validation errors do."""
    client, _ = server
    status, answer = client.post("/jobs/probeset", {"kind": "kdf", **body})
    assert status == 422, answer
    assert answer["detail"][0]["loc"] == ["body", *loc] and message in answer["detail"][0]["msg"], answer


def test_bad_eval_bodies(server):
    client, _ = server
    job = "0" * 32
    for body in ({"method": "ic-lke", "probeset_job": "../../etc", "model": "smollm2-135m-instruct"},
                 {"method": "guess", "probeset_job": job, "model": "smollm2-135m-instruct"},
                 {"method": "ic-lke", "probeset_job": job, "model": "gpt2"},
                 {"method": "ic-lke", "probeset_job": job, "model": "smollm2-135m-instruct", "limit": 10_001},
                 {"method": "ic-lke", "probeset_job": job, "model": "smollm2-135m-instruct",
                  "options": {f"k{i}": i for i in range(17)}},
                 {"method": "ic-lke", "probeset_job": job, "model": "smollm2-135m-instruct",
                  "options": {"no_such_option": 1}},
                 {"method": "baselines", "probeset_job": job, "model": "smollm2-135m-instruct",
                  "options": {"judge_base_url": "http://elsewhere"}}):
        status, answer = client.post("/jobs/eval", body)
        assert status == 422, (body, answer)
    status, _ = client.post("/jobs/eval", {"method": "ic-lke", "probeset_job": job, "model": "smollm2-135m-instruct"})
    assert status == 404  # no such probeset job


def test_oversized_and_malformed_bodies(server):
    client, _ = server
    big = json.dumps({"kind": "kdf", "relations": ["P36"], "pad": "x" * 70_000}).encode()
    status, answer = client.call("POST", "/jobs/probeset", raw=big)
    assert status == 413 and "bytes" in answer["detail"]
    status, _ = client.call("POST", "/jobs/probeset", raw=b"{not json")
    assert status == 422
    # no Content-Length (chunked): the body is still counted as it arrives
    import http.client

    url = urllib.parse.urlsplit(client.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    chunks = (big[i:i + 8192] for i in range(0, len(big), 8192))
    conn.request("POST", "/jobs/probeset", body=chunks, encode_chunked=True,
                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
    assert conn.getresponse().status == 413
    conn.close()


# Wilson 95% intervals for k right of 3, by hand: center (k/3 + z^2/6) / (1 + z^2/3), half-width
# z / (1 + z^2/3) * sqrt(p(1-p)/3 + z^2/36), z = 1.96.
WILSON_OF_3 = {0: (0.0, 0.5615), 1: (0.0615, 0.7923), 2: (0.2077, 0.9385), 3: (0.4385, 1.0)}


FINISHED: dict[str, str] = {}  # kind -> the id of a job test_probeset_and_eval_jobs saw finish


@pytest.mark.slow
def test_probeset_and_eval_jobs(server):
    client, base = server
    status, started = client.post("/jobs/probeset", {"kind": "icl-mc", "relations": ["P36"], "choices": 5,
                                                     "demo_fraction": 0.34, "seed": 1,
                                                     "trex_mc_filter": "report"})
    assert status == 202 and len(started["job_id"]) == 32
    job = client.wait(started["job_id"], timeout=60)
    assert job["status"] == "done", job
    assert job["timings"]["run_seconds"] >= 0 and job["summary"]["kind"] == "icl-mc"
    status, page = client.get(f"/jobs/{job['id']}/result", limit=2)
    total = page["meta"]["items"]
    assert status == 200 and page["total"] == total == job["summary"]["items"] == 7  # current capitals of the 7 countries
    assert len(page["items"]) == 2 and page["next_offset"] == 2 and page["items"][0]["relation"] == "P36"
    status, rest = client.get(f"/jobs/{job['id']}/result", offset=2, limit=500)
    assert len(rest["items"]) == total - 2 and rest["next_offset"] is None
    tests = [i for i in page["items"] + rest["items"] if i.get("split") == "test"]
    assert tests and all(len(i["choices"]) <= 5 for i in tests)
    # the job wrote where the server chose
    assert (base / "data" / "jobs" / job["id"] / "probes.jsonl").is_file()

    status, wrong_kind = client.post("/jobs/eval", {"method": "kdf", "probeset_job": job["id"],
                                                    "model": "smollm2-135m-instruct"})
    assert status == 422 and wrong_kind["detail"][0]["loc"] == ["body", "method"]
    assert wrong_kind["detail"][0]["msg"] == f"method kdf reads kdf probe sets; job {job['id']} built icl-mc"
    status, wrong_type = client.post("/jobs/eval", {"method": "ic-lke", "probeset_job": job["id"],
                                                    "model": "smollm2-135m-instruct", "options": {"examples": "2"}})
    assert status == 422 and wrong_type["detail"][0]["loc"] == ["body", "options", "examples"]
    FINISHED["probeset"] = job["id"]
    status, started = client.post("/jobs/eval", {"method": "ic-lke", "probeset_job": job["id"],
                                                 "model": "smollm2-135m-instruct", "limit": 3,
                                                 "options": {"examples": 2}})
    assert status == 202
    status, early = client.get(f"/jobs/{started['job_id']}/result")
    assert status in (200, 409)
    run = client.wait(started["job_id"], timeout=120)
    assert run["status"] == "done", run
    status, result = client.get(f"/jobs/{run['id']}/result")
    assert status == 200 and result["total"] == 3 and len(result["items"]) == 3
    assert result["aggregate"]["items"] == 3 and 0 <= result["aggregate"]["accuracy"] <= 1
    assert all("correct" in r for r in result["items"])
    # the result's numbers carry their uncertainty, as aggregate.json does (issue 19.1)
    right = sum(bool(r["correct"]) for r in result["items"])
    interval = result["aggregate"]["accuracy_interval"]
    assert (interval["method"], interval["n"], interval["few"]) == ("wilson", 3, True)
    assert (interval["low"], interval["high"]) == pytest.approx(WILSON_OF_3[right], abs=1e-4)
    FINISHED["eval"] = run["id"]


def test_load_read_endpoints(server):
    client, _ = server
    paths = ["/entities/Q90", "/search?q=Berlin", "/facts?relation=P36&limit=5", "/relations",
             "/frequency/entity/Q64", "/frequency/pair?head=Q183&tail=Q64",
             "/distractors?subject=Q142&relation=P36&object=Q90&strategy=sem&n=5",
             "/distractors?subject=Q183&relation=P36&object=Q64&strategy=temp%2Bsem&n=3", "/health"]
    latencies: list[float] = []
    failures: list[tuple[str, int]] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        for i in range(40):
            path = paths[(k + i) % len(paths)]
            t0 = time.perf_counter()
            try:
                status, _ = client.call("GET", path)
            except OSError as error:
                status = -1
                path = f"{path} ({error})"
            elapsed = time.perf_counter() - t0
            with lock:
                latencies.append(elapsed)
                if not 200 <= status < 300:
                    failures.append((path, status))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    assert failures == [] and len(latencies) == 320
    ordered = sorted(latencies)
    p50, p95 = statistics.median(ordered), ordered[int(0.95 * len(ordered)) - 1]
    print(f"\nload: 8 clients x 40 requests = {len(ordered)} in {wall:.2f}s ({len(ordered) / wall:.0f} req/s); "
          f"latency p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms",
          file=sys.stderr)
    status, health = client.get("/health")
    assert health["unexpected_errors"] == 0


def test_no_unexpected_errors_at_the_end(server):
    client, _ = server
    status, health = client.get("/health")
    assert status == 200 and health["unexpected_errors"] == 0


def test_without_a_token_writes_are_refused(tmp_path, server):
    _, base = server
    args = ["--store", str(base / "g.sqlite"), "--data", str(tmp_path / "data"),
            "--token-env", "FACTPROBE_TEST_NO_SUCH_TOKEN"]
    with serving(args, tmp_path / "server.log") as client:
        status, answer = client.post("/jobs/probeset", {"kind": "kdf"})
        assert status == 503 and "no token configured" in answer["detail"]
        status, answer = client.get("/frequency/entity/Q90")
        assert status == 404 and "no frequency index configured" in answer["detail"]
        status, answer = client.get("/distractors", subject="Q142", relation="P36", object="Q90", strategy="sem")
        assert status == 409 and "semantic" in answer["detail"]
        status, answer = client.get("/distractors", subject="Q142", relation="P36", object="Q90", strategy="random")
        assert status == 200


def test_an_unreachable_elasticsearch_is_a_503_not_a_500(tmp_path):
    """--es-url pointing at a port where nothing listens: /frequency answers 503 with the URL."""
    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "g.json", graph_entities())), "--store", str(store),
            "--quiet", check=True)
    dead = free_port()
    args = ["--store", str(store), "--data", str(tmp_path / "data"), "--es-url", f"http://127.0.0.1:{dead}"]
    with serving(args, tmp_path / "serve.log") as client:
        status, answer = client.get("/frequency/entity/Q90")
        assert status == 503
        assert f"Elasticsearch at http://127.0.0.1:{dead}" in answer["detail"]
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


def test_jobs_outlive_a_kill_9(server):
    """Last, as it kills the module's server: after `kill -9` and a start on the same data folder,
    finished jobs answer as before; a job that was running is resumed (a build starts over), one
    running at a second restart says it was interrupted; a folder no job owns is reported."""
    from factprobe.cli.service.store import Job, JobStore

    client, base = server
    if "probeset" not in FINISHED:  # this test run alone
        status, started = client.post("/jobs/probeset", {"kind": "icl-mc", "relations": ["P36"], "choices": 5,
                                                         "demo_fraction": 0.34, "seed": 1,
                                                         "trex_mc_filter": "report"})
        assert status == 202 and client.wait(started["job_id"], timeout=60)["status"] == "done"
        FINISHED["probeset"] = started["job_id"]
    before = {job_id: (client.get(f"/jobs/{job_id}"), client.get(f"/jobs/{job_id}/result", limit=500))
              for job_id in FINISHED.values()}
    assert all(view[0] == result[0] == 200 and view[1]["status"] == "done" for view, result in before.values())
    os.kill(client.process.pid, signal.SIGKILL)
    assert client.process.wait(timeout=20) == -signal.SIGKILL

    # what a kill leaves when jobs were running: their rows say so (written as a running job's are)
    data = base / "data"
    build = before[FINISHED["probeset"]][0][1]
    store = JobStore(data)
    resumed = Job("a" * 32, "probeset", build["params"], data / "jobs" / ("a" * 32), "running", started=time.time())
    twice = Job("b" * 32, "probeset", build["params"], data / "jobs" / ("b" * 32), "running", started=time.time(),
                restarts=1)
    for job in (resumed, twice):
        store.insert(job)
    store.close()
    resumed.folder.mkdir()
    (resumed.folder / "probes.jsonl.partial").write_text('{"half": ', encoding="utf-8")
    (data / "jobs" / "by-hand").mkdir()

    with serving(server_args(base), base / "restarted.log") as again:
        for job_id, (view, result) in before.items():
            assert again.get(f"/jobs/{job_id}") == view
            assert again.get(f"/jobs/{job_id}/result", limit=500) == result
        job = again.wait(resumed.id, timeout=60)
        assert (job["status"], job["restarts"], job["error"]) == ("done", 1, None), job
        assert job["summary"] == build["summary"]
        status, page = again.get(f"/jobs/{resumed.id}/result", limit=500)
        assert status == 200 and page["items"] == before[FINISHED["probeset"]][1][1]["items"]
        assert not (resumed.folder / "probes.jsonl.partial").exists()
        status, lost = again.get(f"/jobs/{twice.id}")
        assert status == 200 and (lost["status"], lost["restarts"]) == ("interrupted", 2)
        assert lost["error"] == ("the service restarted while the job was running, 2 times; "
                                 "it is not resumed again (submit it again)")
        status, refused = again.get(f"/jobs/{twice.id}/result")
        assert status == 409 and refused["detail"] == f"job {twice.id} is interrupted: {lost['error']}"
        status, listed = again.get("/jobs", limit=500)
        assert status == 200 and listed["unlisted_folders"] == ["by-hand"]
        ids = {j["id"] for j in listed["jobs"]}
        assert ids >= {*FINISHED.values(), resumed.id, twice.id}
        assert {p.name for p in (data / "jobs").iterdir()} - ids == {"by-hand"}  # every other folder is a job's
        assert listed["counts"]["interrupted"] == 1 and listed["counts"]["queued"] == listed["counts"]["running"] == 0
        status, health = again.get("/health")
        assert health["jobs"] == listed["counts"] and health["unexpected_errors"] == 0
        second = run_cli("serve", *server_args(base), "--port", str(free_port()))  # would run the same jobs
        assert second.returncode == 1 and second.stderr.strip().splitlines()[-1] == (
            f"error: cannot serve from the data folder {data}: in use by another server "
            f"(pid {again.process.pid})"), second.stderr
    assert "Traceback" not in (base / "restarted.log").read_text(errors="replace")

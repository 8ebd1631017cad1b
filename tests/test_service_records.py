"""The service's job records (cli/service/store.py) and the queue reading them back at start
(cli/service/jobs.py JobQueue.recover), in-process; and the value checks at the service's door
(cli/service/checks.py). The real server killed with -9 is in test_service.py."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from factprobe.cli.service.checks import bucket_label, calendar_date, check_method_options, plain_name
from factprobe.probes.declare import LOCAL, option
from factprobe.probes.methods import Method
from factprobe.cli.service.jobs import JobQueue
from factprobe.cli.service.store import DataFolderInUse, Job, JobStore
from fastapi import HTTPException


def finished(queue: JobQueue) -> None:
    queue.pool.shutdown(wait=True)


def test_each_transition_is_on_disk_when_it_happens(tmp_path):
    """Another connection (a process started after a kill) reads queued, running, done as they are."""
    queue = JobQueue(tmp_path)
    go, running = threading.Event(), threading.Event()

    def work(job: Job) -> dict:
        running.set()
        go.wait(10)
        return {"items": 3}

    first = queue.submit("probeset", {"kind": "kdf"}, work)
    second = queue.submit("eval", {"method": "kdf"}, lambda job: {})
    assert running.wait(10)
    reader = JobStore(tmp_path)
    assert (reader.get(first.id).status, reader.get(second.id).status) == ("running", "queued")
    assert reader.get(first.id).started is not None and reader.get(first.id).folder == tmp_path / "jobs" / first.id
    go.set()
    finished(queue)
    done = reader.get(first.id)
    assert (done.status, done.summary, done.error, done.params) == ("done", {"items": 3}, None, {"kind": "kdf"})
    assert done.created <= done.started <= done.finished
    assert reader.counts() == {"queued": 0, "running": 0, "done": 2, "failed": 0, "interrupted": 0}
    assert [j.id for j in reader.page(None, 0, 10)] == [second.id, first.id]  # newest first
    assert [j.id for j in reader.page("done", 1, 10)] == [first.id]


def test_a_restart_requeues_resumes_once_and_reports_what_it_cannot(tmp_path):
    store = JobStore(tmp_path)
    rows = {"q": Job("1" * 32, "eval", {}, tmp_path / "jobs" / ("1" * 32), "queued", created=1.0),
            "r": Job("2" * 32, "eval", {}, tmp_path / "jobs" / ("2" * 32), "running", created=2.0, started=3.0),
            "again": Job("3" * 32, "eval", {}, tmp_path / "jobs" / ("3" * 32), "running", created=4.0, restarts=1),
            "gone": Job("4" * 32, "eval", {"lost": True}, tmp_path / "jobs" / ("4" * 32), "queued", created=5.0),
            "done": Job("5" * 32, "eval", {}, tmp_path / "jobs" / ("5" * 32), "done", created=0.5,
                        summary={"items": 1})}
    for job in rows.values():
        store.insert(job)
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / ("5" * 32)).mkdir()
    (tmp_path / "jobs" / "stray").mkdir()
    ran: list[str] = []

    def make_work(job: Job):
        if job.params.get("lost"):
            raise ValueError("its probe set is not there")
        return lambda j: ran.append(j.id) or {"resumed": j.restarts}

    queue = JobQueue(tmp_path)
    assert queue.recover(make_work) == ["stray"]
    finished(queue)
    assert ran == ["1" * 32, "2" * 32]  # in the order they were queued
    after = {name: store.get(job.id) for name, job in rows.items()}
    assert (after["q"].status, after["q"].restarts, after["q"].summary) == ("done", 0, {"resumed": 0})
    assert (after["r"].status, after["r"].restarts, after["r"].summary) == ("done", 1, {"resumed": 1})
    assert after["r"].started > 3.0  # its timings are the resumed run's
    assert (after["again"].status, after["again"].restarts) == ("interrupted", 2)
    assert after["again"].error == ("the service restarted while the job was running, 2 times; it is not resumed "
                                    "again (submit it again)")
    assert (after["gone"].status, after["gone"].error) == (
        "interrupted", "the service restarted while the job was queued, and it cannot be resumed: "
                       "its probe set is not there")
    assert after["done"].view() == rows["done"].view()


def test_one_server_per_data_folder(tmp_path):
    first = JobQueue(tmp_path)
    with pytest.raises(DataFolderInUse, match=r"^in use by another server \(pid [0-9]+\)$"):
        JobQueue(tmp_path)
    first.held.close()  # what the end of its process does
    JobQueue(tmp_path)


def test_values_refused_at_the_door():
    assert calendar_date("2024-02-29") == "2024-02-29" and calendar_date("1990") == "1990"
    for bad in ("9999-99-99", "2023-02-29", "0000", "2024-00-10"):
        with pytest.raises(ValueError, match="is not a calendar date"):
            calendar_date(bad)
    assert plain_name("wiki-2024.v1:en") == "wiki-2024.v1:en"
    for bad in ("..", "../x", ".hidden", "a..b", "a/b", "", "x" * 65):
        with pytest.raises(ValueError, match="is not a plain name"):
            plain_name(bad)
    assert [bucket_label(b) for b in ("0", "[0,5)", "[1,10)", "[100,inf)")] == ["0", "[0,5)", "[1,10)", "[100,inf)"]
    with pytest.raises(ValueError):
        bucket_label("[1,10]")


@dataclass(frozen=True)
class DoorOptions:
    examples: int = option(50, "examples.", minimum=1)
    threshold: float = option(0.5, "a threshold.", minimum=0, maximum=1)
    record: bool = option(False, "record.")
    preset: str = option("paper", "a preset.", choices=("paper", "factprobe"))
    seed: int | None = option(None, "a seed.")
    encoder: str | None = option(None, "an encoder folder.", exposure=LOCAL)


class DoorMethod(Method):  # not registered: the door's checks take the class
    name = "m"
    kinds = ("kdf",)
    Options = DoorOptions


@pytest.mark.parametrize("options, loc, message", [
    ({"examples": "2"}, "examples", "method m: option examples: '2' is not an int"),
    ({"examples": True}, "examples", "method m: option examples: True is not an int"),
    ({"examples": 2.5}, "examples", "method m: option examples: 2.5 is not an int"),
    ({"examples": 0}, "examples", "method m: option examples: 0 is below its minimum 1"),
    ({"examples": None}, "examples", "method m: option examples: a value is required"),
    ({"threshold": 1.5}, "threshold", "method m: option threshold: 1.5 is above its maximum 1"),
    ({"record": 1}, "record", "method m: option record: expected true or false, got 1"),
    ({"preset": 3}, "preset", "method m: option preset: expected text, got 3"),
    ({"preset": "x"}, "preset", "method m: option preset: 'x' is not one of paper, factprobe"),
    ({"seed": "any"}, "seed", "method m: option seed: 'any' is not an int"),
    ({"nope": 1}, "nope", "method m has no option nope (it takes examples, threshold, record, preset, seed, encoder)"),
    ({"examples": 2, "encoder": "/etc"}, "encoder",
     "encoder '/etc' is not allowed: this server loads only the models, files and URLs its operator allowed "
     "(GET /models; `factprobe serve --allow-model`)"),
])
def test_method_options_refused_name_their_field(options, loc, message):
    with pytest.raises(HTTPException) as refused:
        check_method_options(DoorMethod, options, ("/srv/encoder",))
    detail = refused.value.detail[0]
    assert (refused.value.status_code, detail["loc"], detail["msg"]) == (422, ["body", "options", loc], message)


def test_method_options_of_the_right_type_pass():
    check_method_options(DoorMethod, {"examples": 2, "threshold": 1, "record": True, "preset": "factprobe",
                                      "seed": None, "encoder": "/srv/encoder"}, ("/srv/encoder",))


def ingested_capitals(base):
    """base/g.sqlite: the store of test_eval's 30 countries and capitals, ingested in-process."""
    from click.testing import CliRunner

    from factprobe.cli.main import main
    from test_eval import capital_graph
    from wikidata_builder import write_dump

    store = base / "g.sqlite"
    ingested = CliRunner().invoke(main, ["ingest", "wikidata", str(write_dump(base / "c.json", capital_graph())),
                                         "--store", str(store), "--quiet"])
    assert ingested.exit_code == 0, ingested.output
    return store


@pytest.fixture(scope="module")
def capital_store(tmp_path_factory):
    return ingested_capitals(tmp_path_factory.mktemp("records"))


def started_on(store, data, **config):
    """The state of a server starting on `store` and the data folder `data` (its jobs resumed)."""
    from factprobe.cli.service.guard import ErrorCounter
    from factprobe.cli.service.state import ServiceConfig, ServiceState

    config = {"models": ("smollm2-135m-instruct",), **config}
    return ServiceState.create(ServiceConfig(store, data, **config), ErrorCounter())


def test_a_resumed_job_naming_what_is_no_longer_allowed_is_not_run(tmp_path, capital_store):
    """A job recorded under another allow-list (`serve --allow-model`) names its option when a
    server that no longer allows what it names reads it back: the same check as at the door."""
    from factprobe.cli.service.admission import resumed_work
    from factprobe.cli.service.jobs import JobRefused
    from factprobe.probes.building.build import build_request

    state = started_on(capital_store, tmp_path)
    queue = state.jobs
    build = build_request("kdf", {"relations": ["P36"], "templates": ["/srv/templates"]}).to_dict()
    source = Job("c" * 32, "probeset", build, queue.root / ("c" * 32), "running")
    queue.store.insert(source)
    with pytest.raises(JobRefused, match="^templates '/srv/templates' is not allowed: this server loads only "):
        resumed_work(source, state)
    allowing = started_on(capital_store, tmp_path / "other", allow=("/srv/templates",))
    assert callable(resumed_work(source, allowing))
    source.status = "done"
    request = {"method": "baselines", "probeset_job": source.id, "model": "smollm2-135m-instruct", "limit": None,
               "batch": 16, "seed": 0, "options": {"judge_model": "gpt-4o-mini"}}
    run = Job("d" * 32, "eval", request, queue.root / ("d" * 32), "running")
    queue.store.save(source)
    with pytest.raises(JobRefused, match="^judge_model 'gpt-4o-mini' is not allowed: "):
        resumed_work(run, state)
    judged = started_on(capital_store, tmp_path / "judged", allow=("gpt-4o-mini",))
    judged.jobs.store.insert(Job(source.id, "probeset", build, judged.jobs.root / source.id, "done"))
    assert callable(resumed_work(run, judged))


def test_the_work_of_a_resumed_job_is_made_from_its_record(tmp_path, capital_store):
    """An evaluation resumes over its probe-set job's file with the request it was given; what
    cannot be made again (a model no longer served, a probe set gone) says why; a build's folder
    is emptied, as nothing of a killed build may be taken for part of the new one."""
    from factprobe.cli.service.admission import resumed_work
    from factprobe.cli.service.jobs import JobRefused
    from factprobe.probes.building.build import build_request

    state = started_on(capital_store, tmp_path)
    queue = state.jobs
    build = build_request("kdf", {"relations": ["P36"]}).to_dict()
    source = Job("c" * 32, "probeset", build, queue.root / ("c" * 32), "done")
    queue.store.insert(source)
    request = {"method": "kdf", "probeset_job": source.id, "model": "smollm2-135m-instruct", "limit": 2,
               "batch": 16, "seed": 0, "options": {}}
    run = Job("d" * 32, "eval", request, queue.root / ("d" * 32), "running")
    assert callable(resumed_work(run, state))
    with pytest.raises(JobRefused, match="^model 'smollm2-135m-instruct': use one of gemma3-270m$"):
        resumed_work(run, started_on(capital_store, tmp_path / "other", models=("gemma3-270m",)))
    orphan = Job("e" * 32, "eval", {**request, "probeset_job": "f" * 32}, queue.root / ("e" * 32), "queued")
    with pytest.raises(JobRefused, match=f"^no probeset job {'f' * 32}$"):
        resumed_work(orphan, state)
    killed = Job("a" * 32, "probeset", build, queue.root / ("a" * 32), "running")
    killed.folder.mkdir(parents=True)
    (killed.folder / "probes.jsonl").write_text("{}\n", encoding="utf-8")
    assert callable(resumed_work(killed, state))
    assert not killed.folder.exists()


def test_an_ended_job_without_an_end_does_not_age_with_the_clock(tmp_path):
    ended = Job("6" * 32, "eval", {}, tmp_path / "jobs" / ("6" * 32), "interrupted", created=1.0)
    assert ended.view()["timings"] | {} == {"created": 1.0, "started": None, "finished": None,
                                             "queued_seconds": None, "run_seconds": None}
    done = Job("7" * 32, "eval", {}, tmp_path / "jobs" / ("7" * 32), "done", created=1.0, started=3.5, finished=10.0)
    assert (done.view()["timings"]["queued_seconds"], done.view()["timings"]["run_seconds"]) == (2.5, 6.5)

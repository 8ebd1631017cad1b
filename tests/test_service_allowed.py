"""The service loads nothing a client names unless its operator allowed it at start (`serve
--models`, `--allow-model`; GET /models): every option declared to name a model, a file or a URL
is checked at the door (422 naming the field), and every method option as `eval` checks it.
The real app (create_app) on uvicorn in this process, over HTTP; a graph ingested in-process."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import free_port
from factprobe.cli.main import main
from factprobe.cli.service import ServiceConfig, create_app
from test_eval import capital_graph
from test_method_options import BAD
from test_service import TOKEN, Client
from wikidata_builder import write_dump

SERVED = "smollm2-135m-instruct"
NOT_ALLOWED = ("is not allowed: this server loads only the models, files and URLs its operator allowed "
               "(GET /models; `factprobe serve --allow-model`)")


@contextmanager
def in_process(config: ServiceConfig):
    """create_app(config) served by uvicorn on a thread; yields a Client once /health answers."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield Client(f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    base: Path = tmp_path_factory.mktemp("allowed")
    store = base / "g.sqlite"
    ingested = CliRunner().invoke(main, ["ingest", "wikidata", str(write_dump(base / "capitals.json", capital_graph())),
                                         "--store", str(store), "--quiet"])
    assert ingested.exit_code == 0, ingested.output
    encoder, templates = base / "encoder", base / "templates"
    encoder.mkdir()
    templates.mkdir()
    config = ServiceConfig(store, base / "data", token=TOKEN, models=(SERVED,),
                           allow=(str(encoder), str(templates), "gpt-4o-mini"))
    with in_process(config) as client:
        yield client, encoder, templates


def eval_body(method: str, options: dict) -> dict:
    return {"method": method, "probeset_job": "0" * 32, "model": SERVED, "options": options}


def test_models_says_what_the_server_loads(service):
    client, encoder, templates = service
    status, answer = client.get("/models")
    assert status == 200
    assert answer == {
        "served": [SERVED], "allowed": [SERVED, str(encoder), str(templates), "gpt-4o-mini"],
        "options": {"probeset": {"facts": "local", "templates": "local", "single_token": "served-model",
                                 "semantic": "local", "model": "served-model"},
                    "eval": {"baselines": {"judge_model": "served-model", "judge_base_url": "url",
                                           "bertscore_model": "local"}}}}


@pytest.mark.parametrize("options, field, value", [
    ({"bertscore_model": "/etc"}, "bertscore_model", "/etc"),  # a server path
    ({"bertscore_model": "roberta-large"}, "bertscore_model", "roberta-large"),  # a hub name: the network
    ({"judge_model": "gpt-4o"}, "judge_model", "gpt-4o"),
    ({"judge_model": "gpt-4o-mini", "judge_base_url": "http://elsewhere"}, "judge_base_url", "http://elsewhere"),
])
def test_an_eval_option_naming_what_is_not_allowed_is_422(service, options, field, value):
    client, _, _ = service
    status, answer = client.post("/jobs/eval", eval_body("baselines", options))
    assert status == 422, answer
    assert answer["detail"][0]["loc"] == ["body", "options", field]
    assert answer["detail"][0]["msg"] == f"{field} {value!r} {NOT_ALLOWED}"


def test_what_the_operator_allowed_passes_the_door(service):
    """Past the door, the next check answers: there is no such probe-set job."""
    client, encoder, _ = service
    status, answer = client.post("/jobs/eval", eval_body("baselines", {"bertscore_model": str(encoder),
                                                                        "judge_model": "gpt-4o-mini"}))
    assert (status, answer["detail"]) == (404, f"no probeset job {'0' * 32}")


@pytest.mark.parametrize("method, key, value, message", [
    *BAD, ("kdf", "shots", "2", "method kdf: option shots: '2' is not an int"),
    ("baselines", "karr", "yes", "method baselines: option karr: expected true or false, got 'yes'")])
def test_a_bad_method_option_is_422_in_evals_words(service, method, key, value, message):
    client, _, _ = service
    status, answer = client.post("/jobs/eval", eval_body(method, {key: value}))
    assert status == 422, answer
    assert (answer["detail"][0]["loc"], answer["detail"][0]["msg"]) == (["body", "options", key], message)


@pytest.mark.parametrize("body, field, value", [
    ({"kind": "kdf", "templates": ["/etc"]}, "templates", "/etc"),
    ({"kind": "cloze", "single_token": "bert-base-cased"}, "single_token", "bert-base-cased"),
    ({"kind": "distractor", "strategies": ["appropt"], "model": "gpt2"}, "model", "gpt2"),
    ({"kind": "distractor", "semantic": "/tmp"}, "semantic", "/tmp"),
    ({"kind": "cloze", "facts": "/etc/passwd"}, "facts", "/etc/passwd"),
])
def test_a_probeset_option_naming_what_is_not_allowed_is_422(service, body, field, value):
    client, _, _ = service
    status, answer = client.post("/jobs/probeset", {"relations": ["P36"], **body})
    assert status == 422, answer
    assert (answer["detail"][0]["loc"], answer["detail"][0]["msg"]) == (["body", field], f"{field} {value!r} {NOT_ALLOWED}")


def test_an_allowed_templates_folder_builds(service):
    client, _, templates = service
    status, started = client.post("/jobs/probeset", {"kind": "kdf", "relations": ["P36"], "templates": [str(templates)],
                                                     "kdf_demonstrations": "same-relation"})
    assert status == 202, started
    job = client.wait(started["job_id"], timeout=60)
    assert job["status"] == "done" and job["params"]["options"]["templates"] == [str(templates)], job

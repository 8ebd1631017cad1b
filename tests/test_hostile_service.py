"""Issue 44 item G: what a stranger sends the service, and numbers no option can hold.

- Every float option refuses a non-finite value however it is spelled (1e999, Infinity, -inf,
  NaN, YAML's .inf) at the one place options are checked (probes/declare.check_value), so
  `eval --option`, a pipeline file, a probe-set build and the service say the same line.
- A JSON body holding NaN, Infinity or 1e999 is 422 naming the field, its body valid JSON (the
  number quoted as text), never a 500.
- A job a restarted server reads back passes every check a new job passes, with the
  permissions of the new start: a build queued under `--allow-model FILE` fails with the
  reason under a server started without it, and is not run. `factprobe serve` for real, killed
  with -9 and started again on the same data folder.
"""

from __future__ import annotations

import json
import math
import os
import signal
import time

import pytest
import yaml
from click.testing import CliRunner

from test_service import TOKEN, serving
from test_service_records import ingested_capitals

from factprobe.cli.main import main
from factprobe.probes.building.build import build_request
from factprobe.probes.methods import registered
from factprobe.probes.methods.base import OptionError, read_options


@pytest.fixture(scope="module")
def unloadable(tmp_path_factory):
    """A model folder whose weights are not weights: a command that names an option's error
    exactly never loaded it."""
    folder = tmp_path_factory.mktemp("unloadable")
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "model.safetensors").write_text("not weights")
    return folder


@pytest.mark.parametrize("written, says", [
    ("1e999", "inf is not a finite number"), ("Infinity", "inf is not a finite number"),
    ("-Infinity", "-inf is not a finite number"), ("NaN", "nan is not a finite number"),
    ("-inf", "'-inf' is not a float"), ("inf", "'inf' is not a float"),
])
def test_eval_refuses_a_temperature_that_is_no_finite_number(tmp_path, unloadable, written, says):
    probes = tmp_path / "b.jsonl"
    probes.write_text(json.dumps({"id": "x1", "kind": "belief-icl", "split": "test"}) + "\n")
    result = CliRunner().invoke(main, ["eval", "--model", f"hf:{unloadable}", "--method", "belief-icl", "--probes",
                                       str(probes), "--out", str(tmp_path / "run"), "--option",
                                       f"temperature={written}"])
    assert (result.exit_code, result.stderr) == (2, f"error: method belief-icl: option temperature: {says}\n")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", [yaml.safe_load("t: .inf")["t"], yaml.safe_load("t: -.inf")["t"],
                                   json.loads("Infinity"), json.loads("1e999"), float("nan")])
def test_every_float_option_refuses_a_non_finite_value(value):
    assert not math.isfinite(value)
    with pytest.raises(OptionError) as refused:
        read_options(registered()["belief-icl"], {"temperature": value})
    assert str(refused.value) == f"method belief-icl: option temperature: {value!r} is not a finite number"
    with pytest.raises(OptionError, match=f"^method baselines: option karr_threshold: {value!r} is not a finite "
                                          "number$"):
        read_options(registered()["baselines"], {"karr_threshold": value})
    with pytest.raises(ValueError, match=f"^option demo_fraction: {value!r} is not a finite number$"):
        build_request("icl-mc", {"demo_fraction": value})


def test_text_read_as_a_number_is_checked_too():
    """A command line's or a pipeline's text (not strict): "1e999" reads as inf, and is refused."""
    with pytest.raises(ValueError, match="^option demo_fraction: '1e999' is not a finite number$"):
        build_request("icl-mc", {"demo_fraction": "1e999"})
    with pytest.raises(ValueError, match="^option demo_fraction: 'nan' is not a finite number$"):
        build_request("icl-mc", {"demo_fraction": "nan"})
    assert build_request("icl-mc", {"demo_fraction": "0.5"}).options.demo_fraction == 0.5


# -- the service, for real -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def grounds(tmp_path_factory):
    """A store of 30 capitals and a fact list naming three of them (a file the operator allows)."""
    base = tmp_path_factory.mktemp("hostile-service")
    store = ingested_capitals(base)
    facts = base / "facts.csv"
    facts.write_text("subject,relation,object\nQ1000,P36,Q2000\nQ1001,P36,Q2001\nQ1002,P36,Q2002\n")
    os.environ["FACTPROBE_TOKEN"] = TOKEN  # the server reads it from its environment (inherited)
    try:
        yield base, store, facts
    finally:
        os.environ.pop("FACTPROBE_TOKEN", None)


def serve_args(base, store, *allow, data: str = "data") -> list[str]:
    return ["--store", str(store), "--data", str(base / data), "--models", "smollm2-135m-instruct",
            *[f"--allow-model={name}" for name in allow]]


@pytest.fixture(scope="module")
def server(grounds):
    base, store, _ = grounds
    with serving(serve_args(base, store, data="reads"), base / "reads.log") as client:
        yield client
    assert "Traceback" not in (base / "reads.log").read_text()


@pytest.mark.parametrize("raw, loc, written", [
    (b'{"kind": "kdf", "relations": ["P36"], "per_relation": NaN}', ["body", "per_relation"], "NaN"),
    (b'{"kind": "icl-mc", "demo_fraction": Infinity}', ["body", "demo_fraction"], "Infinity"),
    (b'{"kind": "icl-mc", "demo_fraction": -Infinity}', ["body", "demo_fraction"], "-Infinity"),
    (b'{"kind": "icl-mc", "demo_fraction": 1e999}', ["body", "demo_fraction"], "1e999"),
    (b'{"kind": "kdf", "relations": ["P36", NaN]}', ["body", "relations", 1], "NaN"),
])
def test_a_body_holding_nan_or_infinity_is_422_naming_the_field(server, raw, loc, written):
    for path in ("/jobs/probeset", "/jobs/eval"):
        status, answer = server.call("POST", path, raw=raw)
        assert (status, answer) == (422, {"detail": [
            {"type": "finite_number", "loc": loc, "input": written,
             "msg": f"{written} is not a finite number (JSON numbers only; no NaN or Infinity)"}]}), answer
    options = b'{"method": "belief-icl", "probeset_job": "' + b"0" * 32 + \
        b'", "model": "smollm2-135m-instruct", "options": {"temperature": ' + written.encode() + b"}}"
    status, answer = server.call("POST", "/jobs/eval", raw=options)
    assert status == 422 and answer["detail"][0]["loc"] == ["body", "options", "temperature"], answer
    status, health = server.get("/health")
    assert status == 200 and health["unexpected_errors"] == 0, health


@pytest.mark.slow
def test_a_resumed_job_passes_every_check_a_new_one_does(grounds):
    """A build naming a fact list the operator allowed passes the door and runs; killed before
    it ran (its record queued again, as a kill leaves one) or while it ran, a server started
    without that permission fails it with the door's reason and runs nothing; a job it still
    allows runs."""
    from factprobe.cli.service.store import Job, JobStore

    base, store, facts = grounds
    body = {"kind": "icl-mc", "relations": ["P36"], "facts": str(facts), "choices": 2, "demo_fraction": 0.34,
            "trex_mc_filter": "report"}
    with serving(serve_args(base, store, str(facts)), base / "first.log") as client:
        status, started = client.post("/jobs/probeset", body)
        assert status == 202, started
        done = client.wait(started["job_id"], timeout=120)
        assert done["status"] == "done" and done["summary"]["items"] == 3, done
        params = done["params"]
        os.kill(client.process.pid, signal.SIGKILL)
        assert client.process.wait(timeout=20) == -signal.SIGKILL
    data = base / "data"
    plain = {**params, "selection": {**params["selection"], "facts": None}}
    rows = {"queued": Job("a" * 32, "probeset", params, data / "jobs" / ("a" * 32), "queued", created=time.time()),
            "running": Job("b" * 32, "probeset", params, data / "jobs" / ("b" * 32), "running", started=time.time()),
            "allowed": Job("c" * 32, "probeset", plain, data / "jobs" / ("c" * 32), "queued", created=time.time())}
    records = JobStore(data)
    for job in rows.values():
        records.insert(job)
    records.close()
    rows["running"].folder.mkdir(parents=True)
    (rows["running"].folder / "probes.jsonl.partial").write_text('{"half": ', encoding="utf-8")

    with serving(serve_args(base, store), base / "second.log") as client:
        status, refused = client.post("/jobs/probeset", body)  # what the door now says to a new job
        assert status == 422 and refused["detail"][0]["loc"] == ["body", "facts"], refused
        reason = refused["detail"][0]["msg"]
        assert reason == (f"facts {str(facts)!r} is not allowed: this server loads only the models, files and URLs "
                          "its operator allowed (GET /models; `factprobe serve --allow-model`)")
        for was in ("queued", "running"):
            status, job = client.get(f"/jobs/{rows[was].id}")
            assert status == 200 and (job["status"], job["error"]) == ("failed", (
                f"the service restarted while the job was {was}, and the job no longer passes the checks a new "
                f"job passes, so it was not run: {reason}")), job
        assert not rows["queued"].folder.exists()  # never ran
        assert [p.name for p in rows["running"].folder.iterdir()] == ["probes.jsonl.partial"]  # nor ran again
        job = client.wait(rows["allowed"].id, timeout=120)
        assert (job["status"], job["summary"]["items"]) == ("done", 30), job
        status, health = client.get("/health")
        assert health["jobs"]["failed"] == 2 and health["unexpected_errors"] == 0, health
    assert "Traceback" not in (base / "second.log").read_text()

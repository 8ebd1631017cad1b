"""Issue 44 item G: what a stranger sends the service, and numbers no option can hold.

- Every float option refuses a non-finite value however it is spelled (1e999, Infinity, -inf,
  NaN, YAML's .inf) at the one place options are checked (probes/declare.check_value), so
  `eval --option`, a pipeline file, a probe-set build and the service say the same line.
- A JSON body holding NaN, Infinity or 1e999 is 422 naming the field, its body valid JSON (the
  number quoted as text), never a 500.
"""

from __future__ import annotations

import json
import math
import os

import pytest
import yaml
from click.testing import CliRunner

from test_eval import capital_graph
from test_service import TOKEN, serving
from wikidata_builder import write_dump

from factprobe.cli.main import main
from factprobe.probes.build import build_request
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
    store = base / "g.sqlite"
    ingested = CliRunner().invoke(main, ["ingest", "wikidata", str(write_dump(base / "c.json", capital_graph())),
                                         "--store", str(store), "--quiet"])
    assert ingested.exit_code == 0, ingested.output
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

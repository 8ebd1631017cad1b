"""Method options declared once (each method's `Options`, probes/declare.py): `factprobe eval
--option`, a pipeline file and the service's door refuse a bad value in one line naming the
option (exit 2, 422) before any model loads, in the same words; `eval --help` lists every
method's options from the declarations; `Method.option_defaults` is derived from them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from factprobe.cli.main import main
from factprobe.cli.options import option_summary
from factprobe.probes.declare import as_dict, option, option_specs
from factprobe.probes.methods import Method, registered

# (method, option, value as JSON/YAML gives it, the one line every entry point says)
BAD = [
    ("kdf", "shots", "abc", "method kdf: option shots: 'abc' is not an int"),
    ("kdf", "shots", -1, "method kdf: option shots: -1 is below its minimum 0"),
    ("ic-lke", "examples", -1, "method ic-lke: option examples: -1 is below its minimum 1"),
    ("distractor", "clozes", 0, "method distractor: option clozes: 0 is below its minimum 1"),
    ("kdf", "frames", "qa", "method kdf has no option frames (it takes shots, scoring, frame)"),
    ("belief-icl", "settings", "x-everything", "method belief-icl: option settings: 'x-everything' is not one of "
                                               "zero-shot, x-random, x-relation, x-template, all"),
    ("baselines", "precision", "top", "method baselines: option precision: 'top' is not one of tokens, beams"),
    ("eic-lke", "start", 100, "method eic-lke: option start: 100 leaves no test slot among examples=100 "
                              "(give at most 99)"),
]
KIND_OF = {"kdf": "kdf", "ic-lke": "icl-mc", "eic-lke": "icl-mc", "distractor": "distractor",
           "belief-icl": "belief-icl", "baselines": "kdf"}


@pytest.fixture(scope="module")
def unloadable(tmp_path_factory):
    """A model folder `check_spec` accepts (config.json and a weights file) whose weights are not
    weights: loading it fails, so a command that names an option's error exactly never loaded it."""
    folder = tmp_path_factory.mktemp("unloadable")
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "model.safetensors").write_text("not weights")
    return folder


def probe_set(folder, kind: str):
    path = folder / f"{kind}.jsonl"
    path.write_text(json.dumps({"id": "x1", "kind": kind, "split": "test"}) + "\n")
    return path


def test_defaults_are_derived_from_the_declarations():
    for name, cls in registered().items():
        assert dict(cls.option_defaults) == as_dict(cls.Options()), name
    assert dict(registered()["kdf"].option_defaults) == {"shots": None, "scoring": "letters", "frame": "paper"}
    with pytest.raises(TypeError):
        registered()["kdf"].option_defaults["shots"] = 3  # a read-only view
    with pytest.raises(TypeError, match="declare its options as `Options`"):
        type("Guessed", (Method,), {"defaults": {"shots": 1}})

    @dataclass(frozen=True)
    class Undeclared:
        shots: int = 1

    with pytest.raises(TypeError, match="Undeclared.shots: declare it with option"):
        type("Bare", (Method,), {"Options": Undeclared})


@pytest.mark.parametrize("method, key, value, message", BAD)
def test_eval_refuses_a_bad_option_before_the_model_loads(tmp_path, unloadable, method, key, value, message):
    text = value if isinstance(value, str) else json.dumps(value)
    result = CliRunner().invoke(main, ["eval", "--model", f"hf:{unloadable}", "--method", method, "--probes",
                                       str(probe_set(tmp_path, KIND_OF[method])), "--out", str(tmp_path / "run"),
                                       "--option", f"{key}={text}"])
    assert (result.exit_code, result.stderr) == (2, f"error: {message}\n")
    assert not (tmp_path / "run").exists()


def test_the_unloadable_model_fails_only_at_its_load(tmp_path, unloadable):
    """The control for the test above: with good options the same command gets to the load and fails there."""
    result = CliRunner().invoke(main, ["eval", "--model", f"hf:{unloadable}", "--method", "kdf", "--probes",
                                       str(probe_set(tmp_path, "kdf")), "--out", str(tmp_path / "run"),
                                       "--option", "shots=1"])
    said = result.stderr + ("" if isinstance(result.exception, SystemExit) else repr(result.exception))
    assert result.exit_code != 0 and ("model spec" in said or "safetensor" in said.lower()), said


def test_eval_help_lists_each_methods_options():
    result = CliRunner().invoke(main, ["eval", "--help"], terminal_width=10_000, max_content_width=10_000)
    assert result.exit_code == 0, result.output
    assert re.search(r"^ +shots +demonstrations before the question, the first N the item carries \(0: none; "
                     r"default every one, 5 as built\)\. \[int >= 0, or null; default: null\]$", result.output, re.M)
    assert re.search(r"^ +threshold +a fact is known when its probability is above this\. "
                     r"\[number from 0 to 1; default: 0\.5\]$", result.output, re.M)
    for cls in registered().values():
        for spec in option_specs(cls.Options):
            assert re.search(rf"^ +{spec.name} +{re.escape(option_summary(spec))}$", result.output, re.M), spec.name


PIPELINE = """
graph:
  sources:
    - {{format: wikidata, path: capitals.json}}
probesets:
  p: {{kind: {kind}, relations: [P36]}}
models: ['hf:{model}']
evaluations:
  - {{method: {method}, probeset: p, options: {options}}}
"""


@pytest.mark.parametrize("method, key, value, message", BAD)
def test_a_pipeline_refuses_a_bad_option_before_any_step(tmp_path, unloadable, method, key, value, message):
    config = tmp_path / "bad.yaml"
    config.write_text(PIPELINE.format(kind=KIND_OF[method], model=unloadable, method=method,
                                      options=json.dumps({key: value})))
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out")])
    assert (result.exit_code, result.stderr) == (2, f"error: {config}: evaluations[0].options: {message}\n")
    assert not (tmp_path / "out").exists()


def test_the_old_name_of_option_defaults_still_reads_with_a_warning():
    kdf = registered()["kdf"]
    with pytest.warns(DeprecationWarning, match="option_defaults"):
        assert kdf.defaults is kdf.option_defaults

"""Model backends are registered as methods and kinds are: a backend declared in one file
(tests/toy_backend.py) is a spec `factprobe model` and `factprobe eval` take, `model --help`
lists it, and once unregistered it is gone from all three."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager

import pytest
from click.testing import CliRunner

from factprobe.cli.main import main
from factprobe.probes.scoring.backends import Backend, registered, register, unregister
from factprobe.probes.scoring.specs import SpecError, check_spec, parse_spec

BUILT_IN = ("hf", "hf-mlm", "gguf", "openai", "openai-chat")
SPEC_LINES = ["  hf:PATH_OR_NAME        transformers checkpoint (causal or masked, from its config)",
              "  hf-mlm:PATH_OR_NAME    force the masked-LM backend",
              "  gguf:FILE              GGUF file, dequantized once and cached ($FACTPROBE_CACHE)",
              "  openai:MODEL           OpenAI-compatible completions ($OPENAI_BASE_URL, $OPENAI_API_KEY)",
              "  openai-chat:MODEL      the chat endpoint (generation only)",
              "  smollm2-135m-instruct  SmolLM2-135M-Instruct from its PyPI wheel",
              "  gemma3-270m            Gemma 3 270M from its PyPI wheels"]
NOT_UNDERSTOOD = ("model spec 'toy:Paris' is not understood; use hf:PATH_OR_NAME, hf-mlm:PATH_OR_NAME, gguf:FILE, "
                  "openai:MODEL, openai-chat:MODEL or one of smollm2-135m-instruct, gemma3-270m")
ITEMS = [
    {"id": "mc:1", "kind": "icl-mc", "split": "test", "relation": "P36", "prompt": "The capital of France is",
     "choices": ["Paris", "Lyon", "Nice"], "answer_index": 0},
    {"id": "mc:2", "kind": "icl-mc", "split": "test", "relation": "P36", "prompt": "The capital of Germany is",
     "choices": ["Munich", "Berlin", "Bonn"], "answer_index": 1},
    {"id": "mc:3", "kind": "icl-mc", "split": "test", "relation": "P36", "prompt": "The capital of Japan is",
     "choices": ["Tokyo", "Kyoto", "Nara"], "answer_index": 0},
]


@contextmanager
def toy_backend():
    """The toy backend registered in this process, removed afterwards (the registry is global)."""
    held = sys.modules.pop("toy_backend", None)
    import toy_backend as module

    try:
        yield module.ToyBackend
    finally:
        unregister("toy")
        sys.modules.pop("toy_backend", None)
        if held is not None:
            sys.modules["toy_backend"] = held


def spec_lines(help_text: str) -> list[str]:
    lines = help_text.splitlines()
    start = lines.index("  SPEC, the model:") + 1
    return [line.removeprefix("  ") for line in lines[start:lines.index("", start)]]


def test_a_backend_in_one_file_scores_through_factprobe_model():
    runner = CliRunner()
    with toy_backend():
        assert list(registered()) == [*BUILT_IN, "toy"]
        result = runner.invoke(main, ["model", "score", "toy:Paris", "--context", "The capital of France is",
                                      "--continuation", " Lyon", "--continuation", " Paris", "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == {
            "model": "toy:Paris", "context": "The capital of France is",
            "scores": [{"continuation": " Paris", "logprob": 0.0, "is_greedy": True, "n_tokens": 1},
                       {"continuation": " Lyon", "logprob": -4.0, "is_greedy": False, "n_tokens": 1}]}
        assert spec_lines(runner.invoke(main, ["model", "--help"]).stdout) == [
            *SPEC_LINES[:5], "  toy:WORDS              a toy model that knows the comma-separated WORDS (tests/toy_backend.py)",
            *SPEC_LINES[5:]]
        # checked before any load, as a built-in backend's spec is
        refused = runner.invoke(main, ["model", "score", "toy:Paris,,Lyon", "--context", "x", "--continuation", " y"])
        assert (refused.exit_code, refused.stderr) == (2, "error: model spec 'toy:Paris,,Lyon': an empty word among "
                                                          "'Paris,,Lyon'\n")
    assert list(registered()) == list(BUILT_IN)
    with pytest.raises(SpecError) as error:
        parse_spec("toy:Paris")
    assert str(error.value) == NOT_UNDERSTOOD
    gone = runner.invoke(main, ["model", "score", "toy:Paris", "--context", "x", "--continuation", " y"])
    assert (gone.exit_code, gone.stderr) == (2, f"error: {NOT_UNDERSTOOD}\n")
    assert spec_lines(runner.invoke(main, ["model", "--help"]).stdout) == SPEC_LINES


def test_a_backend_in_one_file_runs_through_factprobe_eval(tmp_path):
    """`eval` checks the toy spec, loads it through the registry and records what it loaded."""
    probes = tmp_path / "mc.jsonl"
    probes.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    with toy_backend():
        result = CliRunner().invoke(main, ["eval", "--model", "toy:Paris,Berlin", "--method", "mc", "--probes",
                                           str(probes), "--out", str(tmp_path / "run"), "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["model"] == "toy:Paris,Berlin" and run["method"] == "mc"
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    # Paris and Berlin are known (0 nats); of Tokyo, Kyoto and Nara the shortest is the least unlikely
    assert [(r["prediction"], r["correct"]) for r in records] == [("Paris", True), ("Berlin", True), ("Nara", False)]
    assert [r["gold_logprob"] for r in records] == [0.0, 0.0, -5.0]
    assert json.loads(result.stdout)["accuracy"] == pytest.approx(2 / 3)
    assert "toy" not in registered()


def test_a_plugin_module_registers_a_backend_for_a_process(monkeypatch):
    """FACTPROBE_PLUGINS=toy_backend: the registry imports it when first read, as for methods."""
    monkeypatch.setenv("FACTPROBE_PLUGINS", "toy_backend")
    held = sys.modules.pop("toy_backend", None)
    try:
        assert parse_spec("toy:Paris") == check_spec(parse_spec(" toy:Paris"))
        assert parse_spec("toy:Paris").kind == "toy" and "toy" in registered()
    finally:
        unregister("toy")
        sys.modules.pop("toy_backend", None)
        if held is not None:
            sys.modules["toy_backend"] = held


class NoLoad(Backend):
    name, target, summary = "noload", "X", "declares no load"


@pytest.mark.parametrize("declared, message", [
    (dict(name="a:b"), "`name` is a spec's prefix: no ':' and no spaces; got 'a:b'"),
    (dict(target="TWO WORDS"), "`target` must say in one word how a spec's target is written"),
    (dict(target=""), "`target` must say in one word"),
    (dict(summary="two\nlines"), "`summary` must be one line of text"),
    (dict(), "`load` must be defined (spec, LoadOptions) -> Scorer"),
])
def test_a_backend_is_checked_when_registered(declared, message):
    bad = type("Bad", (NoLoad,), declared)
    with pytest.raises(ValueError) as error:
        register(bad)
    assert message in str(error.value)
    assert list(registered()) == list(BUILT_IN)


def test_a_taken_name_is_refused_unless_replaced():
    from factprobe.probes.scoring.backends.hf import HF

    other = type("OtherHF", (HF,), {})
    with pytest.raises(ValueError, match="model backend 'hf' is registered already"):
        register(other)
    try:
        assert register(other, replace=True) is other and registered()["hf"] is other
    finally:
        register(HF, replace=True)
    assert registered()["hf"] is HF

"""One evaluation entry (issue 36 item 2): `factprobe eval`, the pipeline and the service build an
Evaluation and run it through probes/evaluation.run_evaluation (by way of cli/steps.eval_step),
and nothing else strings the pieces together; run_evaluation refuses bad input before it asks
its model cache for the model."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from factprobe.kg.outputs import OutputError
from factprobe.probes.evaluation.entry import EvalInputError, Evaluation, ModelLoadError, run_evaluation
from factprobe.probes.building.probeset import write_probeset

ROOT = Path(__file__).resolve().parents[1]
SPEC = "hf:nobody/no-such-model"  # passes the spec check; the stub cache below answers for it

# Each name of the evaluation's pieces -> the modules (other than its own) that may use it.
USERS = {
    "run_evaluation": {"cli/steps.py"},
    "eval_step": {"cli/eval_cmds.py", "cli/pipeline.py", "cli/service/jobs.py"},
    "Evaluation": {"cli/eval_cmds.py", "cli/pipeline.py", "cli/service/jobs.py"},
    "plan_eval": {"probes/evaluation/entry.py", "probes/formats/export_lm_eval.py"},  # the export builds prompts, runs nothing
    "evaluate": {"probes/evaluation/entry.py"},
}


def _names_used(path: Path) -> set[str]:
    """The names a module reads (`f(...)`, `partial(f, ...)`, `module.f`), not those it defines."""
    used = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            used.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            used.add(node.attr)
    return used


def test_the_three_callers_go_through_the_one_entry():
    found = {name: set() for name in USERS}
    for path in sorted([*ROOT.glob("cli/**/*.py"), *ROOT.glob("probes/**/*.py")]):
        used = _names_used(path) & set(USERS)
        for name in used:
            found[name].add(path.relative_to(ROOT).as_posix())
    found["plan_eval"] -= {"probes/evaluation/runner.py"}  # `evaluate` plans when not given a plan
    found["Evaluation"] -= {"probes/evaluation/entry.py"}
    assert found == USERS


pytestmark = pytest.mark.usefixtures("toy_method_registered")  # tests/conftest.py


class Models:
    """A model cache that answers every spec with a scorer giving each prompt's first gold
    answer, and remembers what it was asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def get(self, spec: str):
        self.asked.append(spec)
        return SimpleNamespace(identity="stub:scorer", fill_mask=lambda requests: [
            [SimpleNamespace(token=r.text.split("=")[-1], token_id=0, prob=0.5)] for r in requests])


@pytest.fixture
def probes(tmp_path) -> Path:
    items = [{"id": f"cloze:Q{k}", "kind": "cloze", "relation": "P36", "prompt": f"[MASK] x={k}", "gold": [str(k)]}
             for k in range(5)]
    path = tmp_path / "set.jsonl"
    write_probeset(path, items, kind="cloze", seed=0, params={}, source={})
    return path


def test_an_evaluation_runs_and_resumes_through_its_cache(probes, tmp_path):
    models = Models()
    evaluation = Evaluation(SPEC, "toy", probes, tmp_path / "run", limit=3, batch=2)
    heard = []
    first = run_evaluation(evaluation, models=models, progress=lambda done, total: heard.append((done, total)))
    assert (first.items, first.new, first.resumed_after, first.aggregate["accuracy"]) == (3, 3, 0, 1.0)
    assert heard == [(0, 3), (2, 3), (3, 3)]
    held = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (held["model"], held["method"], held["limit"], held["seed"]) == ("stub:scorer", "toy", 3, 0)
    more = run_evaluation(Evaluation(SPEC, "toy", probes, tmp_path / "run"), models=models)
    assert (more.items, more.new, more.resumed_after) == (5, 2, 3)
    assert models.asked == [SPEC, SPEC]


def test_bad_input_is_refused_before_the_model_is_asked_for(probes, tmp_path):
    models = Models()
    with pytest.raises(EvalInputError) as refused:
        run_evaluation(Evaluation(SPEC, "toy", probes, tmp_path / "run", options={"top_k": 0}), models=models)
    assert str(refused.value) == "method toy: option top_k: 0 is below its minimum 1"
    with pytest.raises(EvalInputError, match="^model spec 'gguf:"):
        run_evaluation(Evaluation(f"gguf:{probes}", "toy", probes, tmp_path / "run"), models=models)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="holds files that are not a factprobe eval run"):
        run_evaluation(Evaluation(SPEC, "toy", probes, foreign), models=models)
    assert models.asked == [] and not (tmp_path / "run").exists()
    # --overwrite takes the folder: the run's own files start over, the others stay
    taken = run_evaluation(Evaluation(SPEC, "toy", probes, foreign, overwrite=True), models=models)
    assert taken.items == 5 and (foreign / "notes.txt").read_text() == "mine"


def test_a_model_that_does_not_load_is_a_model_load_error(probes, tmp_path):
    class Broken:
        def get(self, spec):
            raise FileNotFoundError(f"no model at {spec}")

    with pytest.raises(ModelLoadError, match=f"^no model at {SPEC}$"):
        run_evaluation(Evaluation(SPEC, "toy", probes, tmp_path / "run"), models=Broken())


def test_the_evaluation_is_frozen_and_holds_its_own_options():
    options = {"top_k": 2}
    evaluation = Evaluation(SPEC, "toy", "set.jsonl", "run", options=options)
    options["top_k"] = 3
    assert dict(evaluation.options) == {"top_k": 2} and evaluation.probes == Path("set.jsonl")
    with pytest.raises(TypeError):
        evaluation.options["top_k"] = 4
    with pytest.raises(AttributeError):
        evaluation.limit = 1

"""`factprobe export lm-eval` and `probeset import --format lm-eval` against lm-evaluation-harness
itself: the harness task asks exactly factprobe's requests (no model), harness's `acc` is
factprobe's verdict item by item for SmolLM2 on KDF, IC-LKE and BELIEF-ICL sets built from the
shipped sample graph (one loaded model, shared by both sides; harness runs with factprobe hidden),
an exported BELIEF-ICL task gives factprobe's verdicts in an interpreter that cannot import
factprobe, and an exported task imported back gives the same verdicts. With -s the cross-check
prints the tables bench/README.md shows."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from lm_eval.tasks import TaskManager

from factprobe.cli.main import main
from factprobe.probes.formats.export_lm_eval import export_lm_eval
from factprobe.probes.methods.kdf import LETTERS
from factprobe.probes.evaluation.runner import evaluate, plan_eval
from factprobe.probes.scoring.requests import ContinuationScore, Generation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from lm_eval_check import compare, without_factprobe  # noqa: E402  (bench/lm_eval_check.py: the same on any sets)

SAMPLE = Path(__file__).resolve().parent.parent / "kg" / "data" / "sample_wikidata.json"
# set, method options, --limit: a handful of items each
CASES = {
    "kdf": ("kdf", {}, None),
    "ic-lke": ("mc", {"examples": 4}, None),
    "belief-icl": ("bi", {"settings": ["zero-shot", "x-relation"], "samples": 1, "max_tokens": 8}, 2),
}


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    base = tmp_path_factory.mktemp("lmeval")
    store = base / "g.sqlite"
    # relations where SmolLM2 is right on some items and wrong on others
    builds = {"kdf": ["--kind", "kdf", "--relation", "P36", "--relation", "P30", "--per-relation", "3", "--shots", "2"],
              "mc": ["--kind", "icl-mc", "--relation", "P27", "--per-relation", "10", "--choices", "10",
                     "--demo-fraction", "0.5", "--trex-mc-filter", "report"],  # the sample's P27 is small
              "bi": ["--kind", "belief-icl", "--relation", "P30", "--per-relation", "2", "--shots", "1",
                     "--aliases-per-subject", "1"]}
    assert cli("ingest", "wikidata", SAMPLE, "--store", store, "--quiet").exit_code == 0
    paths = {"base": base}
    for name, args in builds.items():
        paths[name] = base / f"{name}.jsonl"
        result = cli("probeset", "build", "--store", store, "--out", paths[name], "--quiet", *args)
        assert result.exit_code == 0, result.output
    return paths


class Recorder:
    """A scorer that answers nothing real: it records what a method asks."""

    def __init__(self):
        self.pairs, self.prompts = [], []

    def loglikelihood(self, requests):
        out = []
        for request in requests:
            self.pairs += [(request.context, c) for c in request.continuations]
            out.append([ContinuationScore(-float(len(c)), False, 1) for c in request.continuations])
        return out

    def generate(self, requests):
        self.prompts += [(r.prompt, r.max_tokens, r.stop) for r in requests if r.greedy]
        return [Generation(("x",) * r.n) for r in requests]


def harness_task(folder: Path, name: str):
    """The task as harness builds it from the folder, its requests built (no model)."""
    with contextlib.chdir(folder.parent.parent):  # not the folder: data_files must not depend on the cwd
        task = TaskManager(include_path=str(folder), include_defaults=False).load([name])["tasks"][name]
        task.build_all_requests()
    return task


def factprobe_asks(method, probes, options, limit=None):
    plan = plan_eval(method, probes, "unused", options=options, limit=limit, restart=True)
    recorder = Recorder()
    plan.runner.run(recorder, plan.runner.order(plan.test))
    return recorder


@pytest.mark.parametrize("method, probes, options", [
    ("kdf", "kdf", {}), ("kdf", "kdf", {"frame": "qa", "shots": 1}), ("kdf", "kdf", {"scoring": "option-text"}),
    ("ic-lke", "mc", {"examples": 3, "separator": ": ", "line_separator": "; "}),
    ("eic-lke", "mc", {"construction": "chain", "examples": 2}),
    ("eic-lke", "mc", {"construction": "paper", "examples": 4, "start": 1, "every": 1})])
def test_the_harness_task_asks_exactly_factprobes_loglikelihood_requests(sets, tmp_path, method, probes, options):
    out = tmp_path / "task"
    exported = export_lm_eval(method, sets[probes], out, options=options, name="t")
    task = harness_task(out, "t")
    asked = sorted(tuple(i.arguments) for i in task.instances)
    assert asked == sorted(factprobe_asks(method, sets[probes], options).pairs)
    assert len(task.instances) == sum(len(d["choices"]) for d in map(json.loads, open(out / "t.jsonl")))
    assert exported.documents == len({i.doc["id"] for i in task.instances})
    per_choice = method == "eic-lke" and options["construction"] == "paper"
    assert ("class" in yaml.safe_load((out / "t.yaml").read_text().replace("!function", ""))) == per_choice
    # imported back, the mc method asks the same requests again (so it reaches the same verdicts)
    result = cli("probeset", "import", "--format", "lm-eval", out / "t.yaml", "--out", tmp_path / "back.jsonl")
    if per_choice:
        assert result.exit_code == 2 and "class is set" in result.output
        return
    assert result.exit_code == 0, result.output
    assert sorted(factprobe_asks("mc", tmp_path / "back.jsonl", {}).pairs) == asked


def test_the_harness_task_asks_belief_icls_greedy_prompts(sets, tmp_path):
    _, options, limit = CASES["belief-icl"]
    export_lm_eval("belief-icl", sets["bi"], tmp_path / "task", options=options, limit=limit, name="b")
    task = harness_task(tmp_path / "task", "b")
    asked = [(i.arguments[0], i.arguments[1]["max_gen_toks"], tuple(i.arguments[1]["until"])) for i in task.instances]
    assert asked == factprobe_asks("belief-icl", sets["bi"], options, limit).prompts
    assert len(asked) == 4


@pytest.mark.parametrize("method, options, why", [
    ("distractor", [], "Min@n/Avg@n"), ("belief", [], "fill-mask"), ("baselines", [], "Precision@n"),
    ("kdf", ["--option", "scoring=option-text-norm"], "per token")])
def test_what_harness_cannot_express_is_refused_by_name(sets, tmp_path, method, options, why):
    result = CliRunner().invoke(main, ["export", "lm-eval", "--probes", str(sets["kdf"]), "--method", method,
                                       "--out", str(tmp_path / "t"), *options])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and f"{method} " in result.output and why in result.output
    assert not (tmp_path / "t").exists()


def test_one_task_per_folder(sets, tmp_path):
    first = export_lm_eval("kdf", sets["kdf"], tmp_path, name="a")
    groups = ("a_relation_P30.yaml", "a_relation_P36.yaml", "a_by_relation.yaml")  # tests/test_lm_eval_groups.py
    assert first.files == ("a.yaml", "a.jsonl", "utils.py", *groups) and first.documents == 6
    assert export_lm_eval("kdf", sets["kdf"], tmp_path, name="a").documents == 6  # the same task again: rewritten
    with pytest.raises(ValueError, match=r"holds another task \(a.yaml\)"):
        export_lm_eval("ic-lke", sets["mc"], tmp_path, options={"examples": 4}, name="b")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a.jsonl", "a.yaml", "utils.py", *groups])


# -- the cross-check: one SmolLM2 for factprobe and harness ----------------------------------------


@pytest.fixture(scope="module")
def model():
    import torch
    from lm_eval.models.huggingface import HFLM

    from scoring_models import real_scorer

    # One thread: on a shared machine two threads each wait for the other at every op (4x slower
    # here under load); both sides run with the same setting, restored for the tests after these.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    scorer = real_scorer("smollm2-135m-instruct")
    yield scorer, HFLM(pretrained=scorer.model, tokenizer=scorer.tokenizer, batch_size=16, device="cpu")
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def runs(sets, model):
    """Per case: factprobe's records and harness's logged samples on the exported task."""
    from lm_eval import simple_evaluate

    scorer, lm = model
    ours, tasks = {}, {}
    for method, (probes, options, limit) in CASES.items():
        tasks[method] = export_lm_eval(method, sets[probes], sets["base"] / "tasks" / method, options=options,
                                       limit=limit).name
        summary = evaluate(scorer, method, sets[probes], sets["base"] / "runs" / method, options=options, limit=limit)
        ours[method] = ([json.loads(line) for line in open(Path(summary.out) / "items.jsonl")], summary.aggregate)
    # one harness call for the three tasks (each call also gathers environment facts, seconds of it)
    manager = TaskManager(include_path=[str(sets["base"] / "tasks" / m) for m in CASES], include_defaults=False)
    with contextlib.chdir(sets["base"]), without_factprobe():  # as where factprobe is not installed
        result = simple_evaluate(model=lm, tasks=list(tasks.values()), log_samples=True, bootstrap_iters=0,
                                 task_manager=manager)
    return {method: (ours[method][0], result["samples"][task], result["results"][task]["acc,none"], ours[method][1])
            for method, task in tasks.items()}


@pytest.mark.slow
@pytest.mark.parametrize("method", list(CASES))
def test_harness_acc_is_factprobes_verdict_item_by_item(runs, method):
    records, samples, harness_acc, aggregate = runs[method]
    rows, wrong, ties = compare(method, records, samples)
    print(f"\n{method}: {len(rows)} documents; harness acc {harness_acc:.4f}; factprobe accuracy "
          f"{aggregate['accuracy']:.4f}")
    for row in rows:
        print("  " + " | ".join(f"{x:.1e}" if isinstance(x, float) and x < 1e-3 and x else str(x) for x in row))
    assert len(rows) == len(samples) == {"kdf": 6, "ic-lke": 5, "belief-icl": 4}[method]
    assert wrong == [], f"harness and factprobe disagree on {wrong}"
    assert ties == [], f"exact ties (both sides take the first choice, but a tie is no agreement): {ties}"
    # BELIEF-ICL's item accuracy is the share of its settings correct: with two settings for every
    # item, the mean over items is the mean over documents
    assert harness_acc == pytest.approx(aggregate["accuracy"])


@pytest.mark.slow
def test_an_exported_task_imported_back_gives_the_same_verdicts(sets, runs, model, tmp_path):
    scorer, _ = model
    for method in ("kdf",):  # the other sets' round trips ask the same requests (test above)
        folder = sets["base"] / "tasks" / method
        yaml_path = next(folder.glob("*.yaml"))
        back = tmp_path / f"{method}-back.jsonl"
        result = cli("probeset", "import", "--format", "lm-eval", yaml_path, "--out", back)
        assert result.exit_code == 0, result.output
        summary = evaluate(scorer, "mc", back, tmp_path / f"{method}-mc")
        again = {r["id"]: r for r in map(json.loads, open(Path(summary.out) / "items.jsonl"))}
        items = {i["id"]: i for i in map(json.loads, open(back))}
        by_source = {items[k]["source_doc"]: r for k, r in again.items()}
        records = runs[method][0]
        assert sorted(by_source) == sorted(r["id"] for r in records)
        for record in records:
            twin = by_source[record["id"]]
            ours = LETTERS.index(record["prediction"]) if method == "kdf" else record["predicted_index"]
            assert (twin["predicted_index"], twin["correct"]) == (ours, record["correct"])


# -- an exported BELIEF-ICL task where factprobe is not installed ----------------------------------

MYRIAD_ROWS = Path(__file__).parent / "fixtures" / "myriadlama" / "published_shape.jsonl"
# (answer, gold names): lemmas either side, whole words in order, punctuation, no words
VERDICTS = [("guitars", ["guitar"]), ("a guitar", ["guitars"]), ("Paris, France.", ["Paris"]),
            ("the city of Paris", ["Paris"]), ("Parisian", ["Paris"]), ("Aires Buenos", ["Buenos Aires"]),
            ("", ["Paris"]), ("It is Tokyo", ["Edo", "Tokyo"]), ("Kyoto", ["Edo", "Tokyo"]), ("Cities.", ["city"]),
            ("Linus Torvalds.", ["Linus Torvalds", "Torvalds"]), ("Microsoft Corp", ["Microsoft Corporation"])]


def isolated(code: str, *path, args=()) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter that cannot import factprobe: -I (no environment variables,
    no working directory on the path) and -S (no site-packages, so not factprobe's editable
    install either); its sys.path is the standard library, then `path`."""
    prelude = f"import sys\nsys.path += {[str(p) for p in path]!r}\n"
    return subprocess.run([sys.executable, "-I", "-S", "-c", prelude + code, *map(str, args)], capture_output=True,
                          text=True, timeout=600)


@pytest.fixture
def myriad(tmp_path) -> Path:
    out = tmp_path / "myriadlama.jsonl"
    assert cli("probeset", "import", "--format", "myriadlama", MYRIAD_ROWS, "--out", out).exit_code == 0
    return out


def test_the_exported_matching_runs_without_factprobe_and_gives_its_verdicts(myriad, tmp_path):
    import simplemma

    from factprobe.probes.measures.answers import matches_any

    export_lm_eval("belief-icl", myriad, tmp_path / "task", options={"settings": ["zero-shot"]}, name="m")
    utils = (tmp_path / "task" / "utils.py").read_text()
    assert "factprobe." not in utils.replace("factprobe/probes/measures/answers.py", "")  # nothing of factprobe is imported
    docs = [json.loads(line) for line in open(tmp_path / "task" / "m.jsonl")]
    cases = VERDICTS + [(d["answer"], d["gold"]) for d in docs[:3]] + [("Nothing.", docs[0]["gold"])]
    # the standard library, the task folder and simplemma (the lemmatizer it names), nothing else
    site = tmp_path / "only-simplemma"
    site.mkdir()
    (site / "simplemma").symlink_to(Path(simplemma.__file__).parent)
    code = ("import importlib.util, json\n"
            "assert importlib.util.find_spec('factprobe') is None, 'factprobe is importable'\n"
            "import utils\n"
            "print(json.dumps([utils.process_results({'gold': g}, [a])['acc'] for a, g in json.loads(sys.argv[1])]))")
    proc = isolated(code, tmp_path / "task", site, args=[json.dumps(cases)])
    assert proc.returncode == 0, proc.stderr
    verdicts = json.loads(proc.stdout)
    assert verdicts == [float(matches_any(a.strip(), g)) for a, g in cases]
    assert verdicts == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    # without simplemma: one line naming what to install
    bare = isolated("import utils", tmp_path / "task")
    assert bare.returncode == 1
    assert bare.stderr.strip().splitlines()[-1] == (
        f"ModuleNotFoundError: this task matches answers by simplemma's lemmas, as factprobe does: "
        f"pip install simplemma=={simplemma.__version__}")


HARNESS = """
import importlib.util, json
assert importlib.util.find_spec('factprobe') is None, 'factprobe is importable'
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

answers = json.loads(open(sys.argv[1]).read())


class Scripted(LM):
    def loglikelihood(self, requests):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError

    def generate_until(self, requests):
        return [answers[r.arguments[0]] for r in requests]


folder, task = sys.argv[2], sys.argv[3]
result = simple_evaluate(model=Scripted(), tasks=[task], log_samples=True, bootstrap_iters=0,
                         task_manager=TaskManager(include_path=[folder], include_defaults=False))
open(sys.argv[4], 'w').write(json.dumps({'acc': result['results'][task]['acc,none'],
                                         'samples': result['samples'][task]}, default=str))
"""


class Scripted:
    """factprobe's side of the scripted model: each prompt's answer from the same table."""

    identity = "scripted"

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers

    def generate(self, requests):
        return [Generation((self.answers[r.prompt],) * r.n, ("stop",) * r.n) for r in requests]


@pytest.mark.slow
def test_harness_runs_an_exported_myriadlama_task_where_factprobe_cannot_be_imported(myriad, tmp_path):
    options = {"settings": ["zero-shot", "x-template"], "shots": 1, "samples": 1}
    export_lm_eval("belief-icl", myriad, tmp_path / "task", options=options, name="m")
    docs = [json.loads(line) for line in open(tmp_path / "task" / "m.jsonl")]
    # right, right in other words, wrong: one of each in turn
    answers = {d["prompt"]: [d["answer"] + ".", "I think it is " + d["gold"][-1], "Nothing"][k % 3]
               for k, d in enumerate(docs)}
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    site = sysconfig.get_paths()["purelib"]  # harness and its libraries, read without the .pth files
    proc = isolated(HARNESS, site, args=[tmp_path / "answers.json", tmp_path / "task", "m", tmp_path / "out.json"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    harness = json.loads((tmp_path / "out.json").read_text())
    summary = evaluate(Scripted(answers), "belief-icl", myriad, tmp_path / "run", options=options)
    records = [json.loads(line) for line in open(tmp_path / "run" / "items.jsonl")]
    rows, wrong, ties = compare("belief-icl", records, harness["samples"])
    assert len(rows) == len(docs) == 42 and wrong == [] and ties == []
    # harness's acc is the mean over documents (prompt x setting): factprobe's per-setting accuracy
    # over prompts, averaged over the two settings (its item accuracy weighs items, 6 prompts or 2, alike)
    per_setting = [v["accuracy"] for v in summary.aggregate["by_setting"].values()]
    assert harness["acc"] == pytest.approx(sum(per_setting) / 2) == pytest.approx(28 / 42)


# -- a harness task written by hand, imported -----------------------------------------------------

TASK = """task: capitals
dataset_path: json
dataset_kwargs:
  data_files:
    validation: data/capitals.jsonl
validation_split: validation
output_type: multiple_choice
description: "Answer with the capital.\\n\\n"
doc_to_text: "Q: {{question}}\\nA:"
doc_to_choice: "{{options}}"
doc_to_target: label
metric_list:
  - metric: acc
"""


def test_a_templated_harness_task_imports_as_harness_reads_it(tmp_path, monkeypatch):
    (tmp_path / "task" / "data").mkdir(parents=True)
    docs = [{"question": "Capital of France?", "options": ["Lyon", "Paris"], "label": "Paris"},
            {"question": "Capital of Peru?", "options": ["Lima", "Cusco", "Arequipa"], "label": "Lima"},
            {"question": "Capital of Chad?", "options": ["Abuja", "Accra"], "label": "N'Djamena"}]
    (tmp_path / "task" / "data" / "capitals.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "task" / "capitals.yaml").write_text(TASK)
    # factprobe reads data_files relative to the task folder (never outside it), harness (datasets)
    # relative to the working directory: from the task folder both read the same file
    monkeypatch.chdir(tmp_path / "task")
    result = cli("probeset", "import", "--format", "lm-eval", "capitals.yaml", "--out", tmp_path / "caps.jsonl")
    assert result.exit_code == 3, result.output
    assert "rejected" in result.output and "doc_to_target: \"N'Djamena\" is not among the choices" in result.output
    items = [json.loads(line) for line in open(tmp_path / "caps.jsonl")]
    assert [(i["prompt"], i["choices"], i["answer_index"], i["target_delimiter"]) for i in items] == [
        ("Answer with the capital.\n\nQ: Capital of France?\nA:", ["Lyon", "Paris"], 1, " "),
        ("Answer with the capital.\n\nQ: Capital of Peru?\nA:", ["Lima", "Cusco", "Arequipa"], 0, " ")]
    task = TaskManager(include_path=str(tmp_path / "task"), include_defaults=False).load(["capitals"])["tasks"]["capitals"]
    task.build_all_requests()
    asked = sorted(tuple(i.arguments) for i in task.instances if i.doc["question"] != "Capital of Chad?")
    assert sorted(factprobe_asks("mc", tmp_path / "caps.jsonl", {}).pairs) == asked


@pytest.mark.parametrize("change, why", [
    (("dataset_path: json", "dataset_path: cais/mmlu"), "dataset_path 'cais/mmlu' is a dataset on the Hugging Face hub"),
    (('doc_to_text: "Q: {{question}}\\nA:"', "doc_to_text: !function utils.doc_to_text"),
     "doc_to_text is Python code (!function utils.doc_to_text)"),
    (("metric_list:", "num_fewshot: 5\nmetric_list:"), "num_fewshot 5"),
    (("output_type: multiple_choice", "output_type: generate_until"), "only multiple_choice tasks import")])
def test_what_the_import_cannot_follow_is_refused_by_name(tmp_path, monkeypatch, change, why):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "capitals.jsonl").write_text(json.dumps({"question": "?", "options": ["a"], "label": "a"}) + "\n")
    (tmp_path / "capitals.yaml").write_text(TASK.replace(*change))
    monkeypatch.chdir(tmp_path)
    result = cli("probeset", "import", "--format", "lm-eval", "capitals.yaml", "--out", "x.jsonl")
    assert result.exit_code == 2 and why in result.output, result.output
    assert not (tmp_path / "x.jsonl").exists()

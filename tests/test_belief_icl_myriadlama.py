"""BELIEF-ICL on an imported MyriadLAMA set (000, the paper's central experiment): rows in the
published shape import as cloze items, `belief-icl` asks every prompt of them with
demonstrations drawn from the set's own items, the QA-style setting of appendix D asks the
question templates, and the overconfidence samples go to one prompt of up to 10K subject-relation
pairs (000:106), drawn with the run's seed."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.probes.evaluation.aggregate import aggregate
from factprobe.probes.formats.importers import import_items
from factprobe.probes.methods import MethodContext
from factprobe.probes.methods.belief_icl import INSTRUCTION, BeliefICL
from factprobe.probes.methods.belief_icl_questions import QA_INSTRUCTION
from factprobe.probes.evaluation.runner import evaluate, plan_eval
from factprobe.probes.scoring.requests import Generation

ROWS = Path(__file__).parent / "fixtures" / "myriadlama" / "published_shape.jsonl"
PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "000_d5e47173cc9830b1.txt"


class Lines:
    """A generator that records its requests and answers each prompt with `answer`."""

    identity = "lines"

    def __init__(self, answer: str = "Paris") -> None:
        self.answer, self.requests = answer, []

    def generate(self, requests):
        self.requests += list(requests)
        return [Generation((self.answer,) * r.n, ("stop",) * r.n) for r in requests]


@pytest.fixture
def myriad(tmp_path) -> Path:
    out = tmp_path / "myriadlama.jsonl"
    run_cli("probeset", "import", "--format", "myriadlama", str(ROWS), "--out", str(out), check=True)
    return out


def _items(path: Path) -> dict[str, dict]:
    return {i["id"]: i for i in map(json.loads, path.read_text().splitlines())}


# -- the import -------------------------------------------------------------------------------------


def test_published_rows_keep_their_ids_and_whether_a_template_is_manual():
    items, report = import_items("myriadlama", [ROWS])
    assert (report.rows, report.items, report.rejected) == (21, 5, [])
    windows = items[0]
    # sub_ent is a subject expression (a string), its entity in sub_uri; obj_ents names obj_uris
    assert (windows["subject"], windows["subject_label"], windows["object"], windows["object_label"]) == (
        "Q1406", "Windows", "Q2283", "Microsoft")
    assert windows["gold"] == ["Microsoft", "Microsoft Corporation", "MS"]
    assert [(p["template_id"], p["subject_name"], p["manual"]) for p in windows["prompts"]] == [
        (0, "Windows", True), (0, "Microsoft Windows", True), (1, "Windows", True), (1, "Microsoft Windows", True),
        (2, "Windows", False), (2, "Microsoft Windows", False)]


# -- demonstrations from the set's own items -----------------------------------------------------------


def test_a_cloze_item_is_one_question_per_prompt_with_demonstrations_of_other_subjects(myriad, tmp_path):
    scorer = Lines()
    result = evaluate(scorer, "belief-icl", myriad, tmp_path / "run",
                      options={"shots": 1, "samples": 1, "sample_prompts": "all"})
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    items = _items(myriad)
    assert [len(r["prompts"]) for r in records] == [len(items[r["id"]]["prompts"]) for r in records] == [6, 6, 3, 2, 4]
    assert result.aggregate["by_setting"]["x-template"]["items"] == 21  # one row per prompt
    greedy = [r.prompt for r in scorer.requests if r.greedy]
    assert len(greedy) == 21 * 4
    # France has one other subject in P36, so its 1-template and 1-relation demonstrations are Japan's:
    # appendix E's layout (000:555-567), the demonstration answered with a period.
    assert ("Predict the [MASK] in each sentence in one word.\n"
            "Q: The capital of Japan is [MASK].\nA: Tokyo.\n"
            "Q: The capital of France is [MASK].\nA:") in greedy
    for record in records:
        item = items[record["id"]]
        subject = item["subject_label"]
        for prompt in record["prompts"]:
            assert set(prompt["by_setting"]) == {"zero-shot", "x-random", "x-relation", "x-template"}
    # no demonstration names the question's own subject; x-template's keeps the question's template
    method = plan_eval("belief-icl", myriad, tmp_path / "unused", options={"shots": 1}, restart=True).runner
    for item in items.values():
        for question in method.questions(item):
            shown = question["demonstrations"]
            for setting in ("x-random", "x-relation", "x-template"):
                assert [d["subject_label"] for d in shown[setting]] != [item["subject_label"]]
                assert len(shown[setting]) == 1
            assert shown["x-template"][0]["template"] == question["template"]
            assert shown["x-relation"][0]["relation"] == item["relation"]
    # drawn once per (item, template): a template's subject expressions share them
    windows = method.questions(items["cloze:u-win"])
    assert windows[0]["demonstrations"] == windows[1]["demonstrations"]
    assert (windows[0]["subject_name"], windows[1]["subject_name"]) == ("Windows", "Microsoft Windows")


def test_demonstrations_follow_the_runs_seed(myriad, tmp_path):
    def drawn(seed):
        method = plan_eval("belief-icl", myriad, tmp_path / "unused", seed=seed, restart=True).runner
        return [q["demonstrations"] for item in _items(myriad).values() for q in method.questions(item)]

    assert drawn(0) == drawn(0)
    assert drawn(0) != drawn(1)


def _one_cloze_template_item(tmp_path):
    """A belief-icl set of one item, France's capital under a cloze (not a question) template."""
    item = {"id": "b", "kind": "belief-icl", "split": "test", "fact": "F", "relation": "P36", "gold": ["Paris"],
            "subject_label": "France", "template": "The capital of [X] is [Y].", "prompt": "The capital of France is [Y].",
            "demonstrations": {"x-relation": []}}
    probes = tmp_path / "b.jsonl"
    probes.write_text(json.dumps(item) + "\n")
    return probes


def test_shots_are_for_cloze_sets_only(tmp_path):
    probes = _one_cloze_template_item(tmp_path)
    with pytest.raises(ValueError, match="shots: a belief-icl set carries its demonstrations"):
        plan_eval("belief-icl", probes, tmp_path / "run", options={"shots": 2})


# -- the QA style (000, appendix D) ---------------------------------------------------------------------


def test_the_qa_instruction_is_the_papers():
    assert QA_INSTRUCTION == "Answer each question in one word."
    assert INSTRUCTION == "Predict the [MASK] in each sentence in one word."
    if PAPER.is_file():  # the papers folder sits beside the repository (not in a user's clone)
        text = PAPER.read_text(encoding="utf-8")
        assert f"‘‘{QA_INSTRUCTION}’’" in text and f"‘‘{INSTRUCTION}’’" in text


def test_qa_style_asks_the_question_templates_as_questions(myriad, tmp_path):
    scorer = Lines("Tokyo")
    evaluate(scorer, "belief-icl", myriad, tmp_path / "qa",
             options={"prompt_style": "qa", "shots": 1, "samples": 1, "settings": ["zero-shot", "x-template"]})
    run = json.loads((tmp_path / "qa" / "run.json").read_text())
    assert run["options"]["prompt_style"] == "qa" and run["options"]["instruction"] == QA_INSTRUCTION
    greedy = [r.prompt for r in scorer.requests if r.greedy]
    # only "Who developed [X]? [Y]." and "What is the capital of [X]? [Y].": 2 + 2 + 1 + 1 + 2 prompts
    assert len(greedy) == 8 * 2
    assert "Answer each question in one word.\nQ: What is the capital of France?\nA:" in greedy
    assert ("Answer each question in one word.\n"
            "Q: What is the capital of Japan?\nA: Tokyo.\n"
            "Q: What is the capital of France?\nA:") in greedy
    assert "Answer each question in one word.\nQ: Who developed Microsoft Windows?\nA:" in greedy
    assert not any("[MASK]" in p for p in greedy)
    records = [json.loads(line) for line in (tmp_path / "qa" / "items.jsonl").read_text().splitlines()]
    assert [[p["template_id"] for p in r["prompts"]] for r in records] == [[1, 1], [1, 1], [1], [1], [1, 1]]


def test_qa_style_refuses_a_set_without_question_templates(tmp_path):
    probes = _one_cloze_template_item(tmp_path)
    with pytest.raises(ValueError, match=r"prompt_style=qa: item b's template 'The capital of \[X\] is \[Y\].' is "
                                         r"not a question"):
        plan_eval("belief-icl", probes, tmp_path / "run", options={"prompt_style": "qa"})


# -- which prompts get samples (000:106) -------------------------------------------------------------


def test_samples_go_to_one_prompt_of_each_drawn_pair(myriad, tmp_path):
    items = _items(myriad)
    # By hand: the five pairs (sub_uri|rel_uri) sorted, 3 of them drawn with the run's seed 0, then
    # one prompt of each drawn pair, as belief_icl_sampling.py documents the draw
    pairs = sorted(f"{i['subject']}|{i['relation']}" for i in items.values())
    assert pairs == ["Q1406|P178", "Q14116|P178", "Q142|P36", "Q14579|P178", "Q17|P36"]
    drawn = random.Random("0|belief-icl|sample-pairs").sample(pairs, 3)
    assert drawn == ["Q142|P36", "Q14116|P178", "Q17|P36"]
    by_pair = {f"{i['subject']}|{i['relation']}": i for i in items.values()}
    chosen = {(by_pair[p]["id"], random.Random(f"0|belief-icl|sample-prompt|{p}").randrange(
        len(by_pair[p]["prompts"]))) for p in drawn}
    assert chosen == {("cloze:u-fr", 0), ("cloze:u-mac", 1), ("cloze:u-jp", 2)}
    scorer = Lines()
    summary = evaluate(scorer, "belief-icl", myriad, tmp_path / "run",
                       options={"sample_prompts": 3, "samples": 4, "settings": ["x-template"], "shots": 1})
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    sampled = {(r["id"], k) for r in records for k, p in enumerate(r["prompts"])
               if p["by_setting"]["x-template"]["confidence"] is not None}
    assert sampled == chosen
    # the others get no samples: 21 greedy requests, 3 of 4 samples each
    assert sorted((r.n, r.greedy) for r in scorer.requests) == [(1, True)] * 21 + [(4, False)] * 3
    x = summary.aggregate["by_setting"]["x-template"]
    assert x["sampled_prompts"] == 3 and x["items"] == 21
    assert summary.aggregate["definitions"]["sample_prompts"] == 3
    assert summary.aggregate["definitions"]["samples"] == 4
    # the draw is the probe set's, not the batch's nor --limit's: of the first three items (Windows,
    # Linux, macOS) only macOS's prompt 1 was drawn
    limited = Lines()
    evaluate(limited, "belief-icl", myriad, tmp_path / "three", limit=3, batch=1, stratify="none",
             options={"sample_prompts": 3, "samples": 4, "settings": ["x-template"], "shots": 1})
    assert sorted(r.n for r in limited.requests) == [1] * 15 + [4]
    mac = json.loads((tmp_path / "three" / "items.jsonl").read_text().splitlines()[2])
    assert [p["by_setting"]["x-template"]["confidence"] is not None for p in mac["prompts"]] == [False, True, False]


def test_sample_prompts_all_samples_every_prompt_and_the_default_is_the_papers(myriad, tmp_path):
    assert BeliefICL.option_defaults["sample_prompts"] == 10_000 and BeliefICL.option_defaults["samples"] == 100
    scorer = Lines()
    summary = evaluate(scorer, "belief-icl", myriad, tmp_path / "all",
                       options={"sample_prompts": "all", "samples": 2, "settings": ["zero-shot"]})
    assert sum(not r.greedy for r in scorer.requests) == 21
    assert summary.aggregate["definitions"]["sample_prompts"] == "all"
    default = Lines()
    summary = evaluate(default, "belief-icl", myriad, tmp_path / "default", options={"samples": 2,
                                                                                    "settings": ["zero-shot"]})
    assert sum(not r.greedy for r in default.requests) == 5  # 5 pairs, fewer than 10K: one prompt each
    assert summary.aggregate["definitions"]["sample_prompts"] == 10_000
    from factprobe.probes.report import build_document, load_runs, to_markdown

    text = to_markdown(build_document(load_runs([tmp_path / "all", tmp_path / "default"]), "t"))
    assert "Ovconf from 2 sampled answers on every prompt, not BELIEF-ICL's 10K pairs" in text
    assert "Ovconf from 2 sampled answers on one prompt of each of up to 10000 subject-relation pairs " \
           "(BELIEF-ICL's 10K)" in text
    for bad in (0, "some", -3, 2.5):
        with pytest.raises(ValueError, match="sample_prompts"):
            BeliefICL(MethodContext({"sample_prompts": bad}))


def _cloze_record(fact: str, prompts: list[tuple[str, bool, float | None]]) -> dict:
    rows = [{"index": k, "template_id": k, "subject_name": "s",
             "by_setting": {"zero-shot": {"prediction": p, "correct": c, "confidence": conf, "one_word": True}}}
            for k, (p, c, conf) in enumerate(prompts)]
    return {"id": f"cloze:{fact}", "fact": fact, "relation": "P36", "bucket": None, "unit": "pair", "prompts": rows,
            "correct": sum(c for _, c, _ in prompts) / len(prompts)}


def test_ovconf_is_over_the_sampled_prompts_only():
    records = [_cloze_record("A", [("Paris", True, 0.5), ("Paris", True, None), ("Lyon", False, None)]),
               _cloze_record("B", [("Rome", False, 1.0), ("Rome", False, None)])]
    zero = aggregate("belief-icl", records, {"sample_prompts": 2})["by_setting"]["zero-shot"]
    assert zero["items"] == 5 and zero["accuracy"] == 2 / 5
    assert zero["sampled_prompts"] == 2
    # two sampled prompts, one per bin: confidence (0.5 + 1.0) / 2 - accuracy (1 + 0) / 2
    assert zero["overconfidence"] == pytest.approx(0.25)
    assert zero["mean_confidence"] == pytest.approx(0.75)
    assert [b["count"] for b in zero["reliability"]] == [1, 1]
    # Consist over every prompt of a pair: A's answers Paris, Paris, Lyon -> 1/3; B's Rome, Rome -> 1
    assert zero["consistency"] == pytest.approx((1 / 3 + 1) / 2)


def test_the_projection_follows_the_sampling():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from project import belief_icl_answers

    # MyriadLAMA (000:126-129): 6,492,800 prompts of 24,643 pairs; 100 answers on 10K of them
    assert belief_icl_answers(6_492_800, 24_643, samples=100, sample_prompts=10_000) == (6_492_800, 10_000 * 100)
    assert belief_icl_answers(6_492_800, 24_643, samples=100, sample_prompts="all") == (6_492_800, 649_280_000)
    assert belief_icl_answers(500, 40, samples=100, sample_prompts=10_000) == (500, 4_000)


# -- the README's commands on a real model ----------------------------------------------------------------


@pytest.mark.slow
def test_an_imported_myriadlama_set_runs_with_belief_and_belief_icl_as_the_readme_shows(myriad, tmp_path):
    from scoring_models import tiny_bert

    bert = tiny_bert(tmp_path / "bert")
    masked = run_cli("eval", "--model", f"hf-mlm:{bert}", "--method", "belief", "--probes", str(myriad),
                     "--out", str(tmp_path / "belief"), "--json", "--quiet")
    assert masked.returncode == 0, masked.stderr
    assert json.loads(masked.stdout)["items"] == 5
    causal = run_cli("eval", "--model", "smollm2-135m-instruct", "--method", "belief-icl", "--probes", str(myriad),
                     "--out", str(tmp_path / "belief-icl"), "--limit", "2", "--stratify", "none", "--option", "samples=2",
                     "--option", "settings=zero-shot,x-template", "--option", "max_tokens=8", "--json", "--quiet")
    assert causal.returncode == 0, causal.stderr
    result = json.loads(causal.stdout)
    assert result["items"] == 2
    assert set(result["by_setting"]) == {"zero-shot", "x-template"}
    x = result["by_setting"]["x-template"]
    assert x["items"] == 12 and x["accuracy"] is not None
    assert x["sampled_prompts"] == 2  # both pairs are among the (fewer than 10K) drawn ones

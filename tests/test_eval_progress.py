"""Progress and cost up front (issue 48 item 4): an evaluation reports each answered item where its
method scores item by item (the distractor measure, ~28 s an item at its defaults); where the
backend shares work across a batch, each batch's end and, inside it, the share of the scorer's
call answered, in whole items (Scorer.call_progress); a model load is announced with its time; a running
evaluation's stage, counts and eta are what the service's job status shows. Real models, a real
probe set built from a real store."""

from __future__ import annotations

import re

import pytest

from conftest import run_cli
from factprobe.cli.progress import RunProgress
from factprobe.probes.evaluation.entry import Evaluation, run_evaluation
from factprobe.probes.scoring.model_cache import ModelCache
from test_eval import probes  # noqa: F401  (the fixture: icl-mc and kdf sets of 30 capitals)


@pytest.fixture(scope="module")
def distractor_set(probes, tmp_path_factory):  # noqa: F811
    sets = tmp_path_factory.mktemp("progress") / "d.jsonl"
    run_cli("probeset", "build", "--kind", "distractor", "--relation", "P36", "--strategy", "random", "--n", "2",
            "--per-relation", "3", "--store", str(probes["icl-mc"].parent / "g.sqlite"), "--out", str(sets),
            "--quiet", check=True)
    return sets


def test_distractor_progress_fires_once_per_item_within_a_batch(distractor_set, tmp_path):
    calls, stages = [], []
    evaluation = Evaluation("smollm2-135m-instruct", "distractor", distractor_set, tmp_path / "run",
                            options={"clozes": 2}, batch=16)
    summary = run_evaluation(evaluation, models=ModelCache("cpu"), progress=lambda d, t: calls.append((d, t)),
                             stage=stages.append)
    assert summary.new == 3
    # one batch of 16 holds the 3 items: before it, then after each item, not once at its end
    assert calls == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert stages[0] == "loading model smollm2-135m-instruct ..."
    assert re.fullmatch(r"model smollm2-135m-instruct loaded in \d+\.\d s", stages[1]) and len(stages) == 2


def test_a_batched_method_reports_its_batches_and_a_held_model_is_not_announced(probes, tmp_path):  # noqa: F811
    models, calls, stages = ModelCache("cpu"), [], []
    evaluation = Evaluation("smollm2-135m-instruct", "ic-lke", probes["icl-mc"], tmp_path / "run",
                            options={"examples": 2}, limit=7, batch=3)
    run_evaluation(evaluation, models=models)  # loads the model into `models`
    again = Evaluation("smollm2-135m-instruct", "ic-lke", probes["icl-mc"], tmp_path / "again",
                       options={"examples": 2}, limit=7, batch=3)
    run_evaluation(again, models=models, progress=lambda d, t: calls.append((d, t)), stage=stages.append)
    # IC-LKE hands the scorer a batch at once (items per scorer call): 3, 3, then 1. Each batch's
    # end is reported; inside a batch the bar moves as the scorer answers its call, never to the
    # batch's end before its records are in, never backwards.
    done = [d for d, _ in calls]
    assert calls[0] == (0, 7) and calls[-1] == (7, 7) and {t for _, t in calls} == {7}
    assert done == sorted(set(done)) and {3, 6} <= set(done)
    assert set(done) - {0, 3, 6, 7}, f"the bar moved only per batch: {calls}"
    assert stages == []


def test_a_scorer_tells_the_share_of_its_call_answered():
    from factprobe.probes.scoring.requests import GenerateRequest, LabelPathRequest, LoglikelihoodRequest
    from factprobe.probes.scoring.scorer import reporting
    from scoring_models import real_scorer

    scorer, shares = real_scorer("smollm2-135m-instruct"), []
    with reporting(scorer, shares.append):
        # label paths: one unit per request
        scorer.label_paths([LabelPathRequest(f"The capital of {c} is", ("Paris", "Rome")) for c in "ABC"])
        assert shares == [1 / 3, 2 / 3, 1.0]
        shares.clear()
        # generate: a beam search is one unit, each sampled text one: 1 + 1 + 2 units
        scorer.generate([GenerateRequest("The capital of France is", max_tokens=2, beams=2, n=2),
                         GenerateRequest("The capital of Italy is", max_tokens=2, beams=2),
                         GenerateRequest("The capital of Spain is", max_tokens=2, n=2, temperature=1.0)])
        assert shares == [0.25, 0.5, 1.0]
        shares.clear()
        # loglikelihood: tokens fed of the distinct tokens of the call, pass by pass; a pass of at
        # most 8 tokens cuts the call into several
        before, scorer.pass_tokens = scorer.pass_tokens, 8
        try:
            scorer.loglikelihood([LoglikelihoodRequest(f"The capital of {c} is", (" Paris", " Rome"))
                                  for c in ("France", "Italy", "Spain")])
        finally:
            scorer.pass_tokens = before
        assert len(shares) >= 2 and shares == sorted(shares) and shares[-1] == 1.0 and 0 < shares[0] < 1
    assert scorer.call_progress is None
    shares.clear()
    scorer.label_paths([LabelPathRequest("The capital of France is", ("Paris",))])
    assert shares == []  # outside `reporting` nobody is told


def test_run_progress_view():
    watch = RunProgress()
    assert watch.view()["stage"] == "checking" and watch.view()["done"] == 0 and watch.view()["eta_seconds"] is None
    watch.note("loading model smollm2-135m-instruct ...")
    assert watch.view()["stage"] == "loading model"
    watch.items(4, 10)  # a resumed run: 4 items held, none scored yet, so no rate
    view = watch.view()
    assert (view["stage"], view["done"], view["total"], view["eta_seconds"]) == ("scoring", 4, 10, None)
    watch.scoring_since -= 6.0  # 6 s for the next 2 items: 3 s each, 4 left
    watch.items(6, 10)
    assert watch.view()["eta_seconds"] == pytest.approx(12.0, abs=0.1)
    assert set(watch.view()) == {"stage", "done", "total", "elapsed_seconds", "eta_seconds"}


def test_appropt_reports_each_search_as_it_ends_inside_a_chunk():
    """Searches of one chunk step in lockstep, but one for a longer name runs more steps: Paris
    is found in 1 step, "Rio de Janeiro de la Nueva Granada" in 10, so the chunk reports twice."""
    from factprobe.probes.scoring.appropt import ApprOptQuery, TrieCache, appropt_many
    from scoring_models import real_scorer

    scorer = real_scorer("smollm2-135m-instruct")
    trie = TrieCache(on_disk=False).get(scorer, "apart", {"Q90": ["Paris"], "Q1": ["Rio de Janeiro de la Nueva Granada"]})
    calls = []
    found = appropt_many(scorer, [ApprOptQuery(f"The capital of {c} is", trie, 1) for c in ("France", "Brazil")],
                         batch_size=2, progress=lambda d, t: calls.append((d, t)))
    assert [(r.hits[0].name, r.stats.steps) for r in found] == [("Paris", 1), ("Rio de Janeiro de la Nueva Granada", 10)]
    assert calls == [(1, 2), (2, 2)]


def test_appropt_reports_searches_done_per_chunk():
    from factprobe.probes.scoring.appropt import ApprOptQuery, TrieCache, appropt_many
    from scoring_models import real_scorer

    scorer = real_scorer("smollm2-135m-instruct")
    trie = TrieCache(on_disk=False).get(scorer, "few", {"Q90": ["Paris"], "Q64": ["Berlin"], "Q220": ["Rome"]})
    queries = [ApprOptQuery(f"The capital of {c} is", trie, 1) for c in ("France", "Germany", "Italy", "Japan", "Peru")]
    calls = []
    appropt_many(scorer, queries, batch_size=2, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(2, 5), (4, 5), (5, 5)]  # one-token names: a chunk's two searches end together
    calls.clear()
    appropt_many(scorer, queries, batch_size=2, cached=False, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]  # one by one without the shared passes


def test_a_masked_lm_tells_the_share_of_its_call_per_batch(tmp_path):
    from factprobe.probes.scoring.loader import load_scorer
    from factprobe.probes.scoring.requests import FillMaskRequest
    from factprobe.probes.scoring.scorer import reporting
    from scoring_models import tiny_bert

    scorer, shares = load_scorer(f"hf-mlm:{tiny_bert(tmp_path / 'bert')}", device="cpu"), []
    scorer.batch_size = 2
    with reporting(scorer, shares.append):
        scorer.fill_mask([FillMaskRequest(f"the capital of {c} is {FillMaskRequest.PLACEHOLDER} .")
                          for c in ("france", "italy", "germany")])
    assert shares == [2 / 3, 1.0]  # two requests a pass: 2 of 3, then 3 of 3

"""BELIEF's bias level. The paper's entropy (the default), worked by hand from its text (seed 000
= ../shared/papers/000_d5e47173cc9830b1.txt, lines 188-194: the content-free output
distributions are averaged over the content-free subjects and the templates, and the bias level
is 1 - H/H_max of that average over the candidates; single-prompt, the average of each
template's level); its run on a table scorer is in tests/test_paper_belief.py. Then factprobe's
older definition (`bias=top1`) on a masked LM: each template is also asked with a content-free
subject, and the aggregate's bias level is recomputed here from the model's own answers."""

from __future__ import annotations

import json
import math

import pytest

from factprobe.probes import measures as metrics
from factprobe.probes.evaluation.aggregate import aggregate
from factprobe.probes.measures import bias_level

LN2 = math.log(2)


def test_the_distributions_are_averaged_before_they_are_normalized():
    # Two templates, one content-free subject each, two candidates. t1 puts 0.1 / 0.1 on them (most
    # of its mass elsewhere), t2 0.6 / 0.2. The paper: mean [0.35, 0.15] -> P = [0.7, 0.3],
    # H = -(0.7 ln 0.7 + 0.3 ln 0.3) = 0.610864, 1 - H/ln 2 = 0.118709. Renormalizing each row
    # first (factprobe before issue 28) gave [0.5, 0.5] and [0.75, 0.25] -> [0.625, 0.375] -> 0.045566.
    rows = [[0.1, 0.1], [0.6, 0.2]]
    assert metrics.entropy_bias_level(rows) == pytest.approx(0.118709, abs=1e-6)
    assert metrics.entropy_bias_level(rows) == pytest.approx(1 + (0.7 * math.log(0.7) + 0.3 * math.log(0.3)) / LN2,
                                                             abs=1e-12)
    # A prompt with no mass on any candidate adds nothing to the average, and takes nothing away.
    assert metrics.entropy_bias_level([*rows, [0.0, 0.0]]) == pytest.approx(0.118709, abs=1e-6)
    with pytest.raises(ValueError, match="no row"):
        metrics.entropy_bias_level([[0.0, 0.0], [0.0, 0.0]])


def test_single_prompt_bias_is_the_mean_of_each_templates_level():
    # t1: "N/A" [0.2, 0.2], "?" [0.4, 0.0] -> mean [0.3, 0.1] -> [3/4, 1/4], H = 0.562335,
    #     level 1 - H/ln 2 = 0.188722;  t2: [0.5, 0.0] twice -> one-hot -> 1;  t3: no mass -> left out.
    # Single-prompt: (0.188722 + 1) / 2 = 0.594361. Multi-prompt over the same rows: mean of the six
    # rows [1.6, 0.2] / 6 -> [8/9, 1/9], H = 0.348832, level 0.496742.
    templates = [[[0.2, 0.2], [0.4, 0.0]], [[0.5, 0.0], [0.5, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]
    t1 = 1 + (0.75 * math.log(0.75) + 0.25 * math.log(0.25)) / LN2
    assert metrics.single_prompt_bias_level(templates) == pytest.approx((t1 + 1) / 2, abs=1e-12)
    assert metrics.single_prompt_bias_level(templates) == pytest.approx(0.594361, abs=1e-6)
    rows = [row for t in templates for row in t]
    assert metrics.entropy_bias_level(rows) == pytest.approx(0.496742, abs=1e-6)
    assert math.isnan(metrics.single_prompt_bias_level([[[0.0, 0.0]]]))
    assert math.isnan(metrics.single_prompt_bias_level([[[1.0]]]))  # one candidate: nothing to prefer


def test_a_run_recorded_before_issue_28_is_named_as_such():
    """Records whose content-free entry lacks `single_prompt` were made with each row renormalized
    first; re-aggregating them says so instead of calling the number BELIEF's."""
    base = {"id": "x", "relation": "P36", "correct": 1.0, "prompt_correct": [True], "predictions": ["paris"],
            "confidence": [0.9], "template_ids": [0], "unit": "pair"}
    old = aggregate("belief", [{**base, "content_free_bias": {"bias_level": 0.25, "candidates": 2, "unmatched": 0,
                                                               "prompts": 3}}], {"bias": "entropy"})
    assert old["definitions"]["bias"] == "entropy-rows" and old["bias_level"] == 0.25
    assert "bias_level_single_prompt" not in old
    new = aggregate("belief", [{**base, "content_free_bias": {"bias_level": 0.25, "single_prompt": 0.5,
                                                               "candidates": 2, "unmatched": 0, "prompts": 3}}],
                    {"bias": "entropy"})
    assert new["definitions"]["bias"] == "entropy"
    assert (new["bias_level"], new["bias_level_single_prompt"]) == (0.25, 0.5)
from factprobe.probes.evaluation.runner import evaluate
from factprobe.probes.scoring.requests import FillMaskRequest

TEMPLATES = {"P36": ["the capital of [X] is [Y] .", "[X] is a country , the capital city is [Y] ."],
             "P17": ["[X] is a city in [Y] .", "[X] is in the country of [Y] ."]}
FACTS = [("P36", "france", "paris"), ("P36", "germany", "berlin"), ("P36", "italy", "rome"),
         ("P17", "lyon", "france"), ("P17", "paris", "france")]
# What the method must ask with the default token, one request per template, written out by hand.
CONTENT_FREE = {"the capital of N/A is [MASK] .", "N/A is a country , the capital city is [MASK] .",
                "N/A is a city in [MASK] .", "N/A is in the country of [MASK] ."}
TOP1 = {"bias": "top1"}  # the older definition, named


def _cloze_set(path):
    lines = []
    for k, (relation, subject, gold) in enumerate(FACTS):
        prompts = [{"template": t, "template_id": j, "subject_name": subject, "text": t.replace("[X]", subject)}
                   for j, t in enumerate(TEMPLATES[relation])]
        lines.append(json.dumps({"id": f"cloze:{k}", "kind": "cloze", "split": "test", "relation": relation,
                                 "subject_label": subject, "object_label": gold, "gold": [gold],
                                 "prompts": prompts}))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from factprobe.probes.scoring.loader import load_scorer
    from scoring_models import tiny_bert

    # seed 5: a random model whose answers depend on the template (seed 0 answers "," everywhere)
    return load_scorer(f"hf-mlm:{tiny_bert(tmp_path_factory.mktemp('bert') / 'bert', seed=5)}", device="cpu")


def _top(scorer, text: str) -> str:
    [candidates] = scorer.fill_mask([FillMaskRequest(text, top_k=1)])
    return candidates[0].token


def test_bias_level_is_recomputed_from_the_models_answers(bert, tmp_path):
    probes = _cloze_set(tmp_path / "cloze.jsonl")
    before = bert.work.requests
    summary = evaluate(bert, "belief", probes, tmp_path / "run", options=TOP1)
    # 10 real prompts, and the 4 templates once each (not once per fact)
    assert bert.work.requests - before == 10 + 4
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]

    answers, free, relations = [], [], []
    for (relation, subject, _), record in zip(FACTS, records):
        for template, answer, content_free in zip(TEMPLATES[relation], record["predictions"],
                                                  record["content_free_predictions"]):
            assert answer == _top(bert, template.replace("[X]", subject).replace("[Y]", "[MASK]"))
            text = template.replace("[X]", "N/A").replace("[Y]", "[MASK]")
            assert text in CONTENT_FREE and content_free == _top(bert, text)
            answers.append(answer)
            free.append(content_free)
            relations.append(relation)
    result = summary.aggregate
    assert result["bias_level"] == bias_level(answers, free, relations)
    for relation in TEMPLATES:
        mine = [k for k, r in enumerate(relations) if r == relation]
        assert result["bias_level_by_relation"][relation] == bias_level(
            [answers[k] for k in mine], [free[k] for k in mine], [relation] * len(mine))
    # Observed on this random model: no P36 prompt is answered as its content-free version, half of
    # P17's are (its first template), so relations weigh equally: (0 + 1/2) / 2, where the prompt
    # average would be 2/10.
    assert result["bias_level_by_relation"] == {"P36": 0.0, "P17": 0.5}
    assert result["bias_level"] == 0.25
    assert result["definitions"]["bias"] == "top1"  # named where the number is
    assert json.loads((tmp_path / "run" / "aggregate.json").read_text())["bias_level"] == result["bias_level"]


def test_the_token_is_an_option_and_the_measure_can_be_turned_off(bert, tmp_path):
    probes = _cloze_set(tmp_path / "cloze.jsonl")
    evaluate(bert, "belief", probes, tmp_path / "a", options={**TOP1, "content_free_token": "a"})
    [first] = [json.loads(line) for line in (tmp_path / "a" / "items.jsonl").read_text().splitlines()[:1]]
    assert first["content_free_predictions"] == [_top(bert, "the capital of a is [MASK] ."),
                                                 _top(bert, "a is a country , the capital city is [MASK] .")]
    off = evaluate(bert, "belief", probes, tmp_path / "off", options={**TOP1, "content_free": False})
    assert off.aggregate["bias_level"] is None and off.aggregate["bias_level_by_relation"] == {}
    record = json.loads((tmp_path / "off" / "items.jsonl").read_text().splitlines()[0])
    assert "content_free_predictions" not in record and "content_free_bias" not in record
    with pytest.raises(ValueError, match="content_free_token"):
        evaluate(bert, "belief", probes, tmp_path / "bad", options={"content_free_token": " "})

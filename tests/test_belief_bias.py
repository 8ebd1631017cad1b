"""BELIEF's bias level on a masked LM by factprobe's older definition (`bias=top1`): each template
is also asked with a content-free subject, and the aggregate's bias level is recomputed here from
the model's own fill_mask answers. The paper's entropy definition (the default) is pinned in
tests/test_paper_belief.py."""

from __future__ import annotations

import json

import pytest

from factprobe.probes.metrics import bias_level
from factprobe.probes.runner import evaluate
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

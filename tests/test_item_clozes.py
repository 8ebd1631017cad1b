"""The distractor measure and its baselines ask an item's own clozes (its `clozes`, slots as the
templates mark them: [Y] the object, [X] the subject) before its relation's templates, and say
where each record's clozes came from (`cloze_source`, and the aggregate's definitions). This is
what lets a probe set carry DistFact's flawed verbalizations and their corrections (004:225-239)."""

from __future__ import annotations

import json

import pytest

from factprobe.probes.methods.clozes import cloze_definition, item_clozes
from factprobe.probes.evaluation.runner import evaluate
from factprobe.probes.scoring.loader import load_scorer
from factprobe.probes.templates import load_templates, prompt_before_object
from scoring_models import tiny_llama

TEMPLATES = load_templates()
# P36's object-final templates, as the methods asked them before items had clozes of their own
P36 = [t.text for t in TEMPLATES["P36"].object_final_clozes()]


def item(k: int, subject: str, capital: str, clozes=None) -> dict:
    out = {"id": f"distractor:F{k}", "kind": "distractor", "split": "test", "fact": f"F{k}", "relation": "P36",
           "subject": f"Q{k}", "subject_label": subject, "object": f"Q{100 + k}", "object_label": capital,
           "object_names": [capital], "gold": [capital],
           "distractors": {"random": [{"entity": "Q900", "label": "Lima", "names": ["Lima"]},
                                      {"entity": "Q901", "label": "Oslo", "names": ["Oslo"]}]}}
    if clozes is not None:
        out["clozes"] = clozes
    return out


def test_an_items_own_clozes_come_first_and_the_templates_after():
    own = item(1, "France", "Paris", ["France's capital city: [Y].", "[X] has its capital at [Y]",
                                      "[Y] is the capital of [X]."])
    found = item_clozes(own, TEMPLATES, 5)
    # the one that does not end with [Y] cannot be continued with the object: not asked
    assert found.texts == ("France's capital city: [Y].", "[X] has its capital at [Y]") and found.source == "item"
    assert found.prompts("France") == ["France's capital city:", "France has its capital at"]
    assert found.question == "France's capital city: ___."
    assert item_clozes(own, TEMPLATES, 1).texts == ("France's capital city: [Y].",)
    for fallback in (item(2, "Japan", "Tokyo"), item(2, "Japan", "Tokyo", [])):
        found = item_clozes(fallback, TEMPLATES, 2)
        assert found.texts == tuple(P36[:2]) and found.source == "templates"
        assert found.question == TEMPLATES["P36"].question()


@pytest.mark.parametrize("clozes, message", [
    ("The capital of [X] is [Y].", "distractor:F1: clozes: not a list of cloze texts"),
    (["The capital of [X] is [Y].", ""], "distractor:F1: clozes: not a list of cloze texts"),
    (["The capital of [X] is"], "distractor:F1: clozes: 'The capital of [X] is' has 0 [Y] slots (needs exactly one: "
                                "the object)"),
    (["[X], [X]: [Y]"], "distractor:F1: clozes: '[X], [X]: [Y]' has 2 [X] slots (at most one: the subject)"),
    (["The [Z] of [X] is [Y]"], "distractor:F1: clozes: 'The [Z] of [X] is [Y]' has an unknown slot [Z] (only [X] "
                                "and [Y])"),
    (["[Y] is the capital of [X]."], "distractor:F1: clozes: none of its 1 clozes ends with [Y] (the measures ask "
                                     "the model to continue the text before the object)"),
])
def test_clozes_that_cannot_be_asked_are_refused_naming_the_item(clozes, message):
    with pytest.raises(ValueError) as error:
        item_clozes(item(1, "France", "Paris", clozes), TEMPLATES, 5)
    assert str(error.value) == message


def test_the_definition_says_where_a_runs_clozes_came_from():
    assert cloze_definition([{"cloze_source": "item"}] * 2) == "item"
    assert cloze_definition([{}, {"cloze_source": "templates"}]) == "templates"  # older records: templates
    assert cloze_definition([{"cloze_source": "item"}, {}]) == {"item": 1, "templates": 1}


@pytest.fixture(scope="module")
def scorer(tmp_path_factory):
    """A 2-layer random Llama with SmolLM2's tokenizer: the prompts are what is checked here."""
    return load_scorer(f"hf:{tiny_llama(tmp_path_factory.mktemp('llama') / 'llama')}", device="cpu")


@pytest.fixture
def probes(tmp_path):
    path = tmp_path / "d.jsonl"
    items = [item(1, "France", "Paris", ["France's capital city: [Y].", "[X] has its capital at [Y]"]),
             item(2, "Japan", "Tokyo")]
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def test_the_distractor_measure_asks_the_items_clozes(scorer, probes, tmp_path):
    summary = evaluate(scorer, "distractor", probes, tmp_path / "run", options={"clozes": 2})
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "items.jsonl").read_text().splitlines())}
    france, japan = records["distractor:F1"], records["distractor:F2"]
    assert [c["cloze"] for c in france["per_cloze"]] == ["France's capital city:", "France has its capital at"]
    assert [c["cloze"] for c in japan["per_cloze"]] == [prompt_before_object(t, "Japan") for t in P36[:2]]
    assert (france["cloze_source"], japan["cloze_source"]) == ("item", "templates")
    assert summary.aggregate["definitions"] == {"cloze_source": {"item": 1, "templates": 1}}


def test_the_baselines_ask_the_items_clozes(scorer, probes, tmp_path):
    summary = evaluate(scorer, "baselines", probes, tmp_path / "run", options={"clozes": 2, "beams": 2, "n": 1})
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "items.jsonl").read_text().splitlines())}
    france, japan = records["distractor:F1"], records["distractor:F2"]
    assert france["clozes"] == ["France's capital city:", "France has its capital at"]
    assert japan["clozes"] == [prompt_before_object(t, "Japan") for t in P36[:2]]
    assert len(france["probability_per_cloze"]) == len(france["rouge_l_per_cloze"]) == 2
    assert (france["cloze_source"], japan["cloze_source"]) == ("item", "templates")
    assert summary.aggregate["definitions"]["cloze_source"] == {"item": 1, "templates": 1}

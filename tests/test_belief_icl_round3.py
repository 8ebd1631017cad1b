"""BELIEF-ICL after issue 38's items 6 and 7: the belief-icl kind asks every subject expression, as
MyriadLAMA does and as BELIEF-ICL's full-scale evaluation on it asks (000:153, 000:324); and a
BELIEF-ICL run on a cloze set (each record's answers in `prompts`) is compared by BELIEF's covered
facts, (fact, template, setting), covered when any subject expression's prompt is right (000:271,
000:286 footnote 16), not by the record's overall share."""

from __future__ import annotations

import json

import pytest

from factprobe.probes.building.facts import ProbeFact
from factprobe.probes.kinds import get_kind
from factprobe.probes.kinds.belief_icl_kind import build_belief_icl
from factprobe.probes.report import Definitions, overlap
from factprobe.probes.evaluation.runner import evaluate
from factprobe.probes.scoring.requests import Generation

# -- every subject expression ---------------------------------------------------------------------


def _fact(subject: str, obj: str, aliases: tuple[str, ...] = ()) -> ProbeFact:
    return ProbeFact(id=f"{subject}-P47-{obj}", subject=subject, relation="P47", object=obj,
                     subject_label=subject.lower(), relation_label="r", object_label=obj.lower(),
                     gold=(obj.lower(),), subject_aliases=aliases)


def test_belief_icl_asks_every_subject_expression_by_default():
    """000:153: the LLMs up to 8B get "a full-scale evaluation" on MyriadLAMA, whose prompts fill
    every template with every expression of the subject (000:324; 2.47 per subject, 000:368). A
    subject with its label and four aliases under one template: 5 items, where factprobe's
    belief-icl kind asked 3 (now `aliases_per_subject=3`)."""
    facts = [_fact("A", "O1", ("A1", "A2", "A3", "A4")), _fact("B", "O2")]
    template = {"P47": ["[X] borders [Y] ."]}
    assert get_kind("belief-icl").options().aliases_per_subject is None
    built = build_belief_icl(facts, template, shots=1)
    assert [i["prompt"] for i in built if i["subject"] == "A"] == [
        "a borders [Y] .", "A1 borders [Y] .", "A2 borders [Y] .", "A3 borders [Y] .", "A4 borders [Y] ."]
    assert [i["id"] for i in built] == ["belief-icl:A|P47:0", *[f"belief-icl:A|P47:0:{k}" for k in range(1, 5)],
                                        "belief-icl:B|P47:0"]
    older = build_belief_icl(facts, template, shots=1, aliases_per_subject=3)
    assert [i["subject_name"] for i in older] == ["a", "A1", "A2", "b"]


# -- covered facts of a cloze-shaped record --------------------------------------------------------

# Two relations, cloze items as `probeset build --kind cloze` and the MyriadLAMA import write them:
# P36 France (two names) and Japan under two templates, P30 Egypt (two names) and Kenya under one.
TEMPLATES = {"P36": ["The capital of [X] is [Y].", "[X]'s capital is [Y]."], "P30": ["[X] is located in [Y]."]}
SUBJECTS = [("F", "P36", ["France", "French Republic"], "Paris"), ("J", "P36", ["Japan"], "Tokyo"),
            ("E", "P30", ["Egypt", "Arab Republic of Egypt"], "Africa"), ("K", "P30", ["Kenya"], "Africa")]

# What each model gets right, per item and prompt (template-major, then subject name, as built):
# (zero-shot, x-template).
VERDICTS = {
    "A": {"F": [(False, True), (True, False), (True, False), (True, False)], "J": [(True, True), (False, True)],
          "E": [(True, False), (False, False)], "K": [(True, True)]},
    "B": {"F": [(True, False), (False, False), (False, False), (True, True)], "J": [(True, False), (True, False)],
          "E": [(False, False), (False, True)], "K": [(True, False)]},
}


def _cloze_items() -> list[dict]:
    items = []
    for key, relation, names, capital in SUBJECTS:
        prompts = [{"template": t, "template_id": k, "subject_name": name, "text": t.replace("[X]", name)}
                   for k, t in enumerate(TEMPLATES[relation]) for name in names]
        items.append({"id": f"cloze:{key}|{relation}", "kind": "cloze", "split": "test", "fact": f"{key}|{relation}",
                      "relation": relation, "subject": key, "subject_label": names[0], "object": f"{key}-o",
                      "object_label": capital, "gold": [capital], "unit": "pair", "prompts": prompts})
    return items


class Scripted:
    """A generator answering each question right or wrong as VERDICTS says for one model: the
    question is the prompt's last Q line; a prompt without demonstrations is zero-shot."""

    identity = "scripted"

    def __init__(self, model: str) -> None:
        self.right: dict[tuple[str, bool], str] = {}
        for item in _cloze_items():
            for prompt, verdict in zip(item["prompts"], VERDICTS[model][item["subject"]]):
                question = "Q: " + prompt["text"].replace("[Y]", "[MASK]")
                for zero_shot, correct in zip((True, False), verdict):
                    self.right[(question, zero_shot)] = item["object_label"] if correct else "nothing"

    def generate(self, requests):
        out = []
        for r in requests:
            lines = r.prompt.split("\n")
            answer = self.right[(lines[-2], len(lines) == 3)]
            out.append(Generation((answer,) * r.n, ("stop",) * r.n))
        return out


@pytest.fixture(scope="module")
def cloze_runs(tmp_path_factory) -> dict[str, list[dict]]:
    base = tmp_path_factory.mktemp("cloze-runs")
    probes = base / "cloze.jsonl"
    probes.write_text("".join(json.dumps(i) + "\n" for i in _cloze_items()))
    runs = {}
    for model in VERDICTS:
        evaluate(Scripted(model), "belief-icl", probes, base / model,
                 options={"settings": ["zero-shot", "x-template"], "shots": 1, "samples": 1})
        runs[model] = [json.loads(line) for line in (base / model / "items.jsonl").read_text().splitlines()]
    return runs


def test_the_records_hold_each_prompts_verdicts_in_the_methods_shape(cloze_runs):
    france = cloze_runs["A"][0]
    assert [(p["index"], p["template_id"], p["subject_name"]) for p in france["prompts"]] == [
        (0, 0, "France"), (1, 0, "French Republic"), (2, 1, "France"), (3, 1, "French Republic")]
    assert [tuple(p["by_setting"][s]["correct"] for s in ("zero-shot", "x-template")) for p in france["prompts"]] \
        == VERDICTS["A"]["F"]
    assert "by_setting" not in france and "prompt_correct" not in france and france["correct"] == 0.5


def test_a_cloze_records_units_are_fact_template_and_setting(cloze_runs):
    """Units (fact, template, setting): P36 F0 F1 J0 J1, P30 E0 K0, each in zero-shot (zs) and
    x-template (xt): 12. A unit is covered when one of its subject expressions' prompts is right.
      A covers F0zs (by the alias alone), F0xt, F1zs, J0zs, J0xt, J1xt | E0zs, K0zs, K0xt: 6 + 3
      B covers F0zs, F1zs (alias), F1xt (alias), J0zs, J1zs | E0xt (alias), K0zs: 5 + 2
      both F0zs, F1zs, J0zs | K0zs: 3 + 1
      sharing (asymmetric, pooled): 4 of A's 9 -> 4/9; 4 of B's 7 -> 4/7
      subsumption A->B: P36 3/6, P30 1/3 -> 5/12; B->A: P36 3/5, P30 1/2 -> 0.55
    Reading the record's share (every answer right, as before): A knows Kenya alone, B nothing:
    0.0 and n/a."""
    o = overlap(cloze_runs["A"], cloze_runs["B"])
    assert (o.shared, o.shared_items, o.both, o.only_a, o.only_b, o.neither) == (12, 4, 4, 5, 3, 0)
    assert (o.sharing_a, o.sharing_b) == (pytest.approx(4 / 9), pytest.approx(4 / 7))
    assert (o.subsumption_ab, o.subsumption_ba) == (pytest.approx(5 / 12), pytest.approx(0.55))


def test_a_cloze_records_prompts_are_units_under_per_prompt(cloze_runs):
    """--known per-prompt: each (item, prompt, setting) of the 9 prompts is a unit, 18 in all.
      A knows F idx0 xt, idx1 zs, idx2 zs, idx3 zs, J0 zs+xt, J1 xt | E0 zs, K zs+xt: 7 + 3
      B knows F idx0 zs, idx3 zs+xt, J0 zs, J1 zs | E1 xt, K zs: 5 + 2
      both F idx3 zs, J0 zs | K zs: 2 + 1
      sharing 3/10, 3/7; subsumption A->B: P36 2/7, P30 1/3 -> 13/42; B->A: P36 2/5, P30 1/2 -> 0.45"""
    o = overlap(cloze_runs["A"], cloze_runs["B"], Definitions(known="per-prompt"))
    assert (o.shared, o.both, o.only_a, o.only_b, o.neither) == (18, 3, 7, 4, 4)
    assert (o.sharing_a, o.sharing_b) == (pytest.approx(3 / 10), pytest.approx(3 / 7))
    assert (o.subsumption_ab, o.subsumption_ba) == (pytest.approx(13 / 42), pytest.approx(0.45))
    whole = overlap(cloze_runs["A"], cloze_runs["B"], Definitions(known="all-prompts", sharing="jaccard"))
    assert (whole.shared, whole.both, whole.only_a, whole.only_b) == (4, 0, 1, 0)  # A's Kenya, right everywhere

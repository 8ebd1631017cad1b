"""BELIEF / BELIEF-ICL / MyriadLAMA definitions as published (issue 20, items a-e), each against a
case worked out by hand in the comments; each test fails on the definitions factprobe used before
(fact unit, 100 draws, top-1 bias, mean coverage maximum, per-item template ids; BELIEF-ICL's
fact unit and label-only prompts).

a. unit: BELIEF's T is the subject-relation pair (`build_cloze(unit="pair")`, the default).
b. Acc@1 over N = 50,000 one-prompt draws (`acc_draws`).
c. bias level 1 - H/H_max of the content-free distribution over the candidate objects ("N/A", ""
   and "?" ensembled, averaged over templates; `bias=entropy`).
d. maximum coverage with the best subject expression (`coverage_maximum=best-subject`).
e. MyriadLAMA import: one id per template across items.
f. BELIEF-ICL: one item per (pair, template, subject name), the pair its unit (issue 28 a).
"""

from __future__ import annotations

import json
import math

import pytest

from factprobe.probes import measures as metrics
from factprobe.probes.evaluation.aggregate import aggregate
from factprobe.probes.kinds.belief_icl_kind import build_belief_icl
from factprobe.probes.kinds.cloze_kind import build_cloze
from factprobe.probes.building.facts import ProbeFact
from factprobe.probes.formats.importers import import_items
from factprobe.probes.methods import MethodContext
from factprobe.probes.methods.belief import Belief
from factprobe.probes.methods.belief_icl import BeliefICL
from factprobe.probes.evaluation.runner import evaluate
from factprobe.probes.scoring.requests import Generation, MaskCandidate


class WordTokenizer:
    """TableScorer's tokenizer: one token per word, none unknown (what the `belief` method's
    single-token objects and the cloze kind's --single-token ask of a tokenizer)."""

    unk_token_id = None

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict:
        return {"input_ids": list(range(len(text.split())))}


class TableScorer:
    """A masked LM written as a table: text (with [MASK]) -> {token: probability}; unknown texts
    answer {"the": 1.0}. It answers top_k entries, most probable first (ties in table order), and
    records every request. Its tokenizer reads a name of one word as one token."""

    identity = "table-mlm"
    tokenizer = WordTokenizer()

    def __init__(self, table: dict[str, dict[str, float]]) -> None:
        self.table, self.asked = table, []
        self.ids: dict[str, int] = {}

    def fill_mask(self, requests):
        out = []
        for request in requests:
            self.asked.append((request.text, request.top_k))
            row = self.table.get(request.text, {"the": 1.0})
            ranked = sorted(row.items(), key=lambda kv: -kv[1])[:request.top_k]
            out.append([MaskCandidate(token, self.ids.setdefault(token, len(self.ids)), prob)
                        for token, prob in ranked])
        return out


def _fact(subject: str, obj: str, gold: tuple[str, ...], relation: str = "P47") -> ProbeFact:
    return ProbeFact(id=f"{subject}-{relation}-{obj}", subject=subject, relation=relation, object=obj,
                     subject_label=subject.lower(), relation_label="r", object_label=obj.lower(), gold=gold)


def _write(path, items):
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


# -- a. the unit: subject-relation pairs --------------------------------------------------------

# Subject A has two true objects of P47 (o1, o2), B one (o3). Gold names every true object.
FACTS = [_fact("A", "O1", ("o1", "o2")), _fact("A", "O2", ("o1", "o2")), _fact("B", "O3", ("o3",))]
ONE_TEMPLATE = {"P47": ["[X] borders [Y] ."]}
# The model answers o1 for A (right: o1 is gold for both of A's facts) and o1 for B (wrong).
ANSWERS = {"a borders [MASK] .": {"o1": 0.9, "the": 0.1}, "b borders [MASK] .": {"o1": 0.8, "the": 0.2}}


def test_pair_unit_builds_one_item_per_subject_relation_pair():
    pairs = build_cloze(FACTS, ONE_TEMPLATE)  # the default unit is the paper's
    assert [(i["id"], i["unit"], i["facts"], i["objects"]) for i in pairs] == [
        ("cloze:A|P47", "pair", ["A-P47-O1", "A-P47-O2"], ["O1", "O2"]),
        ("cloze:B|P47", "pair", ["B-P47-O3"], ["O3"])]
    assert pairs[0]["gold"] == ["o1", "o2"] and pairs[0]["fact"] == "A|P47"
    facts = build_cloze(FACTS, ONE_TEMPLATE, unit="fact")  # the older unit, named
    assert [i["id"] for i in facts] == ["cloze:A-P47-O1", "cloze:A-P47-O2", "cloze:B-P47-O3"]
    with pytest.raises(ValueError, match="unit"):
        build_cloze(FACTS, ONE_TEMPLATE, unit="triple")


@pytest.mark.parametrize("unit, expected", [
    # pairs: A right, B wrong -> 1/2.  facts: A-o1 right, A-o2 right (same answer, same gold), B wrong -> 2/3.
    ("pair", 1 / 2), ("fact", 2 / 3)])
def test_pair_unit_gives_half_where_the_fact_unit_gives_two_thirds(tmp_path, unit, expected):
    probes = _write(tmp_path / "cloze.jsonl", build_cloze(FACTS, ONE_TEMPLATE, unit=unit))
    summary = evaluate(TableScorer(ANSWERS), "belief", probes, tmp_path / "run", options={"content_free": False})
    result = summary.aggregate
    # One prompt per item: every draw scores the same, so Acc@1 is exact and its SD 0.
    assert result["acc_at_1"]["mean"] == pytest.approx(expected)
    assert result["acc_at_1"]["sd"] == pytest.approx(0, abs=1e-12)
    assert result["accuracy"] == pytest.approx(expected)
    assert result["coverage"] == pytest.approx({"average": expected, "maximum": expected, "oracle": expected})
    # Ovconf with one bin per prompt: mean confidence - accuracy.
    confidence = [0.9, 0.8] if unit == "pair" else [0.9, 0.9, 0.8]
    assert result["overconfidence"] == pytest.approx(sum(confidence) / len(confidence) - expected)
    assert result["definitions"]["unit"] == unit


# -- b. Acc@1 over 50,000 draws ---------------------------------------------------------------------


def test_acc_at_1_uses_the_papers_50000_draws_and_the_option_changes_it(tmp_path):
    items = build_cloze(FACTS, {"P47": ["[X] borders [Y] .", "[X] is next to [Y] ."]})
    probes = _write(tmp_path / "cloze.jsonl", items)
    paper = evaluate(TableScorer(ANSWERS), "belief", probes, tmp_path / "paper", options={"content_free": False})
    assert paper.aggregate["acc_at_1"]["draws"] == 50_000 == paper.aggregate["definitions"]["acc_draws"]
    assert json.loads((tmp_path / "paper" / "run.json").read_text())["options"]["acc_draws"] == 50_000
    # Per pair: A right on its first template only ("is next to" answers "the"), B never right.
    # Expected Acc@1 = (1/2 + 0) / 2 = 1/4; each draw scores 1/2 or 0 with probability 1/2 each,
    # so over 50,000 draws the mean is 1/4 within a few thousandths and the SD is 1/4.
    assert paper.aggregate["acc_at_1"]["mean"] == pytest.approx(0.25, abs=0.005)
    assert paper.aggregate["acc_at_1"]["sd"] == pytest.approx(0.25, abs=0.005)
    older = evaluate(TableScorer(ANSWERS), "belief", probes, tmp_path / "older",
                     options={"content_free": False, "acc_draws": 100})
    assert older.aggregate["acc_at_1"]["draws"] == 100 == older.aggregate["definitions"]["acc_draws"]
    with pytest.raises(ValueError, match="acc_draws"):
        Belief(MethodContext({"acc_draws": 0}))


def test_acc_at_1_draws_in_bounded_chunks_and_stays_seeded():
    # 50,000 draws over 200 units draw 1e7 picks: more than one chunk of rows.
    correct = [[True, False]] * 200
    first, again = metrics.acc_at_1(correct, seed=4), metrics.acc_at_1(correct, seed=4)
    assert first == again and first.draws == 50_000
    # Each draw is a Binomial(200, 1/2) / 200: mean 1/2, SD sqrt(1/4 / 200) = 0.035355.
    assert first.mean == pytest.approx(0.5, abs=0.001) and first.sd == pytest.approx(math.sqrt(0.25 / 200), rel=0.02)


# -- c. bias level: 1 - H/H_max of the content-free distribution ---------------------------------------


def test_entropy_bias_level_by_hand():
    # uniform over 4 candidates: H = log 4 = H_max -> 0; one-hot: H = 0 -> 1
    assert metrics.entropy_bias_level([[0.25, 0.25, 0.25, 0.25]]) == pytest.approx(0.0, abs=1e-12)
    assert metrics.entropy_bias_level([[0.0, 1.0, 0.0, 0.0]]) == 1.0
    # Rows are averaged, then normalized (seed 000 line 194): mean [0.25, 0.15] -> P = [5/8, 3/8];
    # H = -(5/8 ln 5/8 + 3/8 ln 3/8) = 0.661563; H_max = ln 2 = 0.693147; 1 - H/H_max = 0.045566.
    # (Rows of equal mass: renormalizing each first would give the same; see test_belief_bias.py.)
    expected = 1 - -(5 / 8 * math.log(5 / 8) + 3 / 8 * math.log(3 / 8)) / math.log(2)
    assert expected == pytest.approx(0.045566, abs=1e-6)
    assert metrics.entropy_bias_level([[0.3, 0.1], [0.2, 0.2]]) == pytest.approx(expected, abs=1e-12)
    assert math.isnan(metrics.entropy_bias_level([[1.0]]))  # one candidate: nothing to prefer
    with pytest.raises(ValueError):
        metrics.entropy_bias_level([[0.5, 0.5], [1.0]])
    with pytest.raises(ValueError):
        metrics.entropy_bias_level([[0.0, 0.0]])


# Two relations, two templates each. The candidates are the relations' gold names.
BIAS_TEMPLATES = {"P36": ["the capital of [X] is [Y] .", "[X] has its capital at [Y] ."],
                  "P17": ["[X] is in [Y] .", "[X] lies in [Y] ."]}
BIAS_FACTS = [_fact("France", "Paris", ("paris",), "P36"), _fact("Italy", "Rome", ("rome",), "P36"),
              _fact("Lyon", "France", ("france",), "P17"), _fact("Milan", "Italy", ("italy",), "P17")]
CONTENT_FREE = ("N/A", "", "?")


def _bias_table() -> dict[str, dict[str, float]]:
    table = {}
    # P36: every content-free prompt puts equal mass on paris and rome (and some on "the", which is
    # no candidate and is dropped): restricted to {paris, rome} each is [1/2, 1/2], so the mean is
    # uniform: H = ln 2 = H_max -> bias 0.  The real prompts answer paris: with "paris" listed
    # first, the content-free top-1 is "paris" too (a tie, table order), so the older top-1
    # definition calls France's prompts biased.
    for template in BIAS_TEMPLATES["P36"]:
        for subject in CONTENT_FREE:
            table[template.replace("[X]", subject).replace("[Y]", "[MASK]")] = {"paris": 0.4, "rome": 0.4, "the": 0.2}
        for subject in ("france", "italy"):
            table[template.replace("[X]", subject).replace("[Y]", "[MASK]")] = {"paris": 0.7, "the": 0.3}
    # P17: template 1 puts 0.9 on "france" for all three subjects; template 2 gives "N/A" 0.6 / 0.2,
    # "" 0.3 / 0.3 and "?" 0.5 / 0 over (france, italy). The paper averages the distributions, then
    # normalizes over the candidates (seed 000 line 194): france 0.9 * 3 + 0.6 + 0.3 + 0.5 = 4.1,
    # italy 0.5, so P = [41/46, 5/46]; H = 0.343780; 1 - H/ln 2 = 0.504031. (Renormalizing each row
    # first, as factprobe did before issue 28: [7/8, 1/8] -> 0.456436.)
    # Single-prompt, per template: t1 [1, 0] -> 1; t2 [1.4, 0.5] -> [14/19, 5/19], H = 0.576334,
    # 1 - H/ln 2 = 0.168526; mean 0.584263.
    first, second = BIAS_TEMPLATES["P17"]
    for subject in CONTENT_FREE:
        table[first.replace("[X]", subject).replace("[Y]", "[MASK]")] = {"france": 0.9, "the": 0.1}
    for subject, row in zip(CONTENT_FREE, ({"france": 0.6, "italy": 0.2, "the": 0.2},
                                           {"france": 0.3, "italy": 0.3, "the": 0.4},
                                           {"france": 0.5, "the": 0.5})):
        table[second.replace("[X]", subject).replace("[Y]", "[MASK]")] = row
    return table


P17_BIAS = 1 - -(41 / 46 * math.log(41 / 46) + 5 / 46 * math.log(5 / 46)) / math.log(2)
P17_SINGLE = (1 + 1 - -(14 / 19 * math.log(14 / 19) + 5 / 19 * math.log(5 / 19)) / math.log(2)) / 2


def test_entropy_bias_over_candidates_ensembles_three_content_free_subjects_and_templates(tmp_path):
    assert P17_BIAS == pytest.approx(0.504031, abs=1e-6) and P17_SINGLE == pytest.approx(0.584263, abs=1e-6)
    probes = _write(tmp_path / "cloze.jsonl", build_cloze(BIAS_FACTS, BIAS_TEMPLATES))
    scorer = TableScorer(_bias_table())
    summary = evaluate(scorer, "belief", probes, tmp_path / "run", batch=1)
    result = summary.aggregate
    assert result["bias_level_by_relation"] == pytest.approx({"P36": 0.0, "P17": P17_BIAS}, abs=1e-12)
    assert result["bias_level"] == pytest.approx(P17_BIAS / 2, abs=1e-12)  # relations weigh equally
    assert result["bias_level_single_prompt"] == pytest.approx(P17_SINGLE / 2, abs=1e-12)  # P36's templates: 0
    assert result["definitions"]["bias"] == "entropy"
    assert json.loads((tmp_path / "run" / "run.json").read_text())["options"]["bias"] == "entropy"
    # Asked: every template with "N/A", "" and "?", the whole vocabulary, once per relation
    # although the run went one item per batch.
    content_free = [text for text, top_k in scorer.asked if top_k > 1]
    assert sorted(content_free) == sorted(t.replace("[X]", s).replace("[Y]", "[MASK]")
                                          for ts in BIAS_TEMPLATES.values() for t in ts for s in CONTENT_FREE)
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert records[2]["content_free_bias"] == {"bias_level": pytest.approx(P17_BIAS),
                                               "single_prompt": pytest.approx(P17_SINGLE), "candidates": 2,
                                               "unmatched": 0, "prompts": 6}


def test_a_uniform_content_free_distribution_is_bias_0_where_the_older_top1_share_says_1(tmp_path):
    facts = [f for f in BIAS_FACTS if f.relation == "P36"][:1]  # France, answered "paris"
    probes = _write(tmp_path / "cloze.jsonl", build_cloze(facts, BIAS_TEMPLATES))
    paper = evaluate(TableScorer(_bias_table()), "belief", probes, tmp_path / "paper")
    older = evaluate(TableScorer(_bias_table()), "belief", probes, tmp_path / "older", options={"bias": "top1"})
    # Only one gold name (paris) here: one candidate, no entropy to speak of -> None, left out.
    assert paper.aggregate["bias_level"] is None
    # With the relation's candidates from the whole probe set (France and Italy), P36 is uniform -> 0.
    both = _write(tmp_path / "both.jsonl", build_cloze([f for f in BIAS_FACTS if f.relation == "P36"],
                                                       BIAS_TEMPLATES))
    paper = evaluate(TableScorer(_bias_table()), "belief", both, tmp_path / "paper-both", limit=1)
    assert paper.aggregate["bias_level"] == pytest.approx(0.0, abs=1e-12)
    # The older definition: both of France's prompts answer "paris", as their "N/A" versions do -> 1.
    assert older.aggregate["bias_level"] == 1.0 and older.aggregate["definitions"]["bias"] == "top1"


def test_bias_options_are_checked():
    assert Belief(MethodContext({})).options["content_free_subjects"] == ["N/A", "", "?"]
    assert Belief(MethodContext({"content_free_subjects": "N/A"})).options["content_free_subjects"] == ["N/A"]
    for bad, line in (({"bias": "kl"}, "option bias: 'kl' is not one of entropy, top1"),
                      ({"content_free_subjects": []}, "option content_free_subjects: give at least 1 value(s)"),
                      ({"content_free_subjects": [["N/A"]]}, "option content_free_subjects: expected a list of values, "
                                                             "got [['N/A']]"),
                      ({"coverage_maximum": "max"}, "option coverage_maximum: 'max' is not one of best-subject, mean"),
                      ({"content_free_token": " "}, "option content_free_token: a non-empty text, got ' '")):
        with pytest.raises(ValueError) as refused:
            Belief(MethodContext(bad))
        assert str(refused.value) == f"method belief: {line}"


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from factprobe.probes.scoring.loader import load_scorer
    from scoring_models import tiny_bert

    return load_scorer(f"hf-mlm:{tiny_bert(tmp_path_factory.mktemp('bert') / 'bert', seed=5)}", device="cpu")


def test_entropy_bias_on_a_masked_lm_is_recomputed_from_its_whole_distribution(bert, tmp_path):
    from factprobe.probes.scoring.requests import FillMaskRequest

    probes = _write(tmp_path / "cloze.jsonl", build_cloze(BIAS_FACTS, BIAS_TEMPLATES))
    result = evaluate(bert, "belief", probes, tmp_path / "run").aggregate
    def level(rows: list[list[float]]) -> float:
        """The paper's: the distributions averaged, then normalized over the candidates."""
        p = [sum(r[k] for r in rows) for k in range(2)]
        p = [x / sum(p) for x in p]
        return 1 + sum(x * math.log(x) for x in p) / math.log(2)

    singles = []
    for relation, candidates in (("P36", ["paris", "rome"]), ("P17", ["france", "italy"])):
        rows, per_template = [], []
        for template in BIAS_TEMPLATES[relation]:
            mine = []
            for subject in CONTENT_FREE:
                text = template.replace("[X]", subject).replace("[Y]", "[MASK]")
                [answer] = bert.fill_mask([FillMaskRequest(text, top_k=22)])  # the tiny vocabulary is 22 words
                probs = {c.token: c.prob for c in answer}
                mine.append([probs[c] for c in candidates])
            rows += mine
            per_template.append(level(mine))
        assert result["bias_level_by_relation"][relation] == pytest.approx(level(rows), abs=1e-6)
        singles.append(sum(per_template) / len(per_template))
    assert result["bias_level_single_prompt"] == pytest.approx(sum(singles) / 2, abs=1e-6)


# -- d. maximum coverage with the best subject expression ------------------------------------------


def test_coverage_maximum_selects_the_best_subject_expression():
    # One pair, one template, three subject expressions; only the second is answered right.
    # best-subject: the template's score is 1 (its best prompt) -> maximum 1.0.
    # mean (older): 1/3 -> 0.333.  average 1/3 and oracle 1 either way.
    correct, templates = [[False, True, False]], [[0, 0, 0]]
    assert metrics.coverage(correct, templates, ["P36"]) == metrics.Coverage(
        average=pytest.approx(1 / 3), maximum=1.0, oracle=1.0)
    assert metrics.coverage(correct, templates, ["P36"], maximum="mean").maximum == pytest.approx(1 / 3)
    records = [{"id": "x", "relation": "P36", "correct": 1 / 3, "prompt_correct": [False, True, False],
                "predictions": ["a", "paris", "b"], "confidence": [0.5, 0.5, 0.5], "template_ids": [0, 0, 0],
                "unit": "pair"}]
    assert aggregate("belief", records)["coverage"]["maximum"] == 1.0
    older = aggregate("belief", records, {"coverage_maximum": "mean"})
    assert older["coverage"]["maximum"] == pytest.approx(1 / 3)
    assert older["definitions"]["coverage_maximum"] == "mean"


# -- e. MyriadLAMA import: one id per template across items ------------------------------------------

T1, T2, T3 = "The capital of [X] is [Y].", "[X]'s capital is [Y].", "[Y] is the capital of [X]."


def _myriad_rows():
    # u1 uses T1 then T2; u2 uses T2, T3, then T1 (another order, and a template u1 lacks).
    rows = [("u1", "France", "Paris", T1), ("u1", "France", "Paris", T2),
            ("u2", "Italy", "Rome", T2), ("u2", "Italy", "Rome", T3), ("u2", "Italy", "Rome", T1)]
    return [{"uuid": u, "rel_uri": "P36", "sub_ent": s, "obj_ents": [o], "obj_aliases": [], "template": t}
            for u, s, o, t in rows]


def test_myriadlama_template_ids_are_shared_across_items(tmp_path):
    path = _write(tmp_path / "myriad.jsonl", _myriad_rows())
    items, _ = import_items("myriadlama", [path])
    # Ids by first use in the relation: T1 = 0, T2 = 1, T3 = 2 (before: per item, T2 was 1 in u1, 0 in u2).
    assert [[(p["template"], p["template_id"]) for p in i["prompts"]] for i in items] == [
        [(T1, 0), (T2, 1)], [(T2, 1), (T3, 2), (T1, 0)]]
    assert {i["unit"] for i in items} == {"pair"}  # a MyriadLAMA uuid is a subject-relation pair
    # Coverage on the imported items: both pairs are right with T1 only.
    # Shared ids: T1 scores (1 + 1) / 2 = 1 -> maximum 1.0. With the per-item ids, id 0 would be T1
    # for u1 (right) and T2 for u2 (wrong): 1/2, and id 1 likewise 1/2 -> maximum 0.5.
    correct = [[p["template"] == T1 for p in i["prompts"]] for i in items]
    ids = [[p["template_id"] for p in i["prompts"]] for i in items]
    assert metrics.coverage(correct, ids, ["P36", "P36"]).maximum == 1.0


# -- BELIEF-ICL: the subject-relation pair and its subject expressions --------------------------------
# "We use the same N as in §2.2" (000_d5e47173cc9830b1.txt:102): BELIEF-ICL's unit is BELIEF's
# subject-relation pair t in T (:60), whose prompts P_t are its templates filled with its subject
# expressions, label and aliases (:58, "varied relational templates and entity expressions").


def _aka(subject: str, obj: str, gold: tuple[str, ...], aliases: tuple[str, ...] = ()) -> ProbeFact:
    return ProbeFact(id=f"{subject}-P47-{obj}", subject=subject, relation="P47", object=obj,
                     subject_label=subject.lower(), relation_label="r", object_label=obj.lower(), gold=gold,
                     subject_aliases=aliases)


# A borders o1 and o2 (two facts, one pair) and is also called "alpha"; B borders o3, C borders o4.
ICL_FACTS = [_aka("A", "O1", ("o1", "o2"), ("alpha",)), _aka("A", "O2", ("o1", "o2"), ("alpha",)),
             _aka("B", "O3", ("o3",)), _aka("C", "O4", ("o4",))]


def test_belief_icl_items_are_pairs_times_templates_times_subject_names():
    items = build_belief_icl(ICL_FACTS, ONE_TEMPLATE, shots=1, seed=0)
    assert [(i["id"], i["fact"], i["unit"], i["subject_name"], i["prompt"], i["gold"]) for i in items] == [
        ("belief-icl:A|P47:0", "A|P47", "pair", "a", "a borders [Y] .", ["o1", "o2"]),
        ("belief-icl:A|P47:0:1", "A|P47", "pair", "alpha", "alpha borders [Y] .", ["o1", "o2"]),
        ("belief-icl:B|P47:0", "B|P47", "pair", "b", "b borders [Y] .", ["o3"]),
        ("belief-icl:C|P47:0", "C|P47", "pair", "c", "c borders [Y] .", ["o4"])]
    assert (items[0]["facts"], items[0]["objects"], items[0]["object_labels"]) == (
        ["A-P47-O1", "A-P47-O2"], ["O1", "O2"], ["o1", "o2"])
    # one draw of demonstrations per (pair, template), shared by its subject names; never the subject's own
    assert items[0]["demonstrations"] == items[1]["demonstrations"]
    for item in items:
        for setting in ("x-random", "x-relation", "x-template"):
            [demo] = item["demonstrations"][setting]
            assert demo["fact"] != item["fact"] and demo["fact"] in {"A|P47", "B|P47", "C|P47"}
    # aliases_per_subject=1: the label only
    assert [i["id"] for i in build_belief_icl(ICL_FACTS, ONE_TEMPLATE, aliases_per_subject=1)] == [
        "belief-icl:A|P47:0", "belief-icl:B|P47:0", "belief-icl:C|P47:0"]
    # the unit factprobe used before, by name: one item per fact
    facts = build_belief_icl(ICL_FACTS, ONE_TEMPLATE, unit="fact", aliases_per_subject=1)
    assert [(i["id"], i["fact"], i["unit"], i["gold"]) for i in facts] == [
        ("belief-icl:A-P47-O1:0", "A-P47-O1", "fact", ["o1", "o2"]),
        ("belief-icl:A-P47-O2:0", "A-P47-O2", "fact", ["o1", "o2"]),
        ("belief-icl:B-P47-O3:0", "B-P47-O3", "fact", ["o3"]), ("belief-icl:C-P47-O4:0", "C-P47-O4", "fact", ["o4"])]
    with pytest.raises(ValueError, match="unit"):
        build_belief_icl(ICL_FACTS, ONE_TEMPLATE, unit="triple")


class LineScorer:
    """A causal LM written as a table: the last question's subject -> its answer ("none" for
    others), the same for greedy and sampled answers."""

    identity = "table-causal"

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers, self.prompts = answers, []

    def generate(self, requests):
        out = []
        for request in requests:
            self.prompts.append(request.prompt)
            question = request.prompt.split("\nQ: ")[-1]
            answer = next((a for s, a in self.answers.items() if question.startswith(f"{s} borders")), "none")
            out.append(Generation((answer,) * request.n, ("stop",) * request.n))
        return out


@pytest.mark.parametrize("unit, expected, items", [
    # pairs: A right (o1 is gold for A), B and C wrong -> 1/3.  facts: both of A's facts right -> 2/4.
    ("pair", 1 / 3, 3), ("fact", 2 / 4, 4)])
def test_belief_icl_pair_unit_gives_a_third_where_the_fact_unit_gives_a_half(tmp_path, unit, expected, items):
    built = build_belief_icl(ICL_FACTS, ONE_TEMPLATE, shots=0, unit=unit, aliases_per_subject=1)
    probes = _write(tmp_path / "icl.jsonl", built)
    scorer = LineScorer({"a": "o1", "b": "o1", "c": "o1"})
    result = evaluate(scorer, "belief-icl", probes, tmp_path / "run",
                      options={"settings": ["zero-shot"], "samples": 2}).aggregate
    zero = result["by_setting"]["zero-shot"]
    assert zero["items"] == items and zero["accuracy"] == pytest.approx(expected)
    # one prompt per unit: every draw scores the same
    assert zero["acc_at_1"]["mean"] == pytest.approx(expected) and zero["acc_at_1"]["sd"] == pytest.approx(0, abs=1e-12)
    assert result["definitions"]["unit"] == unit


def test_belief_icl_asks_every_subject_name_and_draws_one_prompt_per_pair(tmp_path):
    probes = _write(tmp_path / "icl.jsonl", build_belief_icl(ICL_FACTS, ONE_TEMPLATE, shots=0))
    # A is right under its label and wrong under "alpha"; B right; C wrong.
    scorer = LineScorer({"a": "o2", "alpha": "o9", "b": "o3"})
    result = evaluate(scorer, "belief-icl", probes, tmp_path / "run",
                      options={"settings": ["zero-shot"], "samples": 1, "acc_draws": 50_000}).aggregate
    assert [p.split("\nQ: ")[-1] for p in scorer.prompts[::2]] == [
        "a borders [MASK] .\nA:", "alpha borders [MASK] .\nA:", "b borders [MASK] .\nA:", "c borders [MASK] .\nA:"]
    zero = result["by_setting"]["zero-shot"]
    assert zero["accuracy"] == pytest.approx(2 / 4)  # per prompt
    # Acc@1 draws one of each pair's prompts: A 1/2, B 1, C 0 -> expected (1/2 + 1 + 0) / 3 = 1/2,
    # each draw 1/3 or 2/3 with probability 1/2: SD 1/6.
    assert zero["acc_at_1"]["mean"] == pytest.approx(0.5, abs=0.005)
    assert zero["acc_at_1"]["sd"] == pytest.approx(1 / 6, abs=0.003)
    # Consist over each pair's prompt pairs: A's two answers differ (0), B and C have one prompt each
    assert zero["consistency"] == 0.0
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert [(r["fact"], r["unit"], r["subject_name"]) for r in records] == [
        ("A|P47", "pair", "a"), ("A|P47", "pair", "alpha"), ("B|P47", "pair", "b"), ("C|P47", "pair", "c")]


def test_belief_icl_builds_four_demonstrations_by_default(tmp_path):
    # "We focus on examples where X equals 4, which is the primary setting used in our work"
    # (000_d5e47173cc9830b1.txt:519: 4-random, 4-relation, 4-template); KDF keeps its 5.
    from factprobe.cli.build_options import merged_options
    from factprobe.probes.kinds import get_kind

    assert get_kind("belief-icl").options().shots == 4 and get_kind("kdf").options().shots == 5
    assert merged_options()["shots"].defaults == {"kdf": 5, "belief-icl": 4}
    facts = [_aka(s, f"O{s}", (f"o{s}",)) for s in "ABCDEF"]  # five other pairs for each
    items = get_kind("belief-icl")().build(_Context(), facts, get_kind("belief-icl").options(manual_only=True))
    assert {len(i["demonstrations"][s]) for i in items for s in ("x-random", "x-relation", "x-template")} == {4}


class _Context:
    """What the belief-icl kind reads of a build: the selection's seed, the cloze texts and each
    pair's true objects (none besides the selected facts here)."""

    selection = type("Selection", (), {"seed": 0})()

    @staticmethod
    def cloze_texts(options, relations):
        return ONE_TEMPLATE

    @staticmethod
    def true_statements(subject, relation):
        return []


def test_belief_icl_names_its_bias_and_draws():
    method = BeliefICL(MethodContext({}))
    assert method.options["bias"] == "top1" and method.options["acc_draws"] == 50_000
    with pytest.raises(ValueError, match="top1"):
        BeliefICL(MethodContext({"bias": "entropy"}))
    record = {"id": "F:0", "fact": "F", "relation": "P36", "bucket": None, "template_id": 0, "correct": 1.0,
              "by_setting": {"zero-shot": {"prediction": "Paris", "correct": True, "confidence": 1.0}}}
    result = aggregate("belief-icl", [record], {"acc_draws": 7})
    assert result["by_setting"]["zero-shot"]["acc_at_1"]["draws"] == 7
    # a record without a unit comes from a set built before items said so: per fact
    # (BELIEF-ICL's own sampling definitions are tested in tests/test_belief_icl.py)
    named = ("unit", "acc_draws", "bias", "coverage_maximum", "max_tokens", "ovconf_bins")
    assert {k: result["definitions"][k] for k in named} == {
        "unit": "fact", "acc_draws": 7, "bias": "top1", "coverage_maximum": None, "max_tokens": None,
        "ovconf_bins": "descending"}
    assert aggregate("belief-icl", [{**record, "unit": "pair"}])["definitions"]["unit"] == "pair"


def test_report_names_the_definitions_beside_the_belief_numbers(tmp_path):
    from factprobe.probes.report import build_document, load_runs, to_markdown

    probes = _write(tmp_path / "cloze.jsonl", build_cloze(BIAS_FACTS, BIAS_TEMPLATES))
    evaluate(TableScorer(_bias_table()), "belief", probes, tmp_path / "run", options={"acc_draws": 100})
    text = to_markdown(build_document(load_runs([tmp_path / "run"]), "t"))
    assert "unit pair: subject-relation pair (BELIEF's)" in text
    assert "Acc@1 over 100 one-prompt draws (BELIEF uses 50000)" in text
    assert "bias=entropy: 1 - H/H_max" in text and "coverage_maximum=best-subject" in text
    assert "Bias level" in text  # a column of the BELIEF measures table

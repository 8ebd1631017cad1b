"""Issue 20 g and h: the papers' definitions, each worked out by hand here, each a number the
code before issue 20 did not produce.

g. IC-LKE (Wu et al. 2024) compares what two models know per template and ICL setting, relation
   by relation, and averages over relations; factprobe used to call a fact known only when its
   `correct` was 1.0 (right on every prompt, in every setting) and pooled the items, and its
   sharing rate was a Jaccard index. Defaults now: `--known per-template`.
   Issue 28 c: the sharing rate is BELIEF's (seed 000 = ../shared/papers/000_d5e47173cc9830b1.txt,
   line 271), asymmetric: the facts both models cover as a share of EACH model's covered facts.
   IC-LKE has none; factprobe's `probed` (its former default) and `jaccard` are named options.
h. DistFact (Ammar Khodja et al. 2025) scores the probability baseline as the sum of P over every
   name of the object, averaged over the clozes (factprobe scored the label on one cloze), and
   takes Precision@n and ROUGE-L from beam search's top continuations (factprobe sampled).
   Issue 28 i: that sum has no end-of-sequence token (seed 004 =
   ../shared/papers/004_9e1422d598bbbe4c.txt, Table 2, line 204), where the distractor measure's
   plausibility has one (line 85); factprobe appended it, now `probability_eos=true`.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.probes import measures as metrics
from factprobe.probes.report import Definitions, overlap

OLD = Definitions(known="all-prompts", sharing="jaccard")

# ---------------------------------------------------------------------------------------------
# g. BELIEF-ICL: one record per (fact, template), a verdict per setting (zs: zero-shot, xt:
# x-template). P36 has facts f1, f2 under templates t1, t2; P17 has f3 under t1.
ICL_VERDICTS = {  # item -> relation, A's (zs, xt), B's (zs, xt)
    "f1:t1": ("P36", (True, True), (True, False)),
    "f1:t2": ("P36", (True, False), (True, True)),
    "f2:t1": ("P36", (False, True), (False, True)),
    "f2:t2": ("P36", (False, False), (True, False)),
    "f3:t1": ("P17", (True, False), (True, True)),
}


def icl_records(side: int) -> list[dict]:
    records = []
    for item, (relation, *runs) in ICL_VERDICTS.items():
        zs, xt = runs[side]
        records.append({"id": item, "fact": item.split(":")[0], "relation": relation,
                        "by_setting": {"zero-shot": {"correct": zs}, "x-template": {"correct": xt}},
                        "correct": (zs + xt) / 2})
    return records


# Units are (item, setting). P36: A knows f1t1 zs+xt, f1t2 zs, f2t1 xt (4); B knows f1t1 zs, f1t2
# zs+xt, f2t1 xt, f2t2 zs (5); both f1t1 zs, f1t2 zs, f2t1 xt (3) of 8 units.
# P17: A knows f3 zs (1); B knows f3 zs+xt (2); both 1 of 2 units.
#   subsumption A->B: P36 3/4, P17 1/1 -> mean 0.875
#   subsumption B->A: P36 3/5, P17 1/2 -> mean 0.55
#   sharing probed:   P36 3/8, P17 1/2 -> mean 0.4375
#   sharing jaccard:  P36 3/(4+5-3) = 1/2, P17 1/(1+2-1) = 1/2 -> mean 0.5
#   sharing asymmetric (BELIEF's, pooled): both 4 of A's 5 -> 0.8, of B's 7 -> 4/7
# The old rule: only f1:t1 (A) and f1:t2, f3:t1 (B) are right in every setting, so nothing is
# known by both and every rate is 0.
ICL_EXPECTED = {"subsumption_ab": 0.875, "subsumption_ba": 0.55, "sharing_a": 0.8, "sharing_b": 4 / 7}


def test_subsumption_and_sharing_per_template_and_setting_averaged_per_relation():
    o = overlap(icl_records(0), icl_records(1))
    assert o.definitions == Definitions("per-template", "asymmetric")  # the papers' by default
    assert o.subsumption_ab == pytest.approx(ICL_EXPECTED["subsumption_ab"])
    assert o.subsumption_ba == pytest.approx(ICL_EXPECTED["subsumption_ba"])
    assert (o.sharing_a, o.sharing_b) == (pytest.approx(0.8), pytest.approx(4 / 7))
    assert o.sharing is None  # no one symmetric rate
    # 10 units of 5 items; both 3 + 1; A 5, B 7, either 8.
    assert (o.shared, o.shared_items, o.both, o.only_a, o.only_b, o.neither) == (10, 5, 4, 1, 3, 2)
    probed = overlap(icl_records(0), icl_records(1), Definitions("per-template", "probed"))
    assert probed.sharing == pytest.approx(0.4375)
    jaccard = overlap(icl_records(0), icl_records(1), Definitions("per-template", "jaccard"))
    assert jaccard.sharing == pytest.approx(0.5)
    old = overlap(icl_records(0), icl_records(1), OLD)
    assert (old.subsumption_ab, old.subsumption_ba, old.sharing) == (0.0, 0.0, 0.0)
    assert (old.shared, old.both, old.only_a, old.only_b) == (5, 0, 1, 2)


def belief_records(side: int) -> list[dict]:
    """BELIEF: one record per fact, a verdict per prompt; g1 has two prompts (subject aliases)
    under template t1."""
    rows = [("g1", "P36", ["t1", "t1", "t2"], [True, False, True], [True, True, False]),
            ("g2", "P36", ["t1", "t2"], [False, True], [False, True]),
            ("g3", "P19", ["t1"], [True], [False])]
    out = []
    for fact, relation, templates, *runs in rows:
        correct = runs[side]
        out.append({"id": fact, "fact": fact, "relation": relation, "template_ids": templates,
                    "prompt_correct": correct, "correct": sum(correct) / len(correct)})
    return out


def test_belief_covered_facts_are_per_template_any_subject_expression():
    """Issue 38 item 6. BELIEF's sharing counts "the correctly predicted facts for each template"
    (000:271): the unit is (fact, template), and a fact counts as predicted under a template when
    one of its subject expressions gets it right, as BELIEF reads a fact under a template
    everywhere else (000:286, footnote 16: "We select the prompt with the best subject expression
    among prompts for each fact"; the oracle: "at least one prompt of this fact").

    Units (g1,t1) (g1,t2) (g2,t1) (g2,t2) of P36 and (g3,t1) of P19. A covers (g1,t1) (one of its
    two subject names is right), (g1,t2), (g2,t2), (g3,t1): 4. B covers (g1,t1), (g2,t2): 2.
    Both: 2.
      sharing (asymmetric, pooled): 2 of A's 4 -> 0.5, 2 of B's 2 -> 1.0
      subsumption A->B: P36 2/3, P19 0/1 -> 1/3; B->A: P36 2/2, P19 left out (B covers none) -> 1.0
      probed: P36 2/4, P19 0/1 -> 0.25
    Counting prompts (id, template, k-th name), as factprobe did: 0.5 and 2/3 (now --known per-prompt)."""
    o = overlap(belief_records(0), belief_records(1))
    assert (o.sharing_a, o.sharing_b) == (0.5, 1.0)
    assert (o.subsumption_ab, o.subsumption_ba) == (pytest.approx(1 / 3), 1.0)
    assert overlap(belief_records(0), belief_records(1), Definitions(sharing="probed")).sharing == 0.25
    assert (o.shared, o.shared_items, o.both, o.only_a, o.only_b, o.neither) == (5, 3, 2, 2, 0, 1)


def test_belief_prompts_are_units_under_per_prompt():
    # The unit before issue 38 (--known per-prompt): P36 units (g1,t1,0) (g1,t1,1) (g1,t2,0)
    # (g2,t1,0) (g2,t2,0): A knows g1t1#0, g1t2, g2t2; B knows g1t1#0, g1t1#1, g2t2; both 2.
    # P19: A knows g3, B nothing.
    #   A->B: P36 2/3, P19 0/1 -> 1/3.  B->A: P36 2/3, P19 left out (B knows none) -> 2/3.
    #   probed: P36 2/5, P19 0/1 -> 0.2.
    #   asymmetric (pooled over relations): both 2 of A's 4 -> 0.5, of B's 3 -> 2/3; pooled, so
    #   A's rate is not the per-relation subsumption 1/3.
    # Old: A knows g3 alone (share 1.0), B nothing: A->B = 0, B->A n/a, Jaccard 0.
    per_prompt = Definitions(known="per-prompt")
    o = overlap(belief_records(0), belief_records(1), per_prompt)
    assert (o.subsumption_ab, o.subsumption_ba) == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert (o.sharing_a, o.sharing_b) == (pytest.approx(0.5), pytest.approx(2 / 3))
    assert overlap(belief_records(0), belief_records(1),
                   Definitions(known="per-prompt", sharing="probed")).sharing == pytest.approx(0.2)
    assert (o.shared, o.both, o.only_a, o.only_b, o.neither) == (6, 2, 2, 1, 1)
    assert o.as_dict()["definitions"] == {"known": "per-prompt", "sharing": "asymmetric"}
    old = overlap(belief_records(0), belief_records(1), OLD)
    assert (old.subsumption_ab, old.subsumption_ba, old.sharing) == (0.0, None, 0.0)


def belief_icl_records(side: int) -> list[dict]:
    """BELIEF-ICL as built (probes/kinds/belief_icl_kind.py): one record per (pair, template,
    subject name), `fact` the pair, `template_id` the template, a verdict per setting."""
    rows = [("p1:0", "p1", 0, "label", {"zero-shot": (True, False)}),
            ("p1:0:1", "p1", 0, "alias", {"zero-shot": (False, True)}),
            ("p1:1", "p1", 1, "label", {"zero-shot": (False, False)}),
            ("p2:0", "p2", 0, "label", {"zero-shot": (True, True)})]
    return [{"id": i, "fact": fact, "relation": "P36", "template_id": t, "subject_name": name,
             "by_setting": {s: {"correct": v[side]} for s, v in settings.items()},
             "correct": float(settings["zero-shot"][side])} for i, fact, t, name, settings in rows]


def test_belief_icl_covered_facts_are_per_template_and_setting():
    # (pair, template, setting) units: (p1,0,zs) (p1,1,zs) (p2,0,zs). A covers (p1,0) by its label
    # and p2; B covers (p1,0) by the alias and p2; both 2 of 2 each -> 1.0, 1.0. Per prompt: A's
    # label item and B's alias item are different units: both 1 (p2) of 2 each -> 0.5, 0.5.
    o = overlap(belief_icl_records(0), belief_icl_records(1))
    assert (o.shared, o.both, o.sharing_a, o.sharing_b) == (3, 2, 1.0, 1.0)
    old = overlap(belief_icl_records(0), belief_icl_records(1), Definitions(known="per-prompt"))
    assert (old.shared, old.both, old.sharing_a, old.sharing_b) == (4, 1, 0.5, 0.5)


def test_belief_sharing_rates_the_issue_worked_case():
    """Issue 28 c: A knows {1, 2}, B knows {1, 3, 4} (of 10 facts, one template): BELIEF's rates
    (seed 000 line 271, "the proportion of shared facts relative to each model's total covered
    facts") are 1/2 for A and 1/3 for B, where factprobe printed 0.1 (probed) or 0.25 (Jaccard)."""
    assert metrics.sharing_rates({1, 2}, {1, 3, 4}) == (0.5, pytest.approx(1 / 3))
    a = [{"id": f"f{k}", "relation": "P36", "correct": k in (1, 2)} for k in range(1, 11)]
    b = [{"id": f"f{k}", "relation": "P36", "correct": k in (1, 3, 4)} for k in range(1, 11)]
    o = overlap(a, b)
    assert (o.sharing_a, o.sharing_b) == (0.5, pytest.approx(1 / 3))
    assert o.as_dict()["sharing"] == {"a": 0.5, "b": pytest.approx(1 / 3)}
    assert o.as_dict()["definitions"] == {"known": "per-template", "sharing": "asymmetric"}
    assert overlap(a, b, Definitions(sharing="probed")).sharing == pytest.approx(0.1)
    assert overlap(a, b, Definitions(sharing="jaccard")).sharing == pytest.approx(0.25)
    # A model that covers nothing has no rate of its own; the other's is 0.
    none = [{"id": f"f{k}", "relation": "P36", "correct": False} for k in range(1, 11)]
    o = overlap(none, b)
    assert (o.sharing_a, o.sharing_b) == (None, 0.0)


def test_sharing_measures_by_hand():
    a, b, probed = {1, 2}, {2, 3}, {1, 2, 3, 4}
    assert metrics.shared_rate({"a": a, "b": b}, probed) == pytest.approx(1 / 4)  # {2} of 4 probed
    assert metrics.sharing_rate({"a": a, "b": b}) == pytest.approx(1 / 3)  # Jaccard: {2} of {1,2,3}
    assert metrics.shared_rate({"a": set(), "b": set()}, probed) == 0.0  # knowing nothing shares nothing
    assert math.isnan(metrics.shared_rate({"a": set()}, set()))
    with pytest.raises(ValueError, match="not probed"):
        metrics.shared_rate({"a": {5}}, probed)
    with pytest.raises(ValueError, match="empty"):
        metrics.shared_rate({}, probed)


def test_per_relation_averages_by_hand():
    relation_of = {1: "P36", 2: "P36", 3: "P36", 4: "P17", 5: "P17", 6: "P19"}
    a, b = {1, 2, 4}, {1, 3, 4, 5, 6}
    # A->B: P36 {1,2} -> 1/2, P17 {4} -> 1, P19: A knows none, left out -> 0.75 (pooled: 2/3).
    assert metrics.subsumption_rate_by_relation(a, b, relation_of) == pytest.approx(0.75)
    # B->A: P36 {1,3} -> 1/2, P17 {4,5} -> 1/2, P19 {6} -> 0 -> 1/3 (pooled: 2/5).
    assert metrics.subsumption_rate_by_relation(b, a, relation_of) == pytest.approx(1 / 3)
    assert math.isnan(metrics.subsumption_rate_by_relation(set(), b, relation_of))
    assert metrics.mean_over_relations(relation_of, len) == pytest.approx((3 + 2 + 1) / 3)


def write_run(folder: Path, model: str, records: list[dict]) -> Path:
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"model": model, "method": "belief-icl", "options": {},
                                                 "probes": "icl.jsonl", "probes_sha256": "ef" * 32}))
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "aggregate.json").write_text(json.dumps({"method": "belief-icl", "items": len(records)}))
    return folder


def test_compare_defaults_to_the_paper_and_names_the_definitions(tmp_path):
    a = write_run(tmp_path / "a", "hf:a", icl_records(0))
    b = write_run(tmp_path / "b", "hf:b", icl_records(1))
    text = run_cli("compare", str(a), str(b), check=True).stdout
    assert "--known per-template" in text and "IC-LKE" in text and "BELIEF" in text
    assert "subsumption A->B 0.8750  B->A 0.5500  sharing (asymmetric) of A's 0.8000  of B's 0.5714" in text
    data = json.loads(run_cli("compare", str(a), str(b), "--json", check=True).stdout)
    assert data["overlap"]["definitions"] == {"known": "per-template", "sharing": "asymmetric"}
    assert data["overlap"]["subsumption_a_to_b"] == pytest.approx(0.875)
    assert data["overlap"]["sharing"] == {"a": pytest.approx(0.8), "b": pytest.approx(4 / 7)}
    probed = run_cli("compare", str(a), str(b), "--sharing", "probed", check=True).stdout
    assert "sharing (probed) 0.4375" in probed
    old = json.loads(run_cli("compare", str(a), str(b), "--json", "--known", "all-prompts", "--sharing", "jaccard",
                             check=True).stdout)
    assert old["overlap"]["definitions"] == {"known": "all-prompts", "sharing": "jaccard"}
    assert (old["overlap"]["subsumption_a_to_b"], old["overlap"]["sharing"]) == (0.0, 0.0)
    assert "when that share is 1.0" in old["known_rule"]
    bad = run_cli("compare", str(a), str(b), "--known", "every-prompt")
    assert bad.returncode == 2 and "every-prompt" in bad.stderr


# ---------------------------------------------------------------------------------------------
# h. The distractor paper's baselines


def test_beam_requests_keep_old_cache_keys_and_validate():
    from factprobe.probes.scoring.cache import request_key
    from factprobe.probes.scoring.requests import GenerateRequest

    # The key a GenerateRequest had before `beams` existed, spelled out field by field.
    old = {"prompt": "p", "max_tokens": 16, "temperature": 0.0, "n": 1, "stop": [], "seed": 0, "top_p": 1.0}
    canonical = json.dumps(["generate", old], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert request_key("generate", GenerateRequest("p")) == hashlib.sha256(canonical.encode()).hexdigest()
    assert request_key("generate", GenerateRequest("p", beams=3, n=3)) != request_key("generate", GenerateRequest("p"))
    with pytest.raises(ValueError, match="temperature 0"):
        GenerateRequest("p", beams=3, temperature=1.0)
    with pytest.raises(ValueError, match="at most 3"):
        GenerateRequest("p", beams=3, n=4)


def test_openai_scorer_refuses_beam_search():
    from factprobe.probes.scoring.openai_api import OpenAIScorer
    from factprobe.probes.scoring.requests import GenerateRequest
    from factprobe.probes.scoring.scorer import Unsupported

    scorer = OpenAIScorer("m", base_url="http://127.0.0.1:9/v1", api_key="k")  # never contacted
    with pytest.raises(Unsupported, match="beam search"):
        scorer.generate([GenerateRequest("p", beams=2, n=2)])


@pytest.mark.slow
def test_one_step_beam_search_is_the_top_tokens():
    """With one token to generate, the k beams are the k most probable next tokens (an EOS token
    is a finished, empty answer), best first."""
    import torch

    from factprobe.probes.scoring.tokens import eos_ids
    from factprobe.probes.scoring.requests import GenerateRequest
    from scoring_models import real_scorer

    scorer = real_scorer("smollm2-135m-instruct")
    prompt = "The capital of France is"
    (found,) = scorer.generate([GenerateRequest(prompt, max_tokens=1, beams=5, n=5)])
    with torch.inference_mode():
        logits = scorer.model(input_ids=torch.tensor([scorer.encode(prompt)])).logits[0, -1]
    eos = set(eos_ids(scorer.tokenizer, scorer.model))
    top = logits.float().topk(5).indices.tolist()
    assert list(found.texts) == ["" if t in eos else scorer.tokenizer.decode([t]) for t in top]
    assert found.texts[0] == " Paris"


# Distractor-style items whose objects have several names (DistFact sums them all).
ITEMS = [
    {"id": "distractor:F", "fact": "F", "relation": "P36", "subject_label": "France", "object": "Q90",
     "object_label": "Paris", "object_names": ["Paris", "City of Light", "Paname"],
     "gold": ["Paris", "City of Light", "Paname"], "bucket": None, "frequency": None, "distractors": {}},
    {"id": "distractor:J", "fact": "J", "relation": "P36", "subject_label": "Japan", "object": "Q1490",
     "object_label": "Tokyo", "object_names": ["Tokyo", "Tokyo Metropolis"],
     "gold": ["Tokyo", "Tokyo Metropolis"], "bucket": None, "frequency": None, "distractors": {}},
]
# The first two object-final cloze templates of P36 (probes/templates/relations/).
CLOZES = ("The capital of {} is", "{}'s capital city is")


def _probability(scorer, cloze: str, name: str, eos: bool = False) -> float:
    """P(" " + name | cloze) from the scorer's loglikelihood; with `eos`, P(" " + name + EOS | cloze),
    EOS written as its text."""
    from factprobe.probes.scoring.requests import LoglikelihoodRequest

    text = f" {name}{scorer.tokenizer.eos_token}" if eos else f" {name}"
    (scores,) = scorer.loglikelihood([LoglikelihoodRequest(cloze, [text])])
    return math.exp(scores[0].logprob)


class NamesScorer:
    """A causal LM written as a table: P(" " + name | cloze) per name, and P(EOS | cloze + name)
    the same 0.8 everywhere; greedy and beam answers are the first name."""

    identity = "table-causal"

    def __init__(self, probabilities: dict[str, float]) -> None:
        self.probabilities = probabilities

    def label_paths(self, requests):
        from factprobe.probes.scoring.requests import LabelPathScore

        return [[LabelPathScore(math.log(self.probabilities[name]) + (math.log(0.8) if r.eos else 0.0), 1)
                 for name in r.names] for r in requests]

    def generate(self, requests):
        from factprobe.probes.scoring.requests import Generation

        return [Generation(tuple([" Paris"] * r.n)) for r in requests]


def test_probability_baseline_has_no_end_of_sequence_token():
    """Table 2's Probability: (1/|C|) sum over c of sum over the object's names of Pr(name | c).
    With names Paris (0.5), City of Light (0.1) and Paname (0.05) on every cloze: 0.65; factprobe
    appended EOS (P = 0.8 after each name here), giving 0.8 * 0.65 = 0.52, now `probability_eos`."""
    from factprobe.probes.evaluation.aggregate import aggregate
    from factprobe.probes.methods.base import MethodContext
    from factprobe.probes.methods.baselines import Baselines

    scorer = NamesScorer({"Paris": 0.5, "City of Light": 0.1, "Paname": 0.05, "Tokyo": 0.3, "Tokyo Metropolis": 0.2})
    options = {"clozes": 2, "beams": 3, "n": 2, "max_tokens": 4}
    paper = Baselines(MethodContext(options=options)).run(scorer, ITEMS)
    assert [r["probability"] for r in paper] == [pytest.approx(0.65), pytest.approx(0.5)]
    assert [r["correct"] for r in paper] == [True, False]  # 0.5 is not above the 0.5 threshold
    eos = Baselines(MethodContext(options={**options, "probability_eos": True})).run(scorer, ITEMS)
    assert [r["probability"] for r in eos] == [pytest.approx(0.52), pytest.approx(0.4)]
    method = Baselines(MethodContext(options=options))
    assert aggregate("baselines", paper, method.options)["definitions"] == {
        "probability": "all-names", "probability_eos": False, "gold": "object", "precision": "tokens",
        "answer_cut": "none", "max_tokens": 4, "cloze_source": "templates", "threshold": 0.5}
    assert aggregate("baselines", eos, {**method.options, "probability_eos": True})["definitions"][
        "probability_eos"] is True
    assert aggregate("baselines", paper, {})["definitions"] == {
        "probability": "label", "probability_eos": True, "gold": "all-objects", "precision": "beams",
        "answer_cut": "punctuation", "max_tokens": 8, "cloze_source": "templates", "threshold": 0.5}
    with pytest.raises(ValueError, match="probability_eos"):
        Baselines(MethodContext(options={"probability_eos": "yes"}))


@pytest.mark.slow
def test_probability_baseline_sums_every_name_and_averages_the_clozes():
    from factprobe.probes.methods.base import MethodContext, answer_key
    from factprobe.probes.methods.baselines import Baselines
    from scoring_models import real_scorer

    scorer = real_scorer("smollm2-135m-instruct")
    # Precision@n over beams cut at punctuation (issue 38: the paper's are next tokens and whole
    # beams, tests/test_baselines.py), so the checks below read as they did.
    method = Baselines(MethodContext(options={"clozes": 2, "beams": 3, "n": 2, "max_tokens": 4, "precision": "beams",
                                              "answer_cut": "punctuation"}))
    records = method.run(scorer, ITEMS)
    old = Baselines(MethodContext(options={"probability": "label", "probability_eos": True, "candidates": "sample",
                                           "samples": 3, "n": 2, "max_tokens": 4})).run(scorer, ITEMS)
    for item, record, before in zip(ITEMS, records, old):
        clozes = [c.format(item["subject_label"]) for c in CLOZES]
        assert record["clozes"] == clozes
        per_cloze = [sum(_probability(scorer, cloze, name) for name in item["object_names"]) for cloze in clozes]
        hand = sum(per_cloze) / len(per_cloze)
        assert record["probability_per_cloze"] == pytest.approx(per_cloze, rel=1e-4)
        assert record["probability"] == pytest.approx(hand, rel=1e-4)
        assert record["correct"] == (hand > 0.5)
        # The old definition, still offered: the label alone, EOS after it, after the first cloze.
        label_only = _probability(scorer, clozes[0], item["object_label"], eos=True)
        assert before["probability"] == pytest.approx(label_only, rel=1e-4)
        assert abs(hand - label_only) > 1e-3 * hand  # the two definitions are told apart
        print(item["subject_label"], "all names, 2 clozes:", hand, "label, first cloze:", label_only)

        # Precision@2 and ROUGE-L from the 3 beams of each cloze, averaged over the clozes.
        assert [len(texts) for texts in record["candidates"]] == [3, 3]
        gold = {answer_key(g) for g in item["gold"]}
        precision = [float(any(a in gold for a in list(dict.fromkeys(map(answer_key, texts)))[:2]))
                     for texts in record["candidates"]]
        rouge = [max(metrics.rouge_l(answer_key(t), answer_key(g)) for t in texts for g in item["gold"])
                 for texts in record["candidates"]]
        assert record["precision_at_n"] == pytest.approx(sum(precision) / 2)
        assert record["rouge_l"] == pytest.approx(sum(rouge) / 2)
    # Observed: the best beam after "The capital of France is" is " Paris".
    assert answer_key(records[0]["candidates"][0][0]) == "paris"

"""The distractor paper's BERT-score and KaRR baselines (seed 004 Table 2, line 174; Dong et al.
2023): KaRR's arithmetic by hand, KaRR end to end on a tiny random Llama against the scorer's own
log-probabilities, and BERT-score against BERTScore's definition computed here from a tiny BERT's
hidden states."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest
import torch

from factprobe.probes.methods.karr import karr_scores, log_term, name_scores
from factprobe.probes.scoring.requests import LabelPathRequest, LabelPathScore, LoglikelihoodRequest

LAYERS = 2
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "capital", "of", "france", "is", "paris", "berlin",
         "city", "light", "rome", "a", "in", "lyon"]


def test_karr_arithmetic_by_hand():
    """P(o|s,r) = 0.5*(0.2+0.1) + 0.25*0.2 = 0.2. P(o|r): subjects with sums 0.2, 0.02, 0.008,
    mean 0.076, KaRR_s = 0.2/0.076. P(o|s): relation terms 0.15 and 0.01, mean 0.08, KaRR_r =
    2.5. KaRR = sqrt(2.5 * 0.2/0.076) = 2.5649..."""
    log = math.log
    joint = log_term((log(0.5), 3), [(log(0.2), 2), (log(0.1), 1)], per_token=False)
    assert joint == pytest.approx(log(0.15), abs=1e-12)
    # per token: the prompt's 2 tokens at log 0.25 read 0.5; the name's 2 tokens at log 0.04 read 0.2
    assert log_term((log(0.25), 2), [(log(0.04), 2), (log(0.1), 1)], per_token=True) == pytest.approx(log(0.15))
    true = [log(0.15), log(0.05)]
    found = karr_scores(true, [true, [log(0.01), log(0.01)], [log(0.005), log(0.003)]], [log(0.15), log(0.01)])
    assert found.karr_s == pytest.approx(0.2 / 0.076, rel=1e-12)
    assert found.karr_r == pytest.approx(2.5, rel=1e-12)
    assert found.karr == pytest.approx(math.sqrt(2.5 * 0.2 / 0.076), rel=1e-12) == pytest.approx(2.5649, abs=1e-4)
    assert (found.known(22.0), found.known(2.5)) == (False, True)  # strictly above
    assert math.exp(found.log_p_sr) == pytest.approx(0.2) and math.exp(found.log_p_r) == pytest.approx(0.076)
    # A name spelled in the same tokens as an earlier one is one string to the model: counted once.
    scores = [LabelPathScore(log(0.2), 1), LabelPathScore(log(0.2), 1, same_as=0), LabelPathScore(log(0.1), 2)]
    assert name_scores(scores) == [(log(0.2), 1), (log(0.1), 2)]
    with pytest.raises(ValueError, match="at least one subject"):
        karr_scores(true, [], [log(0.1)])


def _item(fact: str, relation: str, subject: str, obj: str, label: str, names: list[str]) -> dict:
    return {"id": f"distractor:{fact}", "kind": "distractor", "split": "test", "fact": fact, "relation": relation,
            "subject": f"Q{fact}", "subject_label": subject, "object": obj, "object_label": label, "gold": names,
            "object_names": names, "bucket": None, "frequency": None, "distractors": {}}


# Paris is the object of P36 (France) and of P19 (Victor Hugo): both are relations of o.
ITEMS = [_item("F", "P36", "France", "Q90", "Paris", ["Paris", "City of Light"]),
         _item("G", "P36", "Germany", "Q64", "Berlin", ["Berlin"]),
         _item("I", "P36", "Italy", "Q220", "Rome", ["Rome"]),
         _item("H", "P19", "Victor Hugo", "Q90", "Paris", ["Paris", "City of Light"])]
# The first two object-final clozes of P36 (probes/templates/relations/P36.yaml).
P36 = ("The capital of {} is", "{}'s capital city is")


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    from factprobe.probes.scoring.loader import load_scorer
    from scoring_models import tiny_llama

    return load_scorer(f"hf:{tiny_llama(tmp_path_factory.mktemp('llama') / 'llama')}", device="cpu")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    """A 3-layer random BERT whose tokenizer is saved without a length limit, as a user's folder
    may be (bert-score then needs factprobe's fix under transformers 5)."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("bert")
    (folder / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(WORDS), hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                         num_attention_heads=4, max_position_embeddings=64)).save_pretrained(folder)
    BertTokenizerFast(vocab={w: k for k, w in enumerate(WORDS)}).save_pretrained(folder)
    return folder


LOADED: dict = {}  # folder -> the reference's tokenizer and encoder, loaded once


def _reference_f1(folder, candidate: str, reference: str) -> float:
    """BERTScore F1 by its definition (Zhang et al. 2020, as the bert-score package takes it, no
    idf): each text's token embeddings at layer LAYERS; P = mean over the candidate's tokens but
    [CLS] and [SEP] of the best cosine with any reference token ([CLS] and [SEP] included), R the
    other way round, F1 = 2PR / (P + R); a blank text scores 0."""
    from transformers import BertModel, BertTokenizerFast

    if not candidate.strip() or not reference.strip():
        return 0.0
    if folder not in LOADED:
        LOADED[folder] = BertTokenizerFast.from_pretrained(folder), BertModel.from_pretrained(folder).eval()
    tokenizer, model = LOADED[folder]

    def embed(text: str) -> torch.Tensor:
        ids = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**ids, output_hidden_states=True).hidden_states[LAYERS][0]
        return hidden / hidden.norm(dim=-1, keepdim=True)

    similarity = embed(candidate) @ embed(reference).T  # [CLS] first and [SEP] last on both sides
    precision = similarity[1:-1].max(dim=1).values.mean().item()
    recall = similarity[:, 1:-1].max(dim=0).values.mean().item()
    return 2 * precision * recall / (precision + recall)


def test_bertscore_is_the_definition_and_the_best_pair_per_cloze(encoder):
    from factprobe.probes.methods.bertscore import BertScoreModel, best_per_cloze

    scorer = BertScoreModel(str(encoder), LAYERS)
    pairs = [("the city of paris", "paris"), ("berlin", "paris"), ("rome is a city", "city of light"),
             ("paris", "paris")]
    found = scorer.f1([c for c, _ in pairs], [r for _, r in pairs])
    assert found == pytest.approx([_reference_f1(encoder, c, r) for c, r in pairs], abs=1e-5)
    assert found[3] == pytest.approx(1.0, abs=1e-6) and found[1] < 0.99
    # Table 2: per cloze the max over names and beams, then the mean over clozes. Cloze 1 has an
    # exact name (1.0), cloze 2 the best of 4 pairs, cloze 3 only an empty answer (0).
    names = ["paris", "city of light"]
    answers = [["berlin", " paris"], ["rome", "the city"], [""]]
    second = max(_reference_f1(encoder, a, n) for a in answers[1] for n in names)
    assert best_per_cloze(scorer, [names], [answers]) == pytest.approx([(1.0 + second + 0.0) / 3], abs=1e-5)
    with pytest.raises(ValueError, match="bertscore_layers"):
        BertScoreModel(str(encoder), None)


def _term(scorer, prompt: str, names: list[str]) -> float:
    """P_M(prompt) * sum over names of P_M(" " + name | prompt), each per token (1/perplexity),
    from the scorer's log-probabilities (the whole sentence after the model's start token)."""
    (sentence,), = scorer.loglikelihood([LoglikelihoodRequest("", (prompt,))])
    paths, = scorer.label_paths([LabelPathRequest(prompt, names, eos=False)])
    return math.exp(sentence.logprob / sentence.n_tokens) * sum(math.exp(p.logprob / p.n_tokens) for p in paths)


def test_karr_and_bertscore_end_to_end(llama, encoder, tmp_path):
    from factprobe.probes.evaluation.aggregate import aggregate
    from factprobe.probes.methods.base import MethodContext
    from factprobe.probes.methods.baselines import Baselines
    from factprobe.probes.evaluation.runner import evaluate

    probes = tmp_path / "p.jsonl"
    probes.write_text("".join(json.dumps(i) + "\n" for i in ITEMS))
    options = {"karr": True, "karr_samples": 2, "clozes": 2, "beams": 2, "n": 1, "max_tokens": 2,
               "bertscore_model": str(encoder), "bertscore_layers": LAYERS}
    summary = evaluate(llama, "baselines", probes, tmp_path / "run", options=options)
    records = {r["fact"]: r for r in map(json.loads, (tmp_path / "run" / "items.jsonl").read_text().splitlines())}
    france, hugo = records["F"], records["H"]
    names = ["Paris", "City of Light"]
    # Two of P36's three subjects, drawn by seed; Paris's relations in the probe set: P19 and P36,
    # each asked of France with one of its two clozes.
    assert len(france["karr_subjects"]) == 2 and set(france["karr_subjects"]) <= {"France", "Germany", "Italy"}
    assert sorted(france["karr_relations"]) == ["P19", "P36"]
    assert france["karr_relations"]["P36"] in [c.format("France") for c in P36]
    assert france["karr_relations"]["P19"] in ("France was born in", "The birthplace of France is")
    p_sr = sum(_term(llama, c.format("France"), names) for c in P36)
    p_r = sum(sum(_term(llama, c.format(s), names) for c in P36) for s in france["karr_subjects"]) / 2
    p_s = sum(_term(llama, prompt, names) for prompt in france["karr_relations"].values()) / 2
    assert france["karr_s"] == pytest.approx(p_sr / p_r, rel=1e-5)
    assert france["karr_r"] == pytest.approx(p_sr / p_s, rel=1e-5)
    assert france["karr"] == pytest.approx(math.sqrt(p_sr / p_r * p_sr / p_s), rel=1e-5)
    assert france["karr_known"] == (france["karr"] > 22.0)
    # Victor Hugo is P19's only subject: P(o|r) is P(o|s,r) itself.
    assert hugo["karr_subjects"] == ["Victor Hugo"] and hugo["karr_s"] == pytest.approx(1.0, rel=1e-9)
    # BERT-score: per cloze the best over o's names and the cloze's beams, mean over clozes.
    best = [max(_reference_f1(encoder, a.strip(), n) for a in beams for n in names) for beams in france["candidates"]]
    assert france["bertscore_per_cloze"] == pytest.approx(best, abs=1e-5)
    assert france["bertscore"] == pytest.approx(sum(best) / 2, abs=1e-5)

    b, definitions = summary.aggregate["baselines"], summary.aggregate["definitions"]
    assert b["karr"] == pytest.approx(sum(r["karr"] for r in records.values()) / 4)
    assert b["bertscore"] == pytest.approx(sum(r["bertscore"] for r in records.values()) / 4)
    assert b["karr_known_interval"]["method"] == "wilson" and b["karr_interval"]["n"] == 4
    assert definitions["bertscore"] == {"model": str(encoder), "layers": LAYERS, "score": "F1", "idf": False,
                                        "rescaled": False, "names": "object", "candidates": "beam"}
    assert definitions["karr"]["probability"] == "per-token" and definitions["karr"]["threshold"] == 22.0
    headline = Baselines.headline(summary.aggregate, probes)
    assert f"BERT-score {b['bertscore']:.3f}" in headline and f"KaRR {b['karr']:.3f}" in headline
    assert "not asked" not in headline

    # Without an encoder: no BERT-score, said so; KaRR off by default, named nowhere.
    defaults = Baselines(MethodContext()).options
    assert (defaults["bertscore_model"], defaults["karr"]) == (None, False)
    bare = [{k: v for k, v in r.items() if not k.startswith(("karr", "bertscore"))} for r in records.values()]
    plain = SimpleNamespace(aggregate=aggregate("baselines", bare, defaults))
    assert plain.aggregate["baselines"]["bertscore"] is None and plain.aggregate["baselines"]["karr"] is None
    assert set(plain.aggregate["definitions"]) == {"probability", "probability_eos", "gold", "precision", "answer_cut",
                                                   "max_tokens", "cloze_source", "threshold"}
    assert Baselines.headline(plain.aggregate, probes).endswith("BERT-score not asked (bertscore_model)")

    runs = [SimpleNamespace(rid="R1", aggregate=summary.aggregate), SimpleNamespace(rid="R2", aggregate=plain.aggregate)]
    section = Baselines.report_sections[0].build(runs)
    rows = section[1].rows
    assert rows[0][4].startswith(f"{b['bertscore']:.4f}") and rows[1][4] == "not asked" and rows[1][5] == "n/a"
    assert any("BERT-score was not asked in R2" in getattr(block, "text", "") for block in section[2:])

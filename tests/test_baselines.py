"""The distractor paper's baseline measures on SmolLM2, the judge through a real OpenAI-compatible
server (llama-cpp-python serving the same GGUF on 127.0.0.1). Issue 38 items 3, 4 and 10, each
worked out by hand from DistFact's text (seed 004 = ../shared/papers/004_9e1422d598bbbe4c.txt):
answers are compared with o's own names Λ(o) (Table 2, 004:203-207), the judge is Appendix D's
prompt on every beam with the best verdict per cloze and the mean over clozes (004:176, 207, 362),
and beams are not cut at "." or "," (the paper sets no cut)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from conftest import llama_server, needs_llama_cpp, run_cli
from factprobe.probes import measures as metrics
from factprobe.probes.methods.base import answer_key
from factprobe.probes.evaluation.runner import evaluate
from scoring_models import real_scorer
from test_eval import capital_graph
from wikidata_builder import write_dump

KEY = "judge-key"
needs_server = needs_llama_cpp


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    with llama_server(tmp_path_factory.mktemp("judge"), alias="judge", key=KEY) as url:
        yield url


def paris_by_alias() -> list[dict]:
    """The capitals graph where Paris is labelled "City of Paris" and "Paris" is only an alias: the
    model's answer "Paris" then matches an alias better than the label."""
    entities = capital_graph()
    paris = next(e for e in entities if e["labels"]["en"]["value"] == "Paris")
    paris["labels"]["en"]["value"] = "City of Paris"
    paris["aliases"] = {"en": [{"language": "en", "value": "Paris"}]}
    return entities


@pytest.mark.slow
@needs_server
def test_baselines_with_a_judge(judge, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "c.json", paris_by_alias())), "--store", str(store),
            "--quiet", check=True)
    built = tmp_path / "all.jsonl"
    run_cli("probeset", "build", "--kind", "distractor", "--relation", "P36", "--store", str(store), "--out",
            str(built), "--quiet", check=True)
    # France and the first three other facts (a set without a sidecar names its kind in its items).
    lines = built.read_text().splitlines()
    france = next(line for line in lines if json.loads(line)["subject_label"] == "France")
    probes = tmp_path / "d.jsonl"
    probes.write_text("\n".join([france, *[line for line in lines if line != france][:3]]) + "\n")
    items = {i["id"]: i for i in map(json.loads, probes.read_text().splitlines())}
    summary = evaluate(real_scorer("smollm2-135m-instruct"), "baselines", probes, tmp_path / "run",
                       # The definitions before issue 20 (the label on the first cloze; sampled
                       # answers and the greedy one) and before issue 38 (every true object's
                       # names, answers cut at punctuation and 8 tokens, the yes/no judge), which
                       # the checks below pin; the paper's defaults are pinned in
                       # test_paper_compare.py and below.
                       options={"probability": "label", "probability_eos": True, "candidates": "sample",
                                "samples": 4, "n": 2, "gold": "all-objects", "precision": "beams",
                                "answer_cut": "punctuation", "max_tokens": 8, "judge_prompt": "yes-no",
                                "judge_model": "judge", "judge_base_url": judge})
    records = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert summary.items == len(records) == 4
    for r in records:
        assert 0 < r["probability"] < 1 and r["correct"] == (r["probability"] > 0.5)
        assert r["precision_at_n"] in (0.0, 1.0) and isinstance(r["judge"], bool)
        # ROUGE-L promises the best over every gold name, aliases included.
        best = max(metrics.rouge_l(answer_key(r["answer"]), answer_key(g)) for g in items[r["id"]]["gold"])
        assert r["rouge_l"] == pytest.approx(best)
        assert r["cloze"].endswith(r["subject_label"]) or r["subject_label"] in r["cloze"]
    # Observed: the model answers "Paris" (it answered "21st-century Paris" when the cloze was
    # continued after a trailing space). The alias scores 1.0 where the label "City of Paris"
    # scores 0.5 (one common word: precision 1, recall 1/3); the record holds the alias's 1.0.
    paris = next(r for r in records if r["subject_label"] == "France")
    assert items[paris["id"]]["gold"] == ["City of Paris", "Paris"] and paris["answer"] == "Paris"
    assert metrics.rouge_l(answer_key(paris["answer"]), answer_key(paris["object_label"])) == pytest.approx(0.5)
    assert paris["rouge_l"] == 1.0
    print("answers:", {r["subject_label"]: (r["answer"], r["rouge_l"]) for r in records})
    for name in ("probability", "precision_at_n", "rouge_l", "judge"):
        assert math.isfinite(summary.aggregate["baselines"][name])


# --- Issue 38 item 3: o's own names ---------------------------------------------------------
# South Africa has three capitals; the fact asked is (South Africa, capital, Bloemfontein).
SOUTH_AFRICA = {"kind": "distractor", "split": "test", "id": "distractor:SA", "fact": "SA", "relation": "P36",
                "subject_label": "South Africa",
                "object": "Q37701", "object_label": "Bloemfontein", "object_names": ["Bloemfontein"],
                "gold": ["Pretoria", "Cape Town", "Bloemfontein"], "bucket": None, "frequency": None,
                "distractors": {}}


def test_answers_are_compared_with_the_objects_own_names():
    """Table 2 compares beams with Λ(o), o's names (004:203-207). Three clozes' beams: the first
    names Cape Town (another true capital), the second nothing true, the third Pretoria then
    Bloemfontein. Precision@2 per cloze: Λ(o) 0, 0, 1 -> 1/3; every true object's names (factprobe
    before) 1, 0, 1 -> 2/3. Precision@1: Λ(o) 0, 0, 0; before 1, 0, 1. ROUGE-L per cloze: Λ(o) 0,
    0, 1 (the exact name); before 1, 0, 1."""
    from factprobe.probes.methods.baselines import best_rouge, compared_names, mean, precision_at_n

    beams = [[" Cape Town", " Johannesburg"], [" Abu Dhabi", " the capital of the African continent"],
             [" Pretoria", " Bloemfontein."]]
    own, every = compared_names(SOUTH_AFRICA, "object"), compared_names(SOUTH_AFRICA, "all-objects")
    assert (own, every) == (["Bloemfontein"], ["Pretoria", "Cape Town", "Bloemfontein"])
    assert precision_at_n(own, beams, 2) == [0.0, 0.0, 1.0] and mean(precision_at_n(own, beams, 2)) == 1 / 3
    assert precision_at_n(every, beams, 2) == [1.0, 0.0, 1.0] and mean(precision_at_n(every, beams, 2)) == 2 / 3
    assert precision_at_n(own, beams, 1) == [0.0, 0.0, 0.0] and precision_at_n(every, beams, 1) == [1.0, 0.0, 1.0]
    assert best_rouge(own, beams) == [0.0, 0.0, 1.0] and best_rouge(every, beams) == [1.0, 0.0, 1.0]
    # A set whose items carry no object_names (kdf, icl-mc) has o's label alone, not the others'.
    bare = {k: v for k, v in SOUTH_AFRICA.items() if k != "object_names"}
    assert compared_names(bare, "object") == ["Bloemfontein"]
    # Aliases are o's names too: label first, each name once.
    paris = {"object_label": "Paris", "object_names": ["Paris", "City of Light"], "gold": ["Paris", "Lutetia"]}
    assert compared_names(paris, "object") == ["Paris", "City of Light"]


def test_the_definitions_name_the_names_the_precision_and_the_cut():
    """The aggregate says which definitions a run used; a run from before these options existed
    used every true object's names, the first n distinct answers and the cut at 8 tokens."""
    from factprobe.probes.methods.base import MethodContext
    from factprobe.probes.methods.baselines import Baselines, baseline_measures

    defaults = Baselines(MethodContext()).options
    assert (defaults["gold"], defaults["precision"], defaults["answer_cut"], defaults["max_tokens"],
            defaults["judge_prompt"]) == ("object", "tokens", "none", None, "paper")
    record = [{"id": "a", "fact": "f", "probability": 0.2, "correct": False, "precision_at_n": 0.0, "rouge_l": 0.5}]
    assert baseline_measures(record, dict(defaults))["definitions"] == {
        "probability": "all-names", "probability_eos": False, "gold": "object", "precision": "tokens",
        "answer_cut": "none", "max_tokens": None, "cloze_source": "templates", "threshold": 0.5}
    assert baseline_measures(record, {})["definitions"] == {
        "probability": "label", "probability_eos": True, "gold": "all-objects", "precision": "beams",
        "answer_cut": "punctuation", "max_tokens": 8, "cloze_source": "templates", "threshold": 0.5}
    judged = baseline_measures(record, {**defaults, "judge_model": "judge"})["definitions"]["judge"]
    assert judged == {"model": "judge", "prompt": "paper", "names": "object",
                      "answers": "each answer of each cloze; per cloze the best verdict, then the mean over the clozes"}
    # A judged run from before judge_prompt existed asked the yes/no question of the greedy answer.
    assert baseline_measures(record, {"judge_model": "judge"})["definitions"]["judge"]["prompt"] == "yes-no"
    # Precision@3 over next tokens needs no 3 beams; over the beams it does.
    from factprobe.probes.methods.base import OptionError
    from factprobe.probes.methods.baselines import BaselinesOptions

    Baselines.check(BaselinesOptions(beams=2))
    with pytest.raises(OptionError, match=r"^method baselines: option beams: Precision@3 needs beams >= n \(beams=2\)$"):
        Baselines.check(BaselinesOptions(beams=2, precision="beams"))


# --- Issue 38 item 4: the judge of Appendix D -----------------------------------------------
PAPERS = Path(__file__).resolve().parents[2] / "shared" / "papers"

# Appendix D (004:362) with its slots filled, laid out one field a line.
FRANCE_PROMPT = """You need to check whether the prediction of a question-answering system to a query is correct. \
You should make the judgment based on a list of ground truth answers provided to you in a form of a list of aliases \
of the gold answer. Your response should be "correct" if the prediction is correct or "incorrect" if the prediction \
is wrong.

Query: The author of The Taming of the Shrew (published in 2002) is ____
Ground truth: ["William Shakespeare", "Roma Gill"]
Prediction: W Shakespeare
Correctness: correct

Query: The author of The Taming of the Shrew (published in 2002) is ____
Ground truth: ["William Shakespeare", "Roma Gill"]
Prediction: Roma Gill and W Shakespeare
Correctness: correct

Query: The author of The Taming of the Shrew (published in 2002) is ____
Ground truth: ["William Shakespeare", "Roma Gill"]
Prediction: Roma Shakespeare
Correctness: incorrect

Query: The country where Maharashtra Metro Rail Corporation Limited is located is ____
Ground truth: ["India"]
Prediction: Maharashtra
Correctness: incorrect

Query: The job of Song Kang-ho in Parasite (2019) is ____
Ground truth: ["actor"]
Prediction: He plays the role of Kim Ki-taek, the patriarch of the Kim family.
Correctness: correct

Query: The era to which Michael Oakeshott belongs is ____
Ground truth: ["20th-century philosophy"]
Prediction: 20th century.
Correctness: correct

Query: The department where Edward Tise (known for Full Metal Jacket (1987)) was is ____
Ground truth: ["sound department"]
Prediction: 2nd Infantry Division, United States Army
Correctness: incorrect

Query: The wine region to which Finger Lakes AVA belongs is ____
Ground truth: ["New York wine"]
Prediction: Finger Lakes AVA
Correctness: incorrect

Query: The capital of France is ____
Ground truth: ["Paris", "City of Light"]
Prediction: Paris, the City of Light
Correctness:"""


def test_the_judge_prompt_is_appendix_d():
    from factprobe.probes.methods.judge import judge_query, paper_prompt

    query = judge_query("The capital of France is")
    assert query == "The capital of France is ____"
    assert paper_prompt(query, ["Paris", "City of Light"], "Paris, the City of Light") == FRANCE_PROMPT


@pytest.mark.skipif(not list(PAPERS.glob("004_*.txt")), reason="the papers' texts are not beside this clone")
def test_the_judge_prompt_is_the_papers_line_word_for_word():
    """The extraction runs Appendix D on one line (004:362). Word for word the same, but for the
    three characters the extraction lost: `["actor"]` closed, and "____" after two queries."""
    from factprobe.probes.methods.judge import paper_prompt

    line = next(PAPERS.glob("004_*.txt")).read_text(encoding="utf-8").splitlines()[361]
    assert line.startswith("You need to check whether the prediction")
    restored = (line.replace('["actor" Prediction', '["actor"] Prediction')
                .replace("is located is Ground", "is located is ____ Ground").replace("was is Ground", "was is ____ Ground"))
    assert restored.count("____") == line.count("____") + 2
    ours = paper_prompt("[QUERY]", ["REFERENCES"], "[LM PREDICTION]").replace(
        '["REFERENCES"]', "[LIST OF REFERENCES OF CORRECT OBJECT]")
    assert " ".join(ours.split()) == restored


def test_the_judge_takes_the_best_beam_per_cloze_then_the_mean():
    """Table 2: (1/|C|) sum_c max_b LLMJudge(Λ(o), b). Three clozes judged (no, yes, no), (no, no),
    (yes): best per cloze 1, 0, 1, mean 2/3. The verdict is the reply's first word, as the
    prompt's examples answer after "Correctness:"."""
    from factprobe.probes.methods.judge import Judged, paper_verdict

    judged = Judged(((False, True, False), (False, False), (True,)))
    assert judged.per_cloze == [1.0, 0.0, 1.0] and judged.score == 2 / 3
    assert Judged(((False,), (False,))).score == 0.0
    replies = ["correct", " Correct.", "Correctness: correct", '"correct"', "incorrect", "Incorrect", "yes", "",
               'The correct answer is "New York"']
    assert [paper_verdict(r) for r in replies] == [True, True, True, True, False, False, False, False, False]


# --- Issue 38 items 3 and 10 on SmolLM2 ------------------------------------------------------
UNITED_STATES = {"kind": "distractor", "split": "test", "id": "distractor:US", "fact": "US", "relation": "P36",
                 "subject_label": "the United States",
                 "object": "Q61", "object_label": "Washington, D.C.", "object_names": ["Washington, D.C.", "Washington"],
                 "gold": ["Washington, D.C.", "Washington"], "bucket": None, "frequency": None, "distractors": {}}
BEFORE = {"gold": "all-objects", "precision": "beams", "answer_cut": "punctuation", "max_tokens": 8}


@pytest.mark.slow
def test_beams_run_whole_and_count_only_o(tmp_path):
    """Item 10: the paper sets no cut; a beam ends at EOS or after the longest compared name plus 5
    tokens (" Washington, D.C." is 6 of SmolLM2's tokens: 11; " Bloemfontein" 5: 10). Item 3: Precision@n counts o's names
    only, over the n most probable next tokens (Table 2's top-k over the vocabulary)."""
    from factprobe.probes.methods.base import MethodContext
    from factprobe.probes.methods.baselines import Baselines

    scorer = real_scorer("smollm2-135m-instruct")
    shape = {"clozes": 2, "beams": 2, "n": 2}
    us, sa = Baselines(MethodContext(options=shape)).run(scorer, [UNITED_STATES, SOUTH_AFRICA])
    us_before, sa_before = Baselines(MethodContext(options={**shape, **BEFORE})).run(scorer, [UNITED_STATES,
                                                                                            SOUTH_AFRICA])
    print("paper:", us["candidates"], us["next_tokens"], sa["candidates"], sa["next_tokens"])
    print("before:", us_before["candidates"], sa_before["candidates"])
    tokens = lambda text: len(scorer.tokenizer.encode(text, add_special_tokens=False))  # noqa: E731
    assert (tokens(" Washington, D.C."), tokens(" Bloemfontein")) == (6, 5)
    assert (us["answer_tokens"], sa["answer_tokens"], us_before["answer_tokens"]) == (11, 10, 8)
    # Observed: the best beams say "Washington D.C." and go on; cut at ".", they read "Washington D".
    assert us["candidates"][1][0] == " Washington D.C., which is also the capital of"
    assert [beams[0] for beams in us_before["candidates"]] == [" Washington D", " Washington D"]
    assert not any("," in b or "." in b for beams in us_before["candidates"] + sa_before["candidates"] for b in beams)
    # Precision@2 by hand from the recorded next tokens and o's names.
    for record, names in ((us, UNITED_STATES["object_names"]), (sa, ["Bloemfontein"])):
        keys = {answer_key(n) for n in names}
        hand = [float(any(answer_key(t) in keys for t in top)) for top in record["next_tokens"]]
        assert record["precision_at_n_per_cloze"] == hand and record["precision_at_n"] == sum(hand) / 2
    assert (us["precision_at_n"], sa["precision_at_n"]) == (1.0, 0.0)
    # Before, " Cape Town" (another true capital) counted for Bloemfontein; now it does not.
    assert sa_before["names"] == SOUTH_AFRICA["gold"] and sa["names"] == ["Bloemfontein"]
    assert sa_before["candidates"][0][0] == " Cape Town" and sa_before["precision_at_n"] == 0.5
    assert sa["rouge_l"] == 0.0 and sa_before["rouge_l"] == 0.5


@pytest.mark.slow
@needs_server
def test_the_paper_judge_asks_every_beam_and_keeps_the_best_per_cloze(judge, tmp_path, monkeypatch):
    """Item 4 on real models: SmolLM2 answers, the same model served by llama-cpp judges with
    Appendix D's prompt, each beam of each cloze; the record's score is the mean over clozes of
    the best verdict over beams, and each verdict is the one the judge gives that exact prompt."""
    from factprobe.probes.methods.judge import judge_query, paper_prompt, paper_verdict
    from factprobe.probes.scoring.openai_api import OpenAIScorer
    from factprobe.probes.scoring.requests import GenerateRequest

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    probes = tmp_path / "us.jsonl"
    probes.write_text(json.dumps(UNITED_STATES) + "\n")
    summary = evaluate(real_scorer("smollm2-135m-instruct"), "baselines", probes, tmp_path / "run",
                       options={"clozes": 2, "beams": 2, "n": 2, "max_tokens": 4, "judge_model": "judge",
                                "judge_base_url": judge})
    (record,) = [json.loads(line) for line in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert record["clozes"] == ["The capital of the United States is", "the United States's capital city is"]
    verdicts = record["judge_verdicts"]
    assert [len(v) for v in verdicts] == [2, 2] == [len(b) for b in record["candidates"]]
    assert record["judge_per_cloze"] == [float(any(v)) for v in verdicts]
    assert record["judge"] == sum(record["judge_per_cloze"]) / 2
    served = OpenAIScorer("judge", base_url=judge, chat=True)
    asked = [paper_prompt(judge_query(cloze), ["Washington, D.C.", "Washington"], beam.strip())
             for cloze, beams in zip(record["clozes"], record["candidates"]) for beam in beams]
    assert asked[0].endswith("Query: The capital of the United States is ____\nGround truth: "
                             '["Washington, D.C.", "Washington"]\nPrediction: ' + record["candidates"][0][0].strip()
                             + "\nCorrectness:")
    replies = [g.texts[0] for g in served.generate([GenerateRequest(p, max_tokens=8) for p in asked])]
    print("beams:", record["candidates"], "replies:", replies, "verdicts:", verdicts)
    assert replies == [r for per in record["judge_replies"] for r in per]
    assert [paper_verdict(r) for r in replies] == [v for per in verdicts for v in per]
    # Observed: the 135M judge answers in a sentence ("The correct answer is ..."), no verdict.
    assert record["judge"] == summary.aggregate["baselines"]["judge"] == 0.0
    assert summary.aggregate["definitions"]["judge"]["prompt"] == "paper"

"""BELIEF-ICL: answer matching by lemmas, the Q/A prompt, the aggregate per ICL setting, and a real run of `factprobe eval --method belief-icl` on SmolLM2."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from factprobe.probes.evaluation.aggregate import aggregate
from factprobe.probes.measures.answers import answer_tokens, matches, matches_any, same_answer
from factprobe.probes.methods import METHODS, MethodContext
from factprobe.probes.methods.base import answer_key
from factprobe.probes.methods.belief_icl import SETTINGS, BeliefICL
from wikidata_builder import item as entity
from wikidata_builder import write_dump

# -- answers ---------------------------------------------------------------------------------


def test_answer_tokens_casefold_strip_punctuation_and_lemmatize():
    assert answer_tokens("Cities.") == ("city",)
    assert answer_tokens("  the CITY of Paris!! ") == ("the", "city", "of", "paris")
    assert answer_tokens("Buenos Aires") == ("buenos", "aires")
    assert answer_tokens("...") == () and answer_tokens("") == ()


def test_matches_is_gold_inside_prediction():
    assert matches("cities", "city") and matches("City", "cities")  # lemmas, either side
    assert matches("the city of Paris", "Paris")
    assert matches("Paris, France.", "Paris")
    assert not matches("Paris", "Paris Hilton")  # a part of a name is not the name
    assert not matches("Aires Buenos", "Buenos Aires")  # the gold's words in order, adjacent
    assert not matches("Parisian", "Paris")  # whole words only
    assert not matches("", "Paris") and not matches("Paris", "")  # no words: no match
    assert matches_any("It is Tokyo", ["Edo", "Tokyo"]) and not matches_any("Kyoto", ["Edo", "Tokyo"])


def test_same_answer_is_bidirectional():
    assert same_answer("Paris", "the city of Paris") and same_answer("the city of Paris", "Paris")
    assert not matches("Paris", "the city of Paris")  # accuracy's test is one-directional
    assert same_answer("Paris", "Paris Hilton")
    assert not same_answer("Paris", "Lyon")
    assert same_answer("", "...")  # two answers without words agree
    assert not same_answer("", "Paris")


# -- prompt ----------------------------------------------------------------------------------


def _item(**fields) -> dict:
    item = {"id": "belief-icl:F:0", "fact": "F", "relation": "P36", "subject_label": "France", "object_label": "Paris",
            "gold": ["Paris"], "template": "The capital of [X] is [Y].", "template_id": 0,
            "prompt": "The capital of France is [Y].",
            "demonstrations": {"zero-shot": [], "x-relation": [
                {"fact": "J", "relation": "P36", "template": "The capital of [X] is [Y].", "subject_label": "Japan",
                 "object_label": "Tokyo", "text": "The capital of Japan is Tokyo."},
                {"fact": "I", "relation": "P36", "template": "[Y] is the capital of [X].", "subject_label": "Italy",
                 "object_label": "Rome", "text": "Rome is the capital of Italy."}]}}
    return {**item, **fields}


def test_prompt_is_instruction_then_q_and_a_lines():
    method = BeliefICL(MethodContext({}))
    assert method.prompt(_item(), "x-relation") == (
        "Predict the [MASK] in each sentence in one word.\n"
        "Q: The capital of Japan is [MASK].\n"
        "A: Tokyo.\n"
        "Q: [MASK] is the capital of Italy.\n"
        "A: Rome.\n"
        "Q: The capital of France is [MASK].\n"
        "A:")
    assert method.prompt(_item(), "zero-shot") == (
        "Predict the [MASK] in each sentence in one word.\nQ: The capital of France is [MASK].\nA:")


# The paper's 4-template example, 000_d5e47173cc9830b1.txt:555-567: every demonstration's answer
# ends with a period ("A: Wehrmacht."), the question's "A:" with nothing.
PAPER_4_TEMPLATE = """Predict the [MASK] in each sentence in one word.
Q: [MASK] consists of Panzer Division Kempf.
A: Wehrmacht.
Q: [MASK] consists of Mount Bulusan.
A: Luzon.
Q: [MASK] consists of Army National Guard.
A: National Guard.
Q: [MASK] consists of pharmacy.
A: biology.
Q: [MASK] consists of environmental factors.
A:"""


def test_prompt_is_the_papers_appendix_e_example():
    template = "[Y] consists of [X]."
    demos = [{"fact": s, "relation": "P361", "template": template, "subject_label": s, "object_label": o,
              "text": f"{o} consists of {s}."}
             for s, o in [("Panzer Division Kempf", "Wehrmacht"), ("Mount Bulusan", "Luzon"),
                          ("Army National Guard", "National Guard"), ("pharmacy", "biology")]]
    item = _item(relation="P361", subject_label="environmental factors", template=template,
                 prompt="[Y] consists of environmental factors.",
                 demonstrations={"zero-shot": [], "x-template": demos})
    assert BeliefICL(MethodContext({})).prompt(item, "x-template") == PAPER_4_TEMPLATE
    # a label that ends with a period already keeps one
    dotted = {**demos[0], "object_label": "Washington, D.C."}
    assert "\nA: Washington, D.C.\n" in BeliefICL(MethodContext({})).prompt(
        {**item, "demonstrations": {"x-template": [dotted]}}, "x-template")


class Lines:
    """A generator that records its requests and answers each with `answer`, stopped as `reason` says."""

    identity = "lines"

    def __init__(self, answer: str = "Paris", reason: str = "stop") -> None:
        self.answer, self.reason, self.requests = answer, reason, []

    def generate(self, requests):
        from factprobe.probes.scoring.requests import Generation

        self.requests += list(requests)
        return [Generation((self.answer,) * r.n, (self.reason,) * r.n) for r in requests]


def test_answers_run_to_the_end_of_the_line_unless_a_cap_is_asked():
    # "LLMs generate responses without a token limit" (000_d5e47173cc9830b1.txt:98): by default
    # an answer stops at its newline, with only a 64-token guard against a line that never ends.
    from factprobe.probes.methods.belief_icl import LINE_GUARD

    method = BeliefICL(MethodContext({"samples": 2, "settings": ["zero-shot"]}))
    assert method.options["max_tokens"] is None and LINE_GUARD == 64
    scorer = Lines()
    method.run(scorer, [_item()])
    assert [(r.max_tokens, r.stop, r.n) for r in scorer.requests] == [(64, ("\n",), 1), (64, ("\n",), 2)]
    capped = Lines()
    BeliefICL(MethodContext({"samples": 2, "settings": ["zero-shot"], "max_tokens": 8})).run(capped, [_item()])
    assert [r.max_tokens for r in capped.requests] == [8, 8]
    for bad in (0, "8", 2.5, True):
        with pytest.raises(ValueError, match="max_tokens"):
            BeliefICL(MethodContext({"max_tokens": bad}))


def test_answers_cut_by_the_limit_are_counted_and_the_limit_named(tmp_path):
    from factprobe.probes.report import build_document, load_runs, to_markdown
    from factprobe.probes.evaluation.runner import evaluate

    probes = tmp_path / "p.jsonl"
    probes.write_text(json.dumps({**_item(), "kind": "belief-icl", "split": "test"}) + "\n")
    for name, options, reason, cut in (("line", {}, "stop", 0), ("capped", {"max_tokens": 8}, "length", 1)):
        result = evaluate(Lines(reason=reason), "belief-icl", probes, tmp_path / name,
                          options={"samples": 1, "settings": ["zero-shot"], **options}).aggregate
        assert result["by_setting"]["zero-shot"]["answers_cut"] == cut
        assert result["definitions"]["max_tokens"] == options.get("max_tokens")
    text = to_markdown(build_document(load_runs([tmp_path / "line", tmp_path / "capped"]), "t"))
    assert "answers run to the end of their line (BELIEF-ICL's)" in text
    assert "answers cut at 8 tokens, not BELIEF-ICL's (no cap); 1 greedy answer reached the limit" in text


def test_options_are_checked():
    assert BeliefICL(MethodContext({})).options["settings"] == list(SETTINGS)
    assert BeliefICL(MethodContext({"settings": "x-template, zero-shot"})).options["settings"] == [
        "x-template", "zero-shot"]
    assert BeliefICL(MethodContext({"settings": "all"})).options["settings"] == list(SETTINGS)
    for bad in ({"settings": "x-everything"}, {"samples": 0}, {"temperature": 0}, {"shots": -1}, {"shot": 3},
                {"prompt_style": "chat"}, {"sample_prompts": 0}, {"sample_prompts": "half"}):
        with pytest.raises(ValueError):
            BeliefICL(MethodContext(bad))
    old = _item()
    del old["demonstrations"]["x-relation"][0]["subject_label"]  # a set built before demos had labels
    with pytest.raises(ValueError, match="rebuild the probe set"):
        BeliefICL(MethodContext({})).prompt(old, "x-relation")


# -- aggregate -------------------------------------------------------------------------------


def _record(fact: str, template: int, **by_setting) -> dict:
    settings = {name: {"prediction": p, "correct": c, "confidence": conf, "one_word": len(p.split()) == 1}
                for name, (p, c, conf) in by_setting.items()}
    return {"id": f"{fact}:{template}", "fact": fact, "relation": "P36", "bucket": None, "template_id": template,
            "by_setting": settings, "correct": sum(s["correct"] for s in settings.values()) / len(settings)}


def test_aggregate_breaks_down_by_setting_with_lemma_consistency():
    records = [_record("A", 0, **{"x-relation": ("Paris", True, 1.0), "zero-shot": ("Lyon", False, 0.5)}),
               _record("A", 1, **{"x-relation": ("Paris, France", True, 0.5), "zero-shot": ("Paris", True, 0.5)}),
               _record("B", 0, **{"x-relation": ("Rome", True, 1.0), "zero-shot": ("Rome", True, 1.0)}),
               _record("B", 1, **{"x-relation": ("Milan", False, 1.0), "zero-shot": ("Rome.", True, 0.0)})]
    result = aggregate("belief-icl", records)
    assert result["accuracy"] == pytest.approx(0.75)  # mean over items of the share of settings correct
    shares = dict(result["by_relation"]["P36"])
    spread = shares.pop("interval")  # the items' shares of settings: a bootstrap over 4 items
    assert shares == {"accuracy": 0.75, "correct": 3.0, "total": 4}
    assert spread["method"] == "bootstrap" and spread["n"] == 4 and spread["few"] and spread["low"] <= 0.75
    rel = result["by_setting"]["x-relation"]
    assert rel["accuracy"] == 0.75 and rel["items"] == 4
    assert rel["consistency"] == 0.5  # "Paris" ~ "Paris, France" (bi-directional); "Rome" != "Milan"
    assert rel["one_word_ratio"] == 0.75
    assert rel["acc_at_1"]["mean"] == pytest.approx(0.75, abs=0.1) and rel["acc_at_1"]["min"] >= 0.5
    assert rel["overconfidence"] == pytest.approx((1.0 + 0.5 + 1.0 + 1.0) / 4 - 0.75)  # one answer per bin
    # intervals over the two facts: Acc@1 from each fact's share (A 2/2, B 1/2), Consist from its
    # pair (A agrees, B not), Ovconf re-binned per draw; each value is the figure itself
    assert rel["acc_at_1_interval"]["value"] == 0.75 and rel["acc_at_1_interval"]["n"] == 2
    assert rel["consistency_interval"]["value"] == 0.5 and rel["consistency_interval"]["method"] == "wilson"
    assert rel["overconfidence_interval"]["value"] == pytest.approx(rel["overconfidence"])
    assert rel["overconfidence_interval"]["few"] and rel["accuracy_interval"]["n"] == 4
    zero = result["by_setting"]["zero-shot"]
    assert zero["consistency"] == 0.5 and zero["acc_at_1"]["min"] == 0.5 and zero["acc_at_1"]["max"] <= 1.0
    counts = dict(zero["by_relation"]["P36"])
    wilson = counts.pop("interval")  # 3 of 4: Wilson's (.3006, .9544)
    assert counts == {"accuracy": 0.75, "correct": 3, "total": 4}
    assert (wilson["low"], wilson["high"]) == (pytest.approx(0.30064, abs=1e-4), pytest.approx(0.95441, abs=1e-4))


# -- a real model through the CLI ----------------------------------------------------------------

CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Egypt", "Cairo"), ("Kenya", "Nairobi"),
            ("Norway", "Oslo"), ("Spain", "Madrid"), ("Argentina", "Buenos Aires")]


@pytest.fixture(scope="module")
def belief_icl_set(tmp_path_factory):
    base = tmp_path_factory.mktemp("belief-icl")
    entities = [entity("Q6256", "country"), entity("Q5119", "capital")]
    for k, (country, capital) in enumerate(CAPITALS):
        entities.append(entity(f"Q{1000 + k}", country, claims={"P31": ["Q6256"], "P36": [f"Q{2000 + k}"]}))
        entities.append(entity(f"Q{2000 + k}", capital, claims={"P31": ["Q5119"]}))
    store = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "capitals.json", entities)), "--store", str(store), "--quiet",
            check=True)
    out = base / "belief-icl.jsonl"
    run_cli("probeset", "build", "--kind", "belief-icl", "--relation", "P36", "--shots", "2", "--manual-only",
            "--store", str(store), "--out", str(out), "--quiet", check=True)
    return out


def _eval(probes, out, limit: int) -> dict:
    proc = run_cli("eval", "--model", "smollm2-135m-instruct", "--method", "belief-icl", "--probes", str(probes),
                   "--out", str(out), "--option", "samples=5", "--option", "sample_prompts=all", "--limit", str(limit), "--stratify", "none",
                   "--batch", "1", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_belief_icl_on_smollm2_resumes_and_reports_every_setting(belief_icl_set, tmp_path):
    out = tmp_path / "run"
    first = _eval(belief_icl_set, out, 2)
    assert first["new"] == 2
    second = _eval(belief_icl_set, out, 3)  # the first two items are not asked again
    assert second["resumed_after"] == 2 and second["new"] == 1 and second["items"] == 3
    records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    items = {i["id"]: i for i in map(json.loads, belief_icl_set.read_text().splitlines())}
    assert len({r["fact"] for r in records}) == 1 and [r["template_id"] for r in records] == [0, 1, 2]
    for record in records:
        assert list(record["by_setting"]) == list(SETTINGS)
        for result in record["by_setting"].values():
            assert result["confidence"] == result["agreeing"] / 5 and 0 <= result["agreeing"] <= 5
            assert result["correct"] == matches_any(result["prediction"], items[record["id"]]["gold"])
            assert result["prediction"] == result["prediction"].strip() and "\n" not in result["prediction"]
    assert set(second["by_setting"]) == set(SETTINGS)
    for summary in second["by_setting"].values():
        for key in ("accuracy", "acc_at_1", "consistency", "overconfidence", "one_word_ratio", "reliability"):
            assert summary[key] is not None
    # With a few examples the model answers capitals in one word (observed: every ICL setting right here).
    assert second["by_setting"]["x-template"]["accuracy"] >= 2 / 3
    # the CLI's records are the method's own output, reproducible for the run's seed
    from factprobe.probes.scoring.loader import load_scorer

    method = METHODS["belief-icl"](MethodContext({"samples": 5, "sample_prompts": "all"}, seed=0))
    assert method.run(load_scorer("smollm2-135m-instruct"), [items[records[0]["id"]]]) == records[:1]


# -- bias level (content-free questions) ------------------------------------------------------


def test_content_free_prompt_replaces_only_the_questions_subject():
    method = BeliefICL(MethodContext({"content_free": True}))
    assert method.prompt(_item(), "x-relation", "N/A") == (
        "Predict the [MASK] in each sentence in one word.\n"
        "Q: The capital of Japan is [MASK].\n"
        "A: Tokyo.\n"
        "Q: [MASK] is the capital of Italy.\n"
        "A: Rome.\n"
        "Q: The capital of N/A is [MASK].\n"
        "A:")
    with pytest.raises(ValueError, match="content_free_token"):
        BeliefICL(MethodContext({"content_free_token": ""}))


def test_aggregate_bias_level_per_setting_over_relations():
    def biased(record, setting, free):
        record["by_setting"][setting]["content_free_prediction"] = free
        return record

    records = [biased(_record("A", 0, **{"zero-shot": ("Paris", True, 1.0)}), "zero-shot", "paris."),
               biased(_record("B", 0, **{"zero-shot": ("Rome", True, 1.0)}), "zero-shot", "Paris"),
               biased({**_record("C", 0, **{"zero-shot": ("Spain", True, 1.0)}), "relation": "P17"}, "zero-shot",
                      "Spain")]
    zero = aggregate("belief-icl", records)["by_setting"]["zero-shot"]
    # P36: "Paris" ~ "paris." (answer_key), "Rome" != "Paris" -> 1/2; P17: 1/1. Relations weigh equally.
    assert zero["bias_level_by_relation"] == {"P36": 0.5, "P17": 1.0}
    assert zero["bias_level"] == 0.75
    without = aggregate("belief-icl", [_record("A", 0, **{"zero-shot": ("Paris", True, 1.0)})])
    assert without["by_setting"]["zero-shot"]["bias_level"] is None


@pytest.mark.slow
def test_content_free_answers_are_the_models_greedy_answers_on_smollm2():
    from factprobe.probes.measures import bias_level
    from factprobe.probes.scoring.requests import GenerateRequest
    from scoring_models import real_scorer

    scorer = real_scorer("smollm2-135m-instruct")
    items = [_item(), _item(id="belief-icl:G:0", fact="G", subject_label="Germany", object_label="Berlin",
                            gold=["Berlin"], prompt="The capital of Germany is [Y].")]
    method = BeliefICL(MethodContext({"content_free": True, "samples": 1, "settings": ["zero-shot", "x-relation"]}))
    before = scorer.work.requests
    records = method.run(scorer, items)
    # 2 items x 2 settings x (greedy + samples), and 2 content-free prompts: the two facts share their
    # template and demonstrations, so without the subject their prompts are the same
    assert scorer.work.requests - before == 8 + 2
    answers, free, relations = [], [], []
    for item, record in zip(items, records):
        for setting, result in record["by_setting"].items():
            text = method.prompt(item, setting).replace(f"of {item['subject_label']} is", "of N/A is")
            [greedy] = scorer.generate([GenerateRequest(text, max_tokens=64, stop=("\n",))])
            assert result["content_free_prediction"] == greedy.texts[0].strip()
            answers.append(answer_key(result["prediction"]))
            free.append(answer_key(result["content_free_prediction"]))
            relations.append(setting)
    summary = aggregate("belief-icl", records)["by_setting"]
    for setting in ("zero-shot", "x-relation"):
        mine = [k for k, s in enumerate(relations) if s == setting]
        expected = bias_level([answers[k] for k in mine], [free[k] for k in mine], ["P36"] * len(mine))
        assert summary[setting]["bias_level"] == expected == summary[setting]["bias_level_by_relation"]["P36"]
    # Observed: with "N/A" the model repeats "N/A." after the examples (and says nothing zero-shot),
    # never what it says for France or Germany.
    assert [r["by_setting"]["x-relation"]["content_free_prediction"] for r in records] == ["N/A."] * 2
    assert summary["zero-shot"]["bias_level"] == summary["x-relation"]["bias_level"] == 0.0

"""KDF's scoring option (issue 19.3): letters (the paper's), the option texts' full log-likelihood,
or the same per token; each checked against the scorer asked one option at a time on SmolLM2."""

from __future__ import annotations

import pytest

from factprobe.probes.methods import MethodContext
from factprobe.probes.methods.kdf import KDF
from factprobe.probes.scoring.requests import LoglikelihoodRequest

DEMO = {"question": "What is the capital of Japan?", "options": ["Osaka", "Tokyo", "Kyoto", "Nagoya"], "answer": "B"}
ITEM = {"id": "kdf:F:0", "fact": "F", "relation": "P36", "question": "What is the capital of France?",
        "options": ["Lyon", "Marseille", "Paris", "Saint-Jean-de-Maurienne"], "answer": "C", "demonstrations": [DEMO]}


def test_option_text_prompts_answer_the_demonstrations_with_their_text():
    letters, text = KDF(MethodContext({})), KDF(MethodContext({"scoring": "option-text"}))
    assert letters.prompt(ITEM).split("\n\n")[0].endswith("Answer: B")
    assert text.prompt(ITEM).split("\n\n")[0].endswith("Answer: Tokyo")
    # the paper's frame by default ("A: option", seed 003 line 188); the earlier one by name
    assert text.prompt(ITEM).endswith("D: Saint-Jean-de-Maurienne\nAnswer:")
    earlier = KDF(MethodContext({"scoring": "option-text", "frame": "qa"}))
    assert earlier.prompt(ITEM).endswith("D. Saint-Jean-de-Maurienne\nAnswer:")
    assert letters.continuations(ITEM) == (" A", " B", " C", " D")
    assert text.continuations(ITEM) == (" Lyon", " Marseille", " Paris", " Saint-Jean-de-Maurienne")


def test_unknown_scoring_is_refused():
    with pytest.raises(ValueError, match="option-text-norm"):
        KDF(MethodContext({"scoring": "words"}))


@pytest.mark.parametrize("scoring", ["letters", "option-text", "option-text-norm"])
def test_the_choice_is_the_argmax_of_each_option_scored_alone(scoring):
    from scoring_models import real_scorer

    scorer = real_scorer("smollm2-135m-instruct")
    method = KDF(MethodContext({"scoring": scoring}))
    [record] = method.run(scorer, [ITEM])
    alone = [scorer.loglikelihood([LoglikelihoodRequest(method.prompt(ITEM), (c,))])[0][0]
             for c in method.continuations(ITEM)]
    ranked = [s.logprob / s.n_tokens if scoring == "option-text-norm" else s.logprob for s in alone]
    assert record["prediction"] == "ABCD"[max(range(4), key=lambda k: (ranked[k], -k))]
    assert record["scoring"] == scoring and record["correct"] == (record["prediction"] == "C")
    logged = {"letters": "letter_logprobs", "option-text": "option_logprobs"}.get(scoring, "option_logprob_sums")
    assert record[logged] == pytest.approx([s.logprob for s in alone], abs=1e-4)
    # the record keeps what was compared, under the name `compared` gives (issue 45 item 13)
    assert record[record["compared"]] == pytest.approx(ranked, abs=1e-4) and record["choices"] == 4
    if scoring != "letters":
        # the long name has many tokens: the per-token score is what keeps it in the race
        assert record["option_tokens"][3] > record["option_tokens"][2]


def test_the_report_names_the_scoring_a_run_used():
    from factprobe.probes.report.loading import Run

    run = Run("r", {"method": "kdf", "options": {"shots": None, "scoring": "option-text-norm"}}, {}, ())
    assert run.changed_options == {"scoring": "option-text-norm"}
    assert Run("r", {"method": "kdf", "options": {"shots": None, "scoring": "letters"}}, {}, ()).changed_options == {}


def test_the_bucket_plot_knows_chance_and_the_label_names_the_options():
    from factprobe.probes.report.loading import Run
    from factprobe.probes.report.plots import chance_level

    kdf = Run("r", {"method": "kdf", "model": "m", "options": {"scoring": "option-text"}}, {},
              ({"option_logprobs": [-1.0] * 4}, {"letter_logprobs": [-1.0] * 4}))
    assert chance_level(kdf) == 0.25 and kdf.label == "m / kdf (scoring=option-text)"
    assert chance_level(Run("r", {"method": "ic-lke"}, {}, ({"choices": 20}, {"choices": 10}))) == 0.075
    assert chance_level(Run("r", {"method": "distractor"}, {}, ({"min_at_n": 1.0},))) is None

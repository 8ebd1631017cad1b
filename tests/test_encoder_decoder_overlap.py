"""BELIEF's knowledge sharing between an encoder and a decoder (seed 000 =
../shared/papers/000_d5e47173cc9830b1.txt, section 6.4, lines 271-273): "the average sharing rate
between encoder- and decoder-based PLMs reduced to 47.1%", a masked LM run with `belief` against
a causal LM run with `belief-icl` over the same MyriadLAMA prompts. Both read "the correctly
predicted facts for each template" (000:271), so the unit is (fact, template); a BELIEF-ICL run
is read in one ICL setting, zero-shot by default: 000:273 sets the 47.1% against the decoders'
own rate "in the zero-shot setting", the one setting in which the decoders, like the encoders,
see no demonstrations. `--icl-setting` names another.

Both runs here are made by the real methods over the imported MyriadLAMA rows
(tests/fixtures/myriadlama/published_shape.jsonl), with models written as tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from factprobe.probes.methods.belief_icl import SETTINGS
from factprobe.probes.report import Definitions, build_document, comparable_pairs, compare, load_run, load_runs, \
    to_markdown
from factprobe.probes.evaluation.runner import evaluate
from factprobe.probes.scoring.requests import Generation, MaskCandidate

ROWS = Path(__file__).parent / "fixtures" / "myriadlama" / "published_shape.jsonl"

# The prompts each model gets right (every other prompt it answers "Nobody"). Units, P178: win,
# linux, mac under templates 0-2 (9); P36: fr, jp under 0-1 (4); a unit is covered when one of its
# subject expressions is right.
BELIEF_RIGHT = {  # masked LM; per item: 1/3, 1/6, 1/3, 1/2, 1/4 of its prompts
    "Microsoft Windows was developed by [MASK].",  # (win, 0) by its second subject expression
    "[MASK] is the developer of Windows.",  # (win, 2)
    "Linux kernel was developed by [MASK].",  # (linux, 0)
    "Who developed macOS? [MASK].",  # (mac, 1)
    "The capital of France is [MASK].",  # (fr, 0)
    "What is the capital of Japan? [MASK].",  # (jp, 1)
}
ZERO_SHOT_RIGHT = {  # causal LM without demonstrations; per item: 1/6, 1/2, 1/3, 1, 1/4
    "Windows was developed by [MASK].",  # (win, 0) by the other subject expression
    "Who developed Linux kernel? [MASK].", "Who developed Linux? [MASK].",  # (linux, 1)
    "[MASK] is the developer of Linux.",  # (linux, 2)
    "Who developed macOS? [MASK].",  # (mac, 1)
    "The capital of France is [MASK].", "What is the capital of France? [MASK].",  # (fr, 0), (fr, 1)
    "What is the capital of Nippon? [MASK].",  # (jp, 1)
}
# With demonstrations (x-template) the causal LM gets every prompt right.
GOLD = {"Windows": "Microsoft", "Linux": "Linus Torvalds", "macOS": "Apple", "France": "Paris", "Japan": "Tokyo",
        "Nippon": "Tokyo"}

# By hand, zero-shot. A (BELIEF) covers P178 {win0, win2, linux0, mac1}, P36 {fr0, jp1}: 6.
# B (BELIEF-ICL) covers P178 {win0, linux1, linux2, mac1}, P36 {fr0, fr1, jp1}: 7. Both: win0, mac1,
# fr0, jp1: 4 of 13 units; neither 13 - (6 + 7 - 4) = 4.
#   sharing (asymmetric, pooled): 4/6 of A's, 4/7 of B's
#   subsumption A->B: P178 2/4, P36 2/2 -> 0.75; B->A: P178 2/4, P36 2/3 -> 7/12
# x-template: B covers all 13 units: sharing 6/6 and 6/13; A->B 1.0; B->A P178 4/9, P36 2/4 -> 17/36.
ZERO_SHOT = {"shared_units": 13, "shared_items": 5, "both": 4, "only_a": 2, "only_b": 3, "neither": 4,
             "subsumption_a_to_b": 0.75, "subsumption_b_to_a": 7 / 12, "sharing": {"a": 4 / 6, "b": 4 / 7},
             "relations": 2, "pearson": 1.0, "kendall_tau": 1.0}


class MaskTable:
    identity = "table-mlm"

    def fill_mask(self, requests):
        return [[MaskCandidate(_gold_of(r.text) if r.text in BELIEF_RIGHT else "Nobody", 0, 0.5)] for r in requests]


class LinesTable:
    """A causal LM: the question is the prompt's last `Q:` line; right on every prompt with
    demonstrations, and without them on ZERO_SHOT_RIGHT's."""

    identity = "table-causal"

    def generate(self, requests):
        out = []
        for r in requests:
            question = r.prompt.rsplit("Q: ", 1)[1].split("\nA:")[0]
            shown = r.prompt.count("Q: ") > 1
            answer = _gold_of(question) if shown or question in ZERO_SHOT_RIGHT else "Nobody"
            out.append(Generation((answer,) * r.n, ("stop",) * r.n))
        return out


def _gold_of(text: str) -> str:
    # the longest subject name first: "Microsoft Windows" and "Linux kernel" hold another one
    for name in sorted(GOLD, key=len, reverse=True):
        if name in text:
            return GOLD[name]
    raise AssertionError(text)


@pytest.fixture
def runs(tmp_path) -> tuple[Path, Path]:
    probes = tmp_path / "myriadlama.jsonl"
    run_cli("probeset", "import", "--format", "myriadlama", str(ROWS), "--out", str(probes), check=True)
    encoder, decoder = tmp_path / "bert-belief", tmp_path / "llama-belief-icl"
    evaluate(MaskTable(), "belief", probes, encoder, options={"objects": "all", "content_free": False})
    evaluate(LinesTable(), "belief-icl", probes, decoder,
             options={"shots": 1, "samples": 1, "settings": ["zero-shot", "x-template"]})
    return encoder, decoder


def test_the_records_have_the_shapes_the_hand_count_reads(runs):
    encoder, decoder = ([json.loads(line) for line in (run / "items.jsonl").read_text().splitlines()] for run in runs)
    assert [(r["id"], r["correct"]) for r in encoder] == [
        ("cloze:u-win", pytest.approx(1 / 3)), ("cloze:u-linux", pytest.approx(1 / 6)),
        ("cloze:u-mac", pytest.approx(1 / 3)), ("cloze:u-fr", 0.5), ("cloze:u-jp", 0.25)]
    assert encoder[0]["template_ids"] == [0, 0, 1, 1, 2, 2]
    assert encoder[0]["prompt_correct"] == [False, True, False, False, True, False]
    zero = [[p["by_setting"]["zero-shot"]["correct"] for p in r["prompts"]] for r in decoder]
    assert [sum(z) / len(z) for z in zero] == [pytest.approx(1 / 6), 0.5, pytest.approx(1 / 3), 1.0, 0.25]
    assert all(p["by_setting"]["x-template"]["correct"] for r in decoder for p in r["prompts"])


def test_a_belief_run_and_a_belief_icl_run_share_fact_template_units_in_zero_shot(runs):
    a, b = map(load_run, runs)
    data = compare(a, b).as_dict()
    overlap = data["overlap"]
    assert {key: overlap[key] for key in ZERO_SHOT} == {
        **ZERO_SHOT, "subsumption_b_to_a": pytest.approx(7 / 12),
        "sharing": {"a": pytest.approx(4 / 6), "b": pytest.approx(4 / 7)}}
    assert overlap["definitions"] == {"known": "per-template", "sharing": "asymmetric", "icl_setting": "zero-shot"}
    assert "zero-shot" in data["known_rule"] and "000:271-273" in data["known_rule"]
    # the other way round: the rates swap sides
    back = compare(b, a).as_dict()["overlap"]
    assert back["sharing"] == {"a": pytest.approx(4 / 7), "b": pytest.approx(4 / 6)}
    assert (back["subsumption_a_to_b"], back["subsumption_b_to_a"]) == (pytest.approx(7 / 12), 0.75)
    x = compare(a, b, Definitions(icl_setting="x-template")).as_dict()["overlap"]
    assert (x["both"], x["only_a"], x["only_b"], x["neither"]) == (6, 0, 7, 0)
    assert x["sharing"] == {"a": 1.0, "b": pytest.approx(6 / 13)}
    assert (x["subsumption_a_to_b"], x["subsumption_b_to_a"]) == (1.0, pytest.approx(17 / 36))
    assert x["definitions"]["icl_setting"] == "x-template"
    # --known per-prompt: the 21 prompts; both right on "Who developed macOS?" and "The capital of
    # France is" only (A's Japan and B's Nippon prompt differ): 2 of A's 6 and of B's 8.
    prompts = compare(a, b, Definitions(known="per-prompt")).overlap
    assert (prompts.shared, prompts.both, prompts.only_a, prompts.only_b) == (21, 2, 4, 6)
    assert (prompts.sharing_a, prompts.sharing_b) == (pytest.approx(1 / 3), 0.25)
    # --known all-prompts: an item known when every prompt is right; only B's France, in zero-shot
    items = compare(a, b, Definitions(known="all-prompts")).overlap
    assert (items.shared, items.both, items.only_a, items.only_b, items.neither) == (5, 0, 0, 1, 4)


def test_the_report_pairs_them(runs):
    loaded = load_runs(list(runs))
    assert [r.method for r in loaded] == ["belief-icl", "belief"]  # sorted by model: table-causal first
    (pair,) = comparable_pairs(loaded)
    assert (pair.overlap.sharing_a, pair.overlap.sharing_b) == (pytest.approx(4 / 7), pytest.approx(4 / 6))
    text = to_markdown(build_document(loaded, "t"))
    assert "| belief-icl / belief |" in text
    assert "| 13 | 0.5833 | 0.7500 | 0.5714 | 0.6667 | 4 | 3 | 2 | 4 |" in text
    assert "BELIEF-ICL run is read in its zero-shot setting" in text
    # a setting the decoder was not run in pairs nothing
    assert comparable_pairs(loaded, Definitions(icl_setting="x-random")) == []


def test_compare_json_on_the_two_folders(runs):
    encoder, decoder = map(str, runs)
    data = json.loads(run_cli("compare", encoder, decoder, "--json", check=True).stdout)
    overlap = data["overlap"]
    assert (overlap["shared_units"], overlap["shared_items"], overlap["both"], overlap["only_a"], overlap["only_b"],
            overlap["neither"]) == (13, 5, 4, 2, 3, 4)
    assert overlap["sharing"] == {"a": pytest.approx(4 / 6), "b": pytest.approx(4 / 7)}
    assert (overlap["subsumption_a_to_b"], overlap["subsumption_b_to_a"]) == (0.75, pytest.approx(7 / 12))
    assert overlap["definitions"] == {"known": "per-template", "sharing": "asymmetric", "icl_setting": "zero-shot"}
    assert (data["a"]["method"], data["b"]["method"], data["same_method"], data["same_probe_set"]) == (
        "belief", "belief-icl", False, True)
    x = json.loads(run_cli("compare", encoder, decoder, "--json", "--icl-setting", "x-template", check=True).stdout)
    assert x["overlap"]["sharing"] == {"a": 1.0, "b": pytest.approx(6 / 13)}
    assert x["overlap"]["definitions"]["icl_setting"] == "x-template"
    text = run_cli("compare", encoder, decoder, check=True).stdout
    assert "sharing (asymmetric) of A's 0.6667  of B's 0.5714" in text
    missing = run_cli("compare", encoder, decoder, "--icl-setting", "x-random")
    assert missing.returncode == 2
    assert "has no x-random answers" in missing.stderr and "zero-shot, x-template" in missing.stderr


def test_same_method_comparisons_do_not_name_a_setting(runs):
    decoder = load_run(runs[1])
    overlap = compare(decoder, decoder).as_dict()["overlap"]
    assert overlap["definitions"] == {"known": "per-template", "sharing": "asymmetric"}
    assert overlap["shared_units"] == 26  # (fact, template, setting): 13 units in each of two settings


def test_the_settings_are_the_methods():
    from factprobe.probes.report import ICL_SETTINGS

    assert ICL_SETTINGS == SETTINGS
    assert Definitions().icl_setting == "zero-shot"
    with pytest.raises(ValueError, match="icl_setting must be one of zero-shot"):
        Definitions(icl_setting="4-template")

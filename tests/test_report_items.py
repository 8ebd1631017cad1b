"""The report's item view (issue 39.1, 39.3, 39.5): every method's records mapped into one shape
(probes/report/items_shape.py) with the values the records hold, the filters' one rule
(items_filter.py), the seeded sample a page holds past its size, the page's escaping, the runs
table's measures, and the walkthrough's Germany-Berlin item in the sample job's items.html.

The sample job is tests/fixtures/sample_job.tar.xz: the 10 run folders (run.json, aggregate.json,
items.jsonl) and the 4 probe sets that `factprobe run` wrote at commit 48a6d42 (SmolLM2-135M-Instruct
and gemma-3-270m on the shipped sample), laid out as the pipeline lays them out (runs/, probesets/)."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

from conftest import FIXTURES
from factprobe.probes.report import write_report
from factprobe.probes.report.items_data import ItemViewOptions, find_probe_set, items_payload, prompt_maker, \
    read_probe_items
from factprobe.probes.report.items_filter import ItemQuery, disagreeing, sample_ids, select
from factprobe.probes.report.items_page import embedded_json, items_html
from factprobe.probes.report.items_script import SCRIPT
from factprobe.probes.report.items_shape import outcome_of, rows_of
from factprobe.probes.report.loading import load_runs
from factprobe.probes.report.sections import run_measure

GERMANY = "kdf:Q183$B78AF06D-2802-52B5-AF72-62CB1BEEE986"  # docs/walkthrough.md's item


def unpack_sample(target: Path) -> Path:
    with tarfile.open(FIXTURES / "sample_job.tar.xz") as archive:
        archive.extractall(target, filter="data")
    return target


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return unpack_sample(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def runs(sample):
    return load_runs(sorted((sample / "runs").iterdir()))


@pytest.fixture(scope="module")
def payload(runs):
    return items_payload(runs)


def record_of(sample: Path, run: str, item_id: str) -> dict:
    for line in (sample / "runs" / run / "items.jsonl").read_text().splitlines():
        if json.loads(line)["id"] == item_id:
            return json.loads(line)
    raise LookupError(item_id)


def probe_item(sample: Path, name: str, item_id: str) -> dict:
    return read_probe_items(sample / "probesets" / name, {item_id}).items[item_id]


# -- the mapping, one family at a time ----------------------------------------------------------


def test_kdf_letters_show_the_prompt_options_scores_and_names(sample):
    record = record_of(sample, "smollm2-135m-instruct--kdf--kdf", GERMANY)
    [row] = rows_of("kdf", record, probe_item(sample, "kdf.jsonl", GERMANY))
    assert row.context + row.question == record["prompt"]  # the prompt as scored, cut before the question
    assert row.context.endswith("Answer: D\n\n") and row.context.count("\n\n") == 2
    assert row.question == "The capital of Germany is ____\nA: Rabat\nB: Naypyidaw\nC: Berlin\nD: Amsterdam\nAnswer:"
    assert (row.pick, row.gold, row.names, row.outcome, row.bucket) == (
        "A: Rabat", "C: Berlin", ("Berlin", "Berlin, Germany"), "wrong", "[100,inf)")
    assert [(c.text, c.score, c.picked, c.gold) for c in row.choices] == [
        ("A: Rabat", -1.275524, True, False), ("B: Naypyidaw", -1.495848, False, False),
        ("C: Berlin", -1.404738, False, True), ("D: Amsterdam", -2.086561, False, False)]
    assert row.score_name == "log-probability of the letter" and row.key == GERMANY


def test_kdf_per_token_scores_and_options_read_from_the_prompt_without_the_probe_set(sample):
    record = record_of(sample, "smollm2-135m-instruct--kdf-text--kdf", GERMANY)
    [row] = rows_of("kdf", record)  # no probe item: the options come from the prompt's lines
    assert [c.text for c in row.choices] == ["A: Rabat", "B: Naypyidaw", "C: Berlin", "D: Amsterdam"]
    # option-text-norm ranks by log-probability per token: -9.186548 over 2 tokens, -5.598992 over 5
    assert [c.score for c in row.choices] == [-9.186548 / 2, -5.598992 / 5, -2.383715, -3.871593]
    assert (row.pick, row.gold, row.outcome) == ("B: Naypyidaw", "C: Berlin", "wrong")
    assert row.choices[1].note == "-5.598992 over 5 token(s)"
    assert row.names == ("Berlin",)  # the record's object label: the names are the probe set's


def test_kdf_per_token_scores_as_a_run_since_issue_45_records_them(sample):
    """A record that keeps the compared means (`option_logprobs_per_token`) and the sums beside
    them shows the means as scores and the sums in the note; the same verdict as the old record."""
    old = record_of(sample, "smollm2-135m-instruct--kdf-text--kdf", GERMANY)
    sums, tokens = old["option_logprobs"], old["option_tokens"]
    new = {k: v for k, v in old.items() if k != "option_logprobs"}
    new.update(option_logprobs_per_token=[s / n for s, n in zip(sums, tokens)], option_logprob_sums=sums,
               compared="option_logprobs_per_token")
    [row] = rows_of("kdf", new)
    assert [c.score for c in row.choices] == [-9.186548 / 2, -5.598992 / 5, -2.383715, -3.871593]
    assert row.choices[1].note == "-5.598992 over 5 token(s)" and row.pick == "B: Naypyidaw"


def test_ic_lke_rebuilds_its_prompt_with_the_methods_own_code(sample, runs):
    run = next(r for r in runs if r.folder.endswith("smollm2-135m-instruct--ic-lke--capitals-mc"))
    item_id = "icl-mc:Q2844$DAC83397-27C9-5689-AEF8-E1ED8B77DB51"
    probes = read_probe_items(sample / "probesets" / "capitals-mc.jsonl", {item_id})
    prompt = prompt_maker("ic-lke", run.config, probes)
    [row] = rows_of("ic-lke", record_of(sample, Path(run.folder).name, item_id), probes.items[item_id], prompt)
    assert row.context == ("Pretoria: South Africa\nLuxembourg: Luxembourg\nMadrid: Spain\nOttawa: Canada\n"
                           "Vienna: Austria\nNaypyidaw: Myanmar\nWellington: New Zealand\nLima: Peru\n"
                           "Nairobi: Kenya\nTehran: Iran\n")  # the 10 examples the seed drew for this item
    assert row.question == "Brasília"
    assert len(row.choices) == 20 and row.choices[2].text == "Brazil"
    assert (row.choices[2].picked, row.choices[2].gold, row.choices[2].score) == (True, True, -0.253366332501173)
    assert row.choices[2].note == "normalized probability 0.9854"
    assert [c.score for k, c in enumerate(row.choices) if k != 2] == [None] * 19  # not recorded by the run
    assert row.names == ("Brazil", "Brasil", "Federative Republic of Brazil")
    assert row.measures == {"probability": 0.9853574678463349, "gold_logprob": -0.253366332501173, "choices": 20}


def test_a_choice_record_without_its_probe_set_shows_pick_and_gold():
    record = {"id": "q1", "relation": "P36", "subject_label": "Peru", "object_label": "Lima", "bucket": "0",
              "prediction": "Quito", "predicted_index": 1, "answer_index": 0, "correct": False,
              "probability": 0.6, "gold_logprob": -2.5}
    [row] = rows_of("ic-lke", record)
    assert [(c.text, c.score, c.picked, c.gold) for c in row.choices] == [("Quito", None, True, False),
                                                                           ("Lima", -2.5, False, True)]
    assert (row.context, row.question, row.outcome) == ("", "", "wrong")
    assert any("probe set, which was not found" in note for note in row.notes)


def test_belief_icl_has_a_row_per_setting_with_its_prompt(sample, runs):
    run = next(r for r in runs if r.method == "belief-icl")
    item_id = "belief-icl:Q836|P30:0"
    probes = read_probe_items(sample / "probesets" / "belief-icl.jsonl", {item_id})
    rows = rows_of("belief-icl", record_of(sample, Path(run.folder).name, item_id), probes.items[item_id],
                   prompt_maker("belief-icl", run.config, probes))
    assert [(r.setting, r.key, r.outcome, r.pick) for r in rows] == [
        ("zero-shot", item_id + "|zero-shot", "wrong", "Myanmar is located on the continent"),
        ("x-template", item_id + "|x-template", "right", "Asia.")]
    assert rows[0].context == "Predict the [MASK] in each sentence in one word.\n"
    assert rows[1].context == ("Predict the [MASK] in each sentence in one word.\n"
                               "Q: Russia is located on the continent of [MASK].\nA: Europe.\n"
                               "Q: Switzerland is located on the continent of [MASK].\nA: Europe.\n"
                               "Q: Indonesia is located on the continent of [MASK].\nA: Asia.\n"
                               "Q: Croatia is located on the continent of [MASK].\nA: Europe.\n")
    assert rows[1].question == "Q: Myanmar is located on the continent of [MASK].\nA:"
    assert [(c.text, c.score, c.gold) for c in rows[1].choices] == [("Asia.", 1.0, True)]
    assert rows[1].measures == {"confidence": 1.0, "agreeing": 5, "one_word": True, "finish_reason": "stop"}


def test_distractor_has_a_row_per_strategy_the_gold_against_its_distractors():
    record = {"id": "d1", "relation": "P36", "subject_label": "Peru", "object_label": "Lima", "object": "Q2868",
              "bucket": None, "correct": None,
              "by_strategy": {"random": {"min_at_n": 1.0, "avg_at_n": 1.0, "compared": 2, "skipped": [],
                                         "distractors": ["Q1", "Q2"]},
                              "sem": {"min_at_n": 0.0, "avg_at_n": 0.5, "compared": 2, "skipped": ["Q9"],
                                      "distractors": ["Q3", "Q4", "Q9"]}},
              "per_cloze": [{"cloze": "The capital of Peru is",
                             "log_plausibility": {"Q2868": -3.0, "Q1": -9.0, "Q2": -8.0, "Q3": -2.0, "Q4": -4.0}}]}
    item = {"distractors": {"random": [{"entity": "Q1", "label": "Oslo"}, {"entity": "Q2", "label": "Rome"}],
                            "sem": [{"entity": "Q3", "label": "Quito"}, {"entity": "Q4", "label": "Bogotá"},
                                    {"entity": "Q9", "label": "Unnamed"}]}}
    random_row, sem_row = rows_of("distractor", record, item)
    assert (random_row.strategy, random_row.key, random_row.outcome, random_row.pick) == ("random", "d1|random",
                                                                                         "right", "Lima")
    assert [(c.text, c.score, c.picked, c.gold) for c in sem_row.choices] == [
        ("Lima", -3.0, False, True), ("Quito", -2.0, True, False), ("Bogotá", -4.0, False, False),
        ("Unnamed", None, False, False)]
    assert (sem_row.outcome, sem_row.pick, sem_row.question, sem_row.bucket) == ("wrong", "Quito",
                                                                                 "The capital of Peru is", "none")
    assert sem_row.measures == {"min_at_n": 0.0, "avg_at_n": 0.5, "compared": 2, "skipped": "Q9"}


def test_baselines_show_the_greedy_answer_and_the_beams():
    record = {"id": "b1", "relation": "P36", "subject_label": "Peru", "object_label": "Lima", "bucket": "0",
              "cloze": "The capital of Peru is", "clozes": ["The capital of Peru is", "Peru's capital is"],
              "names": ["Lima", "Lima, Peru"], "answer": "the city of", "probability": 0.25, "correct": False,
              "candidates": [[" Lima", " the city of"]], "precision_at_n": 1.0, "rouge_l": 0.5, "judge": None}
    [row] = rows_of("baselines", record)
    assert [(c.text, c.picked, c.gold, c.note) for c in row.choices] == [
        ("the city of", True, False, "greedy answer"), ("Lima", False, True, "candidate 1"),
        ("the city of", False, False, "candidate 2")]
    assert (row.question, row.context, row.names) == ("The capital of Peru is", "Peru's capital is\n",
                                                      ("Lima", "Lima, Peru"))
    assert row.measures == {"probability": 0.25, "precision_at_n": 1.0, "rouge_l": 0.5, "judge": None}


def test_belief_shows_an_answer_per_prompt():
    record = {"id": "m1", "relation": "P36", "subject_label": "Peru", "object_label": "Lima", "bucket": "0",
              "predictions": ["lima", "quito", "lima"], "prompt_correct": [True, False, True],
              "confidence": [0.5, 0.25, 0.75], "template_ids": [0, 1, 2], "unit": "fact", "correct": 2 / 3}
    item = {"gold": ["Lima"], "prompts": [{"text": "Peru's capital is [Y]."}, {"text": "[Y] is Peru's capital."},
                                          {"text": "The capital of Peru is [Y]."}]}
    [row] = rows_of("belief", record, item)
    assert [(c.text, c.score, c.gold, c.note) for c in row.choices] == [
        ("lima", 0.5, True, "Peru's capital is [Y]."), ("quito", 0.25, False, "[Y] is Peru's capital."),
        ("lima", 0.75, True, "The capital of Peru is [Y].")]
    assert (row.pick, row.outcome, row.correct) == ("lima", "partly", 2 / 3)


def test_a_method_without_a_declared_view_shows_its_plain_fields():
    [row] = rows_of("toy", {"id": "t1", "relation": "P1", "prediction": "x", "correct": True, "prompt": "say x",
                            "score": 0.5, "extra": [1, 2]})
    assert (row.question, row.pick, row.outcome, row.measures) == ("say x", "x", "right", {"score": 0.5})


def test_outcomes():
    assert [outcome_of(v) for v in (True, False, 1.0, 0.0, 0.5, None, 1)] == [
        "right", "wrong", "right", "wrong", "partly", "unscored", "right"]


# -- filters and the sample ---------------------------------------------------------------------

ROWS = [{"run": "R1", "method": "kdf", "relation": "P36", "bucket": "0", "strategy": None, "setting": None,
         "outcome": "right", "disagree": True, "id": "a"},
        {"run": "R2", "method": "kdf", "relation": "P36", "bucket": "0", "strategy": None, "setting": None,
         "outcome": "wrong", "disagree": True, "id": "a"},
        {"run": "R2", "method": "kdf", "relation": "P30", "bucket": "none", "strategy": None, "setting": None,
         "outcome": "wrong", "disagree": False, "id": "b"},
        {"run": "R3", "method": "distractor", "relation": "P36", "bucket": "none", "strategy": "sem",
         "setting": None, "outcome": "partly", "disagree": False, "id": "c"}]


def test_the_filter_keeps_rows_with_one_of_the_values_of_every_facet_given():
    ids = lambda query: [(r["run"], r["id"]) for r in select(ROWS, query)]  # noqa: E731
    assert ids(ItemQuery()) == [("R1", "a"), ("R2", "a"), ("R2", "b"), ("R3", "c")]
    assert ids(ItemQuery.of({"relation": "P36", "outcome": ["wrong", "partly"]})) == [("R2", "a"), ("R3", "c")]
    assert ids(ItemQuery.of({"disagree": "true"})) == [("R1", "a"), ("R2", "a")]
    assert ids(ItemQuery.of({"disagree": "false", "method": "kdf"})) == [("R2", "b")]
    assert ids(ItemQuery.of({"strategy": "sem", "run": ["R1", "R3"]})) == [("R3", "c")]
    assert ids(ItemQuery.of({"strategy": "random"})) == []
    assert ItemQuery.of({"run": "", "disagree": None}) == ItemQuery()


def test_runs_disagree_where_their_verdicts_differ_unscored_aside():
    assert disagreeing([("a", "right"), ("a", "wrong"), ("b", "right"), ("b", "right"), ("c", "partly"),
                        ("c", "right"), ("d", "unscored"), ("d", "wrong"), ("e", "wrong"), ("e", "wrong"),
                        ("e", "partly")]) == {"a", "c", "e"}


def test_the_sample_is_seeded_keeps_every_run_of_an_item_and_says_its_counts():
    ids = [f"i{k}" for k in range(10) for _ in range(3)]  # 10 items, 3 rows each
    sample = sample_ids(ids, 10, seed=7)
    assert (sample.items, sample.items_total, sample.rows, sample.rows_total) == (3, 10, 9, 30)
    assert sample_ids(list(reversed(ids)), 10, seed=7).ids == sample.ids  # the order of the rows does not matter
    assert sample_ids(ids, 10, seed=8).ids != sample.ids
    assert sample.notice().startswith("A seeded sample (seed 7): 9 of 30 rows, every run's rows of 3 of 10 items")
    assert not sample_ids(ids, 30).sampled and sample_ids(ids, 30).notice() == ""


def test_the_sample_jobs_page_holds_every_row_or_a_sample_it_names(runs, payload):
    assert len(payload["rows"]) == 1162 and payload["sample"] is None
    assert sum(r["disagree"] for r in payload["rows"]) == 310
    assert payload["facets"]["relation"] == ["P30", "P36", "P37", "P1376"]
    assert payload["facets"]["bucket"] == ["0", "[1,10)", "[10,100)", "[100,inf)", "none"]
    assert payload["facets"]["setting"] == ["zero-shot", "x-template"]
    assert [r["probe_set"] is not None for r in payload["runs"]] == [True] * 10
    small = items_payload(runs, limit=200, seed=3)
    kept = {r["id"] for r in small["rows"]}
    assert len(small["rows"]) <= 200 and small["sample"]["rows"] == len(small["rows"])
    assert small["sample"]["rows_total"] == 1162 and small["sample"]["items"] == len(kept)
    # every run's rows of a kept item: the side by side stays whole
    assert len(small["rows"]) == sum(1 for r in payload["rows"] if r["id"] in kept)
    # the disagree marks are the whole set's, not the sample's
    assert {(r["run"], r["key"], r["disagree"]) for r in small["rows"]} <= \
        {(r["run"], r["key"], r["disagree"]) for r in payload["rows"]}


def test_a_probe_set_is_found_by_its_bytes_not_its_name(sample, tmp_path):
    kdf = sample / "probesets" / "kdf.jsonl"
    sha = json.loads((sample / "probesets" / "kdf.meta.json").read_text())["sha256"]
    run = sample / "runs" / "gemma3-270m--kdf--kdf"
    assert find_probe_set(run, "kdf.jsonl", sha) == kdf
    assert find_probe_set(run, "kdf.jsonl", "0" * 64) is None  # the same name, other bytes
    elsewhere = tmp_path / "renamed.jsonl"
    elsewhere.write_bytes(kdf.read_bytes())
    assert find_probe_set(tmp_path / "nowhere", "kdf.jsonl", sha, [elsewhere]) == elsewhere  # `report --probes FILE`
    assert find_probe_set(tmp_path / "nowhere", "kdf.jsonl", sha, [sample / "probesets"]) == kdf  # a folder


# -- the page -------------------------------------------------------------------------------------


def embedded(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="items-data">(.*?)</script>', page, re.DOTALL)
    return json.loads(found.group(1))


def test_item_text_cannot_leave_its_script_element():
    hostile = '</script><img src=x onerror="alert(1)"><script>alert(2)</script> & \u2028'
    page = items_html({"format": 1, "runs": [], "rows": [{"question": hostile}], "facets": {}, "sample": None}, "T")
    assert "<img" not in page and page.count("</script>") == 2  # the data's and the script's own
    assert embedded(page)["rows"][0]["question"] == hostile
    assert "\\u003c/script\\u003e" in embedded_json({"q": hostile})
    assert "innerHTML" not in SCRIPT and "insertAdjacentHTML" not in SCRIPT and "eval(" not in SCRIPT
    assert "outerHTML" not in SCRIPT and "document.write" not in SCRIPT


def test_nan_in_a_record_is_null_on_the_page():
    assert embedded_json({"x": float("nan"), "y": [float("inf"), 1.5]}) == '{"x":null,"y":[null,1.5]}'


def test_the_walkthroughs_germany_berlin_item_is_in_the_sample_jobs_items_html(runs, tmp_path):
    files = write_report(runs, tmp_path, "factprobe: sample")
    page = files.items.read_text()
    assert page.startswith("<!DOCTYPE html>") and "http://" not in page and "https://" not in page  # offline
    data = embedded(page)
    germany = [r for r in data["rows"] if r["id"] == GERMANY]
    assert [r["run"] for r in germany] == ["R5", "R6", "R9", "R10"]  # both models, letters and option texts
    smollm2 = germany[0]
    assert smollm2["question"].startswith("The capital of Germany is ____\nA: Rabat\nB: Naypyidaw\nC: Berlin")
    assert (smollm2["gold"], smollm2["names"], smollm2["pick"], smollm2["outcome"]) == (
        "C: Berlin", ["Berlin", "Berlin, Germany"], "A: Rabat", "wrong")
    # the walkthrough's letters: -1.276, -1.496, -1.405, -2.087
    assert [round(c["score"], 3) for c in smollm2["choices"]] == [-1.276, -1.496, -1.405, -2.087]
    assert [r["outcome"] for r in germany] == ["wrong", "wrong", "right", "right"]  # SmolLM2 misses, gemma not
    assert all(r["disagree"] for r in germany)
    markdown = files.markdown.read_text()
    assert "[The item view: items.html](items.html)" in markdown
    assert '<a href="items.html">' in files.html.read_text()


def test_a_sampled_page_says_so(runs):
    page = items_html(items_payload(runs, limit=100, seed=1), "T")
    data = embedded(page)
    assert len(data["rows"]) <= 100 and data["sample"]["rows_total"] == 1162
    assert f'<p id="sample-notice" data-testid="sample-notice">A seeded sample (seed 1): {len(data["rows"])} of 1,162 rows' \
        in page


# -- the runs table (39.3) ------------------------------------------------------------------------


def test_each_runs_measure_is_its_methods(runs):
    measures = {Path(r.folder).name: run_measure(r) for r in runs}
    assert measures["smollm2-135m-instruct--distractor--distractors"] == (
        "57", "random: Min@n 0.8947 [0.79–0.95], Avg@n 0.9532 [0.91–0.99]; "
              "temp+sem: Min@n 0.7719 [0.65–0.86], Avg@n 0.8713 [0.80–0.94]")
    assert measures["smollm2-135m-instruct--belief-icl--belief-icl"] == (
        "192", "zero-shot: Acc@1 0.0364 ± 0.0290 (range 0.1562) [0.01–0.07]; "
               "x-template: Acc@1 0.6878 ± 0.0544 (range 0.4062) [0.57–0.80]")
    assert measures["smollm2-135m-instruct--kdf--kdf"] == ("96", "Accuracy 0.2604 [0.18–0.36]")
    # the distractor paper's baselines, not the share above 0.5 (0.2667, 8 of 30: issue 45.6)
    assert measures["smollm2-135m-instruct--baselines--distractors"] == (
        "30", "Probability 0.3528 [0.26–0.43]; Precision@3 0.9000 [0.74–0.97]; ROUGE-L 0.9333 [0.79–0.98]")


# -- the commands ---------------------------------------------------------------------------------


def test_factprobe_report_writes_the_item_view_and_its_sample(sample, tmp_path):
    from conftest import run_cli

    out = tmp_path / "report"
    proc = run_cli("report", *sorted((sample / "runs").iterdir()), "--out", out, "--items-rows", "60", "--seed", "2")
    assert proc.returncode == 0, proc.stderr
    assert f"{out / 'items.html'}" in proc.stdout
    data = embedded((out / "items.html").read_text())
    assert len(data["rows"]) <= 60 and (data["sample"]["seed"], data["sample"]["rows_total"]) == (2, 1162)
    assert run_cli("report", sample / "runs" / "gemma3-270m--kdf--kdf", "--out", tmp_path / "r2", "--probes",
                   tmp_path / "no such folder").returncode == 2


@pytest.mark.slow
def test_the_main_job_ends_with_the_reports_path_and_the_served_views_command(tmp_path):
    """A pipeline as README's main job (`factprobe run`), smaller: its last lines name the report,
    the item view and the command that serves it; that command's service finds the items."""
    from fastapi.testclient import TestClient

    from conftest import run_cli
    from factprobe.cli.service import ServiceConfig, create_app
    from test_eval import capital_graph
    from wikidata_builder import write_dump

    write_dump(tmp_path / "capitals.json", capital_graph())
    (tmp_path / "tiny.yaml").write_text(
        "name: tiny\nout: out\nseed: 1\ngraph:\n  sources:\n    - {format: wikidata, path: capitals.json}\n"
        "probesets:\n  kdf: {kind: kdf, relations: [P36], shots: 2, kdf_demonstrations: same-relation}\n"
        "models: [smollm2-135m-instruct]\nevaluations:\n  - {method: kdf, probeset: kdf, limit: 4}\nreport: true\n")
    proc = run_cli("run", tmp_path / "tiny.yaml", "--quiet", cwd=tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    *_, report, items, serve = proc.stdout.strip().splitlines()
    out = tmp_path / "out"  # the config's `out`, beside the config
    assert report == f"report: {out}/report/report.html  (and report.md beside it)"
    assert items == f"items:  {out}/report/items.html  (every item: filters, prompts, scores, the runs side by side)"
    assert serve == (f"serve:  factprobe serve --store {out}/graph.sqlite --runs {out}/runs  "
                     "(then open http://127.0.0.1:8000/items/view)")
    data = embedded((tmp_path / "out" / "report" / "items.html").read_text())
    assert len(data["rows"]) == 4 and all(r["question"].endswith("Answer:") for r in data["rows"])
    (tmp_path / "data").mkdir()
    config = ServiceConfig(tmp_path / "out" / "graph.sqlite", tmp_path / "data", runs=(tmp_path / "out" / "runs",))
    with TestClient(create_app(config)) as client:
        page = client.get("/items").json()
    assert [r["id"] for r in page["rows"]] == [r["id"] for r in data["rows"]]

"""`probeset import --format distfact-taxonomy`: DistFact's verbalization errors (004:225-239) as
the flawed and the corrected probe sets, and `factprobe assess` making Table 4's row from real
runs over them.

The CSVs here are written by us in the shape of the published file, scripts/taxonomy/
taxonomy_hichem.csv of github.com/Orange-OpenSource/DistFactAssessLM (GPL-2.0-or-later, so not
copied into this repository): its header, an unnamed pandas index first, and its cells as it
writes them (triples_raw "('Q..', 'P..', 'Q..')", triples "(s, r, o, start=None, end=None)",
errors "-" or "obj_deter, wrong_conjug", the correction empty where there is no error)."""

from __future__ import annotations

import csv
import json

import pytest

from conftest import run_cli
from factprobe.probes.formats.import_distfact import taxonomy_import

HEADER = ["", "triples_raw", "triples", "popularity", "context", "verbalization", "errors", "correction"]


def row(index, ids, labels, context, verbalization, errors, correction="") -> list[str]:
    return [str(index), str(tuple(ids)), f"({', '.join(labels)}, start=None, end=None)", "7.1", context,
            verbalization, errors, correction]


ROWS = [
    row(0, ("Q142", "P36", "Q90"), ("France", "capital", "Paris"), "present",
        "The capital of France are Paris", "wrong_conjug", "The capital of France is Paris"),
    row(1, ("Q17", "P36", "Q1490"), ("Japan", "capital", "Tokyo"), "past",
        "On 1 January 2020, Tokyo were the capital of Japan", "wrong_conjug",
        "On 1 January 2020, Tokyo was the capital of Japan"),
    # ends with the subject: asked as (o, r, s), as the authors' notebook swaps them
    row(2, ("Q38", "P36", "Q220"), ("Italy", "capital", "Rome"), "present",
        "Rome is capital of Italy", "adj_noun_conjug", "Rome is the capital of Italy"),
    row(3, ("Q29", "P36", "Q2807"), ("Spain", "capital", "Madrid"), "present", "Madrid is the capital of Spain", "-"),
    # ends with neither label: no cloze before an entity
    row(4, ("Q40", "P36", "Q1741"), ("Austria", "capital", "Vienna"), "present",
        "Vienna is capital of Austria since long", "better_verb", "Vienna has long been the capital of Austria"),
    # a label holding ", ": the cut whose labels stand in both sentences, then the shortest relation
    row(5, ("Q30", "P36", "Q61"), ("United States of America", "capital", "Washington, D.C."), "present",
        "The capital of United States of America is Washington, D.C.", "sub_deter",
        "The capital of the United States of America is Washington, D.C."),
    # the closing quote after the object is not asked (the opening one is)
    row(6, ("Q1284961", "P156", "Q1754564"), ("Porky's", "followed by", "Porky's II: The Next Day"), "present",
        "Porky's is immediately followed by Porky's II: The Next Day", "obj_unclear",
        "Porky's is immediately followed by \u201cPorky's II: The Next Day\u201d"),
    row(7, ("Q155", "P36"), ("Brazil", "capital", "Brasília"), "present", "The capital of Brazil are Brasília",
        "wrong_conjug", "The capital of Brazil is Brasília"),
]


def write_csv(path, rows) -> str:
    with open(path, "w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows([HEADER, *rows])
    return str(path)


@pytest.fixture
def taxonomy(tmp_path):
    return write_csv(tmp_path / "taxonomy_hichem.csv", ROWS)


def test_the_flawed_and_corrected_sets_ask_the_two_sentences_of_the_same_facts(taxonomy):
    flawed, corrected = (taxonomy_import([taxonomy], side) for side in ("flawed", "corrected"))
    assert [i["clozes"] for i in flawed.items] == [
        ["The capital of France are [Y]"], ["Rome is capital of [Y]"],
        ["The capital of United States of America is [Y]"], ["Porky's is immediately followed by [Y]"]]
    assert [i["clozes"] for i in corrected.items] == [
        ["The capital of France is [Y]"], ["Rome is the capital of [Y]"],
        ["The capital of the United States of America is [Y]"], ["Porky's is immediately followed by \u201c[Y]"]]
    assert [i["fact"] for i in flawed.items] == [i["fact"] for i in corrected.items] == [
        "distfact-taxonomy:0", "distfact-taxonomy:2", "distfact-taxonomy:5", "distfact-taxonomy:6"]
    paris, rome, washington = flawed.items[0], flawed.items[1], flawed.items[2]
    assert (paris["id"], paris["kind"], paris["subject"], paris["relation"], paris["object"]) == (
        "distractor:distfact-taxonomy:0", "distractor", "Q142", "P36", "Q90")
    assert (paris["object_label"], paris["object_names"], paris["gold"], paris["distractors"]) == (
        "Paris", ["Paris"], ["Paris"], {})
    assert paris["verbalization"] == {"side": "flawed", "row": "0", "errors": ["wrong_conjug"],
                                      "sentence": "The capital of France are Paris", "inverse": False}
    # the sentence ends with the subject: the model is asked Italy after "Rome is capital of"
    assert (rome["subject"], rome["subject_label"], rome["object"], rome["object_label"]) == (
        "Q220", "Rome", "Q38", "Italy")
    assert rome["verbalization"]["inverse"] is True
    assert (washington["subject_label"], washington["relation_label"], washington["object_label"]) == (
        "United States of America", "capital", "Washington, D.C.")
    assert flawed.kind == "distractor" and flawed.params == {
        "import": "distfact-taxonomy", "verbalization": "flawed", "subject_final": "swap", "onto": None}
    assert flawed.report.rejected == [f"{taxonomy}:9: triples_raw: \"('Q155', 'P36')\" is not ('Q..', 'P..', 'Q..')"]
    assert flawed.report.notes == {
        "rows of another context than present (the paper's 77 facts are the present ones)": 1,
        "rows whose sentences end with the subject, asked as (o, r, s) (--subject-final swap)": 1,
        "rows without an error": 1,
        "rows whose verbalization or correction ends with neither the subject's nor the object's label (no cloze "
        "before an entity; left out as in the authors' 32)": 1,
        "items without distractors (the published file has none: baselines run them; pass --onto a distractor set "
        "holding the facts for the distractor method)": 4}
    dropped = taxonomy_import([taxonomy], "flawed", subject_final="drop")
    assert [i["fact"] for i in dropped.items] == ["distfact-taxonomy:0", "distfact-taxonomy:5", "distfact-taxonomy:6"]


def test_onto_gives_the_clozes_to_a_sets_items_of_the_same_facts(taxonomy, tmp_path):
    base = tmp_path / "d.jsonl"
    items = [{"id": "distractor:Q142$1", "kind": "distractor", "split": "test", "fact": "Q142$1", "subject": "Q142",
              "relation": "P36", "object": "Q90", "subject_label": "France", "object_label": "Paris",
              "object_names": ["Paris", "City of Light"], "distractors": {"random": [{"entity": "Q64"}]}},
             {"id": "distractor:Q30$1", "kind": "distractor", "split": "test", "fact": "Q30$1", "subject": "Q30",
              "relation": "P36", "object": "Q61", "subject_label": "United States", "object_label": "Washington, D.C.",
              "distractors": {}}]
    base.write_text("".join(json.dumps(i) + "\n" for i in items))
    done = taxonomy_import([taxonomy], "corrected", onto=base)
    assert done.items == [{**items[0], "clozes": ["The capital of France is [Y]"],
                           "verbalization": {"side": "corrected", "row": "0", "errors": ["wrong_conjug"],
                                             "sentence": "The capital of France is Paris", "inverse": False}},
                          {**items[1], "clozes": ["The capital of the United States of America is [Y]"],
                           "verbalization": {"side": "corrected", "row": "5", "errors": ["sub_deter"],
                                             "sentence": "The capital of the United States of America is "
                                                         "Washington, D.C.", "inverse": False}}]
    assert done.report.rejected[:2] == [
        f"{taxonomy}:4: d.jsonl holds no items of (Q220, P36, Q38) (the sentence ends with the subject: asked as "
        "(o, r, s))",
        f"{taxonomy}:8: d.jsonl holds no items of (Q1284961, P156, Q1754564)"]
    assert done.params["onto"] == "d.jsonl" and done.kind == "distractor"


def test_the_import_command_writes_one_side_and_names_what_it_needs(taxonomy, tmp_path):
    out = tmp_path / "flawed.jsonl"
    proc = run_cli("probeset", "import", "--format", "distfact-taxonomy", taxonomy, "--verbalization", "flawed",
                   "--out", out)
    assert proc.returncode == 3 and "4 distractor items from 8 distfact-taxonomy rows" in proc.stdout
    assert "rejected " + taxonomy + ":9: triples_raw" in proc.stderr
    meta = json.loads((tmp_path / "flawed.meta.json").read_text())
    assert meta["params"] == {"import": "distfact-taxonomy", "verbalization": "flawed", "subject_final": "swap",
                              "onto": None}
    assert len(out.read_text().splitlines()) == 4
    proc = run_cli("probeset", "import", "--format", "distfact-taxonomy", taxonomy, "--out", tmp_path / "x.jsonl")
    assert proc.returncode == 2 and "--format distfact-taxonomy needs --verbalization flawed or corrected" in proc.stderr
    proc = run_cli("probeset", "import", "--format", "lama-trex", taxonomy, "--verbalization", "flawed", "--out",
                   tmp_path / "y.jsonl")
    assert proc.returncode == 2 and "--verbalization: for --format distfact-taxonomy only" in proc.stderr
    only_perfect = write_csv(tmp_path / "perfect.csv", [ROWS[3]])
    proc = run_cli("probeset", "import", "--format", "distfact-taxonomy", only_perfect, "--verbalization",
                   "corrected", "--out", tmp_path / "z.jsonl")
    assert proc.returncode == 2 and f"{only_perfect}: no row left to ask (1 rows without an error)" in proc.stderr


def _dist_value(record: dict, agg: str, n: int) -> float:
    """Min@n or Avg@n by hand from a distractor record: per cloze, the object against the first n
    distractors that have a plausibility, then the mean over the clozes."""
    values = []
    for cloze in record["per_cloze"]:
        lp = cloze["log_plausibility"]
        named = [lp[d] for d in record["by_strategy"]["random"]["distractors"] if d in lp][:n]
        wins = [lp[record["object"]] > other for other in named]
        values.append(float(all(wins)) if agg == "min" else sum(wins) / len(wins))
    return sum(values) / len(values)


def _tau(a: list[float], b: list[float]) -> float | None:
    from scipy.stats import kendalltau

    tau = kendalltau(a, b).statistic
    return None if tau != tau else tau


@pytest.mark.slow
def test_assess_makes_table_4s_row_from_runs_over_the_imported_sets(tmp_path):
    """A distractor set of 9 capitals built from a store, DistFact-shaped rows naming its facts
    imported onto it twice, the distractor measure and the baselines run over the set (judged)
    and over both imports with a tiny random Llama: assess's robustness is Kendall's tau between
    the flawed and the corrected runs' values, per fold's chosen configuration (004:237)."""
    from scoring_models import tiny_llama
    from test_eval import capital_graph
    from wikidata_builder import write_dump

    store, built = tmp_path / "g.sqlite", tmp_path / "d.jsonl"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "c.json", capital_graph())), "--store", store, "--quiet",
            check=True)
    run_cli("probeset", "build", "--kind", "distractor", "--relation", "P36", "--strategy", "random", "--n", "4",
            "--per-relation", "9", "--store", store, "--out", built, "--quiet", check=True)
    facts = [json.loads(line) for line in built.read_text().splitlines()]
    errors = [("The capital of {s} are {o}", "The capital of {s} is {o}", "wrong_conjug"),
              ("capital of {s} is {o}", "The capital of {s} is {o}", "sub_deter"),
              ("{s} have its capital in {o}", "{s} has its capital in {o}", "wrong_conjug")]
    rows = []
    for k, fact in enumerate(facts):
        flawed, corrected, kind = errors[k % 3]
        labels = (fact["subject_label"], "capital", fact["object_label"])
        rows.append(row(k, (fact["subject"], "P36", fact["object"]), labels, "present",
                        flawed.format(s=labels[0], o=labels[2]), kind, corrected.format(s=labels[0], o=labels[2])))
    taxonomy = write_csv(tmp_path / "taxonomy_hichem.csv", rows)
    for side in ("flawed", "corrected"):
        run_cli("probeset", "import", "--format", "distfact-taxonomy", taxonomy, "--verbalization", side, "--onto",
                built, "--out", tmp_path / f"{side}.jsonl", check=True)
    model = f"hf:{tiny_llama(tmp_path / 'llama')}"
    options = {"distractor": ["--option", "clozes=2"],
               "baselines": ["--option", "clozes=2", "--option", "beams=2", "--option", "n=1"]}
    for method, extra in options.items():
        for name, probes in (("main", built), ("flawed", tmp_path / "flawed.jsonl"),
                             ("corrected", tmp_path / "corrected.jsonl")):
            run_cli("eval", "--model", model, "--method", method, "--probes", probes, "--out",
                    tmp_path / f"{method}-{name}", *extra, "--quiet", check=True)
    judgements = tmp_path / "human.jsonl"
    judgements.write_text("".join(json.dumps({"fact": f["fact"], "knows": k % 2}) + "\n" for k, f in enumerate(facts)))
    run_cli("assess", tmp_path / "distractor-main", tmp_path / "baselines-main", "--judgements", judgements,
            "--flawed", tmp_path / "distractor-flawed", "--flawed", tmp_path / "baselines-flawed",
            "--corrected", tmp_path / "distractor-corrected", "--corrected", tmp_path / "baselines-corrected",
            "--out", tmp_path / "out", check=True)
    result = json.loads((tmp_path / "out" / "assess.json").read_text())
    robustness = result["robustness"]

    def records(folder: str) -> dict[str, dict]:
        lines = (tmp_path / folder / "items.jsonl").read_text().splitlines()
        return {r["fact"]: r for r in map(json.loads, lines)}

    order = [f["fact"] for f in facts]
    sides = {m: (records(f"{m}-flawed"), records(f"{m}-corrected")) for m in options}
    assert all(r["cloze_source"] == "item" for m in options for side in sides[m] for r in side.values())
    assert sides["baselines"][0][order[0]]["clozes"] == [f"The capital of {facts[0]['subject_label']} are"]
    flawed, corrected = sides["baselines"]
    probability = _tau([flawed[f]["probability"] for f in order], [corrected[f]["probability"] for f in order])
    assert probability is not None
    assert [r["tau"] for r in robustness["probability"]["folds"]] == pytest.approx([probability] * 3, abs=1e-12)
    assert robustness["probability"]["tau"] == pytest.approx(probability, abs=1e-12)
    assert [(r["facts"], r["unchanged"]) for r in robustness["probability"]["folds"]] == [(9, 0)] * 3
    flawed, corrected = sides["distractor"]
    assert robustness["dist:random"]["tau"] is not None
    for row_, fold in zip(robustness["dist:random"]["folds"], result["measures"]["dist:random"]["folds"]):
        agg, n = fold["params"]["agg"], fold["params"]["n"]
        by_hand = _tau([_dist_value(flawed[f], agg, n) for f in order],
                       [_dist_value(corrected[f], agg, n) for f in order])
        assert row_["tau"] == (None if by_hand is None else pytest.approx(by_hand, abs=1e-12))
    report = (tmp_path / "out" / "assess.md").read_text()
    assert f"| Probability | {probability:.4f} | 9 | 0.63 | 004:232 |" in report

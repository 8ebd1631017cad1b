"""The published constructions of IC-LKE, EIC-LKE (Wu et al. 2024) and KDF, hand-computed on small
hand-made probe sets and graphs; and the icl-mc builder's choice counts and T-REx-MC filter report.

Each test pins a definition factprobe did not follow before (issue 20 f, i and acceptance 4)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from conftest import run_cli
from factprobe.probes.methods import MethodContext
from factprobe.probes.methods.eic_lke import EICLKE
from factprobe.probes.methods.ic_lke import ICLKE
from factprobe.probes.runner import evaluate
from wikidata_builder import item, write_dump


class FakeScorer:
    """Scores a continuation by a fixed function of (context, continuation) and keeps the requests."""

    identity = "fake:scorer"

    def __init__(self) -> None:
        self.requests = []

    @staticmethod
    def score(context: str, continuation: str) -> float:
        return -float(len(continuation) + len(context) % 7)

    def loglikelihood(self, requests):
        self.requests += list(requests)
        return [[SimpleNamespace(logprob=self.score(r.context, c)) for c in r.continuations] for r in requests]


# -- EIC-LKE -----------------------------------------------------------------------------------


def _test(qid: str, subject: str, answer_index: int, *choices: str) -> dict:
    return {"id": f"icl-mc:{qid}", "kind": "icl-mc", "split": "test", "relation": "P36", "subject_label": subject,
            "object_label": choices[answer_index], "choices": list(choices), "answer_index": answer_index}


def _demo(qid: str, subject: str, obj: str) -> dict:
    return {"id": f"icl-mc:{qid}", "kind": "icl-mc", "split": "demo", "relation": "P36", "subject_label": subject,
            "object_label": obj}


TESTS = [_test("Q142", "France", 0, "Paris", "Lyon", "Nice"), _test("Q17", "Japan", 1, "Osaka", "Tokyo", "Kyoto"),
         _test("Q38", "Italy", 2, "Milan", "Turin", "Rome")]
DEMOS = [_demo("Q183", "Germany", "Berlin"), _demo("Q29", "Spain", "Madrid"), _demo("Q79", "Egypt", "Cairo"),
         _demo("Q419", "Peru", "Lima"), _demo("Q155", "Brazil", "Brasilia")]


def _eic(**options) -> EICLKE:
    return EICLKE(MethodContext(options, seed=0, demonstrations={"P36": DEMOS}, tests={"P36": TESTS}))


def test_eic_lke_paper_prompts_intersperse_each_test_fact_with_its_choices():
    # examples=4, every=2: a window is 4 training examples with a test slot after the 2nd and the
    # 4th, so 2 test facts per window. Seed 0 orders the test facts France, Japan | Italy and draws
    # the training examples Egypt, Germany, Spain, Brazil for window 0 and Brazil, Peru, Germany,
    # Spain for window 1. Sequence k holds every earlier test fact with its k-th choice.
    method = _eic(examples=4, every=2)
    assert method.options["construction"] == "paper" and method.options["line_separator"] == ", "
    assert [i["subject_label"] for i in method.order(TESTS)] == ["France", "Japan", "Italy"]
    france, japan, italy = TESTS
    first = "Egypt Cairo, Germany Berlin, France"
    assert [method.prompt(france, k) for k in range(3)] == [first] * 3
    assert [method.prompt(japan, k) for k in range(3)] == [
        "Egypt Cairo, Germany Berlin, France Paris, Spain Madrid, Brazil Brasilia, Japan",
        "Egypt Cairo, Germany Berlin, France Lyon, Spain Madrid, Brazil Brasilia, Japan",
        "Egypt Cairo, Germany Berlin, France Nice, Spain Madrid, Brazil Brasilia, Japan"]
    assert [method.prompt(italy, k) for k in range(3)] == ["Brazil Brasilia, Peru Lima, Italy"] * 3
    # the chain construction (factprobe's earlier default), still there by name
    chain = _eic(construction="chain", examples=2)
    assert chain.options["line_separator"] == "\n"
    assert [chain.prompt(i) for i in TESTS] == ["France ", "France Paris\nJapan ", "France Paris\nJapan Tokyo\nItaly "]


def test_eic_lke_paper_scores_choice_k_after_sequence_k():
    method = _eic(examples=4, every=2)
    scorer = FakeScorer()
    records = {r["subject_label"]: r for r in method.run(scorer, method.order(TESTS))}
    asked = [(r.context, c) for r in scorer.requests for c in r.continuations]
    expected = [(method.prompt(i, k), " " + i["choices"][k]) for i in method.order(TESTS) for k in range(3)]
    assert asked == expected
    # a slot's contexts are shared across ranks when earlier slots do not differ: one request for France
    assert len(scorer.requests) == 1 + 3 + 1
    for item_ in TESTS:
        record = records[item_["subject_label"]]
        logprobs = [FakeScorer.score(method.prompt(item_, k), " " + c) for k, c in enumerate(item_["choices"])]
        assert record["gold_logprob"] == logprobs[item_["answer_index"]]
        assert record["predicted_index"] == max(range(3), key=lambda k: (logprobs[k], -k))
    assert {s: (r["examples_seen"], r["tests_before"]) for s, r in records.items()} == {
        "France": (2, 0), "Japan": (4, 1), "Italy": (2, 0)}


def test_eic_lke_paper_refuses_too_few_training_examples_and_bad_every():
    with pytest.raises(ValueError, match="relation P36 has 5 demonstration items, a prompt needs examples=50"):
        _eic()
    with pytest.raises(ValueError, match="every must be a whole number from 1 to examples"):
        _eic(examples=4, every=5)
    with pytest.raises(ValueError, match="construction 'paper2'"):
        _eic(construction="paper2")


# -- IC-LKE ------------------------------------------------------------------------------------


def test_ic_lke_paper_preset_joins_everything_with_spaces(tmp_path):
    item_ = {"id": "icl-mc:x", "relation": "P36", "subject_label": "France", "choices": ["Paris", "Lyon"],
             "answer_index": 0, "split": "test", "kind": "icl-mc"}
    demos = [{"id": "icl-mc:d1", "relation": "P36", "subject_label": "Germany", "object_label": "Berlin",
              "split": "demo", "kind": "icl-mc"},
             {"id": "icl-mc:d2", "relation": "P36", "subject_label": "Costa Rica", "object_label": "San Jose",
              "split": "demo", "kind": "icl-mc"}]
    paper = ICLKE(MethodContext({"preset": "paper", "examples": 2}, seed=0, demonstrations={"P36": demos}))
    assert paper.options["separator"] == paper.options["line_separator"] == " "
    # both pairs, in seed 0's order, the subject last: multi-word names run together as in the paper
    assert paper.prompt(item_) == "Costa Rica San Jose Germany Berlin France"
    # factprobe's default keeps a newline between pairs; an explicit option overrides the preset
    assert ICLKE(MethodContext({"examples": 2}, seed=0, demonstrations={"P36": demos})).prompt(item_) == \
        "Costa Rica San Jose\nGermany Berlin\nFrance"
    mixed = ICLKE(MethodContext({"preset": "paper", "line_separator": "\n", "examples": 1}, seed=0,
                                demonstrations={"P36": demos[:1]}))
    assert mixed.prompt(item_) == "Germany Berlin\nFrance"
    with pytest.raises(ValueError, match="preset 'lama'"):
        ICLKE(MethodContext({"preset": "lama"}))
    # the runner records the preset and the values it gave in run.json; choices follow a space
    probes = tmp_path / "mc.jsonl"
    probes.write_text("".join(json.dumps(x) + "\n" for x in [*demos, item_]))
    scorer = FakeScorer()
    evaluate(scorer, "ic-lke", probes, tmp_path / "run", options={"preset": "paper", "examples": 2})
    options = json.loads((tmp_path / "run" / "run.json").read_text())["options"]
    assert (options["preset"], options["separator"], options["line_separator"]) == ("paper", " ", " ")
    assert [(r.context, r.continuations) for r in scorer.requests] == [
        ("Costa Rica San Jose Germany Berlin France", (" Paris", " Lyon"))]


# -- builders: KDF and icl-mc --------------------------------------------------------------------

COUNTRY, CITY, CONTINENT, TOWN, HUMAN = "Q6256", "Q515", "Q5107", "Q3957", "Q5"
# country -> (capital, continent); every capital and continent is an object of its relation
COUNTRIES = {"Q142": ("France", "Q90", "Q46"), "Q17": ("Japan", "Q1490", "Q48"), "Q79": ("Egypt", "Q85", "Q15"),
             "Q419": ("Peru", "Q2868", "Q18")}
CAPITALS = {"Q90": "Paris", "Q1490": "Tokyo", "Q85": "Cairo", "Q2868": "Lima"}
CONTINENTS = {"Q46": "Europe", "Q48": "Asia", "Q15": "Africa", "Q18": "South America"}
# same types, objects of no relation: what a type pool offers and the relation's tails never do
OTHER_CITIES = {"Q456": "Lyon", "Q35765": "Osaka", "Q37200": "Giza", "Q5582": "Cusco"}
OTHER_CONTINENTS = {"Q51": "Antarctica", "Q538": "Oceania"}


def paper_graph() -> list[dict]:
    """Four countries with capital (P36) and continent (P30); 500 people born (P19) in 100 towns,
    a relation that passes T-REx-MC's filter (>= 500 facts, >= 100 objects)."""
    entities = [item(COUNTRY, "country"), item(CITY, "city"), item(CONTINENT, "continent"), item(TOWN, "town"),
                item(HUMAN, "human")]
    for qid, (label, capital, continent) in COUNTRIES.items():
        entities.append(item(qid, label, (), {"P31": [COUNTRY], "P36": [capital], "P30": [continent]}))
    entities += [item(qid, label, (), {"P31": [CITY]}) for qid, label in {**CAPITALS, **OTHER_CITIES}.items()]
    entities += [item(qid, label, (), {"P31": [CONTINENT]})
                 for qid, label in {**CONTINENTS, **OTHER_CONTINENTS}.items()]
    entities += [item(f"Q{70000 + k}", f"Town{k}", (), {"P31": [TOWN]}) for k in range(100)]
    entities += [item(f"Q{80000 + k}", f"Person{k}", (), {"P31": [HUMAN], "P19": [f"Q{70000 + k % 100}"]})
                 for k in range(500)]
    return entities


@pytest.fixture(scope="module")
def paper_store(tmp_path_factory):
    base = tmp_path_factory.mktemp("paper")
    path = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "g.json", paper_graph())), "--store", str(path), "--quiet",
            check=True)
    return str(path)


def _build(store: str, out, *args: str):
    return run_cli("probeset", "build", "--store", store, "--out", str(out), *args)


def _items(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_kdf_paper_demonstrations_from_other_relations_and_options_from_the_relations_tails(paper_store, tmp_path):
    out = tmp_path / "kdf.jsonl"
    proc = _build(paper_store, out, "--kind", "kdf", "--relation", "P36", "--relation", "P30", "--shots", "3",
                  "--json")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(proc.stdout)
    assert meta["params"]["options"]["kdf_demonstrations"] == "other-relations"
    assert meta["params"]["options"]["kdf_options"] == "relation-tails"
    items = _items(out)
    assert len(items) == 8
    fact_of = {(i["subject"], i["relation"]): i["fact"] for i in items}
    tails = {"P36": set(CAPITALS.values()), "P30": set(CONTINENTS.values())}
    for item_ in items:
        # four objects per relation: the options are exactly the relation's tails, never Lyon or Oceania
        assert set(item_["options"]) == tails[item_["relation"]], item_["id"]
        assert item_["options"]["ABCD".index(item_["answer"])] == item_["object_label"]
        # the three facts of the other relation about the other countries, exactly
        other = "P30" if item_["relation"] == "P36" else "P36"
        assert {d["fact"] for d in item_["demonstrations"]} == {
            fact_of[(s, other)] for s in COUNTRIES if s != item_["subject"]}, item_["id"]
    # factprobe's earlier construction, by name: type-pool options, same-relation demonstrations
    old = tmp_path / "old.jsonl"
    proc = _build(paper_store, old, "--kind", "kdf", "--relation", "P36", "--relation", "P30", "--shots", "3",
                  "--kdf-demonstrations", "same-relation", "--kdf-options", "type-pool")
    assert proc.returncode == 0, proc.stderr
    olds = _items(old)
    assert any(set(i["options"]) - tails[i["relation"]] for i in olds)  # Lyon, Osaka, ... Oceania come in
    fact_relation = {i["fact"]: i["relation"] for i in olds}
    assert all(fact_relation[d["fact"]] == i["relation"] for i in olds for d in i["demonstrations"])


def test_kdf_paper_demonstrations_need_a_second_relation(paper_store, tmp_path):
    proc = _build(paper_store, tmp_path / "one.jsonl", "--kind", "kdf", "--relation", "P36")
    assert proc.returncode == 2
    assert "need questions of at least two relations; only P36" in proc.stderr
    assert "--kdf-demonstrations same-relation" in proc.stderr
    assert _build(paper_store, tmp_path / "one.jsonl", "--kind", "kdf", "--relation", "P36",
                  "--kdf-demonstrations", "same-relation").returncode == 0


def test_icl_mc_refuses_too_few_choices_naming_the_relation_and_counts(paper_store, tmp_path):
    out = tmp_path / "mc.jsonl"
    proc = _build(paper_store, out, "--kind", "icl-mc", "--relation", "P36", "--relation", "P19", "--choices", "10",
                  "--per-relation", "20", "--demo-fraction", "0.25")
    assert proc.returncode == 2
    # P36 has 4 capitals: 3 test items, 4 choices each at most; P19's 100 towns are plenty
    assert "P36: 4 distinct objects, 3 test items short, the fewest 4 choices" in proc.stderr
    assert "P19" not in proc.stderr and "--allow-fewer-choices" in proc.stderr
    assert not out.exists()


def test_icl_mc_fewer_choices_when_allowed_are_recorded_and_warned(paper_store, tmp_path):
    out = tmp_path / "mc.jsonl"
    args = ["--kind", "icl-mc", "--relation", "P36", "--relation", "P19", "--choices", "10", "--per-relation", "20",
            "--demo-fraction", "0.25", "--allow-fewer-choices"]
    proc = _build(paper_store, out, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "warning: P36: 3 item(s) have fewer than 10 choices (the fewest 4)" in proc.stderr
    meta = json.loads(proc.stdout)
    assert meta["params"]["options"]["allow_fewer_choices"] is True
    assert meta["source"]["choices"] == {"requested": 10, "items_short": 3,
                                         "short": {"P36": {"items_short": 3, "fewest_choices": 4}}}
    tests = [i for i in _items(out) if i["split"] == "test"]
    for item_ in tests:
        if item_["relation"] == "P36":
            assert len(item_["choices"]) == 4 and item_["choices_requested"] == 10
            assert set(item_["choices"]) == set(CAPITALS.values())
        else:
            assert len(item_["choices"]) == 10 and "choices_requested" not in item_
    # T-REx-MC's relation filter, in the sidecar and on the CLI
    paper = meta["source"]["paper_filter"]
    assert paper["pass"] == ["P19"] and paper["fail"] == ["P36"]
    assert paper["relations"] == {"P19": {"facts": 500, "objects": 100, "passes": True},
                                  "P36": {"facts": 4, "objects": 4, "passes": False}}
    text = _build(paper_store, tmp_path / "mc2.jsonl", *args)
    assert text.returncode == 0, text.stderr
    assert ("paper filter (T-REx-MC: relations with >= 500 facts and >= 100 distinct objects): "
            "pass P19 (500 facts, 100 objects); fail P36 (4 facts, 4 objects)") in text.stdout
    assert "warning: P36" in text.stderr

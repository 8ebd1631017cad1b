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
from factprobe.probes.evaluation.runner import evaluate
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
    # examples=5, start=1, every=2: a window is one sequence of 5 training examples with a test
    # slot after the 1st and after the 3rd (start + k * every), so 2 test facts per window. Seed 0
    # orders the test facts France, Japan | Italy and draws the training examples Egypt, Germany,
    # Spain, Brazil, Peru for window 0 and Brazil, Peru, Germany, Spain, Egypt for window 1.
    # Sequence k holds every earlier test fact with its k-th choice.
    method = _eic(examples=5, start=1, every=2)
    assert method.options["construction"] == "paper" and method.options["line_separator"] == ", "
    assert [i["subject_label"] for i in method.order(TESTS)] == ["France", "Japan", "Italy"]
    france, japan, italy = TESTS
    assert [method.prompt(france, k) for k in range(3)] == ["Egypt Cairo, France"] * 3
    assert [method.prompt(japan, k) for k in range(3)] == [
        "Egypt Cairo, France Paris, Germany Berlin, Spain Madrid, Japan",
        "Egypt Cairo, France Lyon, Germany Berlin, Spain Madrid, Japan",
        "Egypt Cairo, France Nice, Germany Berlin, Spain Madrid, Japan"]
    assert [method.prompt(italy, k) for k in range(3)] == ["Brazil Brasilia, Italy"] * 3
    # the chain construction (factprobe's earlier default), still there by name
    chain = _eic(construction="chain", examples=2)
    assert chain.options["line_separator"] == "\n"
    assert [chain.prompt(i) for i in TESTS] == ["France ", "France Paris\nJapan ", "France Paris\nJapan Tokyo\nItaly "]


def test_eic_lke_paper_slots_follow_the_50th_to_the_95th_of_100_training_examples():
    # "retrieves all 100 samples from our training dataset, initially maintaining them in a single
    # sequence. Then, starting from the 50th training sample, we intersperse our test sample with
    # all the choices every 5 examples" (002_f44cecac2bc50a79.txt:989-991): slot k follows
    # 50 + 5k training examples, 50 ... 95, so 10 test facts per sequence of 100. factprobe read
    # it before as 50 examples with a slot after every 5th: 5 ... 50.
    demos = [_demo(f"Q{9000 + k}", f"Land{k}", f"Town{k}") for k in range(120)]
    tests = [_test(f"Q{100 + k}", f"Test{k}", 0, f"Gold{k}", f"Other{k}") for k in range(12)]
    method = EICLKE(MethodContext({}, seed=0, demonstrations={"P36": demos}, tests={"P36": tests}))
    assert (method.options["examples"], method.options["start"], method.options["every"]) == (100, 50, 5)
    ordered = method.order(tests)
    window = ordered[:10]  # the 11th and 12th go to a second sequence, with a fresh draw
    training = []
    for k, item_ in enumerate(window):
        tuples = method.prompt(item_, 1).split(", ")
        assert tuples[-1] == item_["subject_label"]
        shown = [t for t in tuples[:-1] if t.startswith("Land")]
        tested = [t for t in tuples[:-1] if t.startswith("Test")]
        assert (len(shown), len(tested)) == (50 + 5 * k, k)
        # the earlier test facts sit after the 50th, 55th, ... training example, with their choice 1
        assert [tuples.index(t) for t in tested] == [50 + 6 * j for j in range(k)]
        assert tested == [f"{x['subject_label']} {x['choices'][1]}" for x in window[:k]]
        assert shown[:len(training)] == training  # one sequence: each slot sees a longer prefix of it
        training = shown
    assert len(set(training)) == 95
    records = method.run(FakeScorer(), ordered)
    assert [(r["examples_seen"], r["tests_before"]) for r in records] == [
        *((50 + 5 * k, k) for k in range(10)), (50, 0), (55, 1)]


def test_eic_lke_paper_scores_choice_k_after_sequence_k():
    method = _eic(examples=5, start=1, every=2)
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
        "France": (1, 0), "Japan": (3, 1), "Italy": (1, 0)}


def test_eic_lke_paper_refuses_too_few_training_examples_and_bad_every():
    with pytest.raises(ValueError, match="relation P36 has 5 demonstration items, a prompt needs examples=100"):
        _eic()
    with pytest.raises(ValueError, match=r"^method eic-lke: option every: 4 is above examples - start \(3\)$"):
        _eic(examples=4, start=1, every=4)
    with pytest.raises(ValueError, match=r"^method eic-lke: option start: 50 leaves no test slot among examples=4 "
                                         r"\(give at most 3\)$"):
        _eic(examples=4, every=1)  # the default start, 50, is past 4 examples
    with pytest.raises(ValueError, match="^method eic-lke: option construction: 'paper2' is not one of paper, chain$"):
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
    with pytest.raises(ValueError, match="^method ic-lke: option preset: 'lama' is not one of factprobe, paper$"):
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


def test_kdf_demonstrations_come_from_distinct_relations(paper_store, tmp_path):
    """Figure 3 (seed 003 line 190): five examples of five relations, none the question's. With
    three relations and 2 shots each question's two demonstrations are the two other relations,
    one each; with 3 shots one relation must come twice, and the sidecar counts every such item."""
    relations = ("--relation", "P36", "--relation", "P30", "--relation", "P19", "--per-relation", "4")
    two = tmp_path / "two.jsonl"
    proc = _build(paper_store, two, "--kind", "kdf", *relations, "--shots", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"]["kdf"]["relations_repeat"] == 0
    items = _items(two)
    relation_of = {i["fact"]: i["relation"] for i in items}
    subject_of = {i["fact"]: i["subject"] for i in items}
    assert len(items) == 12
    for item_ in items:
        assert sorted(relation_of[d["fact"]] for d in item_["demonstrations"]) == sorted(
            {"P36", "P30", "P19"} - {item_["relation"]}), item_["id"]
        assert all(subject_of[d["fact"]] != item_["subject"] for d in item_["demonstrations"])
    three = tmp_path / "three.jsonl"
    proc = _build(paper_store, three, "--kind", "kdf", *relations, "--shots", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"]["kdf"]["relations_repeat"] == 12
    assert "12 question(s) repeat a relation among their demonstrations" in proc.stderr
    for item_ in _items(three):
        seen = [relation_of[d["fact"]] for d in item_["demonstrations"]]
        assert len(seen) == 3 and len(set(d["fact"] for d in item_["demonstrations"])) == 3
        assert set(seen) == {"P36", "P30", "P19"} - {item_["relation"]}, item_["id"]


def test_kdf_paper_demonstrations_need_a_second_relation(paper_store, tmp_path):
    proc = _build(paper_store, tmp_path / "one.jsonl", "--kind", "kdf", "--relation", "P36")
    assert proc.returncode == 2
    assert "need questions of at least two relations; only P36" in proc.stderr
    assert "--kdf-demonstrations same-relation" in proc.stderr
    assert _build(paper_store, tmp_path / "one.jsonl", "--kind", "kdf", "--relation", "P36",
                  "--kdf-demonstrations", "same-relation").returncode == 0


def test_icl_mc_refuses_too_few_choices_naming_the_relation_and_counts(paper_store, tmp_path):
    out = tmp_path / "mc.jsonl"
    # --trex-mc-filter report: P36 fails T-REx-MC's relation filter and would be left out
    proc = _build(paper_store, out, "--kind", "icl-mc", "--relation", "P36", "--relation", "P19", "--choices", "10",
                  "--per-relation", "20", "--demo-fraction", "0.25", "--trex-mc-filter", "report")
    assert proc.returncode == 2
    # P36 has 4 capitals: 3 test items, 4 choices each at most; P19's 100 towns are plenty
    assert "P36: 4 distinct objects, 3 test items short, the fewest 4 choices" in proc.stderr
    assert "P19" not in proc.stderr and "--allow-fewer-choices" in proc.stderr
    assert not out.exists()


def test_icl_mc_fewer_choices_when_allowed_are_recorded_and_warned(paper_store, tmp_path):
    out = tmp_path / "mc.jsonl"
    args = ["--kind", "icl-mc", "--relation", "P36", "--relation", "P19", "--choices", "10", "--per-relation", "20",
            "--demo-fraction", "0.25", "--allow-fewer-choices", "--trex-mc-filter", "report"]
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
    assert paper["applied"] is False and paper["dropped"] == []
    assert paper["relations"] == {"P19": {"facts": 500, "objects": 100, "passes": True},
                                  "P36": {"facts": 4, "objects": 4, "passes": False}}
    text = _build(paper_store, tmp_path / "mc2.jsonl", *args)
    assert text.returncode == 0, text.stderr
    assert ("paper filter (T-REx-MC: relations with >= 500 facts and >= 100 distinct objects): "
            "pass P19 (500 facts, 100 objects); fail P36 (4 facts, 4 objects)") in text.stdout
    assert "warning: P36" in text.stderr

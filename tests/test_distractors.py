"""Distractor strategies on a hand-made graph (Wikidata JSON, ingested by the real pipeline)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import run_cli
from factprobe.index.distractors import DistractorFinder
from factprobe.index.semantic import SemanticIndex, feature_bags
from factprobe.index.semantic_check import reference_top
from factprobe.kg.graph import KnowledgeGraph
from wikidata_builder import item, write_dump

CAPITAL, CITY, COUNTRY, VILLAGE = "Q5119", "Q515", "Q6256", "Q532"
COUNTRIES = {"Q142": ("France", "Q90"), "Q183": ("Germany", "Q64"), "Q38": ("Italy", "Q220"),
             "Q29": ("Spain", "Q2807"), "Q17": ("Japan", "Q1490"), "Q155": ("Brazil", "Q3114"),
             "Q40": ("Austria", "Q1741")}
CAPITALS = {"Q90": "Paris", "Q64": "Berlin", "Q220": "Rome", "Q2807": "Madrid", "Q1490": "Tokyo",
            "Q3114": "Brasília", "Q1741": "Vienna"}
CITIES = {"Q456": ("Lyon", "Q142"), "Q1055": ("Hamburg", "Q183"), "Q490": ("Milan", "Q38"),
          "Q35765": ("Osaka", "Q17"), "Q8818": ("Valencia", "Q29"), "Q586": ("Bonn", "Q183"),
          "Q8678": ("Rio de Janeiro", "Q155"), "Q36947": ("Salvador", "Q155"),
          "Q830149": ("Paris", "Q142")}  # a second "Paris": shares o's label, so never a distractor of Paris


def graph_entities() -> list[dict]:
    entities = [item(CAPITAL, "capital"), item(CITY, "city"), item(COUNTRY, "country"), item(VILLAGE, "village"),
                item("Q5", "human")]
    capital_of = {cap: country for country, (_, cap) in COUNTRIES.items()}
    for qid, label in CAPITALS.items():
        country = capital_of[qid]
        entities.append(item(qid, label, claims={"P31": [CAPITAL, CITY], "P17": [country], "P1376": [country]}))
    for qid, (label, country) in CITIES.items():
        entities.append(item(qid, label, claims={"P31": [CITY], "P17": [country]}))
    borders = {"Q142": ["Q183", "Q38", "Q29"], "Q183": ["Q142", "Q40"], "Q38": ["Q142", "Q40"], "Q29": ["Q142"],
               "Q40": ["Q183", "Q38"]}
    for qid, (label, capital) in COUNTRIES.items():
        claims = {"P31": [COUNTRY], "P36": [capital], "P47": borders.get(qid, [])}
        if qid == "Q183":
            claims["P36"] = [(capital, "1990-10-03", None), ("Q586", "1949-05-23", "1990-10-03")]
        if qid == "Q155":
            claims["P36"] = [(capital, "1960-04-21", None), ("Q8678", "1763-01-01", "1960-04-21"),
                             ("Q36947", "1549-03-29", "1763-01-01")]
        entities.append(item(qid, label, claims=claims))
    # someone born in a place with no type: the pool falls back to the objects of P19
    entities += [item("Q901", "Ada Example", claims={"P31": ["Q5"], "P19": ["Q9001"]}),
                 item("Q902", "Bo Example", claims={"P31": ["Q5"], "P19": ["Q9002"]}),
                 item("Q903", "Cy Example", claims={"P31": ["Q5"], "P19": ["Q1055"]}),
                 item("Q904", "Di Example", claims={"P31": ["Q5"], "P19": ["Q9003"]}),
                 item("Q9001", "Smallton"), item("Q9002", "Littleby"), item("Q9003", "Smallton-on-Sea", ("Littleby",))]
    return entities


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    base = tmp_path_factory.mktemp("distractors")
    dump = write_dump(base / "hand.json", graph_entities())
    store = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(dump), "--store", str(store), "--quiet", check=True)
    kg = KnowledgeGraph(store)
    index = SemanticIndex.build(feature_bags(kg))
    index.save(base / "semantic")
    yield base, kg, SemanticIndex.load(base / "semantic")
    kg.close()


def labels(found, kg):
    return [kg.labels(d.entity).label for d in found.distractors]


def test_sem_ranks_capitals_near_capitals(graph):
    _, kg, index = graph
    finder = DistractorFinder(kg, index)
    found = finder.find("Q142", "P36", "Q90", strategy="sem", n=7)
    # Lyon shares Paris's country; every other near neighbour is a capital, and every capital
    # ranks above every non-capital city of another country
    assert labels(found, kg)[0] == "Lyon"
    assert set(labels(found, kg)[1:]) == {"Berlin", "Brasília", "Madrid", "Rome", "Tokyo", "Vienna"}
    assert found.pool == "type" and set(found.types) == {CAPITAL, CITY} and found.shortfall is None
    assert all(d.source == "sem" and d.score > 0 for d in found.distractors)
    scores = [d.score for d in found.distractors]
    assert scores == sorted(scores, reverse=True)
    # after the capitals come cities; the other "Paris" never, whatever n
    more = finder.find("Q142", "P36", "Q90", strategy="sem", n=20)
    assert "Q830149" not in [d.entity for d in more.distractors] and "Q90" not in [d.entity for d in more.distractors]
    assert len(more.distractors) == 14 and more.shortfall == "only 14 fair candidates in the type pool"  # 16 - Paris x2


def test_temp_sem_puts_former_capitals_first_most_recent_first(graph):
    _, kg, index = graph
    finder = DistractorFinder(kg, index)
    germany = finder.find("Q183", "P36", "Q64", strategy="temp+sem", n=3)
    assert labels(germany, kg)[0] == "Bonn" and germany.distractors[0].source == "temporal"
    assert [d.source for d in germany.distractors[1:]] == ["sem", "sem"]
    brazil = finder.find("Q155", "P36", "Q3114", strategy="temp+sem", n=4)
    assert labels(brazil, kg)[:2] == ["Rio de Janeiro", "Salvador"]
    # in 1950 Rio was the capital: then Salvador is the former one; Brasília (not yet) is a capital
    # Brazil held (from 1960), so no distractor unless only the objects true in 1950 are kept out
    in_1950 = finder.find("Q155", "P36", "Q8678", strategy="temp+sem", n=20, at="1950-01-01")
    assert labels(in_1950, kg)[0] == "Salvador" and "Q3114" not in [d.entity for d in in_1950.distractors]
    assert "Q8678" not in [d.entity for d in in_1950.distractors]
    then = DistractorFinder(kg, index, exclude_objects="true-at-date").find("Q155", "P36", "Q8678", strategy="temp+sem",
                                                                         n=20, at="1950-01-01")
    assert labels(then, kg)[0] == "Salvador" and "Q3114" in [d.entity for d in then.distractors]


def test_other_true_objects_of_a_non_functional_relation_and_the_subject_are_excluded(graph):
    _, kg, index = graph
    finder = DistractorFinder(kg, index)
    for strategy in ("random", "sem"):
        found = finder.find("Q142", "P47", "Q183", strategy=strategy, n=10)
        assert {d.entity for d in found.distractors} == {"Q17", "Q155", "Q40"}  # not Italy, Spain or France
        assert found.shortfall == "only 3 fair candidates in the type pool"


def test_object_without_type_has_no_distractors_as_in_the_paper(graph):
    """DistFact's candidates share a type with o (../shared/papers/004_9e1422d598bbbe4c.txt:115):
    an o without any type has none, whatever the strategy."""
    _, kg, index = graph
    finder = DistractorFinder(kg, index)
    for strategy in ("random", "sem", "temp+sem"):
        found = finder.find("Q901", "P19", "Q9001", strategy=strategy, n=5)
        assert found.pool == "none" and found.types == () and found.distractors == ()
        assert found.shortfall == "Q9001 has no type (instance of, subclass of): no candidate shares one"
        assert found.to_dict()["type_rule"] == "union"


def test_object_without_type_falls_back_to_the_relations_objects_when_asked(graph):
    _, kg, index = graph
    finder = DistractorFinder(kg, index, untyped="relation-objects")
    found = finder.find("Q901", "P19", "Q9001", strategy="random", n=5)
    assert found.pool == "relation-objects" and found.types == ()
    # Littleby (Q9002) and Hamburg (Q1055) were someone's birthplace; Smallton-on-Sea shares no
    # name with Smallton; the untyped pool never reaches entities that are no one's birthplace
    assert {d.entity for d in found.distractors} == {"Q9002", "Q1055", "Q9003"}
    littleby = finder.find("Q902", "P19", "Q9002", strategy="random", n=5)
    assert {d.entity for d in littleby.distractors} == {"Q9001", "Q1055"}  # Q9003 has the alias Littleby
    with pytest.raises(ValueError, match="untyped pool"):
        DistractorFinder(kg, index, untyped="objects")


def test_random_is_seeded_and_model_free(graph):
    _, kg, index = graph
    finder = DistractorFinder(kg, index)
    a = finder.find("Q142", "P36", "Q90", strategy="random", n=4, seed=1)
    assert a == finder.find("Q142", "P36", "Q90", strategy="random", n=4, seed=1)
    draws = {tuple(d.entity for d in finder.find("Q142", "P36", "Q90", strategy="random", n=4, seed=s).distractors)
             for s in range(6)}
    assert len(draws) > 1
    sem = [finder.find("Q142", "P36", "Q90", strategy="sem", n=4, seed=s).distractors for s in range(3)]
    assert sem[0] == sem[1] == sem[2]


def test_semantic_index_roundtrip_and_empty_bags(graph, tmp_path):
    base, kg, loaded = graph
    cities = loaded.pool(kg.entities_of_type(CITY, via="P31"))
    for entity in ("Q90", "Q64", "Q1055"):
        served = list(loaded.ranked(entity, cities))
        assert served[:5] == reference_top(loaded, entity, cities, 5)
        assert len(served) == len(cities) - 1 and entity not in [e for e, _ in served]
    # min_df=3 leaves entities whose features at most one other entity shares with an all-zero vector
    sparse_index = SemanticIndex.build(feature_bags(kg), min_df=3)
    empty = [e for e in sparse_index.entities if not sparse_index.has_vector(e)]
    assert "Q9001" in empty and sparse_index.meta["indexed"] == len(sparse_index.entities) - len(empty)
    sparse_index.save(tmp_path / "s")
    reloaded = SemanticIndex.load(tmp_path / "s")
    everyone = reloaded.pool(reloaded.entities)
    assert list(reloaded.ranked("Q9001", everyone)) == []
    # an entity without a vector is still a candidate: similarity 0, after every positive one, by id
    tail = [(e, s) for e, s in reloaded.ranked("Q90", everyone) if e in empty]
    assert tail and all(s == 0.0 for _, s in tail) and [e for e, _ in tail] == sorted(e for e, _ in tail)
    # (Q9001 has no type: only the relation-objects pool gives it candidates to rank)
    found = DistractorFinder(kg, reloaded, untyped="relation-objects").find("Q901", "P19", "Q9001", strategy="sem", n=2)
    assert found.distractors == () and found.shortfall == "Q9001 has no features in the semantic index"
    (tmp_path / "s" / "meta.json").write_text(json.dumps({**reloaded.meta, "format": 1}))
    with pytest.raises(ValueError, match="format 1.*rebuild it with `factprobe distractors build`"):
        SemanticIndex.load(tmp_path / "s")


def test_scores_of_an_outsider_whose_shared_features_are_all_dense_rows(graph, monkeypatch):
    """Lyon against the capitals: every feature it shares with them (P31, city, P17, France...) is
    held by enough capitals to be a dense row, so no sparse posting matches and np.bincount starts
    from an empty input, for which numpy 2 returns int64 zeros: adding the dense rows' float
    products into those raised a casting error. The scores are those of the same pool held sparse."""
    _, kg, index = graph
    capitals = kg.entities_of_type(CAPITAL, via="P31")
    held_sparse = index.pool(capitals)
    expected = index.scores("Q456", held_sparse)
    monkeypatch.setattr("factprobe.index.semantic.DENSE_MIN_POOL", 1)
    dense = index.pool(capitals)
    assert "Q456" not in dense.members and dense.postings.nnz == 0 and len(dense.dense_row) == 35
    got = index.scores("Q456", dense)
    assert got.dtype == np.float64 and got.tolist() == expected.tolist()
    assert dict(zip(dense.members, got.tolist()))["Q90"] == max(got) > 0  # Paris shares France
    assert [e for e, _ in index.ranked("Q456", dense)][0] == "Q90"


def test_an_outsider_sharing_no_feature_with_a_pool_ranks_it_at_zero_by_id(graph):
    """Smallton has no claims, so its only feature is itself: no member of the capitals' pool shares
    it, the scores start from the int64 zeros np.bincount returns for empty input, and marking the
    taken members with -inf overflowed. Every capital follows at similarity 0, by id."""
    _, kg, index = graph
    capitals = index.pool(kg.entities_of_type(CAPITAL, via="P31"))
    assert index.has_vector("Q9001") and "Q9001" not in capitals.members
    assert list(index.ranked("Q9001", capitals)) == [(e, 0.0) for e in sorted(CAPITALS)]
    assert index.scores("Q9001", capitals).dtype == np.float64


def test_cli_build_query_and_batch(graph, tmp_path):
    base, kg, _ = graph
    store, semantic = str(base / "g.sqlite"), str(tmp_path / "si")
    built = json.loads(run_cli("distractors", "build", "--store", store, "--out", semantic, "--quiet", "--json",
                               check=True).stdout)
    assert built["entities"] == len(graph_entities()) == 35
    # the self-check asked Sem about every entity-object fact here (fewer than its 200) and agreed
    assert built["check"]["recall"] == 1.0 and built["check"]["ok"] and built["check"]["below"] == []
    assert built["check"]["queries"] == sum(1 for _ in kg.facts(entity_objects_only=True))
    shown = run_cli("distractors", "build", "--store", store, "--out", semantic, "--quiet", check=True).stdout
    assert "self-check: Sem recall@10 1.0000 against brute force" in shown
    proc = run_cli("distractors", "query", "--subject", "Q183", "--relation", "P36", "--object", "Q64",
                   "--strategy", "temp+sem", "--n", "2", "--store", store, "--semantic", semantic, "--json", check=True)
    out = json.loads(proc.stdout)
    assert [d["entity"] for d in out["distractors"]][0] == "Q586" and out["found"] == 2
    facts = tmp_path / "facts.jsonl"
    facts.write_text("\n".join([json.dumps({"subject": "Q142", "relation": "P36", "object": "Q90"}), "not json",
                                json.dumps({"subject": "Q183", "relation": "P36", "object": "Q64"})]) + "\n")
    out_file = tmp_path / "with.jsonl"
    args = ["distractors", "add", str(facts), "--out", str(out_file), "--strategy", "random", "--strategy", "sem",
            "--n", "3", "--store", store, "--semantic", semantic, "--quiet", "--json"]
    proc = run_cli(*args)
    assert proc.returncode == 3 and f"rejected {facts}:2" in proc.stderr
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == 3 and rows[1] == {"rejected": True}
    assert len(rows[0]["distractors"]["random"]) == 3 and rows[2]["distractors"]["sem"][0] in ("Q1055", "Q586")
    again = run_cli(*args)  # everything written already: nothing redone
    assert json.loads(again.stdout)["resumed_after"] == 3 and out_file.read_text().count("\n") == 3
    appropt = json.loads(run_cli("distractors", "query", "--subject", "Q142", "--relation", "P36", "--object", "Q90",
                                 "--strategy", "appropt", "--n", "2", "--model", "smollm2-135m-instruct",
                                 "--template", "The capital of [X] is [Y].", "--store", store, "--json",
                                 check=True).stdout)
    # The paper's grammar holds Paris's labels: Paris takes the first of the 2 results, Berlin the second.
    assert [d["entity"] for d in appropt["distractors"]] == ["Q64"] and appropt["distractors"][0]["score"] < 0
    assert appropt["shortfall"] == "the true object took result 1 of 2 (ApprOpt's grammar holds its labels) and is no distractor"
    banned = json.loads(run_cli("distractors", "query", "--subject", "Q142", "--relation", "P36", "--object", "Q90",
                                "--strategy", "appropt", "--n", "1", "--model", "smollm2-135m-instruct",
                                "--template", "The capital of [X] is [Y].", "--appropt-object", "banned",
                                "--store", store, "--json", check=True).stdout)
    assert [d["entity"] for d in banned["distractors"]] == ["Q64"] and banned["shortfall"] is None
    facts.write_text("\n".join([json.dumps({"subject": "Q142", "relation": "P36", "object": "Q90"}), "[1]",
                                json.dumps({"subject": "Q183", "relation": "P36", "object": "Q64"}),
                                json.dumps({"subject": "Q38", "relation": "P36", "object": "Q220"})]) + "\n")
    appropt_args = ["distractors", "add", str(facts), "--strategy", "appropt", "--strategy", "random", "--n", "2",
                    "--model", "smollm2-135m-instruct", "--template", "The capital of [X] is [Y].",
                    "--store", store, "--quiet", "--json"]
    batched, one_by_one = tmp_path / "batched.jsonl", tmp_path / "one.jsonl"
    assert run_cli(*appropt_args, "--out", str(batched)).returncode == 3
    assert run_cli(*appropt_args, "--out", str(one_by_one), "--batch", "1").returncode == 3
    rows = [json.loads(line) for line in batched.read_text().splitlines()]
    assert batched.read_text() == one_by_one.read_text() and len(rows) == 4 and rows[1] == {"rejected": True}
    assert rows[0]["distractors"]["appropt"][0] == "Q64"
    # Each capital takes one of its fact's 2 results (the paper's grammar): one distractor each.
    assert [r["distractors"]["appropt"] for r in rows if "distractors" in r] == [["Q64"], ["Q1055"], ["Q490"]]
    assert {r["shortfall"]["appropt"] for r in rows if "distractors" in r} == {
        "the true object took result 1 of 2 (ApprOpt's grammar holds its labels) and is no distractor"}
    no_model = run_cli("distractors", "query", "--subject", "Q142", "--relation", "P36", "--object", "Q90",
                       "--strategy", "appropt", "--store", store)
    assert no_model.returncode == 2 and "--model" in no_model.stderr
    missing = run_cli("distractors", "query", "--subject", "Q142", "--relation", "P36", "--object", "Q90",
                      "--store", store, "--semantic", str(tmp_path / "none"))
    assert missing.returncode == 2 and "factprobe distractors build" in missing.stderr


@pytest.mark.slow
def test_appropt_grammar_holds_the_true_objects_labels_as_in_the_paper(graph, tmp_path):
    """DistFact's ApprOpt grammar enforces "a label of o or of one of its distractors"
    (../shared/papers/004_9e1422d598bbbe4c.txt:124), so o competes for the n results: found, it is
    dropped, and "the number of retrieved distractors can be smaller than n". Measured with
    SmolLM2-135M: Paris is the most probable capital after "The capital of France is"."""
    from factprobe.probes.scoring.appropt import ApprOptRanker, TrieCache, exhaustive
    from scoring_models import real_scorer

    _, kg, index = graph
    scorer = real_scorer("smollm2-135m-instruct")
    ranker = ApprOptRanker(scorer, TrieCache(tmp_path / "tries"))
    finder = DistractorFinder(kg, index, appropt=ranker)
    prompt = "The capital of France is"
    rules = finder.rules("Q142", "P36", "Q90")
    pool = finder.pool(rules)
    trie = ranker.cache.get(scorer, finder.pool_key(rules), {e: finder.names_of_raw(e) for e in pool})
    unfair = frozenset(e for e in pool if not rules.fair(e))
    assert unfair == {"Q90", "Q830149"}  # Paris, and the other Paris (one of o's labels)
    # The exact ranking of the paper's grammar: Paris's labels in, the other Paris's out.
    reference = exhaustive(scorer, prompt, trie, 20, banned=unfair - {"Q90"})
    assert reference[0].entity == "Q90" and len(reference) == 15
    one = finder.find("Q142", "P36", "Q90", strategy="appropt", n=1, prompt=prompt)
    assert one.distractors == () and one.shortfall == (
        "the true object took result 1 of 1 (ApprOpt's grammar holds its labels) and is no distractor")
    # a beam as wide as the pool is exhaustive: the reference less Paris, 14 of the 20 asked for
    wide = finder.find("Q142", "P36", "Q90", strategy="appropt", n=20, prompt=prompt)
    assert [d.entity for d in wide.distractors] == [h.entity for h in reference[1:]]
    assert wide.shortfall.startswith("the true object took result 1 of 15")
    # factprobe's older search bans Paris's labels and fills n: Berlin, the best fair candidate
    banned = DistractorFinder(kg, index, appropt=ranker, appropt_object="banned")
    assert [d.entity for d in banned.find("Q142", "P36", "Q90", strategy="appropt", n=1, prompt=prompt).distractors] \
        == ["Q64"]
    with pytest.raises(ValueError, match="appropt_object"):
        DistractorFinder(kg, index, appropt_object="kept")


@pytest.mark.slow
def test_appropt_strategy_is_fair_and_matches_exhaustive_scoring(graph, tmp_path):
    """ApprOpt on a real PyPI model: only fair candidates, the same as scoring them all, one trie
    (with the true object banned from the search, factprobe's older option, so n come back)."""
    from factprobe.probes.scoring.appropt import ApprOptRanker, TrieCache, exhaustive
    from scoring_models import real_scorer

    _, kg, index = graph
    scorer = real_scorer("smollm2-135m-instruct")
    ranker = ApprOptRanker(scorer, TrieCache(tmp_path / "tries"))
    finder = DistractorFinder(kg, index, appropt=ranker, appropt_object="banned")
    found = finder.find("Q142", "P36", "Q90", strategy="appropt", n=2, prompt="The capital of France is")
    chosen = [d.entity for d in found.distractors]
    fair = DistractorFinder(kg, index).find("Q142", "P36", "Q90", strategy="sem", n=50).distractors
    assert len(chosen) == 2 and set(chosen) <= {d.entity for d in fair}  # never Paris, nor the other Paris
    assert all(d.source == "appropt" and d.score < 0 for d in found.distractors)
    rules = finder.rules("Q142", "P36", "Q90")
    pool = finder.pool(rules)
    trie = ranker.cache.get(scorer, finder.pool_key(rules), {e: finder.names_of_raw(e) for e in pool})
    assert ranker.cache.builds == 1  # the search's own trie, from the cache
    banned = frozenset(e for e in pool if not rules.fair(e))
    reference = exhaustive(scorer, "The capital of France is", trie, 20, banned=banned)
    # a beam of width 2 is approximate (hence the name): its best equals the exact best here, and
    # every score it reports is the label's exact log-probability
    assert chosen[0] == reference[0].entity == "Q64"
    exact = {h.entity: h.logprob for h in reference}
    assert all(abs(d.score - exact[d.entity]) < 1e-4 for d in found.distractors)
    # a beam as wide as the pool is exhaustive: all 14 fair candidates, in the exact order
    wide = finder.find("Q142", "P36", "Q90", strategy="appropt", n=20, prompt="The capital of France is")
    assert [d.entity for d in wide.distractors] == [h.entity for h in reference] and len(reference) == 14
    assert wide.shortfall == "only 14 fair candidates in the type pool"
    finder.find("Q183", "P36", "Q64", strategy="appropt", n=2, prompt="The capital of Germany is")
    assert ranker.cache.builds == 1  # the same type pool, the same trie
    # exact=True: the beam widens until its answer is provably the exhaustive top 2, which the
    # width-2 beam misses here (it keeps a prefix that scores better than the label it hides)
    exact_finder = DistractorFinder(kg, index, appropt=ApprOptRanker(scorer, ranker.cache, exact=True),
                                    appropt_object="banned")
    exact_found = exact_finder.find("Q142", "P36", "Q90", strategy="appropt", n=2, prompt="The capital of France is")
    assert [d.entity for d in exact_found.distractors] == [h.entity for h in reference[:2]]
    assert chosen != [h.entity for h in reference[:2]]

    # Many facts at once: what each finds alone, and a fact with nothing fair left comes back short.
    facts = [("Q142", "P36", "Q90", "The capital of France is"), ("Q183", "P36", "Q64", "The capital of Germany is"),
             ("Q38", "P36", "Q220", "The capital of Italy is")]
    together = finder.find_many(facts, strategy="appropt", n=3)
    alone = [finder.find(s, r, o, strategy="appropt", n=3, prompt=p) for s, r, o, p in facts]
    for x, y in zip(together, alone):  # batched passes round differently: scores agree to 1e-4
        assert [d.entity for d in x.distractors] == [d.entity for d in y.distractors]
        assert all(abs(a.score - b.score) < 1e-4 for a, b in zip(x.distractors, y.distractors))
    assert [x.subject for x in together] == ["Q142", "Q183", "Q38"]


def test_types_are_instance_of_and_subclass_of_together_or_instance_first_when_asked(tmp_path):
    """The class "capital" (P279 city) and the town Zagreb (P31 city) both have the type "city".
    DistFact's types are "those explicitly declared via instance of and subclass of"
    (../shared/papers/004_9e1422d598bbbe4c.txt:142), so under the paper's rule as written
    (`class_candidates="allow"`) the classes megacity and capital are distractors for Zagreb; by
    default (issue 45) a class is no candidate for an instance. `types="instance-first"` (factprobe
    before issue 28): only instances may answer for an instance, and a class's pool is the other classes."""
    entities = [item(CITY, "city"), item("Q1637706", "megacity", claims={"P279": [CITY]}),
                item(CAPITAL, "capital", claims={"P279": [CITY]}),
                item("Q1435", "Zagreb", claims={"P31": [CITY]}), item("Q1781", "Budapest", claims={"P31": [CITY]}),
                item("Q1754", "Stockholm", claims={"P31": [CITY]}),
                item("Q224", "Croatia", claims={"P36": ["Q1435"]}),
                item("Q2", "example class", claims={"P279": [CAPITAL]})]
    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "g.json", entities)), "--store", str(store),
            "--quiet", check=True)
    with KnowledgeGraph(store) as kg:
        default = DistractorFinder(kg, None).find("Q224", "P36", "Q1435", strategy="random", n=10, seed=0)
        assert sorted(d.entity for d in default.distractors) == ["Q1754", "Q1781"]  # megacity, capital: classes
        paper = DistractorFinder(kg, None, class_candidates="allow")
        found = paper.find("Q224", "P36", "Q1435", strategy="random", n=10, seed=0)
        # city by P31 or P279: Budapest, Stockholm, megacity, capital (Zagreb is o; Q2 is a capital)
        assert sorted(d.entity for d in found.distractors) == ["Q1637706", "Q1754", "Q1781", CAPITAL]
        assert found.types == (CITY,) and found.shortfall == "only 4 fair candidates in the type pool"
        rules = paper.rules("Q2", "P279", CAPITAL)  # capital's types: {city} (its P279)
        assert rules.via is None and paper.pool_key(rules) == f"type:{CITY}"
        assert [e for e in paper.pool(rules) if rules.fair(e)] == ["Q1435", "Q1637706", "Q1754", "Q1781"]
        with pytest.raises(ValueError, match="distractor types"):
            DistractorFinder(kg, None, types="p31")
        finder = DistractorFinder(kg, None, types="instance-first")
        found = finder.find("Q224", "P36", "Q1435", strategy="random", n=10, seed=0)
        assert sorted(d.entity for d in found.distractors) == ["Q1754", "Q1781"]
        assert found.to_dict()["type_rule"] == "instance-first"
        assert found.shortfall is not None  # 2 fair instances, not padded with the classes
        # a class's candidates are the other subclasses of its superclass, never the instances
        rules = finder.rules("Q2", "P279", CAPITAL)
        assert rules.via == "P279" and finder.pool(rules) == ["Q1637706", CAPITAL]
        assert [e for e in finder.pool(rules) if rules.fair(e)] == ["Q1637706"]


def test_sem_breaks_ties_by_id_whatever_the_build(tmp_path):
    """Capitals of a flat graph tie on similarity: the distractors must not depend on the build or on
    the order candidates are visited in."""
    from test_eval import capital_graph

    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "g.json", capital_graph())), "--store", str(store),
            "--quiet", check=True)
    with KnowledgeGraph(store) as kg:
        facts = [(f.subject, f.object) for f in kg.facts("P36", entity_objects_only=True)]
        answers = []
        for build in range(3):
            index = SemanticIndex.build(feature_bags(kg))
            finder = DistractorFinder(kg, index)
            answers.append([[(d.entity, d.score) for d in finder.find(s, "P36", o, strategy="sem", n=3).distractors]
                            for s, o in facts])
        assert answers[0] == answers[1] == answers[2]
        ties = 0
        for found in answers[0]:
            assert len(found) == 3
            for (e1, s1), (e2, s2) in zip(found, found[1:]):
                assert s1 > s2 or (s1 == s2 and e1 < e2)
                ties += s1 == s2
        assert ties > 0  # the graph does have ties, so the order rule was exercised


def test_distractor_probe_sets_follow_and_record_the_type_rules(tmp_path):
    """`probeset build --kind distractor`: DistFact's types by default (the classes megacity and
    capital share "city" with Zagreb through subclass-of), factprobe's older rules on request;
    the sidecar records which (issue 28 f)."""
    entities = [item(CITY, "city"), item("Q1637706", "megacity", claims={"P279": [CITY]}),
                item(CAPITAL, "capital", claims={"P279": [CITY]}),
                item("Q1435", "Zagreb", claims={"P31": [CITY]}), item("Q1781", "Budapest", claims={"P31": [CITY]}),
                item("Q1754", "Stockholm", claims={"P31": [CITY]}), item("Q9001", "Smallton"),
                item("Q224", "Croatia", claims={"P36": ["Q1435"]}), item("Q225", "Tinyland", claims={"P36": ["Q9001"]})]
    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "g.json", entities)), "--store", str(store),
            "--quiet", check=True)

    def build(name: str, *flags: str) -> tuple[dict, dict]:
        out = tmp_path / f"{name}.jsonl"
        run_cli("probeset", "build", "--store", str(store), "--out", str(out), "--kind", "distractor",
                "--relation", "P36", "--strategy", "random", "--n", "10", *flags, check=True)
        items = {i["subject"]: i for i in map(json.loads, out.read_text().splitlines())}
        return items, json.loads((tmp_path / f"{name}.meta.json").read_text())["params"]["options"]

    items, options = build("default")
    assert (options["distractor_types"], options["untyped_pool"], options["appropt_object"],
            options["class_candidates"]) == ("union", "none", "grammar", "exclude")
    # megacity and capital are classes: no candidates for the city Zagreb (issue 45)
    assert sorted(d["entity"] for d in items["Q224"]["distractors"]["random"]) == ["Q1754", "Q1781"]
    items, options = build("paper", "--class-candidates", "allow")
    assert sorted(d["entity"] for d in items["Q224"]["distractors"]["random"]) == [
        "Q1637706", "Q1754", "Q1781", CAPITAL]
    # Smallton has no type: no candidate (Zagreb, the relation's other object, is no distractor)
    assert items["Q225"]["distractors"]["random"] == []
    assert items["Q225"]["shortfall"]["random"].startswith("Q9001 has no type")
    items, options = build("older", "--distractor-types", "instance-first", "--untyped-pool", "relation-objects")
    assert (options["distractor_types"], options["untyped_pool"]) == ("instance-first", "relation-objects")
    assert sorted(d["entity"] for d in items["Q224"]["distractors"]["random"]) == ["Q1754", "Q1781"]
    assert [d["entity"] for d in items["Q225"]["distractors"]["random"]] == ["Q1435"]

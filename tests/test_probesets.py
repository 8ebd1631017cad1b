"""Probe-set builders on a hand-made graph (Wikidata JSON through the real ingest), with
frequencies counted by the real corpus index into the store, and the shipped templates."""

from __future__ import annotations

import json
import sys
import pytest

from conftest import run_cli
from factprobe.kg.graph import KnowledgeGraph
from test_distractors import graph_entities
from wikidata_builder import item, write_dump

# Documents: France/Paris together 3 times, Germany/Berlin once, Italy/Rome 12 times.
DOCS = ([("France and its capital Paris", 3), ("Berlin is in Germany", 1), ("Rome, Italy", 12),
         ("Tokyo alone", 2), ("Spain without its capital", 1)])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    base = tmp_path_factory.mktemp("probesets")
    dump = write_dump(base / "hand.json", graph_entities())
    path = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(dump), "--store", str(path), "--quiet", check=True)
    docs = base / "docs.jsonl"
    lines, k = [], 0
    for text, copies in DOCS:
        for _ in range(copies):
            lines.append(json.dumps({"id": f"d{k}", "title": "", "text": text}))
            k += 1
    docs.write_text("\n".join(lines) + "\n")
    run_cli("corpus", "index", str(docs), "--store", str(path), "--index", str(base / "f.sqlite"), "--quiet", check=True)
    run_cli("frequency", "annotate", "--relation", "P36", "--to-store", "--corpus", "wiki", "--store", str(path),
            "--index", str(base / "f.sqlite"), "--quiet", check=True)
    return base, str(path)


# icl-mc: the hand-made graphs' relations have fewer than 100 objects; the default 100 choices are
# then given explicitly fewer (test_paper_icl_kdf.py pins the refusal without the flag), and their
# relations, far below T-REx-MC's 500 facts and 100 objects, kept (tests/test_paper_round3.py pins the filter)
MC_SMALL = ["--allow-fewer-choices", "--trex-mc-filter", "report"]
KIND_ARGS = {"icl-mc": MC_SMALL}
KDF_SAME_RELATION = ["--kdf-demonstrations", "same-relation"]
KDF_OLD = [*KDF_SAME_RELATION, "--kdf-options", "type-pool", "--kdf-question", "qa"]


def _build(store: str, out, *args: str) -> dict:
    proc = run_cli("probeset", "build", "--store", store, "--out", str(out), "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _items(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_icl_mc_choices_are_never_true_and_demonstrations_never_test_subjects(store, tmp_path):
    base, path = store
    out = tmp_path / "mc.jsonl"
    meta = _build(path, out, "--kind", "icl-mc", "--relation", "P47", "--relation", "P36", "--choices", "5",
                  "--demo-fraction", "0.3", "--seed", "3", *MC_SMALL)  # P47 has 5 objects
    items = _items(out)
    assert meta["items"] == len(items) == 10 + 7  # 10 border statements, 7 current capitals
    with KnowledgeGraph(path) as kg:
        for item in items:
            if item["split"] != "test":
                assert "choices" not in item
                continue
            true = set(kg.objects(item["subject"], item["relation"]))
            assert item["choice_ids"][item["answer_index"]] == item["object"]
            assert len(set(item["choice_ids"])) == len(item["choice_ids"]) <= 5
            assert not (set(item["choice_ids"]) - {item["object"]}) & true, item["id"]
        # Paris's namesake (Q830149) is not an object of P36, and former capitals are not true now
        assert all(i["object"] not in ("Q586", "Q8678") for i in items)
    for relation in ("P47", "P36"):
        demo = {i["subject"] for i in items if i["relation"] == relation and i["split"] == "demo"}
        test = {i["subject"] for i in items if i["relation"] == relation and i["split"] == "test"}
        assert demo and test and not demo & test


def test_kdf_buckets_equal_the_frequency_layer_and_options_are_fair(store, tmp_path):
    base, path = store
    out = tmp_path / "kdf.jsonl"
    # factprobe's earlier KDF construction, named (P36 alone: no other relation to take demonstrations
    # from); the paper's is pinned in test_paper_icl_kdf.py
    _build(path, out, "--kind", "kdf", "--relation", "P36", "--corpus", "wiki", "--shots", "2", *KDF_OLD)
    items = _items(out)
    from factprobe.probes.templates import load_templates

    question = load_templates()["P36"].qa[0].text
    with KnowledgeGraph(path) as kg:
        stored = {fact: (n, bucket) for fact, _, n, bucket in kg.fact_frequencies("wiki")}
        for item in items:
            assert (item["frequency"], item["bucket"]) == stored[item["fact"]]
            assert len(item["options"]) == 4 and item["option_ids"]["ABCD".index(item["answer"])] == item["object"]
            assert not set(item["option_ids"]) - {item["object"]} & set(kg.objects(item["subject"], "P36"))
            assert item["question"] == question.replace("[X]", item["subject_label"])
            assert len(item["demonstrations"]) == 2
            assert item["fact"] not in {d["fact"] for d in item["demonstrations"]}
    by_subject = {i["subject_label"]: (i["frequency"], i["bucket"]) for i in items}
    assert by_subject["France"] == (3, "[1,10)") and by_subject["Germany"] == (1, "[1,10)")
    assert by_subject["Italy"] == (12, "[10,100)") and by_subject["Japan"] == (0, "0")
    counted = json.loads(run_cli("probeset", "stats", str(out), "--json", check=True).stdout)
    assert counted["by_bucket"] == {"0": 4, "[1,10)": 2, "[10,100)": 1}
    # a bucket filter and a per-bucket cap
    capped = tmp_path / "capped.jsonl"
    _build(path, capped, "--kind", "kdf", "--relation", "P36", "--corpus", "wiki", "--per-bucket", "1",
           "--bucket", "0", "--bucket", "[1,10)", *KDF_OLD)
    assert sorted(i["bucket"] for i in _items(capped)) == ["0", "[1,10)"]


def test_same_command_same_bytes_other_seed_other_bytes(store, tmp_path):
    base, path = store
    for kind in ("icl-mc", "kdf", "distractor", "belief-icl", "cloze"):
        a, b, c = tmp_path / f"{kind}-a.jsonl", tmp_path / f"{kind}-b.jsonl", tmp_path / f"{kind}-c.jsonl"
        args = ["--kind", kind, "--relation", "P36", "--relation", "P47", *KIND_ARGS.get(kind, []), "--seed", "7"]
        _build(path, a, *args)
        _build(path, b, *args)
        assert a.read_bytes() == b.read_bytes(), kind
        assert (tmp_path / f"{kind}-a.meta.json").read_text() == (tmp_path / f"{kind}-b.meta.json").read_text()
        if kind != "cloze":  # cloze draws nothing at random
            _build(path, c, *args[:-1], "8")
            assert a.read_bytes() != c.read_bytes(), kind


def test_distractor_sets_hold_no_true_object(store, tmp_path):
    base, path = store
    out = tmp_path / "d.jsonl"
    _build(path, out, "--kind", "distractor", "--relation", "P47", "--relation", "P36", "--strategy", "random",
           "--n", "3")
    with KnowledgeGraph(path) as kg:
        for item in _items(out):
            chosen = {d["entity"] for d in item["distractors"]["random"]}
            assert not chosen & set(kg.objects(item["subject"], item["relation"]))
            assert item["subject"] not in chosen
            assert len(chosen) == 3 or item["shortfall"]["random"]


def test_cloze_prompts_are_templates_times_subject_names(store, tmp_path):
    from factprobe.probes.templates import load_templates

    base, path = store
    out = tmp_path / "cloze.jsonl"
    meta = _build(path, out, "--kind", "cloze", "--relation", "P36", "--aliases-per-subject", "2", "--manual-only")
    templates = [t.text for t in load_templates()["P36"].cloze if t.source == "manual"]
    items = _items(out)
    assert meta["params"]["options"]["manual_only"] is True
    germany = next(i for i in items if i["subject"] == "Q183")
    assert germany["gold"] == ["Berlin"]  # Bonn is a former capital: not gold today
    assert [p["template"] for p in germany["prompts"]] == templates  # Germany has no alias: one name each
    assert germany["prompts"][0]["text"] == templates[0].replace("[X]", "Germany")
    # at a date when Bonn was the capital, Bonn is the gold answer
    then = tmp_path / "then.jsonl"
    _build(path, then, "--kind", "cloze", "--relation", "P36", "--at", "1980-01-01")
    assert next(i for i in _items(then) if i["subject"] == "Q183")["gold"] == ["Bonn"]


def test_belief_icl_demonstrations(store, tmp_path):
    base, path = store
    out = tmp_path / "b.jsonl"
    _build(path, out, "--kind", "belief-icl", "--relation", "P36", "--relation", "P47", "--shots", "3",
           "--manual-only")
    items = _items(out)
    facts = {i["fact"]: i for i in items}
    for item in items:
        demos = item["demonstrations"]
        assert demos["zero-shot"] == []
        for setting in ("x-random", "x-relation", "x-template"):
            assert len(demos[setting]) == 3
            assert all(facts[d["fact"]]["subject"] != item["subject"] for d in demos[setting])
        assert all(d["relation"] == item["relation"] for d in demos["x-relation"] + demos["x-template"])
        assert all(d["template"] == item["template"] for d in demos["x-template"])
        assert "[Y]" in item["prompt"] and "[X]" not in item["prompt"]
        assert all("[X]" not in d["text"] and "[Y]" not in d["text"] for d in demos["x-random"])


def test_probe_sets_load_with_datasets_and_parquet(store, tmp_path):
    datasets = pytest.importorskip("datasets")
    base, path = store
    for kind in ("cloze", "icl-mc", "kdf", "distractor", "belief-icl"):
        out = tmp_path / f"{kind}.jsonl"
        meta = _build(path, out, "--kind", kind, "--relation", "P36", "--parquet", *KIND_ARGS.get(kind, []),
                      *(KDF_SAME_RELATION if kind == "kdf" else []))
        loaded = datasets.load_dataset("json", data_files=str(out), split="train")
        assert len(loaded) == meta["items"] and loaded[0]["kind"] == kind
        import pyarrow.parquet as pq

        assert pq.read_table(out.with_suffix(".parquet")).num_rows == meta["items"]


def test_bad_requests_are_clear(store, tmp_path):
    base, path = store
    unknown = run_cli("probeset", "build", "--kind", "cloze", "--relation", "P999", "--store", path,
                      "--out", str(tmp_path / "x.jsonl"))
    assert unknown.returncode == 2 and "no entity-valued facts of P999" in unknown.stderr
    no_corpus = run_cli("probeset", "build", "--kind", "kdf", "--per-bucket", "2", "--store", path,
                        "--out", str(tmp_path / "x.jsonl"))
    assert no_corpus.returncode == 2 and "--corpus" in no_corpus.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "P36.yaml").write_text("relation: P36\nlabel: capital\ncloze:\n  - text: \"The capital of [X] is.\"\n"
                                  "    source: manual\nqa: []\n")
    broken = run_cli("probeset", "build", "--kind", "cloze", "--relation", "P36", "--templates", str(bad),
                     "--store", path, "--out", str(tmp_path / "x.jsonl"))
    assert broken.returncode == 2 and "P36.yaml" in broken.stderr and "[Y]" in broken.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_provenance_filter_keeps_facts_a_trex_annotator_aligned(tmp_path):
    """Wikidata gives the labels, T-REx the provenance of two of the capital facts: France-Paris
    (NoSub and AllEnt) and Germany-Berlin (NosubSPOAligner only)."""
    from pathlib import Path

    dump = write_dump(tmp_path / "hand.json", graph_entities())
    store = str(tmp_path / "g.sqlite")
    run_cli("ingest", "wikidata", str(dump), "--store", store, "--quiet", check=True)
    trex = Path(__file__).parent / "fixtures" / "trex" / "re-nlg_0-5.json"
    run_cli("ingest", "trex", str(trex), "--store", store, "--quiet", check=True)
    out = tmp_path / "nosub.jsonl"
    meta = _build(store, out, "--kind", "cloze", "--relation", "P36", "--annotator", "NoSub", "--annotator", "AllEnt")
    assert [i["subject"] for i in _items(out)] == ["Q142"]
    assert meta["source"]["selection"]["wrong_provenance"] == 6 and meta["source"]["selection"]["kept"] == 1
    everything = tmp_path / "all.jsonl"
    _build(store, everything, "--kind", "cloze", "--relation", "P36")
    assert len(_items(everything)) == 7  # both sources' statements of a triple make one item
    none = run_cli("probeset", "build", "--kind", "cloze", "--relation", "P36", "--annotator", "SPO", "--store", store,
                   "--out", str(tmp_path / "none.jsonl"))
    assert none.returncode == 2 and "no facts left after the filters" in none.stderr


@pytest.mark.slow
def test_appropt_distractor_sets_on_a_real_model(store, tmp_path):
    """The prompt is the first template ending with [Y] (P36's list starts that way), searched for
    all facts together; every distractor is fair. The search's grammar holds the true capital's
    labels too (DistFact's ApprOpt), so where the model ranks it among the 2 best it takes a
    result and is dropped (issue 28 g)."""
    base, path = store
    out = tmp_path / "appropt.jsonl"
    # the objects true at the date kept out, as before issue 45 (Rio, Brazil's former capital, may answer)
    _build(path, out, "--kind", "distractor", "--relation", "P36", "--strategy", "appropt", "--n", "2",
           "--model", "smollm2-135m-instruct", "--exclude-objects", "true-at-date")
    items = _items(out)
    with KnowledgeGraph(path) as kg:
        for item in items:
            chosen = [d["entity"] for d in item["distractors"]["appropt"]]
            assert not set(chosen) & set(kg.objects(item["subject"], "P36"))
            assert all(d["score"] < 0 and d["source"] == "appropt" for d in item["distractors"]["appropt"])
    # Observed: every true capital is among the model's 2 best (Brasília second, after Rio).
    taken = {i["subject_label"]: i["shortfall"]["appropt"].split(" (")[0] for i in items}
    assert taken == {**{c: "the true object took result 1 of 2" for c in
                        ("France", "Germany", "Italy", "Spain", "Japan", "Austria")},
                     "Brazil": "the true object took result 2 of 2"}
    assert {i["subject_label"]: [d["entity"] for d in i["distractors"]["appropt"]] for i in items} == {
        "France": ["Q64"], "Germany": ["Q1055"], "Italy": ["Q490"], "Spain": ["Q830149"], "Japan": ["Q35765"],
        "Austria": ["Q64"], "Brazil": ["Q8678"]}
    france = next(i for i in items if i["subject"] == "Q142")
    assert france["distractors"]["appropt"][0]["label"] == "Berlin"  # as `distractors query` finds it
    # by default every capital Brazil ever had is kept out: Rio and Salvador are no distractors, and
    # with Rio gone Brasília takes no result of 2; the other countries held one capital (Germany's
    # Bonn was no result either), so their sets stay as they were
    held = tmp_path / "held.jsonl"
    _build(path, held, "--kind", "distractor", "--relation", "P36", "--strategy", "appropt", "--n", "2",
           "--model", "smollm2-135m-instruct")
    now = {i["subject_label"]: i for i in _items(held)}
    assert {label: [d["entity"] for d in i["distractors"]["appropt"]] for label, i in now.items()
            if label != "Brazil"} == {"France": ["Q64"], "Germany": ["Q1055"], "Italy": ["Q490"],
                                      "Spain": ["Q830149"], "Japan": ["Q35765"], "Austria": ["Q64"]}
    brazil = [d["entity"] for d in now["Brazil"]["distractors"]["appropt"]]
    assert len(brazil) == 2 and not {"Q8678", "Q36947"} & set(brazil) and now["Brazil"]["shortfall"] is None


def test_popularity_bins_by_number_of_statements(store, tmp_path):
    base, path = store
    out = tmp_path / "pop.jsonl"
    _build(path, out, "--kind", "cloze", "--relation", "P36", "--popularity-bins", "2")
    got = {i["subject_label"]: (i["popularity"], i["popularity_bin"]) for i in _items(out)}
    # statements: P31, P36 (Germany and Brazil with their former capitals too), P47 borders
    assert got == {"Japan": (2, 0), "Spain": (3, 0), "Italy": (4, 0), "Austria": (4, 0), "Brazil": (4, 0),
                   "France": (5, 1), "Germany": (5, 1)}


def test_single_token_filter_for_a_masked_lm(store, tmp_path):
    from scoring_models import tiny_bert

    base, path = store
    bert = tiny_bert(tmp_path / "bert")  # its word pieces know paris, berlin and rome, not madrid or tokyo
    out = tmp_path / "mlm.jsonl"
    _build(path, out, "--kind", "cloze", "--relation", "P36", "--single-token", f"hf-mlm:{bert}")
    assert sorted((i["subject_label"], tuple(i["gold"])) for i in _items(out)) == [
        ("France", ("Paris",)), ("Germany", ("Berlin",)), ("Italy", ("Rome",))]


def test_per_relation_caps_take_a_seeded_sample(store, tmp_path):
    base, path = store
    picks = []
    for seed in ("1", "2", "1"):
        out = tmp_path / f"cap{seed}-{len(picks)}.jsonl"
        meta = _build(path, out, "--kind", "cloze", "--relation", "P47", "--relation", "P36", "--per-relation", "2",
                      "--seed", seed)
        items = _items(out)
        assert [i["relation"] for i in items] == ["P36", "P36", "P47", "P47"]
        assert meta["source"]["selection"]["capped"] == (7 - 2) + (10 - 2)
        picks.append([i["fact"] for i in items])
    assert picks[0] == picks[2] != picks[1]


# -- a graph where fairness is easy to get wrong -----------------------------------------------------

COUNTRY, STATE, REGION, TOWN, HUMAN, CITY = "Q6256", "Q35657", "Q82794", "Q3957", "Q5", "Q515"
PAISES_BAJOS = "Pa\u00edses Bajos"  # precomposed i-acute: an alias of the Netherlands
PAISES_BAJOS_NFD = "Pai\u0301ses Bajos"  # the same name in decomposed Unicode: another place's label


def border_graph() -> list[dict]:
    """P47 (shares border, symmetric: every subject is also an object) with two entities labelled
    "Georgia" and a region whose label is an alias of the Netherlands; P19 with three towns
    labelled "Springfield" and a town "Shelby" named like Shelbyville's alias; P36 with a capital
    whose validity starts in the future (an announced move)."""
    borders = {"Q142": ["Q183", "Q31"], "Q183": ["Q142", "Q31", "Q55"], "Q31": ["Q142", "Q183", "Q55"],
               "Q55": ["Q183", "Q31"], "Q230": ["Q159"], "Q159": ["Q230"], "Q1428": ["Q812"], "Q812": ["Q1428"],
               "Q9701": ["Q9700"]}
    places = {"Q142": ("France", (), COUNTRY), "Q183": ("Germany", ("Deutschland",), COUNTRY),
              "Q31": ("Belgium", (), COUNTRY), "Q55": ("Netherlands", ("Holland", PAISES_BAJOS), COUNTRY),
              "Q230": ("Georgia", (), COUNTRY), "Q159": ("Russia", (), COUNTRY), "Q1428": ("Georgia", (), STATE),
              "Q812": ("Florida", (), STATE), "Q9700": (PAISES_BAJOS_NFD, (), REGION),
              "Q9701": ("Bajo Norte", (), REGION)}
    entities = [item(COUNTRY, "country"), item(STATE, "federated state"), item(REGION, "region"),
                item(TOWN, "town"), item(HUMAN, "human"), item(CITY, "city")]
    for qid, (label, aliases, kind) in places.items():
        entities.append(item(qid, label, aliases, {"P31": [kind], "P47": borders.get(qid, [])}))
    towns = {"Q7001": ("Springfield", ()), "Q7002": ("Springfield", ()), "Q7003": ("Springfield", ()),
             "Q7004": ("Shelbyville", ("Shelby",)), "Q7005": ("Ogdenville", ()), "Q7006": ("North Haverbrook", ()),
             "Q7007": ("Shelby", ())}
    entities += [item(qid, label, aliases, {"P31": [TOWN]}) for qid, (label, aliases) in towns.items()]
    births = {"Q7101": ("Ann Example", "Q7004"), "Q7102": ("Bob Example", "Q7004"),
              "Q7103": ("Cat Example", "Q7004"), "Q7104": ("Dan Example", "Q7005")}
    entities += [item(qid, label, (), {"P31": [HUMAN], "P19": [town]}) for qid, (label, town) in births.items()]
    entities += [item("Q9801", "Newland", (), {"P31": [COUNTRY], "P36": [("Q9802", "1900-01-01", None),
                                                                          ("Q9803", "2999-01-01", None)]}),
                 item("Q9802", "Oldtown", (), {"P31": [CITY]}), item("Q9803", "Newtown", (), {"P31": [CITY]})]
    return entities


@pytest.fixture(scope="module")
def border_store(tmp_path_factory):
    base = tmp_path_factory.mktemp("borders")
    dump = write_dump(base / "borders.json", border_graph())
    path = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(dump), "--store", str(path), "--quiet", check=True)
    return str(path)


def test_icl_mc_choices_exclude_the_subject_repeated_labels_and_names_of_true_objects(border_store, tmp_path):
    out = tmp_path / "mc.jsonl"
    _build(border_store, out, "--kind", "icl-mc", "--relation", "P47", "--choices", "100", "--demo-fraction", "0",
           *MC_SMALL)
    items = {(i["subject"], i["object"]): i for i in _items(out)}
    assert len(items) == 15 and {i["split"] for i in items.values()} == {"test"}
    # With 100 choices every fair object is one: the sets are exact. One "Georgia" (the first by id,
    # the state Q1428) stands for both; Q9700 is named like the Netherlands' alias.
    expected = {
        ("Q31", "Q55"): ["Q1428", "Q159", "Q55", "Q812"],  # not Belgium itself, nor the NFD "Paises Bajos"
        ("Q142", "Q183"): ["Q1428", "Q159", "Q183", "Q55", "Q812", "Q9700"],
        ("Q159", "Q230"): ["Q142", "Q183", "Q230", "Q31", "Q55", "Q812", "Q9700"],  # no second "Georgia"
        ("Q230", "Q159"): ["Q142", "Q159", "Q183", "Q31", "Q55", "Q812", "Q9700"],  # none named like the subject
        ("Q812", "Q1428"): ["Q142", "Q1428", "Q159", "Q183", "Q31", "Q55", "Q9700"],
        ("Q9701", "Q9700"): ["Q142", "Q1428", "Q159", "Q183", "Q31", "Q812", "Q9700"],  # nor the Netherlands
    }
    assert {key: sorted(items[key]["choice_ids"]) for key in expected} == expected
    labels = dict(zip(items[("Q142", "Q183")]["choice_ids"], items[("Q142", "Q183")]["choices"]))
    assert labels == {"Q1428": "Georgia", "Q159": "Russia", "Q183": "Germany", "Q55": "Netherlands",
                      "Q812": "Florida", "Q9700": PAISES_BAJOS_NFD}
    from factprobe.index.text import name_key

    for item_ in items.values():
        keys = [name_key(c) for c in item_["choices"]]
        assert len(keys) == len(set(keys)), item_["id"]
        assert item_["subject"] not in item_["choice_ids"] and item_["choices"][item_["answer_index"]] == \
            item_["object_label"]
        wrong = set(keys) - {name_key(item_["object_label"])}
        assert not wrong & {name_key(g) for g in item_["gold"]}, item_["id"]


def test_kdf_options_read_differently_and_share_no_name_with_a_true_object(border_store, tmp_path):
    out = tmp_path / "kdf.jsonl"
    # type-pool options, the construction this test pins (named); P19 alone: same-relation demonstrations
    _build(border_store, out, "--kind", "kdf", "--relation", "P19", "--shots", "2", "--seed", "0", *KDF_OLD)
    items = _items(out)
    options = {i["subject_label"]: sorted(i["options"]) for i in items}
    # Shelbyville's fair towns: three Springfields, Ogdenville, North Haverbrook (Shelby is named
    # like its alias): three distinct labels, so one option set whichever Springfield is drawn.
    shelbyville = ["North Haverbrook", "Ogdenville", "Shelbyville", "Springfield"]
    assert options == {"Ann Example": shelbyville, "Bob Example": shelbyville, "Cat Example": shelbyville,
                       "Dan Example": options["Dan Example"]}
    dan = options["Dan Example"]  # four distinct fair labels for three places
    assert "Ogdenville" in dan and len(set(dan)) == 4
    assert set(dan) - {"Ogdenville"} < {"Springfield", "Shelbyville", "North Haverbrook", "Shelby"}
    for item_ in items:
        assert item_["option_ids"]["ABCD".index(item_["answer"])] == item_["object"]
        for demo in item_["demonstrations"]:
            assert len(set(demo["options"])) == 4


def test_truth_date_comes_from_the_graph_and_is_recorded(border_store, tmp_path):
    """Without --at the build takes its truth date from the store, never from the clock: these
    records carry no revision date, so the day the store was loaded (a Wikidata dump's own date
    is test_a_build_is_the_same_bytes_on_any_day's); the sidecar says which date and whence, and
    --at with that date rebuilds the same items. Newtown's validity starts in 2999: not gold then."""
    from factprobe.kg.graph import KnowledgeGraph

    with KnowledgeGraph(border_store) as kg:
        assert kg.as_of() is None
        loaded = kg.loaded_on()
    meta = _build(border_store, tmp_path / "today.jsonl", "--kind", "cloze", "--relation", "P36")
    used = meta["params"]["selection"]["at"]
    assert used == loaded
    assert meta["source"]["truth_date"] == {"at": loaded, "from": "the day the store was last loaded (its inputs "
                                                                  "carry no dates)"}
    sidecar = json.loads((tmp_path / "today.meta.json").read_text(encoding="utf-8"))
    assert sidecar["params"]["selection"]["at"] == used
    assert [(i["subject_label"], i["gold"]) for i in _items(tmp_path / "today.jsonl")] == [("Newland", ["Oldtown"])]
    dated = _build(border_store, tmp_path / "dated.jsonl", "--kind", "cloze", "--relation", "P36", "--at", used)
    assert dated["source"]["truth_date"] == {"at": used, "from": "asked (--at)"}
    assert (tmp_path / "dated.jsonl").read_bytes() == (tmp_path / "today.jsonl").read_bytes()
    # once the move happened, both are capitals (neither validity has ended): each is gold, in one
    # item for the subject-relation pair (the paper's unit), or in one item per fact
    later = _build(border_store, tmp_path / "later.jsonl", "--kind", "cloze", "--relation", "P36", "--at", "3000-01-01")
    assert later["params"]["selection"]["at"] == "3000-01-01"
    assert [(i["subject_label"], i["gold"]) for i in _items(tmp_path / "later.jsonl")] == [
        ("Newland", ["Oldtown", "Newtown"])]
    _build(border_store, tmp_path / "facts.jsonl", "--kind", "cloze", "--relation", "P36", "--at", "3000-01-01",
           "--cloze-unit", "fact")
    assert sorted((i["object_label"], i["gold"]) for i in _items(tmp_path / "facts.jsonl")) == [
        ("Newtown", ["Oldtown", "Newtown"]), ("Oldtown", ["Oldtown", "Newtown"])]


def test_cloze_prompts_cover_templates_times_subject_aliases_and_gold_every_true_name(border_store, tmp_path):
    from factprobe.probes.templates import load_templates

    out = tmp_path / "cloze.jsonl"
    # One item per (s, r, o) fact: factprobe's older unit, named.
    _build(border_store, out, "--kind", "cloze", "--relation", "P47", "--manual-only", "--cloze-unit", "fact")
    templates = [t.text for t in load_templates()["P47"].cloze if t.source == "manual"]
    netherlands = [i for i in _items(out) if i["subject"] == "Q55"]
    assert sorted(i["object"] for i in netherlands) == ["Q183", "Q31"]
    names = ["Netherlands", "Holland", PAISES_BAJOS]  # label first, then the aliases (3 by default)
    for item_ in netherlands:
        assert [(p["template_id"], p["subject_name"], p["text"]) for p in item_["prompts"]] == [
            (k, name, t.replace("[X]", name)) for k, t in enumerate(templates) for name in names]
        # both true objects, each with its label and aliases, in object-id order
        assert item_["gold"] == ["Germany", "Deutschland", "Belgium"]
        assert item_["unit"] == "fact"
    # BELIEF's unit, the default: one item for the pair (Netherlands, P47) standing for both facts,
    # with the same prompts and gold; the sidecar names the unit.
    paired = tmp_path / "pair.jsonl"
    meta = _build(border_store, paired, "--kind", "cloze", "--relation", "P47", "--manual-only")
    assert meta["params"]["options"]["cloze_unit"] == "pair"
    [pair] = [i for i in _items(paired) if i["subject"] == "Q55"]
    assert (pair["id"], pair["fact"], pair["unit"]) == ("cloze:Q55|P47", "Q55|P47", "pair")
    assert sorted(pair["objects"]) == ["Q183", "Q31"]
    assert sorted(pair["facts"]) == sorted(i["fact"] for i in netherlands)
    assert pair["gold"] == netherlands[0]["gold"] and pair["prompts"] == netherlands[0]["prompts"]
    capped = tmp_path / "capped.jsonl"
    _build(border_store, capped, "--kind", "cloze", "--relation", "P47", "--manual-only", "--aliases-per-subject", "2")
    first = next(i for i in _items(capped) if i["subject"] == "Q55")
    assert [p["subject_name"] for p in first["prompts"]] == ["Netherlands", "Holland"] * len(templates)


def test_distractor_sets_with_random_sem_and_temp_sem(store, tmp_path):
    from factprobe.index.distractors import DistractorFinder
    from factprobe.index.semantic import SemanticIndex

    base, path = store
    semantic = tmp_path / "semantic"
    run_cli("distractors", "build", "--store", path, "--out", str(semantic), "--quiet", check=True)
    out = tmp_path / "d.jsonl"
    meta = _build(path, out, "--kind", "distractor", "--relation", "P36", "--strategy", "random", "--strategy", "sem",
                  "--strategy", "temp+sem", "--n", "3", "--semantic", str(semantic), "--seed", "4")
    assert meta["params"]["options"]["strategies"] == ["random", "sem", "temp+sem"]
    items = _items(out)
    assert len(items) == 7
    with KnowledgeGraph(path) as kg:
        finder = DistractorFinder(kg, SemanticIndex.load(semantic))
        for item_ in items:
            assert list(item_["distractors"]) == ["random", "sem", "temp+sem"] and item_["shortfall"] is None
            true = set(kg.objects(item_["subject"], "P36"))
            for strategy, found in item_["distractors"].items():
                chosen = [d["entity"] for d in found]
                assert len(chosen) == len(set(chosen)) == 3, (item_["id"], strategy)
                assert not set(chosen) & (true | {item_["subject"]}), (item_["id"], strategy)
                # the probe set holds what the distractor layer finds for the same fact and seed
                direct = finder.find(item_["subject"], "P36", item_["object"], strategy=strategy, n=3, seed=4)
                assert [(d["entity"], d["source"], d["score"]) for d in found] == [
                    (d.entity, d.source, d.score) for d in direct.distractors]
        by_subject = {i["subject_label"]: i["distractors"] for i in items}
        # former capitals come first under temp+sem, the most recently ended first
        assert [d["label"] for d in by_subject["Germany"]["temp+sem"]][:1] == ["Bonn"]
        assert [d["label"] for d in by_subject["Brazil"]["temp+sem"]][:2] == ["Rio de Janeiro", "Salvador"]
        assert [d["source"] for d in by_subject["Brazil"]["temp+sem"]] == ["temporal", "temporal", "sem"]
        assert by_subject["France"]["sem"][0]["label"] == "Lyon"  # Paris's nearest: a city of its country


def test_all_but_view_equals_the_filtered_list():
    """The builders sample demonstrations from a view that skips one subject's facts instead of a
    filtered copy per fact; a seeded sample over it must draw exactly what the copy gave."""
    import random

    from factprobe.probes.kinds.sampling import AllBut as _AllBut

    items = list(range(40))
    for skipped in ([], [0], [39], [0, 1, 2], [3, 4, 10, 11, 12, 38, 39], list(range(0, 40, 2)), list(range(40))):
        view, copy = _AllBut(items, skipped), [x for x in items if x not in set(skipped)]
        assert len(view) == len(copy) and list(view) == copy and view[-1:] == copy[-1:]
        for k in (0, 1, 5, len(copy)):
            if k <= len(copy):
                assert random.Random(k).sample(view, k) == random.Random(k).sample(copy, k)


def test_a_probe_set_with_a_repeated_id_is_not_written(tmp_path):
    """Eval resumes by id, so build and import never write a set with one id twice (issue 35 item 6)."""
    from factprobe.probes.building.probeset import write_probeset

    items = [{"id": f"cloze:{k}", "kind": "cloze", "split": "test"} for k in (1, 2, 3, 2)]
    out = tmp_path / "dup.jsonl"
    with pytest.raises(ValueError) as refused:
        write_probeset(out, items, kind="cloze", seed=0, params={}, source={})
    assert str(refused.value) == (f"{out}: items 2 and 4 have the same id 'cloze:2'; a probe set's ids must be "
                                  "unique (nothing written)")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_build_with_parquet_but_no_pyarrow_names_the_extra_and_writes_nothing(store, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` now raises ImportError
    base, path = store
    proc = run_cli("probeset", "build", "--kind", "cloze", "--relation", "P36", "--store", path,
                   "--out", str(tmp_path / "c.jsonl"), "--parquet")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "error: --parquet needs pyarrow (pip install 'factprobe[parquet]')\n"
    assert list(tmp_path.iterdir()) == []

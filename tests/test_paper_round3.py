"""Issue 38 items 7, 8, 9 and 11: the last definitions read against the papers
(../shared/papers/00N_*.txt, cited 00N:line), each case worked out by hand from the paper's text,
each failing on the definitions factprobe used before.

7. BELIEF asks every subject expression (000:324, 2.47 per subject on average, 000:368), and a
   masked LM answers one token, so only facts with a single-token object are asked (000:114,
   footnote 6).
8. KDF counts the documents that mention a fact's two Chinese names (003:227-238), whatever their
   length: a one-character Chinese name counts.
9. T-REx-MC keeps the relations with >= 500 facts and >= 100 distinct objects (002:531-534).
11. Ovconf's prompts are "arranged in descending order based on confidence" before the bins are
   cut (000:76).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factprobe.probes import measures as metrics
from factprobe.probes.evaluation.aggregate import aggregate
from factprobe.probes.measures.belief import Bin


# -- 11. Ovconf's bins in descending order of confidence -------------------------------------------

def test_ovconf_bins_are_cut_in_descending_order_of_confidence():
    """000:76: "all of the prompts are arranged in descending order based on confidence and
    segmented into M bins ... with the same amount of data points in each bin"; Ovconf averages
    (mean confidence - accuracy) over the bins.

    Three prompts, confidences 0.9, 0.5, 0.1, answers right, right, wrong, M = 2: three do not
    split evenly, so the first bin holds two. Descending: {0.9, 0.5} (confidence 0.7, accuracy
    1.0) and {0.1} (0.1, 0.0): Ovconf = (-0.3 + 0.1) / 2 = -0.1. Ascending, as factprobe sorted:
    {0.1, 0.5} (0.3, 0.5) and {0.9} (0.9, 1.0): (-0.2 - 0.1) / 2 = -0.15."""
    confidence, correct = [0.1, 0.9, 0.5], [False, True, True]
    assert metrics.reliability_bins(confidence, correct, bins=2) == [Bin(pytest.approx(0.7), 1.0, 2),
                                                                     Bin(pytest.approx(0.1), 0.0, 1)]
    assert metrics.overconfidence(confidence, correct, bins=2) == pytest.approx(-0.1)
    assert metrics.overconfidence(confidence, correct, bins=2, order="ascending") == pytest.approx(-0.15)
    # Four prompts split evenly: the order only reverses the bins, Ovconf is mean(conf) - accuracy.
    four, hits = [0.2, 0.4, 0.6, 0.8], [False, True, False, True]
    down = metrics.reliability_bins(four, hits, bins=2)
    assert down == list(reversed(metrics.reliability_bins(four, hits, bins=2, order="ascending")))
    assert metrics.overconfidence(four, hits, bins=2) == metrics.overconfidence(four, hits, 2, "ascending") == \
        pytest.approx(0.0)


def test_belief_aggregate_names_the_bins_order_and_the_option_gives_the_older_one():
    # One item, three prompts as above: 10 bins would be empty, so min(10, prompts) = 3 bins of one,
    # where the order cannot change Ovconf; two items of 3 and 2 prompts, 5 prompts in 5 bins too.
    # The order still shows in the bins as listed.
    records = [{"id": "a", "relation": "P36", "correct": 2 / 3, "prompt_correct": [False, True, True],
                "confidence": [0.1, 0.9, 0.5], "predictions": ["x", "y", "y"], "template_ids": [0, 1, 2]}]
    paper = aggregate("belief", records, {"acc_draws": 10})
    assert [b["confidence"] for b in paper["reliability"]] == [0.9, 0.5, 0.1]
    assert paper["definitions"]["ovconf_bins"] == "descending"
    older = aggregate("belief", records, {"acc_draws": 10, "ovconf_bins": "ascending"})
    assert [b["confidence"] for b in older["reliability"]] == [0.1, 0.5, 0.9]
    assert older["definitions"]["ovconf_bins"] == "ascending"
    assert paper["overconfidence"] == pytest.approx(older["overconfidence"])


# -- 9. T-REx-MC's relation filter, applied ----------------------------------------------------------

@pytest.fixture(scope="module")
def paper_store(tmp_path_factory):
    """tests/test_paper_icl_kdf.py's graph: P36 and P30 with 4 facts and 4 objects each, P19 with
    500 facts and 100 distinct objects (exactly T-REx-MC's thresholds)."""
    from conftest import run_cli
    from wikidata_builder import write_dump
    from test_paper_icl_kdf import paper_graph

    base = tmp_path_factory.mktemp("trexmc")
    path = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "g.json", paper_graph())), "--store", str(path), "--quiet",
            check=True)
    return str(path)


def _build(store: str, out, *args: str):
    from conftest import run_cli

    return run_cli("probeset", "build", "--store", store, "--out", str(out), *args)


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


MC = ["--kind", "icl-mc", "--choices", "10", "--per-relation", "20", "--demo-fraction", "0.25"]


def test_trex_mc_filter_leaves_out_the_relations_that_fail_and_says_why(paper_store, tmp_path):
    """002:531-534: "We selected relations from T-REx with at least 500 samples and linked to a
    minimum of 100 unique objects." P19 has 500 facts and 100 objects: kept (at least). P36 has 4
    and 4: left out, said on stdout (kept / dropped) and as a warning, recorded in the sidecar.
    20 P19 facts of 20 subjects, a quarter of them the demonstration pool: 5 demo, 15 test items
    of 10 choices. Before issue 38 P36's 4 facts were items too (the filter only reported)."""
    out = tmp_path / "mc.jsonl"
    proc = _build(paper_store, out, *MC, "--relation", "P36", "--relation", "P19")
    assert proc.returncode == 0, proc.stderr
    items = _lines(out)
    assert {i["relation"] for i in items} == {"P19"}
    assert [sum(i["split"] == s for i in items) for s in ("demo", "test")] == [5, 15]
    assert ("paper filter (T-REx-MC: relations with >= 500 facts and >= 100 distinct objects): "
            "kept P19 (500 facts, 100 objects); dropped P36 (4 facts, 4 objects)") in proc.stdout
    assert ("warning: P36: left out by T-REx-MC's relation filter (4 facts < 500, 4 objects < 100); "
            "--trex-mc-filter report keeps it") in proc.stderr
    meta = json.loads(_build(paper_store, tmp_path / "again.jsonl", *MC, "--relation", "P36", "--relation", "P19",
                             "--json").stdout)
    assert meta["params"]["options"]["trex_mc_filter"] == "apply"
    paper = meta["source"]["paper_filter"]
    assert (paper["applied"], paper["pass"], paper["dropped"]) == (True, ["P19"], ["P36"])
    # The older construction, by name: every relation asked (P36's 3 test items have 4 choices)
    kept = tmp_path / "report.jsonl"
    proc = _build(paper_store, kept, *MC, "--relation", "P36", "--relation", "P19", "--trex-mc-filter", "report",
                  "--allow-fewer-choices")
    assert proc.returncode == 0, proc.stderr
    assert sorted({i["relation"] for i in _lines(kept)}) == ["P19", "P36"]
    assert "pass P19 (500 facts, 100 objects); fail P36 (4 facts, 4 objects)" in proc.stdout


def test_trex_mc_filter_refuses_a_build_it_leaves_empty(paper_store, tmp_path):
    out = tmp_path / "mc.jsonl"
    proc = _build(paper_store, out, *MC, "--relation", "P36", "--relation", "P30", "--allow-fewer-choices")
    assert proc.returncode == 2 and not out.exists()
    assert ("icl-mc: no relation passes T-REx-MC's filter (>= 500 facts and >= 100 distinct objects, 002:531-534): "
            "P30 (4 facts, 4 objects), P36 (4 facts, 4 objects); build with --trex-mc-filter report") in proc.stderr


# -- 11. KDF's Table 3: the two sentences factprobe corrects, named ----------------------------------

def _zh(entity: dict, label: str) -> dict:
    return {**entity, "labels": {"zh": {"language": "zh", "value": label}}}


# Made-up ids, real names: four writers and where they lived (P551), four characters and their
# novels (P1441); each relation has 4 objects, so 3 wrong options from its tails.
RESIDENCE = {"鲁迅": "上海", "老舍": "北京", "巴金": "成都", "沈从文": "凤凰"}
CHARACTERS = {"孙悟空": "西游记", "贾宝玉": "红楼梦", "林冲": "水浒传", "诸葛亮": "三国演义"}


@pytest.fixture(scope="module")
def zh_store(tmp_path_factory):
    from conftest import run_cli
    from wikidata_builder import item, write_dump

    entities, k = [], 91000
    for relation, pairs in (("P551", RESIDENCE), ("P1441", CHARACTERS)):
        for subject, obj in pairs.items():
            entities.append(_zh(item(f"Q{k + 1}", subject, (), {relation: [f"Q{k + 2}"]}), subject))
            entities.append(_zh(item(f"Q{k + 2}", obj), obj))
            k += 2
    base = tmp_path_factory.mktemp("zhkdf")
    path = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "g.json", entities)), "--languages", "zh", "--store",
            str(path), "--quiet", check=True)
    return str(path)


def test_kdf_names_the_two_table3_sentences_it_corrects(zh_store, tmp_path):
    """KDF's Table 3 gives residence (P551) creator's sentence, "[头实体]的创作作者是[尾实体]。"
    (003:184), and present in work (P1441) "[头实体]是中[尾实体]的人物。" (003:176). factprobe asks
    "[X]的居住地是____。" and "[X]是____中的人物。": each build with the paper's questions now says so,
    in the sidecar and as a warning, where factprobe corrected them silently."""
    out = tmp_path / "kdf.jsonl"
    args = ["--kind", "kdf", "--relation", "P551", "--relation", "P1441", "--languages", "zh", "--shots", "1"]
    proc = _build(zh_store, out, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    questions = {i["subject_label"]: i["question"] for i in _lines(out)}
    assert questions["鲁迅"] == "鲁迅的居住地是____。" and questions["孙悟空"] == "孙悟空是____中的人物。"
    corrected = json.loads(proc.stdout)["source"]["kdf"]["table3_corrected"]
    assert corrected == {
        "P551": {"paper": "[X]的创作作者是[Y]。", "asked": "[X]的居住地是[Y]。",
                 "why": "003:184 prints creator's sentence ('the creator of [X] is') for residence"},
        "P1441": {"paper": "[X]是中[Y]的人物。", "asked": "[X]是[Y]中的人物。",
                  "why": "003:176 puts 中 before the work ('[X] is in-[Y]'s character')"}}
    assert ("warning: P551: KDF's Table 3 prints '[X]的创作作者是[Y]。', asked as '[X]的居住地是[Y]。'"
            in proc.stderr)
    assert "warning: P1441: KDF's Table 3 prints '[X]是中[Y]的人物。'" in proc.stderr
    # factprobe's QA questions are not the paper's sentences: nothing to name
    qa = _build(zh_store, tmp_path / "qa.jsonl", *args, "--kdf-question", "qa", "--json")
    assert "table3_corrected" not in json.loads(qa.stdout)["source"]["kdf"]


# -- 7. BELIEF: every subject expression, single-token objects --------------------------------------

def _fact(subject: str, obj: str, gold: tuple[str, ...], aliases: tuple[str, ...] = ()):
    from factprobe.probes.building.facts import ProbeFact

    return ProbeFact(id=f"{subject}-P47-{obj}", subject=subject, relation="P47", object=obj,
                     subject_label=subject.lower(), relation_label="r", object_label=obj.lower(), gold=gold,
                     subject_aliases=aliases)


def test_belief_cloze_asks_every_subject_expression():
    """000:324: MyriadLAMA combines the aliases of the "subjects" with every template ("If N
    "subjects" ... are given ..., the number of derived triples ... from a single relational
    template is N x M"), 2.47 expressions per subject on average (000:368). A subject with its
    label and four aliases under one template: 5 prompts; factprobe asked at most 3."""
    from factprobe.probes.kinds.cloze_kind import ClozeKindOptions, build_cloze

    facts = [_fact("A", "O1", ("o1",), ("A1", "A2", "A3", "A4"))]
    template = {"P47": ["[X] borders [Y] ."]}
    [item] = build_cloze(facts, template)
    assert [p["text"] for p in item["prompts"]] == ["a borders [Y] .", "A1 borders [Y] .", "A2 borders [Y] .",
                                                     "A3 borders [Y] .", "A4 borders [Y] ."]
    assert ClozeKindOptions().aliases_per_subject is None  # every name, unless a number is given
    [older] = build_cloze(facts, template, aliases_per_subject=3)
    assert [p["subject_name"] for p in older["prompts"]] == ["a", "A1", "A2"]


# The masked LM's answers: A right (o1); B's only name, "New York", is two tokens, so it answers
# "new" (wrong, and it could never be right); C answers "the" (wrong; "o3" is one token).
ONE_TOKEN = {"a borders [MASK] .": {"o1": 0.9}, "b borders [MASK] .": {"new": 0.6},
             "c borders [MASK] .": {"the": 0.5}}


def test_belief_asks_only_facts_with_a_single_token_object(tmp_path):
    """000:114, footnote 6: MyriadLAMA follows "the setting of LAMA-UHN triples where the object is
    a single token according to the BERT tokenizer", and a fact counts as present "if the model's
    predicted token matches any of the correct tokens". A masked LM answers one token: a fact
    whose object has no one-token name is not asked (B), and only one-token names are correct
    answers (C keeps "o3"). By hand: A right, C wrong -> Acc 1/2 over 2 facts; B left out, its
    record unscored. Asking every fact (`objects=all`, factprobe's before): 1/3 over 3."""
    from factprobe.probes.kinds.cloze_kind import build_cloze
    from factprobe.probes.evaluation.runner import evaluate
    from test_paper_belief import TableScorer

    facts = [_fact("A", "O1", ("o1",)), _fact("B", "O2", ("New York",)), _fact("C", "O3", ("o3", "Ooo Three"))]
    probes = tmp_path / "cloze.jsonl"
    probes.write_text("".join(json.dumps(i) + "\n" for i in build_cloze(facts, {"P47": ["[X] borders [Y] ."]})))
    scorer = TableScorer(ONE_TOKEN)
    paper = evaluate(scorer, "belief", probes, tmp_path / "paper", options={"content_free": False})
    assert [text for text, _ in scorer.asked] == ["a borders [MASK] .", "c borders [MASK] ."]
    result = paper.aggregate
    assert (result["items"], result["scored"], result["accuracy"]) == (3, 2, 0.5)
    assert result["acc_at_1"]["mean"] == 0.5
    assert result["objects_left_out"] == 1 and result["definitions"]["objects"] == "single-token"
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "paper" / "items.jsonl").read_text().splitlines())}
    left = records["cloze:B|P47"]
    assert (left["correct"], left["prompt_correct"], left["left_out"]) == (None, [], "no single-token gold name")
    older = evaluate(TableScorer(ONE_TOKEN), "belief", probes, tmp_path / "older",
                     options={"content_free": False, "objects": "all"})
    assert (older.aggregate["scored"], older.aggregate["accuracy"]) == (3, pytest.approx(1 / 3))
    assert older.aggregate["objects_left_out"] == 0 and older.aggregate["definitions"]["objects"] == "all"


# -- 8. KDF: a one-character Chinese name is counted ----------------------------------------------

# Four paragraphs of Chinese Wikipedia as CMRC 2018 publishes them (tests/data/zh): 氧化铁
# (DEV_1152), 硼砂 (DEV_1147), 霁虹桥 (DEV_311), 黄埔港 (DEV_534). Steel (Q11427, 钢) is made from
# iron (Q677, 铁) and carbon (Q623, 碳) (P186; the facts written here, the ids and zh labels
# Wikidata's). Read by hand: 铁 is in all four (a title and texts: 氧化铁, 钢铁, 铁路), 钢 in the
# last three (钢铁冶金, 钢结构, 钢板桩), 碳 in the first only (杂质碳, 二氧化碳).
STEEL = {"Q11427": "钢", "Q677": "铁", "Q623": "碳"}
PARAGRAPHS = Path(__file__).resolve().parent / "data" / "zh" / "cmrc2018_steel_iron.jsonl"


@pytest.fixture(scope="module")
def steel(tmp_path_factory):
    from conftest import run_cli
    from wikidata_builder import item, write_dump

    entities = [_zh(item("Q11427", "steel", (), {"P186": ["Q677", "Q623"]}), "钢"),
                _zh(item("Q677", "iron"), "铁"), _zh(item("Q623", "carbon"), "碳")]
    base = tmp_path_factory.mktemp("steel")
    store = str(base / "g.sqlite")
    run_cli("ingest", "wikidata", str(write_dump(base / "g.json", entities)), "--languages", "zh", "--store", store,
            "--quiet", check=True)
    return base, store


def _index(base, store: str, name: str, *extra: str) -> tuple[str, dict]:
    from conftest import run_cli

    index = str(base / f"{name}.sqlite")
    built = run_cli("corpus", "index", str(PARAGRAPHS), "--languages", "zh", "--store", store, "--index", index,
                    "--json", "--quiet", *extra, check=True)
    return index, json.loads(built.stdout)["settings"]


def _count(index: str, *terms: str) -> int:
    from conftest import run_cli

    command = "entity" if len(terms) == 1 else "pair"
    out = run_cli("frequency", command, *terms, "--index", index, "--json", check=True).stdout
    return json.loads(out)["documents"]


def test_a_one_character_chinese_name_is_counted(steel):
    """KDF counts "the number of documents that mention both entities" by their Chinese names
    (003:227-238), whatever their length. factprobe dropped every name shorter than 2 characters,
    so 钢, 铁 and 碳 never counted and steel's facts fell in bucket 0; a one-character name in Han
    characters is a word and now counts (--min-han-length 1). By hand: 钢 3 documents, 铁 4, 碳 1;
    钢 with 铁 3, 钢 with 碳 0."""
    from conftest import run_cli

    base, store = steel
    index, settings = _index(base, store, "paper")
    assert settings["min_han_length"] == 1 and settings["min_alias_length"] == 2
    assert [_count(index, q) for q in STEEL] == [3, 4, 1]
    assert [_count(index, "Q11427", q) for q in ("Q677", "Q623")] == [3, 0]
    counts = base / "P186.jsonl"
    run_cli("frequency", "annotate", "--relation", "P186", "--out", str(counts), "--store", store, "--index", index,
            "--quiet", check=True)
    rows = {r["object"]: (r["documents"], r["bucket"]) for r in map(json.loads, counts.read_text().splitlines())}
    assert rows == {"Q677": (3, "[1,10)"), "Q623": (0, "0")}
    # The older filter, by name: Han names need 2 characters as every other name
    older, settings = _index(base, store, "older", "--min-han-length", "2")
    assert "min_han_length" not in settings  # as recorded by every index before the option
    assert [_count(older, q) for q in STEEL] == [0, 0, 0]
    assert _count(older, "Q11427", "Q677") == 0


def test_one_character_names_count_only_in_han():
    """A name of one Latin letter still needs --min-alias-length (2): it would match nearly
    everything, and it is no word of a script without spaces."""
    from factprobe.index.settings import IndexSettings
    from factprobe.index.text import AliasFilter

    chinese = IndexSettings(languages=("zh",)).alias_filter
    assert (chinese.keeps("铁"), chinese.keeps("x"), chinese.keeps("7"), chinese.keeps("の")) == (True, False, False,
                                                                                               False)
    assert not IndexSettings(languages=("en",)).alias_filter.keeps("铁")  # no Han language indexed: as before
    assert not AliasFilter(min_length=2, han_min_length=2).keeps("铁")

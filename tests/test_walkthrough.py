"""docs/walkthrough.md stays true: every `path.py` `name` (`Class` `method`) it names exists,
read from the source (a name renamed or removed fails here, naming the line), and its fact,
Germany's capital Berlin, run through the functions it names on the shipped sample with the
shipped pipeline's settings, gives every number it quotes: the dump line, the time keys, the
graph's date, the co-occurrence counts and buckets, the probe set and the KDF item's letters.
SmolLM2's letters and accuracies need the real model: a test marked slow."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "walkthrough.md"
# `file.py` followed by one or two names, each in backticks, separated by white space (a line
# break included).
REFERENCE = re.compile(r"`([\w/]+\.py)`\s+`(\w+)`(?:\s+`(\w+)`)?")


def defined(path: Path) -> dict[str, set[str]]:
    """Top-level names of a module -> the names defined in their body (a class's methods)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = {n.name for n in getattr(node, "body", [])
                              if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update({t.id: set() for t in targets if isinstance(t, ast.Name)})
    return out


def test_every_function_the_walkthrough_names_exists():
    text = DOC.read_text(encoding="utf-8")
    found = list(REFERENCE.finditer(text))
    assert len(found) > 60  # the page really names the code it walks through
    wrong = []
    for match in found:
        path, name, member = match.groups()
        line = text.count("\n", 0, match.start()) + 1
        names = defined(ROOT / path) if (ROOT / path).is_file() else None
        if names is None:
            wrong.append(f"walkthrough.md:{line}: no file {path}")
        elif name not in names:
            wrong.append(f"walkthrough.md:{line}: {path} defines no {name}")
        elif member and member not in names[name]:
            wrong.append(f"walkthrough.md:{line}: {path} {name} has no {member}")
    assert not wrong, "\n".join(wrong)


# -- the walk's fact, run through the functions the page names ----------------------------------

SAMPLE = ROOT / "kg" / "data"


def quoted(pattern: str) -> list[str]:
    """What the page says where `pattern` (a regex with groups) matches: the numbers under test
    are read from the page, so an edit of either side that breaks their agreement fails here.
    A pattern the page no longer matches fails too: the claim was reworded or dropped."""
    found = re.search(pattern, DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert found, f"walkthrough.md no longer says {pattern!r}"
    return [" ".join(group.split()) for group in found.groups()]  # a line break in the page is a space


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> dict:
    """The sample pipeline's graph, corpus counts and kdf probe set, made by the library calls
    the page names (ingest, index_corpus, annotate, build_request, build_probeset) with the
    settings of kg/data/sample_pipeline.yaml as load_pipeline reads them."""
    from factprobe.cli.pipeline_config import SAMPLE_CONFIG, load_pipeline
    from factprobe.index.backend import Backend
    from factprobe.index.corpus_jobs import AnnotateOptions, IndexOptions, annotate, index_corpus
    from factprobe.kg import Store
    from factprobe.kg.ingest import ingest
    from factprobe.kg.sources.wikidata_json import WikidataJsonSource
    from factprobe.probes.building.build import build_probeset, build_request

    work = tmp_path_factory.mktemp("walk")
    pipeline = load_pipeline(SAMPLE_CONFIG)
    store = work / "graph.sqlite"
    source = WikidataJsonSource(languages=tuple(pipeline.graph["languages"]))
    with Store(store, languages=source.languages) as writer:
        report = ingest(writer, source, pipeline.path(pipeline.graph["sources"][0]["path"]))
    corpus = pipeline.corpus
    backend = Backend("embedded", str(work / f"{corpus['name']}.index.sqlite"))
    index_corpus(backend, store, IndexOptions(tuple(str(pipeline.path(f)) for f in corpus["files"]), corpus["format"],
                                              count_facts=tuple(corpus["relations"]),
                                              languages=tuple(corpus["languages"]), names=corpus["names"]))
    for relation in corpus["relations"]:
        annotate(backend, store, AnnotateOptions((relation,), None, True, corpus["name"]))
    spec = {k: v for k, v in pipeline.probesets["kdf"].items() if k not in ("kind", "with_corpus")}
    request = build_request("kdf", {"seed": pipeline.seed, **spec, "corpus": corpus["name"]})
    probes = work / "kdf.jsonl"
    build_probeset(store, probes, request)
    items = [json.loads(line) for line in probes.read_text(encoding="utf-8").splitlines()]
    germany = [i for i in items if i["subject"] == "Q183" and i["relation"] == "P36"]
    assert len(germany) == 1
    return {"store": store, "backend": backend, "probes": probes, "items": items, "germany": germany[0],
            "report": report, "spec": spec}


def test_the_dump_line_is_germany_with_two_capitals():
    from factprobe.kg.model import TimeValue
    from factprobe.kg.sources.wikidata_json import revision_date

    line, = quoted(r"Line (\d+) of `kg/data/sample_wikidata.json` is Germany \(Q183\)")
    record = json.loads((SAMPLE / "sample_wikidata.json").read_text(encoding="utf-8").splitlines()[int(line) - 1]
                        .rstrip(","))
    assert record["id"] == "Q183"
    capitals = {st["mainsnak"]["datavalue"]["value"]["id"]: st for st in record["claims"]["P36"]}
    assert list(capitals) == ["Q586", "Q64"]  # Bonn, Berlin
    start, end = quoted(r"Bonn \(Q586\) with qualifiers P580 start (\d{4}) and P582\s+end (\S+),")
    bonn = capitals["Q586"]["qualifiers"]
    assert bonn["P580"][0]["datavalue"]["value"] == {**bonn["P580"][0]["datavalue"]["value"],
                                                     "time": f"+{start}-00-00T00:00:00Z", "precision": 9}
    assert bonn["P582"][0]["datavalue"]["value"]["time"] == f"+{end}T00:00:00Z"
    berlin_start, = quoted(r"Berlin \(Q64\), preferred, with P580 start (\S+);")
    assert capitals["Q64"]["rank"] == "preferred"
    assert capitals["Q64"]["qualifiers"]["P580"][0]["datavalue"]["value"]["time"] == f"+{berlin_start}T00:00:00Z"
    modified, = quoted(r'`"modified": "(\S+)"`')
    assert record["modified"] == modified
    # the qualifiers' time keys, widened by precision: Bonn's year 1949 starts on its first day
    first, last = quoted(r"Bonn's:\s+(\d+) to (\d+),")
    assert (TimeValue(f"+{start}-00-00T00:00:00Z", 9).sort_key("start"),
            TimeValue(f"+{end}T00:00:00Z", 11).sort_key("end")) == (int(first), int(last))
    # the chunk's latest revision dates the graph
    assert revision_date(record["modified"]) == quoted(r"`as_of`\s+\((\S+) here\)")[0]


def test_the_graph_knows_berlin_now_and_bonn_before(walk):
    from factprobe.kg import KnowledgeGraph

    assert walk["report"].records == 459 and walk["report"].rejected == 0
    with KnowledgeGraph(walk["store"]) as kg:
        assert kg.as_of() == quoted(r"`as_of`\s+\((\S+) here\)")[0] == "2026-01-01"
        assert kg.objects("Q183", "P36") == ["Q64"]
        assert kg.objects("Q183", "P36", at="1980") == ["Q586"]
        assert kg.temporal_objects("Q183", "P36") == ["Q586"]
        assert kg.labels("Q64", "en").all() == ("Berlin", "Berlin, Germany")


def test_germany_and_berlin_occur_together_as_quoted(walk):
    from factprobe.index.backend import open_for_counting
    from factprobe.index.corpus import bucket_of
    from factprobe.kg import KnowledgeGraph

    berlin, berlin_bucket, bonn_bucket = quoted(
        r"Germany and Berlin occur together in (\d+) documents of the sample corpus: bucket `(\S+)`\.\s+"
        r"Germany and Bonn in none: bucket `(\S+)`")
    index = open_for_counting(walk["backend"], walk["store"])
    try:
        assert index.pair_frequencies([("Q183", "Q64"), ("Q183", "Q586")]) == [int(berlin), 0]
    finally:
        index.close()
    assert (bucket_of(int(berlin)), bucket_of(0)) == (berlin_bucket, bonn_bucket) == ("[100,inf)", "0")
    with KnowledgeGraph(walk["store"]) as kg:  # the counts as the store holds them, under `sample`
        stored = {fact: (documents, bucket) for fact, _, documents, bucket in kg.fact_frequencies("sample")}
    assert stored[walk["germany"]["fact"]] == (int(berlin), berlin_bucket)


def test_the_kdf_probe_set_asks_germany_as_quoted(walk):
    relations, per_bucket, shots = quoted(r"The kdf probe set of the sample asks (P\d+, P\d+ and P\d+), (\d+) facts "
                                          r"per \(relation, bucket\), with (\d+)\s+demonstrations")
    assert (walk["spec"]["relations"], walk["spec"]["per_bucket"], walk["spec"]["shots"]) == (
        relations.replace(" and", ",").split(", "), int(per_bucket), int(shots))
    items, item = walk["items"], walk["germany"]
    records, = quoted(r"`aggregate` turns the (\d+) records")
    assert len(items) == int(records) == 3 * 4 * int(per_bucket)
    assert all(i["object"] != "Q586" for i in items)  # Germany-Bonn: not true at the graph's date
    meta = json.loads(walk["probes"].with_suffix(".meta.json").read_text(encoding="utf-8"))
    assert meta["source"]["truth_date"] == {"at": "2026-01-01", "from": "the graph's latest entity revision"}
    gold = quoted(r'every name of every true object: "([^"]+)",\s+"([^"]+)"\.')
    assert item["gold"] == gold
    question, = quoted(r'the KDF paper\'s sentence with a blank, "([^"]+)"')
    assert item["question"] == question
    a, b, c, d, answer = quoted(r"A: (\w+), B: (\w+), C: (\w+), D: (\w+); the answer\s+is (\w)\.")
    assert (item["options"], item["answer"], item["bucket"]) == ([a, b, c, d], answer, "[100,inf)")
    first, first_relation, second, second_relation = quoted(
        r'one of each other relation \("([^"]+)", (P\d+);\s+"([^"]+)", (P\d+)\)')
    assert [q["question"] for q in item["demonstrations"]] == [first, second]
    assert {first_relation, second_relation} == {"P37", "P30"}


def test_the_kdf_prompt_ends_in_answer_and_asks_letters(walk):
    from factprobe.probes.methods.base import MethodContext
    from factprobe.probes.methods.kdf import KDF

    method = KDF(MethodContext(options=dict(KDF.option_defaults)))
    prompt = method.prompt(walk["germany"])
    assert prompt.endswith("The capital of Germany is ____\nA: Rabat\nB: Naypyidaw\nC: Berlin\nD: London\nAnswer:")
    assert prompt.startswith("The official language of Norway is ____\n")
    assert method.continuations(walk["germany"]) == (" A", " B", " C", " D")


@pytest.mark.slow
def test_smollm2_answers_and_scores_as_quoted(walk, tmp_path):
    """SmolLM2-135M-Instruct on the CPU in fp32, as the page's numbers were made: the four letters'
    log-probabilities of the Germany question, its wrong answer, and the accuracy over the set
    and in Berlin's bucket, through the evaluation entry the page names."""
    from factprobe.probes.evaluation.entry import Evaluation, run_evaluation

    summary = run_evaluation(Evaluation("smollm2-135m-instruct", "kdf", walk["probes"], tmp_path / "kdf",
                                        device="cpu", dtype="float32"))
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "kdf" / "items.jsonl").read_text().splitlines())}
    germany = records[walk["germany"]["id"]]
    letters = quoted(r"SmolLM2 gives the letters (-\d\.\d+), (-\d\.\d+), (-\d\.\d+), (-\d\.\d+): (\w), wrong")
    assert [f"{x:.3f}" for x in germany["letter_logprobs"]] == letters[:4]
    assert germany["prediction"] == letters[4] and germany["correct"] is False
    accuracy, items, bucket_accuracy, bucket, bucket_items = quoted(
        r"SmolLM2's KDF accuracy is (\d\.\d+) over (\d+) items, (\d\.\d+) in bucket\s+`(\S+)` \((\d+) items")
    aggregate = summary.aggregate
    assert (f"{aggregate['accuracy']:.3f}", aggregate["items"]) == (accuracy, int(items))
    by_bucket = aggregate["by_bucket"][bucket]
    assert (f"{by_bucket['accuracy']:.3f}", by_bucket["total"], by_bucket["interval"]["few"]) == (
        bucket_accuracy, int(bucket_items), True)

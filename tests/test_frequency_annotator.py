"""Frequency in use (issue 43 item 4): `frequency annotate --to-store` records who counted, a
probe set's sidecar names that one annotator, a build that would mix two is refused in one line,
and the report plots the run's accuracy against frequency on a log axis with its numbers beside.
A hand-made graph through the real ingest, real embedded indexes, the toy model (tests/toy_backend.py)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from conftest import run_cli
from test_distractors import graph_entities
from test_model_backends import toy_backend
from wikidata_builder import write_dump

# France/Paris together 3 times, Germany/Berlin once, Italy/Rome 12 times (tests/test_probesets.py's).
DOCS = [("France and its capital Paris", 3), ("Berlin is in Germany", 1), ("Rome, Italy", 12),
        ("Tokyo alone", 2), ("Spain without its capital", 1)]
MAXIMAL = "names in en: labels and aliases; names inside longer names do not count (--mentions maximal)"
ANY = "names in en: labels and aliases; every occurrence, inside longer names too (--mentions any)"
KDF = ["--kind", "kdf", "--shots", "2", "--kdf-demonstrations", "same-relation", "--kdf-options", "type-pool",
       "--kdf-question", "qa"]


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("annotator")
    store = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "hand.json", graph_entities())), "--store", str(store),
            "--quiet", check=True)
    docs = base / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{k}", "title": "", "text": text}) + "\n"
                            for k, text in enumerate(t for t, copies in DOCS for _ in range(copies))))
    maximal, anywhere = base / "maximal.sqlite", base / "any.sqlite"
    run_cli("corpus", "index", str(docs), "--store", str(store), "--index", str(maximal), "--quiet", check=True)
    run_cli("corpus", "index", str(docs), "--store", str(store), "--index", str(anywhere), "--mentions", "any",
            "--quiet", check=True)
    return {"base": base, "store": str(store), "maximal": str(maximal), "any": str(anywhere)}


def annotate(graph: dict, index: str, corpus: str, *relations: str) -> dict:
    proc = run_cli("frequency", "annotate", *(x for r in relations for x in ("--relation", r)), "--to-store",
                   "--corpus", corpus, "--store", graph["store"], "--index", index, "--quiet", "--json", check=True)
    return json.loads(proc.stdout)


def embedded(index: str, settings: str) -> dict:
    return {"backend": "embedded", "index": index, "settings": settings, "tokenizer": None,
            "counts": "documents with head and tail"}


def build(graph: dict, out: Path, corpus: str, *relations: str):
    return run_cli("probeset", "build", "--store", graph["store"], "--out", str(out), "--corpus", corpus,
                   *(x for r in relations for x in ("--relation", r)), *KDF)


def test_the_sidecar_names_the_annotator_that_counted(graph, tmp_path):
    counted = annotate(graph, graph["maximal"], "wiki", "P36", "P47")
    assert counted["annotator"] == embedded(graph["maximal"], MAXIMAL)
    out = tmp_path / "kdf.jsonl"
    proc = build(graph, out, "wiki", "P36", "P47")
    assert proc.returncode == 0, proc.stderr
    sidecar = json.loads((tmp_path / "kdf.meta.json").read_text())
    assert sidecar["source"]["frequency_annotator"] == embedded(graph["maximal"], MAXIMAL)
    # the run carries it on, for the report's axis
    with toy_backend():
        run_cli("eval", "--model", "toy:A", "--method", "kdf", "--probes", str(out), "--out", str(tmp_path / "run"),
                "--quiet", check=True)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["frequency_annotator"] == \
        embedded(graph["maximal"], MAXIMAL)


def test_a_build_that_would_mix_two_annotators_is_refused_in_one_line(graph, tmp_path):
    annotate(graph, graph["maximal"], "mixed", "P36")
    annotate(graph, graph["any"], "mixed", "P47")
    out = tmp_path / "kdf.jsonl"
    proc = build(graph, out, "mixed", "P36", "P47")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"error: corpus 'mixed' holds counts of two annotators for these facts: P36 by embedded {graph['maximal']} "
        f"({MAXIMAL}); P47 by embedded {graph['any']} ({ANY}). Count every relation with one (`factprobe "
        "frequency annotate --to-store --corpus mixed ...`), or store them under another --corpus")
    assert not out.exists() and not (tmp_path / "kdf.meta.json").exists()
    # each relation alone has one annotator, and builds
    assert build(graph, out, "mixed", "P47").returncode == 0
    assert json.loads((tmp_path / "kdf.meta.json").read_text())["source"]["frequency_annotator"] == \
        embedded(graph["any"], ANY)


def test_a_recount_stopped_midway_leaves_both_named_until_one_counts_all(graph, tmp_path):
    from factprobe.index.backend import Backend
    from factprobe.index.corpus_jobs import AnnotateOptions
    from factprobe.index.corpus_jobs import annotate as annotate_job

    annotate(graph, graph["maximal"], "recount", "P36")

    class Stop(Exception):
        pass

    def stop_after_first_chunk(relation: str, done: int) -> None:
        if done:  # the first chunk's counts are in the store: stopped as a kill would
            raise Stop

    with pytest.raises(Stop):
        annotate_job(Backend("embedded", graph["any"]), graph["store"], AnnotateOptions(("P36",), None, True, "recount"),
                     progress=stop_after_first_chunk)
    out = tmp_path / "kdf.jsonl"
    proc = build(graph, out, "recount", "P36")
    assert proc.returncode == 2
    line = proc.stderr.splitlines()[-1]
    # both named, in the store's stable order (their records' spelling): any.sqlite's before maximal.sqlite's
    assert line.startswith(f"error: corpus 'recount' holds counts of two annotators for these facts: P36 by embedded "
                           f"{graph['any']} ({ANY}); P36 by embedded {graph['maximal']} ({MAXIMAL}).")
    annotate(graph, graph["any"], "recount", "P36")  # every fact recounted: the counts are any.sqlite's alone
    assert build(graph, out, "recount", "P36").returncode == 0
    assert json.loads((tmp_path / "kdf.meta.json").read_text())["source"]["frequency_annotator"] == \
        embedded(graph["any"], ANY)


def test_counts_stored_before_annotators_were_recorded_build_and_say_so(graph, tmp_path):
    from factprobe.kg import Store
    from factprobe.kg.graph import KnowledgeGraph

    with KnowledgeGraph(graph["store"]) as kg:
        facts = [f.id for f in kg.facts("P36", entity_objects_only=True)]
    with Store(graph["store"]) as store:  # as an older factprobe wrote them: counts, no annotator
        store.write_fact_frequencies("older", (1, 10, 100), [(fact, 0, "0") for fact in facts])
    out = tmp_path / "kdf.jsonl"
    assert build(graph, out, "older", "P36").returncode == 0
    assert json.loads((tmp_path / "kdf.meta.json").read_text())["source"]["frequency_annotator"] is None
    # a relation counted since beside it is a mix: one annotator recorded, one not
    annotate(graph, graph["maximal"], "older", "P47")
    proc = build(graph, tmp_path / "both.jsonl", "older", "P36", "P47")
    assert proc.returncode == 2 and "an annotator not recorded (counted before factprobe recorded annotators)" \
        in proc.stderr.splitlines()[-1]


def reference_bin(frequency: int) -> str:
    """The bin's label by a logarithm (the module counts in whole numbers): 0 alone, else
    [2^k, 2^(k+1)) for k = floor(log2 f), fine at these small counts."""
    if frequency == 0:
        return "0"
    low = 2 ** math.floor(math.log2(frequency))
    return f"[{low},{2 * low})"


def test_the_report_plots_accuracy_against_frequency_with_its_numbers(graph, tmp_path):
    annotate(graph, graph["maximal"], "report", "P36", "P47")
    out = tmp_path / "kdf.jsonl"
    assert build(graph, out, "report", "P36", "P47").returncode == 0
    with toy_backend():  # toy:A answers A to every question
        run_cli("eval", "--model", "toy:A", "--method", "kdf", "--probes", str(out), "--out", str(tmp_path / "run"),
                "--quiet", check=True)
    report = tmp_path / "report"
    run_cli("report", str(tmp_path / "run"), "--out", str(report), check=True)
    assert (report / "accuracy_by_frequency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (report / "report.html").read_text()
    assert 'title="accuracy_by_frequency.png"' in page and "Accuracy by frequency (log scale)" in page
    # the numbers, worked from the probe set itself: an item is right when its answer is A
    items = [json.loads(line) for line in out.read_text().splitlines()]
    expected: dict[str, list[int]] = {}
    for item in items:
        entry = expected.setdefault(reference_bin(item["frequency"]), [0, 0])
        entry[0] += 1
        entry[1] += item["answer"] == "A"
    assert len(expected) >= 3  # the set spans several bins: 0, [1,2), [2,4), [8,16) here
    with open(report / "accuracy_by_frequency.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    order = sorted(expected, key=lambda label: -1 if label == "0" else int(label[1:].split(",")[0]))
    assert [row["bin"] for row in rows] == order
    for row in rows:
        n, right = expected[row["bin"]]
        assert (row["run"], int(row["items"]), float(row["correct"])) == ("R1", n, right)
        assert float(row["accuracy"]) == round(right / n, 6)
        assert row["interval_method"] == "wilson" and float(row["interval_low"]) <= right / n <= float(row["interval_high"])
        assert row["annotator"] == f"embedded {graph['maximal']} ({MAXIMAL})"
    assert next(r for r in rows if r["bin"] == "0")["x"] == ""  # drawn apart, at the left
    # the Markdown table holds the same bins and counts
    markdown = (report / "report.md").read_text()
    table = markdown[markdown.index("| Run | Frequency bin |"):].split("\n\n")[0].splitlines()[2:]
    assert [(cells[1].replace("\\", ""), int(cells[3])) for cells in (line.strip("|").split(" | ") for line in table)] \
        == [(label, expected[label][0]) for label in order]
    # the x axis names the annotator
    from factprobe.probes.report.frequency import all_series, axis_label
    from factprobe.probes.report.loading import load_runs

    assert axis_label(all_series(load_runs([tmp_path / "run"]))) == \
        "documents with head and tail (embedded maximal.sqlite), log scale"


def test_a_token_index_names_its_tokenizer_on_the_axis():
    from factprobe.index.corpus_jobs import annotator_line, tokenizer_name
    from factprobe.probes.report.frequency import all_series, axis_label
    from factprobe.probes.report.loading import Run

    # as an index may expose it: a name, a record with a name, or nothing
    assert tokenizer_name("HuggingFaceTB/SmolLM2-135M") == "HuggingFaceTB/SmolLM2-135M"
    assert tokenizer_name({"name": "google/gemma-3-1b-pt", "sha256": "ab" * 32}) == "google/gemma-3-1b-pt"
    assert tokenizer_name(None) is None and tokenizer_name("") is None
    token = {"backend": "infini-gram", "index": "/data/pile-smollm2/", "settings": MAXIMAL,
             "tokenizer": "HuggingFaceTB/SmolLM2-135M", "counts": "documents with head and tail"}
    items = ({"id": "a", "frequency": 0, "correct": True}, {"id": "b", "frequency": 5, "correct": False})

    def run(annotator, rid):
        return Run(rid, {"model": "toy:A", "method": "kdf", **({"frequency_annotator": annotator} if annotator else {})},
                   {"items": 2}, items, rid=rid)

    assert axis_label(all_series([run(token, "R1")])) == \
        "documents with head and tail, SmolLM2-135M tokens (infini-gram pile-smollm2), log scale"
    assert annotator_line(token) == f"infini-gram /data/pile-smollm2/ with HuggingFaceTB/SmolLM2-135M's tokens ({MAXIMAL})"
    sample = embedded("sample.index.sqlite", MAXIMAL)
    assert axis_label(all_series([run(token, "R1"), run(sample, "R2")])) == \
        "documents with head and tail (annotators differ between runs: see the table), log scale"
    assert axis_label(all_series([run(None, "R1")])) == "documents with head and tail (annotator not recorded), log scale"

"""EIC-LKE's chain construction (`construction=chain`, factprobe's earlier default): a relation's test
facts chained in seeded windows, each asked after the ones before it. The paper's construction is
pinned in tests/test_paper_icl_kdf.py."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from factprobe.probes.methods import METHODS, MethodContext
from factprobe.probes.methods.eic_lke import EICLKE
from factprobe.probes.evaluation.runner import evaluate
from factprobe.probes.scoring.requests import LoglikelihoodRequest

SPEC = "smollm2-135m-instruct"


def _item(qid: str, relation: str, subject: str, gold: str, *others: str) -> dict:
    return {"id": f"icl-mc:{qid}", "kind": "icl-mc", "split": "test", "relation": relation,
            "subject_label": subject, "object_label": gold, "choices": [gold, *others], "answer_index": 0}


P36 = [_item("Q142", "P36", "France", "Paris", "Lyon"), _item("Q17", "P36", "Japan", "Tokyo", "Osaka"),
       _item("Q38", "P36", "Italy", "Rome", "Milan"), _item("Q79", "P36", "Egypt", "Cairo", "Giza"),
       _item("Q419", "P36", "Peru", "Lima", "Cusco")]
P30 = [_item("Q114", "P30", "Kenya", "Africa", "Asia"), _item("Q298", "P30", "Chile", "South America", "Europe")]


def _method(items=P36 + P30, **options) -> EICLKE:
    tests: dict[str, list[dict]] = {}
    for item in items:
        tests.setdefault(item["relation"], []).append(item)
    return EICLKE(MethodContext({"construction": "chain", "separator": ": ", **options}, seed=0, tests=tests))


def test_registered_with_what_it_reads():
    assert METHODS["eic-lke"] is EICLKE and EICLKE.kinds == ("icl-mc",)
    assert EICLKE.reads == METHODS["ic-lke"].reads


def test_prompts_chain_the_window_before_each_item():
    # Seed 0 orders P36 as Peru, Egypt, France | Japan, Italy (windows of examples + 1 = 3) and
    # P30 as Kenya, Chile; each prompt is the earlier items of its window with their gold objects.
    method = _method(examples=2)
    expected = {
        "Peru": "Peru: ",
        "Egypt": "Peru: Lima\nEgypt: ",
        "France": "Peru: Lima\nEgypt: Cairo\nFrance: ",
        "Japan": "Japan: ",  # a new window starts from nothing
        "Italy": "Japan: Tokyo\nItaly: ",
        "Kenya": "Kenya: ",
        "Chile": "Kenya: Africa\nChile: ",
    }
    assert {i["subject_label"]: method.prompt(i) for i in P36 + P30} == expected
    assert [i["subject_label"] for i in method.order(P36 + P30)] == ["Kenya", "Chile", "Peru", "Egypt", "France",
                                                                     "Japan", "Italy"]
    # another separator and line separator, the same chain
    other = _method(examples=2, separator=" = ", line_separator=" | ")
    assert other.prompt(P36[0]) == "Peru = Lima | Egypt = Cairo | France = "


def test_the_chain_is_seeded_and_independent_of_the_files_order():
    forward = _method(examples=10)
    backward = _method(list(reversed(P36 + P30)), examples=10)
    assert [forward.prompt(i) for i in P36] == [backward.prompt(i) for i in P36]
    other_seed = EICLKE(MethodContext({"construction": "chain", "examples": 10}, seed=5, tests={"P36": P36}))
    assert [i["id"] for i in other_seed.order(P36)] != [i["id"] for i in forward.order(P36)]


def test_refuses_items_outside_the_chain_and_bad_sizes():
    with pytest.raises(ValueError, match="not among the test items"):
        _method(P30).prompt(P36[0])
    with pytest.raises(ValueError, match="^method eic-lke: option examples: -1 is below its minimum 1$"):
        _method(examples=-1)
    with pytest.raises(ValueError, match=r"^method eic-lke: option start: 60 leaves no test slot among examples=60 "
                                         r"\(give at most 59\)$"):
        _method(construction="paper", examples=60, start=60)
    with pytest.raises(ValueError, match=r"^method eic-lke: option every: 11 is above examples - start \(10\)$"):
        _method(construction="paper", examples=60, every=11)


@pytest.mark.slow
@pytest.mark.parametrize("reuse", [True, False])
def test_predictions_are_the_argmax_of_the_scorers_logprobs(reuse, monkeypatch):
    from scoring_models import real_scorer

    scorer = real_scorer(SPEC)
    monkeypatch.setattr(scorer, "prefix_block", 4)  # short prompts still span several blocks
    method = _method(examples=2, reuse_prefix=reuse)
    records = {r["id"]: r for r in method.run(scorer, method.order(P36 + P30))}
    seen = {"Peru": 0, "Egypt": 1, "France": 2, "Japan": 0, "Italy": 1, "Kenya": 0, "Chile": 1}
    for item in P36 + P30:
        record = records[item["id"]]
        assert record["examples_seen"] == seen[item["subject_label"]]
        # the same request asked alone, on a fresh block store (or none)
        request = LoglikelihoodRequest(method.prompt(item), tuple(item["choices"]))
        if reuse:
            with scorer.reusing_prefixes():
                [scores] = scorer.loglikelihood([request])
        else:
            [scores] = scorer.loglikelihood([request])
        logprobs = [s.logprob for s in scores]
        best = max(range(len(logprobs)), key=lambda k: logprobs[k])
        assert record["predicted_index"] == best and record["prediction"] == item["choices"][best]
        assert record["correct"] == (best == 0)
        if reuse:  # exactly: blocks do not depend on what came before
            assert record["gold_logprob"] == logprobs[0]
        else:  # shared with the other items' prompts in one call: the same up to float32 rounding
            assert record["gold_logprob"] == pytest.approx(logprobs[0], abs=1e-4)
        assert record["choices"] == 2
    # with two examples before it, the model picks Paris over Lyon
    assert records["icl-mc:Q142"]["prediction"] == "Paris"


@pytest.mark.slow
def test_block_reuse_forwards_fewer_tokens_and_stays_close_to_one_pass():
    from scoring_models import real_scorer

    scorer = real_scorer(SPEC)
    # 20 facts in one window: each context extends the one before by a line
    from test_eval import CAPITALS

    capitals = [c for _, c in CAPITALS]
    items = [_item(f"Q{k}", "P36", country, capital, *[c for c in capitals if c != capital][:3])
             for k, (country, capital) in enumerate(CAPITALS[:20])]
    results, tokens, once = {}, {}, {}
    for reuse in (False, True):
        method = _method(items, examples=19, reuse_prefix=reuse)
        before, least = scorer.work.tokens_forwarded, scorer.work.min_tokens
        results[reuse] = method.run(scorer, method.order(items))
        tokens[reuse] = scorer.work.tokens_forwarded - before
        once[reuse] = scorer.work.min_tokens - least  # each context encoded once, on its own
    # Blocks reused across contexts, or (without reuse_prefix) prefixes shared across the call.
    assert tokens[True] < once[True] / 2 and tokens[False] < once[False] / 2
    for one_pass, blocks in zip(results[False], results[True]):
        assert blocks["predicted_index"] == one_pass["predicted_index"]
        assert blocks["gold_logprob"] == pytest.approx(one_pass["gold_logprob"], abs=1e-4)


def _write(path, items) -> str:
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return str(path)


def _lines(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_runner_resumes_a_chain_with_the_same_numbers(tmp_path, monkeypatch):
    from scoring_models import real_scorer

    scorer = real_scorer(SPEC)
    # Small blocks: the resumed items' contexts span blocks that the clean run shared between items.
    monkeypatch.setattr(scorer, "prefix_block", 4)
    probes = _write(tmp_path / "mc.jsonl", P36 + P30)
    # reuse_prefix: blocks keep a context's numbers the same bits whatever the batch (the default
    # prefix tree agrees to 1e-4 nats only, tests/test_eval.py)
    options = {"construction": "chain", "examples": 2, "separator": ": ", "reuse_prefix": True}
    clean = evaluate(scorer, "eic-lke", probes, tmp_path / "clean", options=options, batch=16)
    assert clean.new == 7
    # written window by window, in chain order
    assert [r["subject_label"] for r in _lines(tmp_path / "clean")] == ["Kenya", "Chile", "Peru", "Egypt", "France",
                                                                        "Japan", "Italy"]
    # a first run stops after 3 items (limit counts the probe set's order: France, Japan, Italy),
    # and a kill tears the last line
    part = tmp_path / "part"
    first = evaluate(scorer, "eic-lke", probes, part, options=options, batch=1, limit=3)
    assert first.new == 3
    text = (part / "items.jsonl").read_text()
    (part / "items.jsonl").write_text(text[:-10])
    second = evaluate(scorer, "eic-lke", probes, part, options=options, batch=2)
    assert second.resumed_after == 2 and second.new == 5
    by_id = {r["id"]: r for r in _lines(part)}
    assert len(by_id) == 7 and by_id == {r["id"]: r for r in _lines(tmp_path / "clean")}
    assert (json.loads((part / "aggregate.json").read_text())
            == json.loads((tmp_path / "clean" / "aggregate.json").read_text()))
    with pytest.raises(ValueError, match="other settings"):
        evaluate(scorer, "eic-lke", probes, part, options={**options, "examples": 3})


def _keys(value, prefix=""):
    """Every key path of a JSON object, one level into dicts of dicts; breakdown names left out."""
    out = set()
    for key, inner in value.items():
        out.add(prefix + key)
        if isinstance(inner, dict) and key not in ("by_relation", "by_bucket"):
            out |= _keys(inner, prefix + key + ".")
    return out


@pytest.mark.slow
def test_cli_aggregate_has_ic_lkes_fields(tmp_path):
    from scoring_models import real_scorer

    probes = _write(tmp_path / "mc.jsonl", P36 + P30)
    proc = run_cli("eval", "--model", SPEC, "--method", "eic-lke", "--probes", probes, "--out", str(tmp_path / "e"),
                   "--option", "separator=: ", "--option", "examples=2", "--option", "construction=chain", "--json",
                   "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["new"] == 7
    # the set has no demonstration items: IC-LKE asks with none only when told it may
    evaluate(real_scorer(SPEC), "ic-lke", probes, tmp_path / "i",
             options={"examples": 2, "separator": ": ", "allow_fewer_examples": True})
    eic = json.loads((tmp_path / "e" / "aggregate.json").read_text())
    icl = json.loads((tmp_path / "i" / "aggregate.json").read_text())
    assert eic["method"] == "eic-lke" and icl["method"] == "ic-lke"
    short = {"examples_short", "examples_short.by_relation"}  # what IC-LKE adds when it was short
    assert _keys(eic) == {k for k in _keys(icl) if k.split(".")[0] != "examples_short"}
    assert {k for k in _keys(icl) if k.split(".")[0] == "examples_short"} == short | {
        "examples_short.items", "examples_short.requested", "examples_short.fewest"}
    assert eic["items"] == icl["items"] == 7
    eic_records, icl_records = _lines(tmp_path / "e"), _lines(tmp_path / "i")
    assert {k for r in eic_records for k in r} == {k for r in icl_records for k in r} - {"examples_requested"}

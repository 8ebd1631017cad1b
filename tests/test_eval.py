"""`factprobe eval` end to end: probe sets built from a capital-city graph (Wikidata JSON through
the real ingest), real PyPI models, results that resume and refuse to mix."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from conftest import run_cli
from wikidata_builder import item, write_dump

# 30 countries and capitals: 10 subjects form the demonstration pool, 20 are test items.
CAPITALS = [
    ("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Egypt", "Cairo"), ("Canada", "Ottawa"),
    ("Kenya", "Nairobi"), ("Peru", "Lima"), ("Norway", "Oslo"), ("Germany", "Berlin"), ("Spain", "Madrid"),
    ("Portugal", "Lisbon"), ("Poland", "Warsaw"), ("Austria", "Vienna"), ("Hungary", "Budapest"),
    ("Greece", "Athens"), ("Sweden", "Stockholm"), ("Finland", "Helsinki"), ("Denmark", "Copenhagen"),
    ("Ireland", "Dublin"), ("Russia", "Moscow"), ("Turkey", "Ankara"), ("Iran", "Tehran"), ("China", "Beijing"),
    ("Thailand", "Bangkok"), ("Cuba", "Havana"), ("Argentina", "Buenos Aires"), ("Chile", "Santiago"),
    ("Mexico", "Mexico City"), ("Australia", "Canberra"), ("India", "New Delhi"),
]


def capital_graph() -> list[dict]:
    entities = [item("Q6256", "country"), item("Q5119", "capital")]
    for k, (country, capital) in enumerate(CAPITALS):
        country_id, capital_id = f"Q{1000 + k}", f"Q{2000 + k}"
        entities.append(item(country_id, country, claims={"P31": ["Q6256"], "P36": [capital_id]}))
        entities.append(item(capital_id, capital, claims={"P31": ["Q5119"], "P17": [country_id]}))
    return entities


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    base = tmp_path_factory.mktemp("eval")
    store = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "capitals.json", capital_graph())), "--store", str(store),
            "--quiet", check=True)
    sets = {}
    # KDF as factprobe built it before (named): one relation, so same-relation demonstrations; the
    # observed accuracy below was measured on type-pool options
    kdf = ["--shots", "3", "--kdf-demonstrations", "same-relation", "--kdf-options", "type-pool"]
    # icl-mc: P36's 30 capitals are far below T-REx-MC's 500 facts and 100 objects: kept, only reported
    mc = ["--choices", "10", "--demo-fraction", "0.34", "--trex-mc-filter", "report"]
    for kind, extra in (("icl-mc", mc), ("kdf", kdf)):
        out = base / f"{kind}.jsonl"
        run_cli("probeset", "build", "--kind", kind, "--relation", "P36", "--store", str(store), "--out", str(out),
                *extra, "--quiet", check=True)
        sets[kind] = out
    return sets


def _eval(*args: str) -> dict:
    proc = run_cli("eval", *args, "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _records(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]


def _close(a, b) -> bool:
    """Equal, floats within 1e-4."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-4
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


# Observed on the 2-core CPU: with lines "Country: Capital" (10 demonstrations, 10 choices) both
# models pick every capital (DESIGN.md saw near-chance results with bare space separators).
OBSERVED_IC_LKE = {"smollm2-135m-instruct": 1.0, "gemma3-270m": 1.0}


@pytest.mark.slow
@pytest.mark.parametrize("spec", sorted(OBSERVED_IC_LKE))
def test_ic_lke_is_clearly_above_chance_on_both_real_models(probes, tmp_path, spec):
    result = _eval("--model", spec, "--method", "ic-lke", "--probes", str(probes["icl-mc"]), "--out",
                   str(tmp_path / "run"), "--option", "separator=: ", "--option", "examples=10")
    assert result["items"] == 20 and result["scored"] == 20  # 10 of the 30 subjects are demonstrations
    assert result["accuracy"] > 3 * 0.1  # chance: 1 in 10 choices
    assert result["accuracy"] == pytest.approx(OBSERVED_IC_LKE[spec], abs=0.1)
    for record in _records(tmp_path / "run"):
        assert record["correct"] == (record["predicted_index"] == record["answer_index"])
        assert 0 < record["probability"] <= 1


def test_eval_resumes_without_recomputing_and_refuses_to_mix(probes, tmp_path):
    spec, mc = "smollm2-135m-instruct", str(probes["icl-mc"])
    clean = tmp_path / "clean"
    # the first N in file order (--stratify none): the resumed run writes its items in the clean run's order
    _eval("--model", spec, "--method", "ic-lke", "--probes", mc, "--out", str(clean), "--option", "examples=4",
          "--limit", "10", "--stratify", "none")
    part = tmp_path / "part"
    first = _eval("--model", spec, "--method", "ic-lke", "--probes", mc, "--out", str(part), "--option", "examples=4",
                  "--limit", "7", "--batch", "3", "--stratify", "none")
    assert first["new"] == 7
    # a kill mid-write leaves a torn last line: it is cut off and that item redone
    text = (part / "items.jsonl").read_text()
    (part / "items.jsonl").write_text(text[: len(text) - 25])
    second = _eval("--model", spec, "--method", "ic-lke", "--probes", mc, "--out", str(part), "--option", "examples=4",
                   "--limit", "10", "--stratify", "none")
    assert second["resumed_after"] == 6 and second["new"] == 4
    held = json.loads((part / "run.json").read_text())
    assert held["limit"] == 10 and held["probes_sha256"] == hashlib.sha256(probes["icl-mc"].read_bytes()).hexdigest()
    # The resumed items ran in other batches: the same numbers up to the float rounding of what
    # shared their passes (the scorer's 1e-4 nats), the same predictions and aggregate.
    assert _close(_records(part), _records(clean))
    assert _close(json.loads((part / "aggregate.json").read_text()), json.loads((clean / "aggregate.json").read_text()))
    other = run_cli("eval", "--model", spec, "--method", "ic-lke", "--probes", mc, "--out", str(part),
                    "--option", "examples=5")
    assert other.returncode == 2 and "other settings (options)" in other.stderr


def test_bad_records_are_named_and_skipped_and_wrong_kinds_refused(probes, tmp_path):
    spec = "smollm2-135m-instruct"
    lines = probes["icl-mc"].read_text().splitlines()
    test_lines = [k for k, line in enumerate(lines) if json.loads(line)["split"] == "test"]
    broken = dict(json.loads(lines[test_lines[0]]))
    del broken["choices"]
    lines[test_lines[0]] = json.dumps(broken)
    lines.insert(test_lines[1], "{not json")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    proc = run_cli("eval", "--model", spec, "--method", "ic-lke", "--probes", str(bad), "--out", str(tmp_path / "r"),
                   "--option", "examples=2", "--limit", "3", "--json", "--quiet")
    assert proc.returncode == 3
    assert f"rejected {bad}:{test_lines[0] + 1}: missing choices" in proc.stderr
    assert f"rejected {bad}:{test_lines[1] + 1}: not JSON" in proc.stderr
    assert json.loads(proc.stdout)["items"] == 3
    wrong = run_cli("eval", "--model", spec, "--method", "kdf", "--probes", str(probes["icl-mc"]),
                    "--out", str(tmp_path / "w"))
    assert wrong.returncode == 2 and "kdf reads kdf probe sets; icl-mc.jsonl is icl-mc" in wrong.stderr
    unknown = run_cli("eval", "--model", spec, "--method", "ic-lke", "--probes", str(probes["icl-mc"]),
                      "--out", str(tmp_path / "u"), "--option", "shots=3")
    assert unknown.returncode == 2 and "has no option shots" in unknown.stderr


# Observed on the 2-core CPU: SmolLM2 with 2 of the 3 demonstrations, the first 8 items: 0.50 in
# the KDF paper's frame and question ("The capital of X is ____", "A: ...", issue 28); 0.25, chance
# for 4 options, in factprobe's earlier "Question: What is ...? / A. ..." frame. A 135M model barely
# follows the letter format, so the test pins the number rather than a margin over chance; what it
# checks hard is that the letters' scores are the reference path's.
OBSERVED_KDF_ACCURACY = 0.5


@pytest.mark.slow
def test_kdf_answers_by_letter(probes, tmp_path):
    """The letter log-probs are those of the slow reference path on the exact prompt the record
    carries, the prediction is their argmax, and the prompt holds `shots` demonstrations."""
    from factprobe.probes.scoring.reference import reference_loglikelihood
    from factprobe.probes.scoring.requests import LoglikelihoodRequest
    from scoring_models import real_scorer

    spec, shots = "smollm2-135m-instruct", 2
    result = _eval("--model", spec, "--method", "kdf", "--probes", str(probes["kdf"]), "--out", str(tmp_path / "kdf"),
                   "--limit", "8", "--option", f"shots={shots}")
    items = {i["id"]: i for i in map(json.loads, probes["kdf"].read_text().splitlines())}
    records = _records(tmp_path / "kdf")
    assert result["items"] == len(records) == 8
    scorer = real_scorer(spec)
    for record in records:
        item = items[record["id"]]
        blocks = record["prompt"].split("\n\n")
        assert len(item["demonstrations"]) == 3 and len(blocks) == shots + 1  # the option keeps 2 of 3
        # the KDF paper's frame (seed 003 line 188): the question, "A: option" lines, the answer line
        for block, demo in zip(blocks[:-1], item["demonstrations"]):
            assert block.startswith(f"{demo['question']}\nA: ") and block.endswith(f"\nAnswer: {demo['answer']}")
        assert blocks[-1] == "\n".join([item["question"], *(f"{x}: {o}" for x, o in zip("ABCD", item["options"])),
                                          "Answer:"])
        request = LoglikelihoodRequest(record["prompt"], (" A", " B", " C", " D"))
        reference = [s.logprob for s in reference_loglikelihood(scorer.model, scorer.tokenizer, request)]
        assert record["letter_logprobs"] == pytest.approx(reference, abs=1e-4)
        assert record["prediction"] == "ABCD"[max(range(4), key=reference.__getitem__)]
        assert record["answer"] == item["answer"]
        assert record["correct"] == (record["prediction"] == item["answer"])
    observed = sum(r["correct"] for r in records) / len(records)
    print(f"KDF accuracy {observed} ({shots} shots, {len(records)} items); chance 0.25")
    assert result["accuracy"] == observed
    assert observed == pytest.approx(OBSERVED_KDF_ACCURACY, abs=0.125)  # one item of 8


@pytest.fixture(scope="module")
def mlm_cloze(probes, tmp_path_factory):
    """The tiny masked LM and a cloze set of the capitals that are single tokens in its vocabulary."""
    from scoring_models import tiny_bert

    base = tmp_path_factory.mktemp("mlm")
    bert = tiny_bert(base / "bert")
    cloze = base / "cloze.jsonl"
    run_cli("probeset", "build", "--kind", "cloze", "--relation", "P36", "--single-token", f"hf-mlm:{bert}",
            "--manual-only", "--store", str(probes["icl-mc"].parent / "g.sqlite"), "--out", str(cloze), "--quiet",
            check=True)
    return bert, cloze


def test_belief_on_a_masked_lm_keeps_every_prompts_answer(mlm_cloze, tmp_path):
    from factprobe.probes.scoring.loader import load_scorer
    from factprobe.probes.scoring.requests import FillMaskRequest

    bert, cloze = mlm_cloze
    result = _eval("--model", f"hf-mlm:{bert}", "--method", "belief", "--probes", str(cloze), "--out",
                   str(tmp_path / "belief"))
    records = _records(tmp_path / "belief")
    assert {r["subject_label"] for r in records} == {"France", "Germany", "Italy"}  # single-token capitals only
    scorer = load_scorer(f"hf-mlm:{bert}")
    items = {json.loads(line)["id"]: json.loads(line) for line in cloze.read_text().splitlines()}
    for record in records:
        prompts = items[record["id"]]["prompts"]
        tops = scorer.fill_mask([FillMaskRequest(p["text"].replace("[Y]", "[MASK]"), top_k=1) for p in prompts])
        assert record["predictions"] == [t[0].token for t in tops]
        assert record["prompt_correct"] == [t[0].token == record["object_label"].lower() for t in tops]
        assert record["confidence"] == pytest.approx([t[0].prob for t in tops])
    for key in ("acc_at_1", "consistency", "overconfidence", "coverage", "reliability", "one_word_ratio"):
        assert key in result
    assert result["coverage"]["oracle"] >= result["coverage"]["maximum"] >= result["coverage"]["average"]


def _belief_by_hand(record: dict) -> dict:
    """Ovconf with one bin per prompt (fewer than 10 prompts), its bins, and Consist over the
    record's pairs of answers, as BELIEF defines them."""
    n = len(record["confidence"])
    # in descending order of confidence, as BELIEF arranges the prompts (000:76)
    ordered = sorted(zip(record["confidence"], record["prompt_correct"]), key=lambda pair: -pair[0])
    pairs = [(a, b) for k, a in enumerate(record["predictions"]) for b in record["predictions"][k + 1:]]
    return {"overconfidence": math.fsum(c - ok for c, ok in ordered) / n,
            "reliability": [{"confidence": c, "accuracy": float(ok), "count": 1} for c, ok in ordered],
            "consistency": sum(a == b for a, b in pairs) / len(pairs) if pairs else None}


def test_belief_aggregates_a_run_of_one_item(mlm_cloze, tmp_path):
    """`eval --method belief --limit 1` used to write its item and then fail in the aggregate:
    one fact has fewer prompts than the 10 reliability bins, and with one prompt no pair for Consist."""
    bert, cloze = mlm_cloze
    result = _eval("--model", f"hf-mlm:{bert}", "--method", "belief", "--probes", str(cloze), "--out",
                   str(tmp_path / "one"), "--limit", "1")
    (record,) = _records(tmp_path / "one")
    assert result["items"] == 1 and 1 < len(record["confidence"]) < 10
    expected = _belief_by_hand(record)
    assert result["reliability"] == expected["reliability"]
    assert result["overconfidence"] == pytest.approx(expected["overconfidence"], abs=1e-12)
    assert result["consistency"] == pytest.approx(expected["consistency"], abs=1e-12)

    # The same item asked by one prompt only: Consist is undefined (None), one bin remains.
    item = next(i for i in map(json.loads, cloze.read_text().splitlines()) if i["id"] == record["id"])
    single = tmp_path / "single.jsonl"
    single.write_text(json.dumps({**item, "prompts": item["prompts"][:1]}) + "\n")
    alone = _eval("--model", f"hf-mlm:{bert}", "--method", "belief", "--probes", str(single), "--out",
                  str(tmp_path / "single"), "--limit", "1")
    (record,) = _records(tmp_path / "single")
    expected = _belief_by_hand(record)
    assert alone["consistency"] is None and expected["consistency"] is None
    assert alone["reliability"] == expected["reliability"] and len(alone["reliability"]) == 1
    assert alone["overconfidence"] == record["confidence"][0] - float(record["prompt_correct"][0])


@pytest.mark.slow
def test_distractor_measure_min_and_avg_at_n(probes, tmp_path):
    store = probes["icl-mc"].parent / "g.sqlite"
    sets = tmp_path / "d.jsonl"
    run_cli("probeset", "build", "--kind", "distractor", "--relation", "P36", "--strategy", "random", "--n", "2",
            "--per-relation", "3", "--store", str(store), "--out", str(sets), "--quiet", check=True)
    result = _eval("--model", "smollm2-135m-instruct", "--method", "distractor", "--probes", str(sets),
                   "--out", str(tmp_path / "dm"), "--option", "clozes=2")
    assert result["items"] == 3
    for record in _records(tmp_path / "dm"):
        scores = record["by_strategy"]["random"]
        # per cloze Min@2 is 0 or 1 and Avg@2 is 0, 0.5 or 1; averaged over 2 clozes
        assert scores["min_at_n"] in (0, 0.5, 1) and scores["avg_at_n"] in (0, 0.25, 0.5, 0.75, 1)
        assert scores["min_at_n"] <= scores["avg_at_n"]
        assert record["correct"] == scores["min_at_n"]  # one strategy: the item's verdict is its Min@n
    assert 0 <= result["by_strategy"]["random"]["min_at_n"] <= result["by_strategy"]["random"]["avg_at_n"] <= 1


def aliased_capital_graph() -> list[dict]:
    """The capitals graph with a second name for every country and capital (Paris has two more),
    so that the object and every distractor have several names whose plausibilities add up."""
    entities = capital_graph()
    for entity in entities:
        label = entity["labels"]["en"]["value"]
        if "P36" in entity["claims"]:  # a country
            aliases = (f"Republic of {label}",)
        elif "P17" in entity["claims"]:  # a capital
            aliases = ("City of Light", "Paname") if label == "Paris" else (f"City of {label}",)
        else:
            continue
        entity["aliases"] = {"en": [{"language": "en", "value": a} for a in aliases]}
    return entities


def _names_in_graph(label: str, relation: str) -> list[str]:
    """What aliased_capital_graph calls the object of a `relation` fact labelled `label`."""
    if relation == "P17":
        return [label, f"Republic of {label}"]
    return [label, "City of Light", "Paname"] if label == "Paris" else [label, f"City of {label}"]


# The first two object-final cloze templates of each relation (probes/templates/relations/).
CLOZES = {"P36": ("The capital of {} is", "{}'s capital city is"), "P17": ("{} is located in", "{} is in the country of")}
UNNAMED = {"entity": "Q424242", "label": None, "source": "random", "score": None, "names": []}


@pytest.mark.slow
def test_distractor_plausibility_sums_every_name_per_strategy(tmp_path):
    """Plausibility recomputed here through the scorer's loglikelihood: for each entity, the sum
    over its names of P(" " + name + EOS | cloze); Min@2 / Avg@2 and the aggregate's per-strategy
    breakdowns by relation follow from those numbers alone. A distractor without a name is skipped."""
    from factprobe.probes.evaluation.runner import evaluate
    from scoring_models import real_scorer

    store = tmp_path / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "c.json", aliased_capital_graph())), "--store", str(store),
            "--quiet", check=True)
    run_cli("distractors", "build", "--store", str(store), "--out", str(tmp_path / "sem"),
            "--quiet", check=True)
    built = tmp_path / "d.jsonl"
    run_cli("probeset", "build", "--kind", "distractor", "--relation", "P36", "--relation", "P17", "--strategy",
            "random", "--strategy", "sem", "--semantic", str(tmp_path / "sem"), "--n", "2", "--per-relation", "2",
            "--store", str(store), "--out", str(built), "--quiet", check=True)
    items = [json.loads(line) for line in built.read_text().splitlines()]
    for item in items:  # the set carries every name, the object's and each distractor's
        assert item["object_names"] == _names_in_graph(item["object_label"], item["relation"])
        for found in item["distractors"].values():
            assert [d["names"] for d in found] == [_names_in_graph(d["label"], item["relation"]) for d in found]
    # A distractor the graph has no name for, first in line: it must not count as beaten.
    items[0]["distractors"]["random"].insert(0, UNNAMED)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(i) + "\n" for i in items))

    scorer = real_scorer("smollm2-135m-instruct")
    summary = evaluate(scorer, "distractor", edited, tmp_path / "run", options={"clozes": 2, "n": 2})
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "items.jsonl").read_text().splitlines())}
    assert summary.items == len(items) == 4 and {i["relation"] for i in items} == {"P36", "P17"}

    hand = {strategy: {} for strategy in ("random", "sem")}  # strategy -> item id -> (Min@2, Avg@2)
    alias_shares = []  # per entity and cloze: the part of its plausibility that comes from aliases
    for item in items:
        verdicts = {strategy: [] for strategy in hand}  # per cloze: (Min@2, Avg@2)
        record = records[item["id"]]
        clozes = [c.format(item["subject_label"]) for c in CLOZES[item["relation"]]]
        assert [c["cloze"] for c in record["per_cloze"]] == clozes
        for cloze, scored in zip(clozes, record["per_cloze"]):
            per_name = _name_probabilities(scorer, cloze, item)
            plausibility = {entity: sum(values) for entity, values in per_name.items()}
            alias_shares += [sum(values[1:]) / sum(values) for values in per_name.values()]
            assert set(scored["log_plausibility"]) == set(plausibility)  # the unnamed one has none
            for entity, value in plausibility.items():
                assert abs(math.log(value) - scored["log_plausibility"][entity]) < 1e-4, (cloze, entity)
            for strategy, found in item["distractors"].items():
                named = [d for d in found if d["names"]][:2]
                beaten = [plausibility[item["object"]] > plausibility[d["entity"]] for d in named]
                verdicts[strategy].append((float(all(beaten)), sum(beaten) / len(beaten)))
        for strategy, per_cloze in verdicts.items():
            hand[strategy][item["id"]] = _means(per_cloze)  # over the fact's clozes
            scores = record["by_strategy"][strategy]
            assert (scores["min_at_n"], scores["avg_at_n"]) == hand[strategy][item["id"]]
            assert scores["compared"] == 2
        assert record["correct"] is None  # two strategies: no single verdict
    assert records[items[0]["id"]]["by_strategy"]["random"]["skipped"] == ["Q424242"]
    # Observed: aliases carry up to 1.6% of an entity's plausibility (median 0.017%), well above
    # the 1e-4 tolerance, so scoring labels alone would have failed the comparison above.
    print(f"alias share of plausibility: max {max(alias_shares):.3g}, median {sorted(alias_shares)[len(alias_shares) // 2]:.3g}")
    assert max(alias_shares) > 1e-3

    aggregate = summary.aggregate
    assert aggregate["accuracy"] is None and aggregate["by_relation"] == {}
    for strategy in ("random", "sem"):
        found = aggregate["by_strategy"][strategy]
        assert found["skipped"] == (1 if strategy == "random" else 0)
        for relation in ("P36", "P17"):
            values = [hand[strategy][i["id"]] for i in items if i["relation"] == relation]
            min_at_n, avg_at_n = _means(values)
            mine = found["by_relation"][relation]
            assert {k: mine[k] for k in ("min_at_n", "avg_at_n", "items")} == {
                "min_at_n": min_at_n, "avg_at_n": avg_at_n, "items": 2}
            assert mine["min_at_n_interval"]["n"] == 2 and mine["min_at_n_interval"]["few"]
        assert (found["min_at_n"], found["avg_at_n"]) == _means([hand[strategy][i["id"]] for i in items])
        print(f"{strategy}: Min@2 {found['min_at_n']} Avg@2 {found['avg_at_n']} by relation {found['by_relation']}")


def _means(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return sum(m for m, _ in pairs) / len(pairs), sum(a for _, a in pairs) / len(pairs)


def _name_probabilities(scorer, cloze: str, item: dict) -> dict[str, list[float]]:
    """Per entity, label first: exp(log P(" " + name + EOS | cloze)) for each of its names, from
    the scorer's loglikelihood with EOS written as the tokenizer's EOS text."""
    from factprobe.probes.scoring.requests import LoglikelihoodRequest

    eos = scorer.tokenizer.eos_token
    names = {item["object"]: item["object_names"]}
    for found in item["distractors"].values():
        names.update({d["entity"]: d["names"] for d in found if d["names"]})
    out = {}
    for entity, entity_names in names.items():
        continuations = [f" {name}{eos}" for name in entity_names]
        for continuation, name in zip(continuations, entity_names):  # the EOS text is the EOS token
            split = scorer.split(cloze, continuation)
            expected = scorer.tokenizer(f" {name}", add_special_tokens=False)["input_ids"]
            assert list(split.ids[split.split:]) == [*expected, scorer.tokenizer.eos_token_id]
        (scores,) = scorer.loglikelihood([LoglikelihoodRequest(cloze, continuations)])
        out[entity] = [math.exp(s.logprob) for s in scores]
    return out

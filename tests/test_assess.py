"""`factprobe assess` (issue 38 item 5): DistFact's evaluation of knowledge measures against human
judgements (seed 004, 178-186, 225-239, 253-265). The arithmetic on cases small enough to do by
hand (Kendall's tau, the fold split, the configuration and threshold each fold chooses), then the
command end to end on run folders written here in the format the methods write, checked against
an independent computation with scipy.stats.kendalltau, and on DistFact's published judgements."""

from __future__ import annotations

import hashlib
import json
import math
import random
import statistics
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau

from conftest import run_cli
from factprobe.probes import measures
from factprobe.probes.measures.assess import (ClozeWins, Config, cloze_subset, cross_validate, distractor_counts,
                                              distractor_score, kfold, mean_and_std, paired_tau, proportional_gain)

# DistFact's published shape (`[[s, r, o], mean score]`, its wikidata_triples_to_human_scores.json), with
# facts and scores written here: the published file is GPL-licensed, so it is not copied.
DISTFACT = Path(__file__).parent / "fixtures" / "distfact" / "human_scores.json"


# -- the arithmetic, by hand ----------------------------------------------------------------------


def test_kendall_tau_by_hand_and_by_scipy():
    a = {"f1": 0.9, "f2": 0.5, "f3": 0.5, "f4": 0.1}
    b = {"f1": 1.0, "f2": 1.0, "f3": 0.0, "f4": 0.0}
    # f1f2: b tied; f1f3: C; f1f4: C; f2f3: a tied; f2f4: C; f3f4: b tied.
    # C = 3, D = 0, n0 = 6 pairs, n1 = 1 tied in a, n2 = 2 tied in b: tau-b = 3 / sqrt(5 * 4).
    tau, n = paired_tau(a, b, ["f1", "f2", "f3", "f4"])
    assert n == 4 and tau == pytest.approx(3 / math.sqrt(20), abs=1e-15)
    assert tau == pytest.approx(kendalltau([0.9, 0.5, 0.5, 0.1], [1, 1, 0, 0]).statistic, abs=1e-15)
    # No ties: 5 concordant pairs, 1 discordant -> (5 - 1) / 6.
    tau, n = paired_tau({"a": 1, "b": 2, "c": 3, "d": 4}, {"a": 1, "b": 3, "c": 2, "d": 4}, "abcd")
    assert n == 4 and tau == pytest.approx(4 / 6, abs=1e-15)
    # A fact without a value on either side is left out; a constant side has no tau.
    assert paired_tau({"a": 1, "b": None, "c": 3}, {"a": 0, "b": 1, "c": 1}, "abc") == (1.0, 2)
    assert paired_tau({"a": 1, "b": 1, "c": 1}, {"a": 0, "b": 1, "c": 2}, "abc") == (None, 3)
    assert paired_tau({"a": 1}, {"a": 0}, "a") == (None, 1)


def test_the_fold_split_is_kfolds_shuffled_by_the_seed():
    # RandomState(42) permutes 0..6 to 0 1 5 2 4 3 6; three folds of 3, 2 and 2 in that order.
    assert kfold(7, 3, 42) == [[0, 1, 5], [2, 4], [3, 6]]
    for count, k, seed in ((7, 3, 42), (210, 3, 42), (10, 4, 0)):
        split = np.array_split(np.random.RandomState(seed).permutation(count), k)
        assert kfold(count, k, seed) == [list(map(int, part)) for part in split]
    with pytest.raises(ValueError, match="2 facts cannot make 3 folds"):
        kfold(2, 3, 42)


HUMAN = {"a": 0.9, "b": 0.1, "c": 0.8, "d": 0.3, "e": 0.6, "f": 0.2}
X = {"a": 4, "b": 1, "c": 2, "d": 3, "e": 6, "f": 5}
Y = {"a": 1, "b": 2, "c": 6, "d": 3, "e": 5, "f": 4}


def test_each_fold_takes_the_configuration_best_on_the_other_folds():
    folds = [["a", "b"], ["c", "d"], ["e", "f"]]
    choices = cross_validate([Config((("c", "X"),), X), Config((("c", "Y"),), Y)], HUMAN, folds)
    # Test fold a,b: trained on c,d,e,f. X: cd D, ce D, cf D, de C, df D, ef C -> (2 - 4) / 6 = -1/3;
    # Y: cd C, ce C, cf C, de C, df D, ef C -> 4/6. Y wins; on a,b Y orders them the wrong way: -1.
    # Test fold c,d: on a,b,e,f X has 4 C, 2 D -> 1/3; Y 3 C, 3 D -> 0. X wins; on c,d: -1.
    # Test fold e,f: on a,b,c,d X 5 C, 1 D -> 2/3; Y 3 C, 3 D -> 0. X wins; on e,f: +1.
    assert [(c.params, c.threshold, c.test_facts) for c in choices] == [
        ({"c": "Y"}, None, 2), ({"c": "X"}, None, 2), ({"c": "X"}, None, 2)]
    assert [c.train_tau for c in choices] == pytest.approx([2 / 3, 1 / 3, 2 / 3], abs=1e-12)
    assert [c.test_tau for c in choices] == [-1.0, -1.0, 1.0]
    mean, std = mean_and_std([c.test_tau for c in choices])
    assert mean == pytest.approx(-1 / 3) and std == pytest.approx(statistics.stdev([-1, -1, 1]))
    # Equal training taus: the first configuration in grid order.
    tied = cross_validate([Config((("c", "Y"),), Y), Config((("c", "Y2"),), dict(Y))], HUMAN, folds)
    assert {c.params["c"] for c in tied} == {"Y"}


def test_the_threshold_variant_chooses_the_cut_best_on_the_training_folds():
    human = {"a": 1, "b": 1, "c": 0, "d": 1, "e": 0, "f": 0, "g": 1, "h": 0, "i": 0}
    values = {"a": 0.9, "b": 0.7, "c": 0.6, "d": 0.5, "e": 0.4, "f": 0.3, "g": 0.8, "h": 0.2, "i": 0.1}
    folds = [["a", "b", "c"], ["d", "e", "f"], ["g", "h", "i"]]
    (first, *_) = cross_validate([Config((), values)], human, folds, thresholds=True)
    # Trained on d..i (values 0.5 0.4 0.3 0.8 0.2 0.1, known d and g): the cut "above 0.4" makes d, g
    # known and nothing else, tau-b = 1; lower cuts add unknown facts. Cuts tried: 0.1 .. 0.5.
    train = ["d", "e", "f", "g", "h", "i"]
    by_hand = {cut: kendalltau([float(values[f] > cut) for f in train], [human[f] for f in train]).statistic
               for cut in (0.1, 0.2, 0.3, 0.4, 0.5)}
    assert max(by_hand, key=by_hand.get) == 0.4 and by_hand[0.4] == pytest.approx(1.0)
    assert (first.threshold, first.train_tau) == (0.4, pytest.approx(1.0))
    # On a, b, c (0.9 0.7 0.6 -> all above 0.4): the cut leaves one value, tau undefined.
    assert (first.test_tau, first.test_facts) == (None, 3)


def test_min_and_avg_at_n_read_off_the_wins_as_the_measures_compute_them():
    gold, distractors = -2.0, [-3.0, -1.0, -2.0, -5.0]  # beats the 1st and 4th; a tie is no win
    wins = ClozeWins.of(gold, distractors)
    assert wins.wins == (True, False, False, True)
    for n in range(1, 5):
        assert wins.score("min", n) == float(measures.min_at_n(gold, distractors, n))
        assert wins.score("avg", n) == measures.avg_at_n(gold, distractors, n)
    assert wins.score("avg", 9) == 0.5  # fewer than n: every one it has (the authors' code too)
    assert ClozeWins(()).score("min", 1) is None
    # K(f): the mean over clozes; a cloze without a verdict is left out.
    assert distractor_score([wins, ClozeWins((True,)), None], "avg", 2) == (0.5 + 1.0) / 2
    assert distractor_score([wins, ClozeWins((True,))], "min", 1, subset=[1]) == 1.0


def test_the_grid_and_the_cloze_subsets():
    assert distractor_counts(3) == [1, 2, 5] and distractor_counts(5) == [1, 2, 5]
    assert distractor_counts(7) == [1, 2, 5, 10]
    assert distractor_counts(200) == distractor_counts(300) == [1, 2, 5, 10, *range(20, 201, 20)]
    subsets = [cloze_subset("Q42$x", 5, m, seed=42) for m in range(1, 6)]
    assert all(set(a) < set(b) for a, b in zip(subsets, subsets[1:])) and subsets[-1] == [0, 1, 2, 3, 4]
    assert cloze_subset("Q42$x", 5, 2, seed=42) == subsets[1]  # the same clozes for every measure
    assert cloze_subset("Q42$x", 2, 4, seed=42) == [0, 1]
    assert proportional_gain(0.3, 0.2) == pytest.approx(1.3 / 1.2) and proportional_gain(None, 0.2) is None


# -- run folders as the methods write them --------------------------------------------------------

FACTS = [f"Q{100 + k}$fact" for k in range(9)]
DISTRACTORS = ["Q901", "Q902", "Q903"]
CLOZES = ("The capital of {} is", "{}'s capital city is")


def _plausibilities(seed: int, clozes: int = 2) -> dict[str, list[dict[str, float]]]:
    """Per fact, per cloze: the log-plausibility of its object and of the three distractors."""
    rng = random.Random(seed)
    return {fact: [{f"O{k}": round(rng.uniform(-6, -1), 3), **{d: round(rng.uniform(-6, -1), 3) for d in DISTRACTORS}}
                   for _ in range(clozes)] for k, fact in enumerate(FACTS)}


def distractor_record(k: int, fact: str, per_cloze: list[dict], texts, named: bool = True) -> dict:
    """A record as probes/methods/distractor.py writes it (one strategy, all three compared)."""
    gold = f"O{k}"
    wins = [[lp[gold] > lp[d] for d in DISTRACTORS] for lp in per_cloze]
    strategy = {"min_at_n": sum(all(w) for w in wins) / len(wins), "avg_at_n": sum(sum(w) / 3 for w in wins) / len(wins),
                "compared": 3, "skipped": []}
    record = {"id": f"distractor:{fact}", "fact": fact, "relation": "P36", "subject_label": f"S{k}",
              "object_label": f"C{k}", "bucket": None, "frequency": None}
    if named:
        record["object"], strategy["distractors"] = gold, list(DISTRACTORS)
    return {**record, "by_strategy": {"random": strategy}, "correct": strategy["min_at_n"],
            "per_cloze": [{"cloze": t.format(f"S{k}"), "log_plausibility": lp} for t, lp in zip(texts, per_cloze)]}


def baselines_record(k: int, fact: str, probabilities: list[float], texts) -> dict:
    """A record as probes/methods/baselines.py writes it (no judge, no BERT-score, no KaRR)."""
    clozes = [t.format(f"S{k}") for t in texts]
    return {"id": f"distractor:{fact}", "fact": fact, "relation": "P36", "subject_label": f"S{k}",
            "object_label": f"C{k}", "bucket": None, "frequency": None, "cloze": clozes[0], "clozes": clozes,
            "answer": f"C{k}", "probability": sum(probabilities) / len(probabilities),
            "probability_per_cloze": probabilities, "correct": False, "candidates": [[f" C{k}"] for _ in clozes],
            "precision_at_n": float(k % 2), "rouge_l": k / 10, "judge": None}


def write_run(folder: Path, method: str, records: list[dict], options: dict, probes_sha256: str | None = None,
              model: str = "hf:gpt2-xl@main/float32") -> Path:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"method": method, "model": model, "options": options, "seed": 0,
                                                 "probes": "d.jsonl", "probes_sha256": probes_sha256,
                                                 "kind": "distractor", "limit": None}))
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "aggregate.json").write_text(json.dumps({"method": method, "items": len(records)}))
    return folder


HUMAN_SCORES = [0.9, 0.1, 0.67, 0.33, 0.0, 1.0, 0.5, 0.25, 0.75]
PROBABILITIES = {fact: [round(0.05 + 0.1 * ((3 * k) % 9), 3), round(0.9 - 0.08 * k, 3)] for k, fact in enumerate(FACTS)}


@pytest.fixture
def runs(tmp_path) -> dict[str, Path]:
    plaus = _plausibilities(7)
    out = {"distractor": write_run(tmp_path / "dist", "distractor",
                                   [distractor_record(k, f, plaus[f], CLOZES) for k, f in enumerate(FACTS)],
                                   {"clozes": 2, "n": None}),
           "baselines": write_run(tmp_path / "base", "baselines",
                                  [baselines_record(k, f, PROBABILITIES[f], CLOZES) for k, f in enumerate(FACTS)],
                                  {"beams": 10, "n": 3, "candidates": "beam", "clozes": 2, "probability": "all-names",
                                   "probability_eos": False})}
    judgements = tmp_path / "human.jsonl"
    judgements.write_text("".join(json.dumps({"fact": f, "knows": h}) + "\n" for f, h in zip(FACTS, HUMAN_SCORES)))
    out["judgements"], out["plaus"] = judgements, plaus
    return out


def _oracle_folds() -> list[list[str]]:
    return [[FACTS[int(p)] for p in part] for part in np.array_split(np.random.RandomState(42).permutation(9), 3)]


def _tau(values: dict, facts: list[str]) -> float:
    return kendalltau([values[f] for f in facts], [dict(zip(FACTS, HUMAN_SCORES))[f] for f in facts]).statistic


def _dist_values(plaus, agg: str, n: int, clozes=None) -> dict[str, float]:
    """Min@n / Avg@n by hand: per cloze over the first n distractors, then the mean over clozes."""
    out = {}
    for k, fact in enumerate(FACTS):
        scores = []
        for c, lp in enumerate(plaus[fact]):
            if clozes is None or c in clozes(fact):
                beaten = [lp[f"O{k}"] > lp[d] for d in DISTRACTORS[:n]]
                scores.append(float(all(beaten)) if agg == "min" else sum(beaten) / len(beaten))
        out[fact] = sum(scores) / len(scores)
    return out


def _assess(runs, tmp_path, *extra) -> dict:
    proc = run_cli("assess", str(runs["distractor"]), str(runs["baselines"]), "--judgements", str(runs["judgements"]),
                   "--out", str(tmp_path / "out"), *map(str, extra))
    assert proc.returncode == 0, proc.stderr
    return json.loads((tmp_path / "out" / "assess.json").read_text())


def test_assess_end_to_end_against_scipy(runs, tmp_path):
    result = _assess(runs, tmp_path)
    folds = _oracle_folds()
    assert result["folds"] == folds and result["judgements"]["assessed"] == 9
    # Probability: one configuration; each fold's tau on its own facts.
    probability = {f: sum(p) / 2 for f, p in PROBABILITIES.items()}
    taus = [_tau(probability, fold) for fold in folds]
    entry = result["measures"]["probability"]
    assert [f["test_tau"] for f in entry["folds"]] == pytest.approx(taus, abs=1e-12)
    assert entry["mean_tau"] == pytest.approx(sum(taus) / 3, abs=1e-12)
    assert entry["std_tau"] == pytest.approx(statistics.stdev(taus), abs=1e-12)
    assert entry["paper"] == {"mean_tau": 0.262, "std_tau": 0.047, "line": "004:217"}
    # Dist. Random: Min@n or Avg@n with n in 1, 2, 5 (5: all three), chosen on the other folds.
    grid = [(agg, n) for agg in ("min", "avg") for n in (1, 2, 5)]
    chosen = []
    for k, test in enumerate(folds):
        train = [f for j, fold in enumerate(folds) if j != k for f in fold]
        train_taus = [_tau(_dist_values(runs["plaus"], agg, n), train) for agg, n in grid]
        best = grid[train_taus.index(max(train_taus))]
        chosen.append(({"agg": best[0], "n": best[1], "run": "R2"}, _tau(_dist_values(runs["plaus"], *best), test)))
    entry = result["measures"]["dist:random"]
    assert [(f["params"], f["test_tau"]) for f in entry["folds"]] == [(p, pytest.approx(t, abs=1e-12))
                                                                       for p, t in chosen]
    assert entry["configurations"] == 6 and entry["paper"]["line"] == "004:218"
    # Figure 3: each fold's choice with 1..3 distractors.
    curve = result["distractor_curve"]["dist:random"]
    assert curve["n"] == [1, 2, 3]
    for n in (1, 2, 3):
        by_hand = [_tau(_dist_values(runs["plaus"], p["agg"], n), fold) for (p, _), fold in zip(chosen, folds)]
        assert curve["mean_tau"][n - 1] == pytest.approx(sum(by_hand) / 3, abs=1e-12)
    # Figure 4: one cloze drawn per fact; with both, the table's tau again.
    clozes = result["cloze_curve"]["probability"]
    one = {f: PROBABILITIES[f][cloze_subset(f, 2, 1, 42)[0]] for f in FACTS}
    assert clozes["clozes"] == [1, 2]
    assert clozes["mean_tau"] == pytest.approx([sum(_tau(one, fold) for fold in folds) / 3,
                                                result["measures"]["probability"]["mean_tau"]], abs=1e-12)
    assert clozes["gain"][1] == pytest.approx((clozes["mean_tau"][1] + 1) / (clozes["mean_tau"][0] + 1))
    one_cloze = [_tau(_dist_values(runs["plaus"], p["agg"], p["n"], clozes=lambda f: cloze_subset(f, 2, 1, 42)),
                      fold) for (p, _), fold in zip(chosen, folds)]
    assert result["cloze_curve"]["dist:random"]["fold_tau"][0] == pytest.approx(one_cloze, abs=1e-12)
    assert result["cloze_curve"]["rouge_l"]["missing"].endswith("(rouge_l_per_cloze)")
    assert result["robustness"] is None
    report = (tmp_path / "out" / "assess.md").read_text()
    assert "| Dist. Random |" in report and "| 0.225 | 0.021 | 004:218 |" in report
    assert "| Probability |" in report and "004:217" in report


def test_older_distractor_records_read_their_probe_set(runs, tmp_path):
    """Records written before they named the object and the distractors: the probe set says,
    matched by the SHA-256 in run.json; without it the command says to pass --probes."""
    probes = tmp_path / "d.jsonl"
    probes.write_text("".join(json.dumps({"id": f"distractor:{f}", "fact": f, "subject": f"S{k}", "relation": "P36",
                                          "object": f"O{k}", "distractors": {"random": [{"entity": d} for d in
                                                                                        DISTRACTORS]}}) + "\n"
                              for k, f in enumerate(FACTS)))
    sha = hashlib.sha256(probes.read_bytes()).hexdigest()
    old = write_run(tmp_path / "old", "distractor", [distractor_record(k, f, runs["plaus"][f], CLOZES, named=False)
                                                     for k, f in enumerate(FACTS)], {"clozes": 2}, probes_sha256=sha)
    argv = ["assess", str(old), "--judgements", str(runs["judgements"]), "--out", str(tmp_path / "old-out")]
    proc = run_cli(*argv)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "pass it with --probes" in proc.stderr
    run_cli(*argv, "--probes", str(probes), check=True)
    older = json.loads((tmp_path / "old-out" / "assess.json").read_text())["measures"]["dist:random"]
    newer = _assess(runs, tmp_path)["measures"]["dist:random"]
    def without_run(folds):  # the run's id: R1 alone, R2 beside the baselines run
        return [{**f, "params": {k: v for k, v in f["params"].items() if k != "run"}} for f in folds]

    assert without_run(older["folds"]) == without_run(newer["folds"]) and older["mean_tau"] == newer["mean_tau"]


def test_robustness_compares_flawed_and_corrected_clozes(runs, tmp_path):
    flawed_lp, corrected_lp = _plausibilities(11, clozes=1), _plausibilities(12, clozes=1)
    unchanged = FACTS[7:]  # the same cloze in both runs: not a verbalization error, left out (004:237)
    for fact in unchanged:
        corrected_lp[fact] = flawed_lp[fact]

    def texts(fact, side):
        return ("The capital of {} is",) if side == "flawed" or fact in unchanged else ("The capital city of {} is",)

    sides = {}
    for side, lp in (("flawed", flawed_lp), ("corrected", corrected_lp)):
        sides[side] = write_run(tmp_path / side, "distractor", [distractor_record(k, f, lp[f], texts(f, side))
                                                                for k, f in enumerate(FACTS)], {"clozes": 1})
    result = _assess(runs, tmp_path, "--flawed", sides["flawed"], "--corrected", sides["corrected"])
    changed = FACTS[:7]
    rows = result["robustness"]["dist:random"]["folds"]
    by_hand = []
    for row, fold in zip(rows, result["measures"]["dist:random"]["folds"]):
        params = fold["params"]
        a, b = (_dist_values(lp, params["agg"], params["n"]) for lp in (flawed_lp, corrected_lp))
        by_hand.append(kendalltau([a[f] for f in changed], [b[f] for f in changed]).statistic)
        assert (row["facts"], row["unchanged"]) == (7, 2)
    assert [r["tau"] for r in rows] == pytest.approx(by_hand, abs=1e-12)
    assert result["robustness"]["dist:random"]["tau"] == pytest.approx(sum(by_hand) / 3, abs=1e-12)
    assert result["robustness"]["probability"]["folds"][0]["missing"] == (
        "no flawed run of baselines with R1's options")
    report = (tmp_path / "out" / "assess.md").read_text()
    assert "| Probability | n/a | - | 0.63 | 004:232 |" in report


def test_distfacts_published_judgements_name_facts_by_triple(runs, tmp_path):
    """Human scores in DistFact's published shape (Wikidata triples, mean ratings) read as
    DistFact publishes them; the probe set says which item holds each triple."""
    from factprobe.probes.evaluation.assess_inputs import read_judgements

    published = read_judgements(DISTFACT)
    assert (published.key, published.rows, len(published.scores)) == ("triple", 12, 12)
    assert published.scores["Q142|P36|Q90"] == 1.0 and published.scores["Q159|P36|Q649"] == 0.33
    triples = list(published.scores)[:9]
    probes = tmp_path / "d.jsonl"
    probes.write_text("".join(json.dumps(dict(zip(("subject", "relation", "object"), t.split("|")),
                                              id=f"distractor:{f}", fact=f)) + "\n" for t, f in zip(triples, FACTS)))
    sha = hashlib.sha256(probes.read_bytes()).hexdigest()
    base = json.loads((runs["baselines"] / "run.json").read_text())
    (runs["baselines"] / "run.json").write_text(json.dumps({**base, "probes_sha256": sha}))
    proc = run_cli("assess", str(runs["baselines"]), "--judgements", str(DISTFACT), "--probes", str(probes),
                   "--out", str(tmp_path / "pub"))
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "pub" / "assess.json").read_text())
    assert result["judgements"] | {"unmeasured": None} == {
        "file": str(DISTFACT), "key": "triple", "rows": 12, "facts": 12, "assessed": 9, "unmeasured": None}
    folds = [[triples[int(p)] for p in part] for part in np.array_split(np.random.RandomState(42).permutation(9), 3)]
    assert result["folds"] == folds
    probability = {t: sum(PROBABILITIES[f]) / 2 for t, f in zip(triples, FACTS)}
    taus = [kendalltau([probability[t] for t in fold], [published.scores[t] for t in fold]).statistic
            for fold in folds]
    assert result["measures"]["probability"]["mean_tau"] == pytest.approx(sum(taus) / 3, abs=1e-12)


@pytest.mark.parametrize("rows, message", [
    ('{"fact": "a", "knows": 1}\n{"fact": "b", "knows": 1.5}\n', "human.jsonl:2: knows: 1.5 is not a number from 0 to 1"),
    ('{"fact": "a", "knows": 1}\n{"id": "b", "knows": 0}\n', "human.jsonl:2: names its fact by id; the rows before it by fact"),
    ('{"fact": "a", "knows": "yes"}\n', "human.jsonl:1: knows: 'yes' is not a number"),
    ('{"knows": 1}\n', "human.jsonl:1: no fact, id, or subject, relation and object"),
])
def test_bad_judgements_are_one_line_naming_file_line_and_field(runs, tmp_path, rows, message):
    (tmp_path / "human.jsonl").write_text(rows)
    proc = run_cli("assess", str(runs["baselines"]), "--judgements", str(tmp_path / "human.jsonl"), "--out",
                   str(tmp_path / "bad"))
    assert (proc.returncode, proc.stdout) == (2, "") and proc.stderr.count("\n") == 1 and message in proc.stderr


def test_judgements_as_csv_average_a_facts_rows(runs, tmp_path):
    """One row per rater: a fact's rows are averaged (the paper's human score, 004:178)."""
    from factprobe.probes.evaluation.assess_inputs import read_judgements

    path = tmp_path / "human.csv"
    path.write_text("fact,knows\n" + "".join(f"{f},{h}\n" for f, h in zip(FACTS, HUMAN_SCORES)) + f"{FACTS[0]},0\n")
    read = read_judgements(path)
    assert (read.key, read.rows, read.scores[FACTS[0]], read.scores[FACTS[1]]) == ("fact", 10, 0.45, 0.1)


def test_runs_of_two_models_or_other_methods_are_refused(runs, tmp_path):
    other = write_run(tmp_path / "other", "baselines", [baselines_record(0, FACTS[0], [0.1], CLOZES[:1])],
                      {"beams": 10}, model="hf:gpt2@main/float32")
    proc = run_cli("assess", str(runs["baselines"]), str(other), "--judgements", str(runs["judgements"]), "--out",
                   str(tmp_path / "x"))
    assert proc.returncode == 2 and "the runs are of 2 models" in proc.stderr
    kdf = write_run(tmp_path / "kdf", "kdf", [{"id": "a", "correct": 1.0}], {})
    proc = run_cli("assess", str(kdf), "--judgements", str(runs["judgements"]), "--out", str(tmp_path / "y"))
    assert proc.returncode == 2 and "a run of kdf; assess reads runs of the distractor method" in proc.stderr


PAPERS = Path(__file__).resolve().parents[2] / "shared" / "papers"


@pytest.mark.skipif(not list(PAPERS.glob("004_*.txt")), reason="the papers' texts are not beside this clone")
def test_the_papers_numbers_stand_on_the_lines_cited():
    from factprobe.probes.evaluation.assess import PAPER_TABLE_3, PAPER_TABLE_4

    lines = next(PAPERS.glob("004_*.txt")).read_text(encoding="utf-8").splitlines()
    for label, mean, std, line in PAPER_TABLE_3.values():
        cells = [c.strip() for c in lines[line - 1].split("|")]
        assert cells[2:4] == [f"{mean:.3f}", f"{std:.3f}"], (label, lines[line - 1])
    for tau, line in PAPER_TABLE_4.values():
        assert lines[line - 1].split("|")[2].strip() == f"{tau:.2f}", lines[line - 1]


def test_the_threshold_variant_is_named_in_the_output(runs, tmp_path):
    result = _assess(runs, tmp_path, "--thresholds")
    assert result["definitions"]["thresholds"].endswith("(factprobe's variant)")
    probability = {f: sum(p) / 2 for f, p in PROBABILITIES.items()}
    for fold, test in zip(result["measures"]["probability"]["folds"], result["folds"]):
        train = [f for f in FACTS if f not in test]
        cuts = sorted({probability[f] for f in train})[:-1]
        taus = [kendalltau([float(probability[f] > c) for f in train],
                           [dict(zip(FACTS, HUMAN_SCORES))[f] for f in train]).statistic for c in cuts]
        best = max(t for t in taus if not math.isnan(t))
        assert fold["threshold"] == cuts[taus.index(best)] and fold["train_tau"] == pytest.approx(best, abs=1e-12)


@pytest.mark.slow
def test_a_real_distractor_run_is_assessed_as_it_scored(tmp_path):
    """A distractor run of SmolLM2 over 9 capitals (random strategy, 4 distractors, 2 clozes):
    Min@n and Avg@n recomputed from its records at the n it compared equal what it wrote, and
    the command assesses it against judgements made up here."""
    from factprobe.probes.evaluation.assess_inputs import DistractorSource, Items, fact_key
    from factprobe.probes.report import load_run
    from test_eval import capital_graph
    from wikidata_builder import write_dump

    store, built = tmp_path / "g.sqlite", tmp_path / "d.jsonl"
    run_cli("ingest", "wikidata", str(write_dump(tmp_path / "c.json", capital_graph())), "--store", str(store),
            "--quiet", check=True)
    run_cli("probeset", "build", "--kind", "distractor", "--relation", "P36", "--strategy", "random", "--n", "4",
            "--per-relation", "9", "--store", str(store), "--out", str(built), "--quiet", check=True)
    run_cli("eval", "--model", "smollm2-135m-instruct", "--method", "distractor", "--probes", str(built), "--out",
            str(tmp_path / "run"), "--option", "clozes=2", "--quiet", check=True)
    run = load_run(tmp_path / "run")
    source = DistractorSource("random", run, {r["fact"]: [r] for r in run.items}, Items(run, {}))
    for agg, key in (("min", "min_at_n"), ("avg", "avg_at_n")):
        for record in run.items:
            n = record["by_strategy"]["random"]["compared"]
            assert source.values({"agg": agg, "n": n})[record["fact"]] == record["by_strategy"]["random"][key]
    judgements = tmp_path / "human.jsonl"
    judgements.write_text("".join(json.dumps({"fact": r["fact"], "knows": k % 2}) + "\n"
                                  for k, r in enumerate(run.items)))
    run_cli("assess", str(tmp_path / "run"), "--judgements", str(judgements), "--out", str(tmp_path / "out"),
            check=True)
    result = json.loads((tmp_path / "out" / "assess.json").read_text())
    assert result["judgements"]["assessed"] == 9 and list(result["measures"]) == ["dist:random"]
    assert result["distractor_curve"]["dist:random"]["n"] == [1, 2, 3, 4]
    assert result["cloze_curve"]["dist:random"]["clozes"] == [1, 2]
    assert all(set(f["params"]) == {"run", "agg", "n"} for f in result["measures"]["dist:random"]["folds"]
               if f["params"])
    assert fact_key("record", Items(run, {}))(run.items[0]) == run.items[0]["fact"]

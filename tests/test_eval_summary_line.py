"""The line `factprobe eval` ends with names the method's own headline figures (the ones
`factprobe run` closes with: probes/methods/base.py Method.headline), not an accuracy that a
method without one would show as n/a. The model is the toy backend (tests/toy_backend.py)."""

from __future__ import annotations

import json

from conftest import run_cli
from factprobe.probes.scoring.requests import LabelPathScore
from test_model_backends import ITEMS, toy_backend


def _capital(country: str, capital: str, random: tuple[str, ...], sem: tuple[str, ...]) -> dict:
    return {"id": f"distractor:{country}", "kind": "distractor", "split": "test", "fact": country, "relation": "P36",
            "subject_label": country, "object": capital, "object_label": capital,
            "distractors": {strategy: [{"entity": name, "label": name} for name in names]
                            for strategy, names in (("random", random), ("sem", sem))}}


def _toy_label_paths(self, requests):
    """The toy way for whole names too: a known name 0 nats, another minus one nat per character."""
    return [[LabelPathScore(0.0 if name in self.words else -float(len(name)), 1) for name in r.names]
            for r in requests]


def test_a_distractor_run_ends_with_min_and_avg_at_n(tmp_path, monkeypatch):
    """Two strategies, so no one accuracy (today's line said "accuracy n/a"). The toy model knows
    Paris and Tokyo. random: France's Paris beats Lyon and Berlin (Min@n 1, Avg@n 1), Japan's
    Tokyo ties Paris and beats Kyoto (0, 1/2), Peru's Lima (-4 nats) beats Cusco and Quito (-5)
    (1, 1): Min@n 2/3, Avg@n 5/6. sem: Paris ties Tokyo (0, 0), Tokyo beats Osaka (1, 1), Lima
    loses to Paris (0, 0): 1/3 and 1/3."""
    probes = tmp_path / "d.jsonl"
    items = [_capital("France", "Paris", ("Lyon", "Berlin"), ("Tokyo",)),
             _capital("Japan", "Tokyo", ("Kyoto", "Paris"), ("Osaka",)),
             _capital("Peru", "Lima", ("Cusco", "Quito"), ("Paris",))]
    probes.write_text("".join(json.dumps(item) + "\n" for item in items))
    out = tmp_path / "run"
    with toy_backend():
        import toy_backend as module  # this context's fresh copy, dropped when it ends

        monkeypatch.setattr(module.ToyScorer, "label_paths", _toy_label_paths)
        proc = run_cli("eval", "--model", "toy:Paris,Tokyo", "--method", "distractor", "--probes", str(probes),
                       "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    few = "3 items: too few to read"
    assert proc.stdout == (f"distractor on 3 items (3 new): random Min@n 0.667 [0.208, 0.939, {few}] Avg@n 0.833 "
                           f"[0.500, 1.000, {few}];  sem Min@n 0.333 [0.061, 0.792, {few}] Avg@n 0.333 [0.061, 0.792, "
                           f"{few}] -> {out}/aggregate.json\n")


def test_an_accuracy_run_ends_with_its_accuracy_interval_and_chance(tmp_path):
    """Multiple choice: the toy model picks Paris and Berlin and misses Tokyo (2 of 3), against a
    uniform guess's 1/3 over three choices each."""
    probes = tmp_path / "mc.jsonl"
    probes.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    out = tmp_path / "run"
    with toy_backend():
        proc = run_cli("eval", "--model", "toy:Paris,Berlin", "--method", "mc", "--probes", str(probes),
                       "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ("mc on 3 items (3 new): accuracy 0.667 [0.208, 0.939, 3 items: too few to read] "
                           f"(chance 0.333) -> {out}/aggregate.json\n")

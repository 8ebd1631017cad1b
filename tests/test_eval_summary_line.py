"""The line `factprobe eval` ends with names the method's own headline figures (the ones
`factprobe run` closes with: probes/methods/base.py Method.headline), not an accuracy that a
method without one would show as n/a; `factprobe merge`'s line too, with chance only from a probe
set whose bytes are the run's. The model is the toy backend (tests/toy_backend.py)."""

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


# Three capitals with random and sem distractors, each test's distractor probe set.
CAPITALS = [_capital("France", "Paris", ("Lyon", "Berlin"), ("Tokyo",)),
            _capital("Japan", "Tokyo", ("Kyoto", "Paris"), ("Osaka",)),
            _capital("Peru", "Lima", ("Cusco", "Quito"), ("Paris",))]


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
    probes.write_text("".join(json.dumps(item) + "\n" for item in CAPITALS))
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


def _sharded(probes, out, model: str, method: str, cwd) -> list:
    """`eval --shard K/2` for K = 0, 1 into OUT (one batch of 2, then the third item), the shards'
    folders as the runner writes them."""
    for k in range(2):
        proc = run_cli("eval", "--model", model, "--method", method, "--probes", probes, "--out", str(out),
                       "--shard", f"{k}/2", "--batch", "2", "--quiet", cwd=cwd)
        assert proc.returncode == 0, proc.stderr
    return [str(out / f"shard-{k}-of-2") for k in range(2)]


def test_a_merged_distractor_run_prints_min_and_avg_at_n(tmp_path, monkeypatch):
    """The same three facts as above in two shards: the merged line has the unsharded run's
    figures (today's said "accuracy n/a"); they need no probe set, so none is looked for here."""
    probes = tmp_path / "d.jsonl"
    probes.write_text("".join(json.dumps(item) + "\n" for item in CAPITALS))
    out = tmp_path / "run"
    with toy_backend():
        import toy_backend as module

        monkeypatch.setattr(module.ToyScorer, "label_paths", _toy_label_paths)
        shards = _sharded(str(probes), out, "toy:Paris,Tokyo", "distractor", tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_cli("merge", *shards, "--out", str(out), cwd=elsewhere)
    assert (proc.returncode, proc.stderr) == (0, "")
    few = "3 items: too few to read"
    assert proc.stdout == (f"merged 2 shard(s): distractor on 3 items: random Min@n 0.667 [0.208, 0.939, {few}] "
                           f"Avg@n 0.833 [0.500, 1.000, {few}];  sem Min@n 0.333 [0.061, 0.792, {few}] Avg@n 0.333 "
                           f"[0.061, 0.792, {few}] -> {out}/aggregate.json\n")


def _merged_mc(tmp_path, recorded: str | None = None) -> tuple:
    """A multiple-choice run (the toy model gets 2 of 3) in two shards; `recorded`: the probe-set
    path the shards' run.json are made to name instead of the file name the runner writes."""
    (tmp_path / "mc.jsonl").write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    out = tmp_path / "run"
    with toy_backend():
        shards = _sharded("mc.jsonl", out, "toy:Paris,Berlin", "mc", tmp_path)
    for shard in shards:
        run_json = tmp_path / shard / "run.json"
        run = json.loads(run_json.read_text())
        assert run["probes"] == "mc.jsonl"  # a name: the runner records no folder
        if recorded is not None:
            run_json.write_text(json.dumps({**run, "probes": recorded}, indent=1, sort_keys=True) + "\n")
    return shards, out


ACCURACY = "accuracy 0.667 [0.208, 0.939, 3 items: too few to read]"


def test_a_merged_run_states_chance_from_the_probe_set_its_run_json_names(tmp_path):
    """Merged where the run was made, its run.json's file name is the probe set (its SHA-256
    checked): a uniform guess over three choices, 1/3."""
    shards, out = _merged_mc(tmp_path)
    proc = run_cli("merge", *shards, "--out", "run", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"merged 2 shard(s): mc on 3 items: {ACCURACY} (chance 0.333) -> run/aggregate.json\n"


def test_a_full_path_in_run_json_is_read_from_anywhere(tmp_path):
    shards, out = _merged_mc(tmp_path, recorded=str(tmp_path / "mc.jsonl"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_cli("merge", *shards, "--out", str(out), cwd=elsewhere)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"merged 2 shard(s): mc on 3 items: {ACCURACY} (chance 0.333) -> {out}/aggregate.json\n"


def test_without_the_probe_set_bytes_the_line_has_no_chance_figure(tmp_path):
    """The recorded file edited since the run (two choices each now: chance would say 0.500),
    or no such file where the merge runs: the headline without chance, not a wrong one."""
    shards, out = _merged_mc(tmp_path, recorded=str(tmp_path / "mc.jsonl"))
    edited = [{**item, "choices": item["choices"][:2]} for item in ITEMS]
    (tmp_path / "mc.jsonl").write_text("".join(json.dumps(item) + "\n" for item in edited))
    proc = run_cli("merge", *shards, "--out", str(out), cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"merged 2 shard(s): mc on 3 items: {ACCURACY} -> {out}/aggregate.json\n"
    (tmp_path / "mc.jsonl").unlink()
    proc = run_cli("merge", *shards, "--out", str(out), cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"merged 2 shard(s): mc on 3 items: {ACCURACY} -> {out}/aggregate.json\n"

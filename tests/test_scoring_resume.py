"""The result cache: a killed scoring run, rerun, computes only what is missing and returns the
very numbers an uninterrupted run gives. And the batch halving on a real out-of-memory error."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from factprobe.probes.scoring.cache import CachedScorer, request_key
from factprobe.probes.scoring.requests import GenerateRequest, LoglikelihoodRequest
from scoring_models import real_scorer, tiny_llama

CAPITALS = ["Paris", "Berlin", "Rome", "Madrid", "Vienna", "Bern", "Lisbon", "Oslo", "Warsaw", "Prague"]
COUNTRIES = ["France", "Germany", "Italy", "Spain", "Austria", "Switzerland", "Portugal", "Norway",
             "Poland", "Czechia", "Sweden", "Finland", "Greece", "Ireland", "Hungary", "Denmark"]

SCRIPT = textwrap.dedent("""
    import json, sys, time
    from factprobe.probes.scoring.cache import CachedScorer
    from factprobe.probes.scoring.loader import load_scorer
    from factprobe.probes.scoring.requests import LoglikelihoodRequest
    countries, capitals = json.loads(sys.argv[2]), json.loads(sys.argv[3])
    requests = [LoglikelihoodRequest(f"The capital of {c} is", tuple(" " + x for x in capitals)) for c in countries]
    scorer = CachedScorer(load_scorer(sys.argv[4], device="cpu"), sys.argv[1], chunk=2)
    answers = scorer.loglikelihood(requests)
    print(json.dumps({"computed": scorer.computed, "hits": scorer.hits,
                      "answers": [[s.logprob for s in a] for a in answers]}))
""")


def _run(cache: Path, spec: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(cache), json.dumps(COUNTRIES), json.dumps(CAPITALS), spec],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def _rows(cache: Path) -> int:
    try:
        with sqlite3.connect(cache) as db:
            return db.execute("SELECT count(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_killed_run_resumes_with_identical_numbers(tmp_path):
    spec = "smollm2-135m-instruct"
    real_scorer(spec)  # make sure the GGUF conversion is cached before timing anything
    clean = _run(tmp_path / "clean.sqlite", spec)
    out, err = clean.communicate(timeout=300)
    assert clean.returncode == 0, err
    expected = json.loads(out)
    assert expected["computed"] == len(COUNTRIES)

    killed = _run(tmp_path / "resumed.sqlite", spec)
    deadline = time.time() + 300
    while _rows(tmp_path / "resumed.sqlite") < 4 and time.time() < deadline and killed.poll() is None:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    done = _rows(tmp_path / "resumed.sqlite")
    assert 4 <= done < len(COUNTRIES), f"kill landed at {done} rows; the test needs it midway"

    rerun = _run(tmp_path / "resumed.sqlite", spec)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    resumed = json.loads(out)
    assert resumed["hits"] == done and resumed["computed"] == len(COUNTRIES) - done
    assert resumed["answers"] == expected["answers"]  # exactly, not approximately


def test_cache_keys_cover_everything_that_changes_an_answer(tmp_path):
    scorer = CachedScorer(real_scorer("smollm2-135m-instruct"), tmp_path / "c.sqlite")
    greedy = GenerateRequest("The capital of France is", max_tokens=4)
    sampled = GenerateRequest("The capital of France is", max_tokens=4, temperature=1.0, seed=1)
    reseeded = GenerateRequest("The capital of France is", max_tokens=4, temperature=1.0, seed=2)
    keys = {request_key("generate", r) for r in (greedy, sampled, reseeded)}
    assert len(keys) == 3
    first = scorer.generate([greedy, sampled])
    assert scorer.computed == 2
    assert scorer.generate([sampled, greedy]) == first[::-1]
    assert scorer.computed == 2 and scorer.hits == 2
    request = LoglikelihoodRequest("The capital of France is", (" Paris",))
    assert request_key("loglikelihood", request) != request_key(
        "loglikelihood", LoglikelihoodRequest("The capital of France is ", (" Paris",)))


OOM_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    from factprobe.probes.scoring.loader import load_scorer
    from factprobe.probes.scoring.reference import reference_loglikelihood
    from factprobe.probes.scoring.requests import LoglikelihoodRequest
    scorer = load_scorer("hf:" + sys.argv[1], device="cpu", batch_size=64, memory_budget=1 << 40)
    # the number first: continuations that shared their words would share their tokens too
    continuations = tuple(" " + " ".join([str(i)] + ["word"] * 60) for i in range(64))
    request = LoglikelihoodRequest("The list:", continuations)
    expected = reference_loglikelihood(scorer.model, scorer.tokenizer, request)
    scorer.loglikelihood([LoglikelihoodRequest("warm up", (" the cache",))])
    # Logits of 64 tails x 61 tokens x 49152 entries need 770 MB; allow the process 300 MB more.
    vm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + (300 << 20), resource.RLIM_INFINITY))
    [got] = scorer.loglikelihood([request])
    print(json.dumps({"batch_size": scorer.batch_size,
                      "diff": max(abs(a.logprob - b.logprob) for a, b in zip(got, expected))}))
""")


@pytest.mark.slow
def test_batch_halves_on_out_of_memory_and_still_gives_exact_numbers(tmp_path):
    folder = tiny_llama(tmp_path / "tiny")
    done = subprocess.run([sys.executable, "-c", OOM_SCRIPT, str(folder)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["batch_size"] < 64
    assert result["diff"] <= 1e-4

"""Scoring engine vs one full forward pass per candidate, on the IC-LKE workload (CPU).

    python bench/scoring.py                               # 20 facts x 100 choices, baseline on all
    python bench/scoring.py --facts 3 --baseline-facts 3  # quick check
    python bench/scoring.py --baseline-facts 5            # baseline on 5 facts, compared per fact

The workload is IC-LKE from T-REx-MC ("in-context latent knowledge estimation"), on the shipped
sample graph (kg/data/sample_wikidata.json, ingested into a temporary store) and relation P36
(capital). Each test fact (country, current capital) becomes one request:

  context     --demos lines "Subject<sep>Object" (current capitals of *other* countries, sampled
              and ordered per fact with the seed), joined by "\\n", then "\\n" + the test country;
  candidates  "<sep>" + label for the gold capital and --choices - 1 distractors: labels of other
              P36 objects first, then of other city-like entities of the graph (types Q515 city,
              Q5119 capital, ...), distinct, never the gold label nor any current capital of the
              test country. The sample graph has fewer than 99 such labels; the script says how
              many it found and uses them all.

Model: SmolLM2-135M-Instruct (`load_scorer("smollm2-135m-instruct", device="cpu")`), torch's
default thread count. Loading, the store and a warm-up call of each side are not measured. Then:
  engine    `scorer.loglikelihood(requests)`, one call for all facts (each context encoded once,
            its KV cache shared by its continuations), timed; `scorer.work` counts its tokens;
  baseline  `reference_loglikelihood` per fact (one full forward pass per context + candidate,
            no cache: the approach of the papers' code), on the first --baseline-facts facts.
With fewer baseline facts than facts, times are compared per fact.

Prints both wall-clocks (and per fact), the speed-up (baseline s / engine s; target >= 20x), the
tokens the engine forwarded vs the minimum (each context once + every candidate token; target <=
1.1x), the largest |logprob difference| over all compared continuations (must be <= 1e-4 nats)
and both accuracies (argmax is gold; they must be the same). Writes the figures to
bench/out/scoring.json. The exit status is 0 only when both sides agree and both targets hold.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

import torch
from factprobe.kg.graph import KnowledgeGraph
from factprobe.kg.ingest import ingest
from factprobe.kg.sources.wikidata_json import WikidataJsonSource
from factprobe.kg.store import Store
from factprobe.probes.scoring.loader import load_scorer
from factprobe.probes.scoring.reference import reference_loglikelihood
from factprobe.probes.scoring.requests import LoglikelihoodRequest
from factprobe.probes.scoring.scorer import Work

SPEED_TARGET = 20.0  # baseline seconds / engine seconds, at least
TOKENS_TARGET = 1.1  # engine tokens forwarded / minimum, at most
TOLERANCE = 1e-4  # nats, per continuation
RELATION = "P36"  # capital
CITY_TYPES = ("Q515", "Q5119", "Q1549591", "Q200250", "Q1637706")  # city, capital, big city, metropolis, city with millions
SAMPLE = Path(__file__).resolve().parent.parent / "kg" / "data" / "sample_wikidata.json"


def _qnum(entity_id: str) -> tuple[int, str]:
    return (int(entity_id[1:]) if entity_id[1:].isdigit() else 1 << 62, entity_id)


# ---------------------------------------------------------------------------------------------
# Workload
# ---------------------------------------------------------------------------------------------

def build_store(path: Path) -> None:
    """Ingest the sample graph the way `factprobe sample` does."""
    source = WikidataJsonSource(languages=("en", "de", "fr"))
    with Store(path, languages=source.languages) as st:
        ingest(st, source, SAMPLE)


def current_facts(kg: KnowledgeGraph) -> dict[str, tuple[str, str, set[str]]]:
    """subject -> (subject label, gold object label, labels of all its current objects).

    The gold object is the current one of preferred rank (the highest rank among current
    statements), ties broken by id; subjects or objects without an English label are skipped."""
    best: dict[str, tuple[int, tuple, str]] = {}
    for fact in kg.facts(relation=RELATION, entity_objects_only=True):
        if fact.object not in kg.objects(fact.subject, RELATION):  # ended: not current
            continue
        key = (-fact.rank, _qnum(fact.object))
        if fact.subject not in best or key < best[fact.subject][1]:
            best[fact.subject] = (fact.rank, key, fact.object)
    out = {}
    for subject, (_, _, gold) in best.items():
        s_label, g_label = kg.labels(subject, "en").label, kg.labels(gold, "en").label
        if not s_label or not g_label:
            continue
        true = {kg.labels(o, "en").label for o in kg.objects(subject, RELATION)} - {None}
        out[subject] = (s_label, g_label, true)
    return out


def distractor_pools(kg: KnowledgeGraph) -> tuple[list[str], list[str]]:
    """(labels of P36 objects, labels of other city-like entities), distinct, sorted."""
    objects = {f.object for f in kg.facts(relation=RELATION, entity_objects_only=True)}
    cities = {e for t in CITY_TYPES for e in kg.entities_of_type(t)} - objects - set(CITY_TYPES)
    label = lambda e: kg.labels(e, "en").label  # noqa: E731
    p36 = sorted({label(e) for e in objects} - {None})
    city = sorted({label(e) for e in cities} - {None} - set(p36))
    return p36, city


def build_workload(kg: KnowledgeGraph, n_facts: int, n_demos: int, n_choices: int, sep: str,
                   seed: int) -> tuple[list[dict], dict]:
    facts = current_facts(kg)
    subjects = sorted(facts, key=_qnum)
    random.Random(seed).shuffle(subjects)
    p36_pool, city_pool = distractor_pools(kg)
    items = []
    for subject in subjects[:n_facts]:
        s_label, gold, true = facts[subject]
        rng = random.Random(f"{seed}:{subject}")
        others = [s for s in sorted(facts, key=_qnum) if s != subject]
        demos = rng.sample(others, min(n_demos, len(others)))
        lines = [f"{facts[s][0]}{sep}{facts[s][1]}" for s in demos]
        context = "\n".join(lines) + "\n" + s_label
        banned = true | {gold}
        first = [x for x in p36_pool if x not in banned]
        wanted = n_choices - 1
        chosen = rng.sample(first, min(wanted, len(first)))
        rest = [x for x in city_pool if x not in banned]
        chosen += rng.sample(rest, min(wanted - len(chosen), len(rest)))
        labels = [gold] + chosen
        rng.shuffle(labels)
        items.append({"subject": subject, "subject_label": s_label, "gold": gold,
                      "demos": len(demos), "context": context,
                      "candidates": [sep + x for x in labels], "gold_index": labels.index(gold)})
    info = {"facts_available": len(facts), "p36_object_labels": len(p36_pool),
            "city_labels": len(city_pool)}
    return items, info


# ---------------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------------

def argmax(scores) -> int:
    return max(range(len(scores)), key=lambda k: scores[k].logprob)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=int, default=20, help="test facts (requests)")
    ap.add_argument("--baseline-facts", type=int, default=None,
                    help="run the baseline on only the first N facts and compare per fact (default: all)")
    ap.add_argument("--demos", type=int, default=50, help="in-context lines per request")
    ap.add_argument("--choices", type=int, default=100, help="candidates per request, gold included")
    ap.add_argument("--separator", default=" ", help="between subject and object, and before each candidate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="factprobe-bench-") as tmp:
        store_path = Path(tmp) / "graph.sqlite"
        build_store(store_path)
        with KnowledgeGraph(store_path) as kg:
            items, info = build_workload(kg, args.facts, args.demos, args.choices, args.separator, args.seed)
    n = len(items)
    if n == 0:
        print("no test facts found", file=sys.stderr)
        return 2
    nb = n if args.baseline_facts is None else max(1, min(args.baseline_facts, n))
    if n < args.facts:
        print(f"workload: only {n} facts of {RELATION} with a current object exist (asked {args.facts})")
    demos = sorted({it["demos"] for it in items})
    if demos != [args.demos]:
        print(f"workload: fewer other facts than --demos {args.demos}: using {demos} demos per context")
    choices = sorted({len(it["candidates"]) for it in items})
    if choices != [args.choices]:
        print(f"workload: distractor pool too small for --choices {args.choices} "
              f"({info['p36_object_labels']} P36 object labels + {info['city_labels']} other city labels, "
              f"minus the gold and true ones): {choices} candidates per request, gold included")

    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, torch {torch.__version__}, "
          f"torch threads {torch.get_num_threads()}", flush=True)
    started = time.perf_counter()
    scorer = load_scorer(args.model, device="cpu")
    print(f"model: {scorer.identity} on cpu, loaded in {time.perf_counter() - started:.1f} s (not measured)")
    requests = [LoglikelihoodRequest(it["context"], tuple(it["candidates"])) for it in items]
    context_tokens = [len(scorer.encode(r.context)) for r in requests]
    conts = sum(len(r.continuations) for r in requests)
    print(f"workload: IC-LKE on {RELATION}, {n} facts (seed {args.seed}), {demos[0] if len(demos) == 1 else demos} demos, "
          f"{conts / n:.0f} candidates per fact, context {min(context_tokens)}-{max(context_tokens)} tokens "
          f"(mean {sum(context_tokens) / n:.0f}), separator {args.separator!r}")
    print(f"example: ...{items[0]['context'][-60:]!r} -> gold {items[0]['candidates'][items[0]['gold_index']]!r}, "
          f"e.g. {items[0]['candidates'][:4]}", flush=True)

    # Warm-up (not measured): first calls pay for lazy initialisation and allocations.
    warm = LoglikelihoodRequest(items[0]["context"], tuple(items[0]["candidates"][:4]))
    scorer.loglikelihood([warm])
    reference_loglikelihood(scorer.model, scorer.tokenizer, warm)

    scorer.work = Work()
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    engine = scorer.loglikelihood(requests)
    engine_s = time.perf_counter() - started
    engine_load = (load_before, os.getloadavg()[0])
    work = scorer.work
    print(f"engine:   {engine_s:8.2f} s for {n} facts ({engine_s / n:.3f} s/fact), "
          f"{work.forward_passes} forward passes, {work.tokens_forwarded:,} tokens forwarded "
          f"({work.padding_tokens:,} padding), minimum {work.min_tokens:,}  "
          f"[1-min load {engine_load[0]:.2f} -> {engine_load[1]:.2f}]", flush=True)

    load_before = load_peak = os.getloadavg()[0]
    started = time.perf_counter()
    baseline = []
    for k, request in enumerate(requests[:nb]):
        baseline.append(reference_loglikelihood(scorer.model, scorer.tokenizer, request))
        load_now = os.getloadavg()[0]
        load_peak = max(load_peak, load_now)
        if k + 1 < nb:
            print(f"  baseline: {k + 1}/{nb} facts, {time.perf_counter() - started:.1f} s "
                  f"[1-min load {load_now:.2f}]", flush=True)
    baseline_s = time.perf_counter() - started
    baseline_load = (load_before, os.getloadavg()[0])
    baseline_tokens = sum(len(scorer.split(r.context, c).ids) for r in requests[:nb] for c in r.continuations)
    b_conts = sum(len(r.continuations) for r in requests[:nb])
    print(f"baseline: {baseline_s:8.2f} s for {nb} facts ({baseline_s / nb:.3f} s/fact), "
          f"{b_conts} forward passes, {baseline_tokens:,} tokens forwarded  "
          f"[1-min load {baseline_load[0]:.2f} -> {baseline_load[1]:.2f}]")
    busy = max(engine_load + baseline_load + (load_peak,)) > 1.5 * torch.get_num_threads()
    if busy:
        print(f"warning: other work shared the machine (1-min load peaked at "
              f"{max(engine_load + baseline_load + (load_peak,)):.2f} with {torch.get_num_threads()} torch "
              f"threads): the times, and so the speed-up, are not reliable")

    per_fact = nb < n
    ratio = (baseline_s / nb) / (engine_s / n) if per_fact else baseline_s / engine_s
    tokens_ratio = work.tokens_forwarded / work.min_tokens
    diffs = [abs(e.logprob - b.logprob) for er, br in zip(engine, baseline) for e, b in zip(er, br)]
    max_diff = max(diffs)
    token_mismatch = sum(e.n_tokens != b.n_tokens for er, br in zip(engine, baseline) for e, b in zip(er, br))
    greedy_mismatch = sum(e.is_greedy != b.is_greedy for er, br in zip(engine, baseline) for e, b in zip(er, br))
    engine_hits = [argmax(s) == it["gold_index"] for s, it in zip(engine, items)]
    base_hits = [argmax(s) == it["gold_index"] for s, it in zip(baseline, items)]
    same_argmax = sum(argmax(e) == argmax(b) for e, b in zip(engine, baseline))
    engine_acc = sum(engine_hits) / n
    engine_acc_b = sum(engine_hits[:nb]) / nb
    base_acc = sum(base_hits) / nb

    agree = max_diff <= TOLERANCE and token_mismatch == 0 and engine_hits[:nb] == base_hits
    speed_ok = ratio >= SPEED_TARGET
    tokens_ok = tokens_ratio <= TOKENS_TARGET
    print(f"speed-up baseline/engine{' (per fact: baseline on ' + str(nb) + ' of ' + str(n) + ' facts)' if per_fact else ''}: "
          f"{ratio:.1f}x  target >= {SPEED_TARGET:g}x: {'PASS' if speed_ok else 'FAIL'}")
    print(f"tokens engine/minimum: {work.tokens_forwarded:,} / {work.min_tokens:,} = {tokens_ratio:.3f}  "
          f"target <= {TOKENS_TARGET}: {'PASS' if tokens_ok else 'FAIL'}  "
          f"(baseline/minimum on its facts: {baseline_tokens / max(1, _min_tokens(scorer, requests[:nb])):.1f})")
    print(f"max |logprob engine - baseline|: {max_diff:.2e} nats over {len(diffs)} continuations "
          f"(mean {sum(diffs) / len(diffs):.1e}), n_tokens mismatches {token_mismatch}, "
          f"is_greedy mismatches {greedy_mismatch}  tolerance {TOLERANCE:g}: {'PASS' if agree else 'FAIL'}")
    print(f"accuracy: engine {sum(engine_hits)}/{n} = {engine_acc:.3f}"
          f"{f' ({sum(engine_hits[:nb])}/{nb} = {engine_acc_b:.3f} on the baseline facts)' if per_fact else ''}, "
          f"baseline {sum(base_hits)}/{nb} = {base_acc:.3f}; same argmax on {same_argmax}/{nb} facts"
          f" (chance {1 / (conts / n):.3f})")

    summary = {
        "bench": "scoring", "workload": "IC-LKE", "relation": RELATION, "model": scorer.identity,
        "device": "cpu", "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__, "seed": args.seed, "facts": n, "baseline_facts": nb,
        "demos": demos, "candidates_per_fact": choices, "separator": args.separator,
        "context_tokens_mean": round(sum(context_tokens) / n, 1),
        "engine_seconds": round(engine_s, 3), "engine_seconds_per_fact": round(engine_s / n, 4),
        "baseline_seconds": round(baseline_s, 3), "baseline_seconds_per_fact": round(baseline_s / nb, 4),
        "speedup": round(ratio, 2), "speedup_per_fact": per_fact, "speedup_target": SPEED_TARGET,
        "engine_forward_passes": work.forward_passes, "engine_tokens": work.tokens_forwarded,
        "engine_padding_tokens": work.padding_tokens, "min_tokens": work.min_tokens,
        "tokens_ratio": round(tokens_ratio, 4), "tokens_target": TOKENS_TARGET,
        "baseline_tokens": baseline_tokens,
        "load_avg_engine": [round(x, 2) for x in engine_load],
        "load_avg_baseline": [round(x, 2) for x in baseline_load], "load_avg_baseline_peak": round(load_peak, 2),
        "busy": busy,
        "max_abs_diff": max_diff, "tolerance": TOLERANCE, "n_tokens_mismatches": token_mismatch,
        "is_greedy_mismatches": greedy_mismatch,
        "engine_accuracy": round(engine_acc, 4), "engine_accuracy_on_baseline_facts": round(engine_acc_b, 4),
        "baseline_accuracy": round(base_acc, 4), "same_argmax": same_argmax,
        "agree": agree, "speed_pass": speed_ok, "tokens_pass": tokens_ok, **info,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scoring.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary))
    if not agree:
        print("FAIL: the engine and the baseline disagree", file=sys.stderr)
        return 1
    return 0 if speed_ok and tokens_ok else 1


def _min_tokens(scorer, requests) -> int:
    """Each context once plus every candidate token, as the engine counts it (without running it)."""
    total = 0
    for r in requests:
        ctx = scorer.encode(r.context)
        splits = [scorer.split(r.context, c, ctx) for c in r.continuations]
        shared = min(s.split for s in splits)
        total += shared + sum(len(s.ids) - shared for s in splits)
    return total


if __name__ == "__main__":
    sys.exit(main())

"""ApprOpt distractor search: KV-cached beam search vs the same search without a cache (CPU).

    python bench/appropt.py                          # n=5, 400 candidates, 16 prompts, SmolLM2
    python bench/appropt.py --n 10 --prompts 4       # wider beam, fewer prompts

What is measured. For each prompt "The capital of <country> is", ApprOpt returns the n candidate
entities whose labels (" " + label + EOS) the model finds most probable, by beam search of width n
constrained to a token trie of the candidate labels (factprobe.probes.scoring.appropt). Three runs
of the same search on the same prompts, in one process:
  uncached  `appropt_uncached`: every beam at every step forwards prompt + prefix through the
            whole model, one pass per beam, no cache, one prompt after the other (how the paper's
            code runs it, at 17-19 s per fact on GPT2-XL): the baseline;
  cached    `appropt_search`, one prompt at a time: the prompt is forwarded once; each step feeds
            only the token each live beam took (and the tokens the trie forces after it), batched
            over the beams, on top of a KV cache reordered to follow them;
  batched   `appropt_many` with --batch prompts per forward pass, as `factprobe distractors add`
            runs ApprOpt over a facts file: the same cached search for many facts in lockstep.
All three must return identical hits (same entities and labels in the same order, log-probs
within 5e-4 nats); the run fails otherwise. The candidates are real capitals and cities (some
with an alias) plus generated plausible city names ("San Teodoro", "Port Kessin", ...), so labels
share prefixes and span one to several tokens. The trie is built once (not measured; its build
time is reported) and a warm-up of each kind runs before the clocks start.

Target: uncached seconds / batched seconds >= 5 at n=5 (the cached search as the toolkit runs
it). The one-prompt-at-a-time ratio is printed too. Prints the wall-clocks, the ratios, the
forward passes and tokens each run computed, and writes the figures to bench/out/appropt.json.
The exit status is 0 only when the outputs agree and the target holds.

What bounds the ratios on a CPU: a SmolLM2 pass costs about 70 ms plus about 2 ms per token here
(2 cores). One prompt at a time, the cached search needs about 3 passes (the prompt, the first
step, one more once the trie forces the rest) against the uncached search's ~15 (one per live
beam per step), so that ratio is about 4-5. Batched, 16 prompts share each pass and the cost is
the tokens: ~6 passes for all 16.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

import torch
from factprobe.probes.scoring.appropt import ApprOptQuery, TrieCache, appropt_many, prompt_ids
from factprobe.probes.scoring.loader import load_scorer

SPEED_TARGET = 5.0
TOLERANCE = 5e-4  # nats: float32 passes of other shapes (batch, padding) round differently

# (country, capital, aliases of the capital): the prompts come from the first columns, the
# candidates from all of them.
CAPITALS = [
    ("France", "Paris", ()), ("Japan", "Tokyo", ()), ("Italy", "Rome", ()), ("Chile", "Santiago", ()),
    ("Egypt", "Cairo", ()), ("Canada", "Ottawa", ()), ("Kenya", "Nairobi", ()), ("Peru", "Lima", ()),
    ("Norway", "Oslo", ()), ("Vietnam", "Hanoi", ()), ("Germany", "Berlin", ()), ("Spain", "Madrid", ()),
    ("Portugal", "Lisbon", ()), ("Poland", "Warsaw", ()), ("Austria", "Vienna", ("Wien",)),
    ("Hungary", "Budapest", ()), ("Czechia", "Prague", ()), ("Greece", "Athens", ()),
    ("Sweden", "Stockholm", ()), ("Finland", "Helsinki", ()), ("Denmark", "Copenhagen", ()),
    ("Ireland", "Dublin", ()), ("Belgium", "Brussels", ()), ("Netherlands", "Amsterdam", ()),
    ("Switzerland", "Bern", ()), ("Ukraine", "Kyiv", ("Kiev",)), ("Russia", "Moscow", ()),
    ("Turkey", "Ankara", ()), ("Iran", "Tehran", ()), ("Iraq", "Baghdad", ()), ("Israel", "Jerusalem", ()),
    ("Saudi Arabia", "Riyadh", ()), ("India", "New Delhi", ()), ("Pakistan", "Islamabad", ()),
    ("Bangladesh", "Dhaka", ()), ("China", "Beijing", ("Peking",)), ("South Korea", "Seoul", ()),
    ("Thailand", "Bangkok", ()), ("Indonesia", "Jakarta", ()), ("Philippines", "Manila", ()),
    ("Malaysia", "Kuala Lumpur", ()), ("Mongolia", "Ulaanbaatar", ("Ulan Bator",)),
    ("Australia", "Canberra", ()), ("New Zealand", "Wellington", ()), ("United States", "Washington, D.C.", ("Washington",)),
    ("Mexico", "Mexico City", ()), ("Cuba", "Havana", ()), ("Costa Rica", "San José", ()),
    ("Colombia", "Bogotá", ()), ("Venezuela", "Caracas", ()), ("Ecuador", "Quito", ()),
    ("Bolivia", "Sucre", ()), ("Argentina", "Buenos Aires", ()), ("Uruguay", "Montevideo", ()),
    ("Paraguay", "Asunción", ()), ("Brazil", "Brasília", ()), ("Nigeria", "Abuja", ()),
    ("Ghana", "Accra", ()), ("Senegal", "Dakar", ()), ("Morocco", "Rabat", ()), ("Algeria", "Algiers", ()),
    ("Tunisia", "Tunis", ()), ("Ethiopia", "Addis Ababa", ()), ("Tanzania", "Dodoma", ()),
    ("Uganda", "Kampala", ()), ("South Africa", "Pretoria", ()), ("Zimbabwe", "Harare", ()),
    ("Angola", "Luanda", ()), ("San Marino", "San Marino", ("City of San Marino",)),
    ("El Salvador", "San Salvador", ()), ("Puerto Rico", "San Juan", ()), ("Iceland", "Reykjavík", ()),
    ("Estonia", "Tallinn", ()), ("Latvia", "Riga", ()), ("Lithuania", "Vilnius", ()),
    ("Romania", "Bucharest", ()), ("Bulgaria", "Sofia", ()), ("Serbia", "Belgrade", ()),
    ("Croatia", "Zagreb", ()), ("Slovenia", "Ljubljana", ()), ("Slovakia", "Bratislava", ()),
    ("Nepal", "Kathmandu", ()), ("Sri Lanka", "Sri Jayawardenepura Kotte", ("Kotte",)),
    ("Afghanistan", "Kabul", ()), ("Kazakhstan", "Astana", ()), ("Uzbekistan", "Tashkent", ()),
    ("Syria", "Damascus", ()), ("Lebanon", "Beirut", ()), ("Jordan", "Amman", ()), ("Qatar", "Doha", ()),
]
# Big cities that are not capitals: plausible wrong answers that share words with capitals.
CITIES = ["Lyon", "Marseille", "Osaka", "Milan", "Naples", "Valparaíso", "Alexandria", "Toronto",
          "Montreal", "Sydney", "Melbourne", "Auckland", "New York", "Los Angeles", "San Francisco",
          "San Diego", "Santiago de Compostela", "Barcelona", "Porto", "Munich", "Hamburg", "Frankfurt",
          "Zurich", "Geneva", "Istanbul", "Mumbai", "Kolkata", "Shanghai", "Hong Kong", "Busan",
          "Ho Chi Minh City", "Rio de Janeiro", "São Paulo", "Lagos", "Casablanca", "Johannesburg",
          "Cape Town", "St. Petersburg", "Saint-Étienne", "Santa Cruz", "New Orleans", "Port Said"]

_STARTS = ["San ", "Santa ", "Port ", "New ", "Saint-", "Novo ", "Bad ", "Fort ", "", "", "", "", ""]
_SYLLABLES = ["val", "mor", "ka", "bri", "ton", "les", "san", "dor", "ve", "lin", "ra", "kes", "sin",
              "bra", "sk", "ost", "ia", "gard", "ber", "mon", "tre", "lu", "na", "cas", "tel", "o", "ri"]


def generated_city_names(count: int, seed: int, taken: set[str]) -> list[str]:
    """Plausible, distinct city names from syllables, some behind shared words ("San ", "Port ")."""
    rng = random.Random(seed)
    names: list[str] = []
    seen = set(taken)
    while len(names) < count:
        stem = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        name = rng.choice(_STARTS) + stem.capitalize()
        if name not in seen and len(stem) >= 4:
            seen.add(name)
            names.append(name)
    return names


def candidate_set(size: int, seed: int) -> dict[str, list[str]]:
    """entity id -> names: the capitals (with aliases), the cities, then generated names."""
    candidates: dict[str, list[str]] = {}
    for k, (_, capital, aliases) in enumerate(CAPITALS):
        candidates[f"C{k:03d}"] = [capital, *aliases]
    for k, city in enumerate(CITIES):
        candidates[f"T{k:03d}"] = [city]
    taken = {n for names in candidates.values() for n in names}
    for k, name in enumerate(generated_city_names(max(0, size - len(candidates)), seed, taken)):
        candidates[f"G{k:04d}"] = [name]
    return dict(list(candidates.items())[:size])


def prompt_texts(count: int, demos: int) -> list[str]:
    """"The capital of <country> is" for the first `count` countries, each after `demos` lines
    "The capital of <other country> is <capital>." (other countries, from the end of the list)."""
    out = []
    for country, _, _ in CAPITALS[:count]:
        others = [c for c in reversed(CAPITALS) if c[0] != country][:demos]
        lines = [f"The capital of {c} is {cap}." for c, cap, _ in others]
        out.append("\n".join([*lines, f"The capital of {country} is"]))
    return out


def _load() -> float:
    return os.getloadavg()[0]


def run(n: int = 5, candidates: int = 400, prompts: int = 16, spec: str = "smollm2-135m-instruct",
        seed: int = 0, demos: int = 0, batch: int = 16) -> dict:
    """Measure both searches on the same prompts; raise AssertionError if their outputs differ."""
    started = time.perf_counter()
    scorer = load_scorer(spec, device="cpu", dtype="float32")
    load_s = time.perf_counter() - started
    cands = candidate_set(candidates, seed)
    questions = prompt_texts(prompts, demos)
    tries = TrieCache(on_disk=False)
    started = time.perf_counter()
    trie = tries.get(scorer, "bench-cities", cands)
    build_s = time.perf_counter() - started
    name_tokens = [len(p.tokens) for p in trie.paths]

    # Warm-up (not measured): the first calls pay for lazy initialisation and allocations.
    queries = [ApprOptQuery(q, trie, n) for q in questions]
    appropt_many(scorer, queries[:2], batch_size=batch)
    appropt_many(scorer, queries[:1], cached=False)

    results = {}
    for side, options in (("uncached", {"cached": False}), ("cached", {"batch_size": 1}),
                          ("batched", {"batch_size": batch})):
        load_before = _load()
        passes, tokens = scorer.work.forward_passes, scorer.work.tokens_forwarded
        started = time.perf_counter()
        found = appropt_many(scorer, queries, **options)
        seconds = time.perf_counter() - started
        passes, tokens = scorer.work.forward_passes - passes, scorer.work.tokens_forwarded - tokens
        results[side] = {"seconds": seconds, "found": found, "load": (load_before, _load()),
                         "passes": passes, "tokens": tokens}
        print(f"{side:9s} {seconds:8.2f} s for {len(questions)} prompts ({seconds / len(questions):.3f} s/prompt), "
              f"{passes} forward passes, {tokens:,} tokens  [1-min load {load_before:.2f} -> {_load():.2f}]",
              flush=True)

    max_diff = 0.0
    for side in ("cached", "batched"):
        for question, a, b in zip(questions, results[side]["found"], results["uncached"]["found"]):
            keys_a = [(h.entity, h.name) for h in a.hits]
            keys_b = [(h.entity, h.name) for h in b.hits]
            assert keys_a == keys_b, f"{question!r}: {side} {keys_a} != uncached {keys_b}"
            for x, y in zip(a.hits, b.hits):
                max_diff = max(max_diff, abs(x.logprob - y.logprob))
    assert max_diff <= TOLERANCE, f"log-probs differ by {max_diff:.2e} nats"

    seconds = {side: results[side]["seconds"] for side in results}
    loads = [x for side in results for x in results[side]["load"]]
    cached_found = results["cached"]["found"]
    speedup = seconds["uncached"] / seconds["batched"]
    return {
        "bench": "appropt", "model": scorer.identity, "device": "cpu", "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
        "python": platform.python_version(), "seed": seed, "n": n, "prompts": len(questions), "demos": demos,
        "batch": batch,
        "prompt_tokens_mean": round(sum(len(prompt_ids(scorer, q)) for q in questions) / len(questions), 1),
        "candidates": len(cands), "names": len(trie.paths), "trie_nodes": len(trie),
        "name_tokens_mean": round(sum(name_tokens) / len(name_tokens), 2), "name_tokens_max": max(name_tokens),
        "model_load_seconds": round(load_s, 2), "trie_build_seconds": round(build_s, 3),
        **{f"{side}_seconds": round(seconds[side], 3) for side in results},
        **{f"{side}_seconds_per_prompt": round(seconds[side] / len(questions), 4) for side in results},
        **{f"{side}_forward_passes": results[side]["passes"] for side in results},
        **{f"{side}_tokens": results[side]["tokens"] for side in results},
        "speedup": round(speedup, 2), "speedup_one_prompt_at_a_time": round(seconds["uncached"] / seconds["cached"], 2),
        "speedup_target": SPEED_TARGET, "speed_pass": speedup >= SPEED_TARGET,
        "steps_mean": round(sum(r.stats.steps for r in cached_found) / len(questions), 2),
        "identical_hits": True, "max_abs_diff": max_diff, "tolerance": TOLERANCE,
        "load_avg": [round(x, 2) for x in loads], "busy": max(loads) > 1.5 * torch.get_num_threads(),
        "hits": {q: [[h.entity, h.name, round(h.logprob, 4)] for h in r.hits]
                 for q, r in zip(questions, cached_found)},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=5, help="beam width = distractors per prompt")
    ap.add_argument("--candidates", type=int, default=400, help="candidate entities in the trie")
    ap.add_argument("--batch", type=int, default=16, help="prompts per forward pass in the batched run")
    ap.add_argument("--prompts", type=int, default=16, help=f"prompts (at most {len(CAPITALS)})")
    ap.add_argument("--demos", type=int, default=0,
                    help='lines "The capital of <other> is <capital>." before each prompt (default 0: bare cloze)')
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    args = ap.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, torch {torch.__version__}, "
          f"torch threads {torch.get_num_threads()}", flush=True)
    try:
        summary = run(args.n, args.candidates, args.prompts, args.model, args.seed, args.demos, args.batch)
    except AssertionError as error:
        print(f"FAIL: cached and uncached searches disagree: {error}", file=sys.stderr)
        return 1
    print(f"workload: {summary['prompts']} prompts ({summary['demos']} demonstration lines, "
          f"{summary['prompt_tokens_mean']} tokens on average), {summary['candidates']} candidates "
          f"({summary['names']} names, {summary['trie_nodes']} trie nodes, {summary['name_tokens_mean']} tokens "
          f"per name on average, at most {summary['name_tokens_max']}), n={summary['n']}; trie built in "
          f"{summary['trie_build_seconds']} s, model loaded in {summary['model_load_seconds']} s (not measured)")
    first = next(iter(summary["hits"].items()))
    print(f"example: {first[0]!r} -> {[name for _, name, _ in first[1]]}")
    print(f"one prompt at a time: cached {summary['cached_seconds']:.2f} s, uncached "
          f"{summary['uncached_seconds']:.2f} s: {summary['speedup_one_prompt_at_a_time']:.1f}x")
    print(f"batched ({summary['batch']} prompts a pass) {summary['batched_seconds']:.2f} s, uncached "
          f"{summary['uncached_seconds']:.2f} s: speed-up {summary['speedup']:.1f}x  target >= {SPEED_TARGET:g}x: "
          f"{'PASS' if summary['speed_pass'] else 'FAIL'}; identical hits, max |logprob diff| "
          f"{summary['max_abs_diff']:.1e} nats")
    if summary["busy"]:
        print(f"warning: other work shared the machine (1-min load up to {max(summary['load_avg']):.2f} with "
              f"{summary['torch_threads']} torch threads): the times, and so the speed-up, are not reliable")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "appropt.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    return 0 if summary["speed_pass"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""EIC-LKE with and without block reuse of nested contexts, on a real model, in one run.

One window of `--examples` + 1 test facts (country: capital lines, then made-up places so the
window can be longer than the capital list), `--choices` choices per fact, scored in runner-sized
batches. Both modes run `--repeats` times, interleaved, so load from other work hits both alike;
the fastest run of each is compared. Prints seconds, tokens forwarded, forward passes, whether
every prediction agrees and the largest gold log-probability difference, and the ratio.

    python bench/eic_lke.py                      # smollm2, 50 examples, 100 choices
    python bench/eic_lke.py --model gemma3-270m --examples 20

Seen on the 2-core development machine (SmolLM2, CPU, 51 facts, batch 16):
  --choices 20:  one pass 12,218 tokens, 18.0 / 18.3 s; reuse 4,858 tokens, 13.6 / 13.6 s: 1.32x
  --choices 100: one pass 31,200 tokens, 49.5 s; reuse 23,840 tokens, 47.6 s: 1.04x
Predictions identical, gold log-probabilities within 3.5e-5.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from factprobe.probes.methods import MethodContext  # noqa: E402
from factprobe.probes.methods.eic_lke import EICLKE  # noqa: E402
from factprobe.probes.methods.ic_lke import fictitious_name  # noqa: E402
from factprobe.probes.scoring.loader import load_scorer  # noqa: E402
from test_eval import CAPITALS  # noqa: E402


def facts(count: int, choices: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    pairs = list(CAPITALS) + [(fictitious_name(rng), fictitious_name(rng, 2)) for _ in range(max(0, count - 30))]
    objects = [o for _, o in pairs] + [fictitious_name(rng, 2) for _ in range(choices)]
    items = []
    for k, (subject, gold) in enumerate(pairs[:count]):
        others = rng.sample([o for o in objects if o != gold], choices - 1)
        items.append({"id": f"f{k:03d}", "relation": "P36", "subject_label": subject, "choices": [gold, *others],
                      "answer_index": 0})
    return items


def run(scorer, items: list[dict], examples: int, reuse: bool, batch: int) -> dict:
    # the chain construction, the one these figures were measured on (the paper's is the default)
    method = EICLKE(MethodContext({"construction": "chain", "examples": examples, "separator": ": ",
                                   "reuse_prefix": reuse}, seed=0, tests={"P36": items}))
    ordered = method.order(items)
    tokens, passes = scorer.work.tokens_forwarded, scorer.work.forward_passes
    start = time.perf_counter()
    records = []
    for k in range(0, len(ordered), batch):
        records += method.run(scorer, ordered[k:k + batch])
    return {"seconds": time.perf_counter() - start, "tokens": scorer.work.tokens_forwarded - tokens,
            "passes": scorer.work.forward_passes - passes, "records": records}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--examples", type=int, default=50)
    parser.add_argument("--choices", type=int, default=100)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    scorer = load_scorer(args.model)
    items = facts(args.examples + 1, args.choices)
    runs = {False: [], True: []}
    for _ in range(args.repeats):
        for reuse in (False, True):
            runs[reuse].append(run(scorer, items, args.examples, reuse, args.batch))
            print(f"{'reuse' if reuse else 'one pass'}: {runs[reuse][-1]['seconds']:.1f} s", file=sys.stderr,
                  flush=True)
    best = {reuse: min(r, key=lambda x: x["seconds"]) for reuse, r in runs.items()}
    one_pass, blocks = best[False]["records"], best[True]["records"]
    report = {
        "model": args.model, "device": str(scorer.device), "facts": len(items), "choices": args.choices,
        "batch": args.batch,
        **{("reuse" if reuse else "one_pass"): {k: v for k, v in b.items() if k != "records"}
           | {"all_seconds": [round(r["seconds"], 2) for r in runs[reuse]]} for reuse, b in best.items()},
        "same_predictions": [r["predicted_index"] for r in one_pass] == [r["predicted_index"] for r in blocks],
        "max_gold_logprob_difference": max(abs(a["gold_logprob"] - b["gold_logprob"])
                                           for a, b in zip(one_pass, blocks)),
        "accuracy": sum(r["correct"] for r in blocks) / len(blocks),
        "speedup": best[False]["seconds"] / best[True]["seconds"],
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

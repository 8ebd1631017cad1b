"""Beam search: factprobe's scorer against transformers' `generate(num_beams=B)`, on the same
clozes, the same model object and thread count, in one run.

    python bench/beams.py                       # SmolLM2, B = 5 and 10, 30 clozes, 6 new tokens
    python bench/beams.py --beams 5 --clozes 10 --repeat 1
    python bench/beams.py --model gemma

The baselines method (probes/methods/baselines.py) asks each cloze for its B beams with no length
penalty and no stop string, as the distractor paper does; this bench asks the same of both sides:

- factprobe: `scorer.generate([GenerateRequest(cloze, max_tokens=T, beams=B, n=B)])`, a cloze at a
  time (the method's call); the prompt prefilled once, the live beams one batch over a KV cache
  whose rows follow their parents, stopped once no live beam can enter the top B
  (probes/scoring/hf_generation.py).
- transformers: `model.generate(ids, num_beams=B, num_return_sequences=B, max_new_tokens=T,
  length_penalty=0.0, early_stopping="never", do_sample=False)` with the same end-of-sequence ids:
  summed log-probabilities, and the search ends only when nothing live can do better, which is
  the same exact top-B that factprobe's early stop gives.

The clozes are bench/peer_workloads.py's ll-plain contexts ("The capital of Canada is") from the
shipped sample graph. Agreement: per cloze, the B texts in order (identical k/n), and the summed
log-probability transformers reports for each of its beams against a slow reference (one plain
forward over prompt + beam, float64 log-softmax) within 1e-4 nats. Timing: --repeat alternating
runs of each side, the fastest of each compared; a warm-up cloze runs first on each side. The last
line is a JSON summary (also bench/out/beams.json); exit 0 only when factprobe is at least as fast
at every B and the texts agree.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peer_workloads as pw  # noqa: E402
import torch  # noqa: E402

MODELS = {"smollm2": "smollm2-135m-instruct", "gemma": "gemma3-270m"}
TOLERANCE = 1e-4  # nats per beam


def clozes(n: int, seed: int) -> list[str]:
    graph = pw.load_graph()
    return [request.context for request in pw.ll_plain(graph, n, seed).requests]


def run_factprobe(scorer, prompts: list[str], beams: int, max_tokens: int) -> list[tuple[str, ...]]:
    from factprobe.probes.scoring.requests import GenerateRequest

    return [scorer.generate([GenerateRequest(p, max_tokens=max_tokens, beams=beams, n=beams)])[0].texts
            for p in prompts]


def prompt_ids(scorer, prompt: str) -> list[int]:
    return scorer.encode(prompt) or [scorer.start_id]


@torch.inference_mode()
def run_transformers(scorer, prompts: list[str], beams: int, max_tokens: int, eos: list[int]):
    """Per cloze: (texts, token ids of each beam's continuation, the scores transformers gives)."""
    out = []
    for prompt in prompts:
        ids = torch.tensor([prompt_ids(scorer, prompt)])
        found = scorer.model.generate(
            ids, attention_mask=torch.ones_like(ids), num_beams=beams, num_return_sequences=beams,
            max_new_tokens=max_tokens, length_penalty=0.0, early_stopping="never", do_sample=False,
            eos_token_id=eos, pad_token_id=scorer.pad_id, output_scores=True, return_dict_in_generate=True)
        continuations = [[t for t in row[ids.shape[1]:].tolist() if t not in eos] for row in found.sequences]
        texts = tuple(scorer.tokenizer.decode(c, skip_special_tokens=True) for c in continuations)
        out.append((texts, continuations, found.sequences_scores.tolist()))
    return out


@torch.inference_mode()
def reference_score(scorer, prompt: str, continuation: list[int], ended: bool, eos: list[int]) -> float:
    """The summed log-probability of `continuation` (and of the end-of-sequence token that closed
    it, where one did) after `prompt`: one plain forward, float64 log-softmax."""
    context = prompt_ids(scorer, prompt)
    tokens = continuation + ([eos[0]] if ended else [])
    if not tokens:
        return 0.0
    logits = scorer.model(input_ids=torch.tensor([context + tokens])).logits[0].double()
    logprobs = torch.log_softmax(logits[len(context) - 1:-1], dim=-1)
    return float(sum(logprobs[k, t] for k, t in enumerate(tokens)))


def timed(fn):
    started = time.perf_counter()
    answer = fn()
    return answer, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="smollm2", help="smollm2, gemma, or any spec load_scorer takes")
    ap.add_argument("--beams", type=int, nargs="+", default=[5, 10])
    ap.add_argument("--clozes", type=int, default=30)
    ap.add_argument("--max-tokens", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("bench/out/beams.json"))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    import transformers
    from factprobe.probes.scoring.loader import load_scorer
    from factprobe.probes.scoring.tokens import eos_ids

    scorer = load_scorer(MODELS.get(args.model, args.model), device="cpu", dtype="float32")
    eos = sorted(eos_ids(scorer.tokenizer, scorer.model))
    prompts = clozes(args.clozes, args.seed)
    print(f"model {scorer.identity}; torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{args.threads} threads; {len(prompts)} clozes, <= {args.max_tokens} new tokens; eos {eos}", flush=True)
    run_factprobe(scorer, prompts[:1], 2, 2)
    run_transformers(scorer, prompts[:1], 2, 2, eos)

    rows, ok = [], True
    for beams in args.beams:
        fp_times, hf_times, fp_texts, hf_found = [], [], None, None
        load = os.getloadavg()[0]
        for _ in range(max(1, args.repeat)):
            fp_texts, seconds = timed(lambda: run_factprobe(scorer, prompts, beams, args.max_tokens))
            fp_times.append(seconds)
            hf_found, seconds = timed(lambda: run_transformers(scorer, prompts, beams, args.max_tokens, eos))
            hf_times.append(seconds)
        same = sum(f == h[0] for f, h in zip(fp_texts, hf_found))
        worst = 0.0
        for prompt, (_, continuations, scores) in zip(prompts, hf_found):
            for tokens, score in zip(continuations, scores):
                ended = len(tokens) < args.max_tokens
                worst = max(worst, abs(reference_score(scorer, prompt, tokens, ended, eos) - score))
        fp, hf = min(fp_times), min(hf_times)
        row = {"beams": beams, "clozes": len(prompts), "factprobe_s": round(fp, 3), "transformers_s": round(hf, 3),
               "ratio": round(hf / fp, 2), "factprobe_s_per_cloze": round(fp / len(prompts), 4),
               "texts_identical": f"{same}/{len(prompts)}", "transformers_vs_reference_max_nats": worst,
               "load": round(load, 2)}
        rows.append(row)
        passed = hf / fp >= 1.0 and same == len(prompts)
        ok &= passed
        print(f"B={beams}: factprobe {fp:.2f} s ({fp / len(prompts) * 1000:.0f} ms/cloze), transformers {hf:.2f} s, "
              f"ratio {hf / fp:.2f}x; beams identical on {same}/{len(prompts)} clozes; transformers' scores vs the "
              f"reference: max {worst:.2e} nats; load {load:.2f}; {'PASS' if passed else 'FAIL'}", flush=True)
        for prompt, f, h in zip(prompts, fp_texts, hf_found):
            if f != h[0]:
                print(f"  differs: {prompt!r}\n    factprobe    {list(f)}\n    transformers {list(h[0])}")
                break
    args.out.parent.mkdir(parents=True, exist_ok=True)
    summary = {"model": scorer.identity, "max_tokens": args.max_tokens, "rows": rows, "pass": ok}
    args.out.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

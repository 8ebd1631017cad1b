"""factprobe's scorer vs lm-evaluation-harness's HFLM: the same requests, the same model object,
dtype and thread count, in one run.

    python bench/peer.py                               # SmolLM2, every workload, full sizes
    python bench/peer.py --quick                       # smoke test: a few requests per workload
    python bench/peer.py --workloads kdf-own,gen-plain --scale 0.5
    python bench/peer.py --model gemma --threads 2

Needs lm-evaluation-harness (`pip install -e ".[bench]"`, which brings `lm_eval`).

The model is loaded once, by `load_scorer(spec, device="cpu", dtype="float32")`; lm-eval's
`HFLM(pretrained=scorer.model, tokenizer=scorer.tokenizer, batch_size=...)` wraps that very model
object, so both sides run the same weights. `torch.set_num_threads(--threads)` is set before
anything runs. Workloads (bench/peer_workloads.py builds them from the shipped sample graph and
relation templates, in factprobe's own prompt formats):

  kdf-own      KDF: 5 answered A-D questions (each item its own draw), then the question; " A".." D"
  kdf-shared   the same with one demonstration block shared by all items
  iclke-fixed  IC-LKE with fixed examples: 50 "subject object" lines per relation, the subject,
               100 choices as continuations
  gen-shared   BELIEF-ICL prompts: instruction + 4 shared Q/A demonstrations, the question; greedy,
               <= 8 tokens, stop at "\\n"
  gen-sampled  the gen-shared prompts, n=10 samples at temperature 1 (lm-eval: 10 repeated
               do_sample instances); different random streams, so only time is compared
  gen-plain    "Q: <question>\\nA:", nothing shared; greedy
  ll-plain     short cloze contexts ("The capital of Canada is"), 2-3 continuations

Each side answers the whole workload in one call (`scorer.loglikelihood` / `scorer.generate`;
`HFLM.loglikelihood` / `HFLM.generate_until`), timed (with --repeat N, N alternating runs of each
side and the fastest of each compared; answers from the first); one small warm-up call of each
kind runs first on each side and is not measured. Printed per workload: both times, the ratio lm-eval s /
factprobe s, the agreement (max |delta logprob| over every continuation, or greedy texts identical
k/n), factprobe's forward passes and tokens (`scorer.work`) and lm-eval's (counted by a forward
pre-hook on the model while lm-eval runs), then PASS/FAIL against the targets:

  speed      never slower than lm-eval (ratio >= 1) on every workload; >= 1.5x on kdf-own and
             gen-plain; >= 3x on kdf-shared, gen-shared and gen-sampled; >= 5x on iclke-fixed
  agreement  every continuation within 1e-4 nats; every greedy text identical

Beside the ratio, each workload's share of this machine's matmul limit (bench/peak.py): the model
FLOPs of the tokens factprobe fed (a floor: 2 x the decoder's parameters x the tokens not padding)
over its time, over a float32 GEMM peak measured at the start of the same run; the workload
furthest from the limit is named with the likeliest reason read from its counts.

The last line is the JSON summary (also written to bench/out/peer.json). Exit status 0 only when
every target holds. With --quick the sizes are too small for the speed targets to mean anything.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peak  # noqa: E402
import peer_workloads as pw  # noqa: E402
import torch  # noqa: E402

MODELS = {"smollm2": "smollm2-135m-instruct", "gemma": "gemma3-270m"}
SPEED_TARGETS = {"kdf-own": 1.5, "kdf-shared": 3.0, "iclke-fixed": 5.0, "gen-shared": 3.0, "gen-sampled": 3.0,
                 "gen-plain": 1.5, "ll-plain": 1.0}
TOLERANCE = 1e-4  # nats, per continuation


class ForwardCounter:
    """Counts the model's forward calls and the positions they feed (rows x width, padding
    included) while active: lm-eval's side of `scorer.work`."""

    def __init__(self, model) -> None:
        self.model, self.passes, self.tokens, self._handle = model, 0, 0, None

    def _hook(self, module, args, kwargs):
        ids = kwargs.get("input_ids") if kwargs.get("input_ids") is not None else (args[0] if args else None)
        if ids is not None:
            self.passes += 1
            self.tokens += ids.numel()

    def __enter__(self):
        self.passes = self.tokens = 0
        self._handle = self.model.register_forward_pre_hook(self._hook, with_kwargs=True)
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()


def run_factprobe(scorer, workload):
    from factprobe.probes.scoring.scorer import Work

    scorer.work = Work()
    started = time.perf_counter()
    if workload.kind == "loglikelihood":
        answers = scorer.loglikelihood(workload.requests)
    else:
        answers = scorer.generate(workload.requests)
    return answers, time.perf_counter() - started, scorer.work


def run_lm_eval(lm, model, workload, seed: int):
    instances = pw.lm_eval_instances(workload)
    torch.manual_seed(seed)  # lm-eval samples from torch's global generator
    with ForwardCounter(model) as counter:
        started = time.perf_counter()
        if workload.kind == "loglikelihood":
            answers = lm.loglikelihood(instances, disable_tqdm=True)
        else:
            answers = lm.generate_until(instances, disable_tqdm=True)
        seconds = time.perf_counter() - started
    return answers, seconds, counter, len(instances)


def compare(workload, fp_answers, lm_answers) -> dict:
    """Agreement figures: loglikelihood -> max |delta| and is_greedy mismatches; greedy generation
    -> identical texts; sampled -> nothing (different random streams)."""
    if workload.kind == "loglikelihood":
        ours = [s for scores in fp_answers for s in scores]
        diffs = [abs(s.logprob - lp) for s, (lp, _) in zip(ours, lm_answers, strict=True)]
        greedy = sum(s.is_greedy != g for s, (_, g) in zip(ours, lm_answers))
        worst = max(diffs) if diffs else 0.0
        return {"max_abs_diff": worst, "mean_abs_diff": sum(diffs) / max(1, len(diffs)), "continuations": len(diffs),
                "is_greedy_mismatches": greedy, "agree": worst <= TOLERANCE,
                "agreement": f"{worst:.1e} nats ({len(diffs)} conts)"}
    if all(r.greedy for r in workload.requests):
        ours = [g.texts[0] for g in fp_answers]
        same = sum(a == b for a, b in zip(ours, lm_answers, strict=True))
        differing = [(k, a, b) for k, (a, b) in enumerate(zip(ours, lm_answers)) if a != b][:3]
        return {"identical_texts": same, "texts": len(ours), "agree": same == len(ours),
                "agreement": f"{same}/{len(ours)} texts identical", "first_differences": differing}
    texts = sum(len(g.texts) for g in fp_answers)
    return {"agree": None, "agreement": f"time only ({texts} vs {len(lm_answers)} texts)",
            "texts": texts, "lm_eval_texts": len(lm_answers)}


def context_tokens(scorer, workload) -> str:
    lengths = [len(scorer.encode(r.context if workload.kind == "loglikelihood" else r.prompt)) for r in workload.requests]
    return f"{min(lengths)}-{max(lengths)} (mean {sum(lengths) / len(lengths):.0f})"


def warm_up(scorer, lm, graph, seed: int) -> None:
    """One small call of each kind on each side, not measured: first calls pay for lazy setup."""
    from factprobe.probes.scoring.requests import GenerateRequest

    small = pw.ll_plain(graph, 2, seed + 1)
    gen = pw.Workload("warm", "generate", [GenerateRequest("Q: What is the capital of Peru?\nA:", max_tokens=4, stop=("\n",))])
    scorer.loglikelihood(small.requests)
    scorer.generate(gen.requests)
    lm.loglikelihood(pw.lm_eval_instances(small), disable_tqdm=True)
    lm.generate_until(pw.lm_eval_instances(gen), disable_tqdm=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="smollm2",
                    help=f"an alias ({', '.join(f'{k}={v}' for k, v in MODELS.items())}) or any factprobe model spec")
    ap.add_argument("--workloads", default=",".join(pw.WORKLOADS), help="comma-separated, of: " + ", ".join(pw.WORKLOADS))
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every workload's request count")
    ap.add_argument("--quick", action="store_true", help="a few requests per workload (smoke test)")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads, for both sides")
    ap.add_argument("--lm-eval-batch-size", type=int, default=16, help="HFLM batch_size")
    ap.add_argument("--batch-size", type=int, default=64, help="factprobe load_scorer batch_size")
    ap.add_argument("--choices", type=int, default=None, help="iclke-fixed choices (default 100; --quick 10)")
    ap.add_argument("--examples", type=int, default=50, help="iclke-fixed example lines per relation")
    ap.add_argument("--shots", type=int, default=5, help="kdf demonstrations per item")
    ap.add_argument("--samples", type=int, default=10, help="gen-sampled samples per prompt")
    ap.add_argument("--max-tokens", type=int, default=8, help="new tokens per generation")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each side N times per workload, alternating, and compare the fastest of each")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    args = ap.parse_args(argv)

    names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [w for w in names if w not in pw.WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {', '.join(unknown)}: use {', '.join(pw.WORKLOADS)}")
    sizes = pw.QUICK_SIZES if args.quick else {k: max(1, round(v * args.scale)) for k, v in pw.SIZES.items()}
    choices = args.choices or (10 if args.quick else 100)

    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", category=FutureWarning)  # transformers' cache-argument deprecations
    logging.getLogger("lm-eval").setLevel(logging.ERROR)
    try:
        from lm_eval.models.huggingface import HFLM
    except ImportError:
        print("lm-evaluation-harness is not installed: pip install -e \".[bench]\"", file=sys.stderr)
        return 2
    import lm_eval
    import transformers
    from factprobe.probes.scoring.loader import load_scorer

    spec = MODELS.get(args.model, args.model)
    started = time.perf_counter()
    scorer = load_scorer(spec, device="cpu", dtype="float32", batch_size=args.batch_size)
    lm = HFLM(pretrained=scorer.model, tokenizer=scorer.tokenizer, batch_size=args.lm_eval_batch_size, device="cpu")
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, torch {torch.__version__}, "
          f"transformers {transformers.__version__}, lm_eval {getattr(lm_eval, '__version__', '?')}, "
          f"torch threads {torch.get_num_threads()}")
    print(f"model: {scorer.identity} ({type(scorer.model).__name__}, {scorer.model.dtype}), one object for both "
          f"sides, loaded in {time.perf_counter() - started:.1f} s (not measured); factprobe batch_size "
          f"{args.batch_size}, lm-eval HFLM batch_size {args.lm_eval_batch_size}", flush=True)

    gemm = peak.matmul_peak()
    weights = peak.per_token_parameters(scorer.model)
    print(f"matmul peak: {gemm / 1e9:.1f} GFLOP/s (float32 {peak.GEMM_SIZE}x{peak.GEMM_SIZE} products, best of 5, "
          f"{torch.get_num_threads()} threads); {weights:,} parameters a token passes through", flush=True)
    graph = pw.load_graph()
    warm_up(scorer, lm, graph, args.seed)
    rows = []
    for name in names:
        workload = pw.build(name, graph, sizes[name], seed=args.seed, shots=args.shots, examples=args.examples, choices=choices,
                            max_tokens=args.max_tokens, samples=args.samples)
        print(f"\n{name}: {len(workload.requests)} requests, prompt tokens {context_tokens(scorer, workload)}; "
              f"{workload.note}", flush=True)
        load0 = os.getloadavg()[0]
        fp_times, lm_times, fp_answers, lm_answers = [], [], None, None
        for attempt in range(max(1, args.repeat)):
            answers, seconds, work = run_factprobe(scorer, workload)
            fp_answers = fp_answers if attempt else answers
            fp_times.append(seconds)
            print(f"  factprobe {seconds:8.2f} s  {work.forward_passes} passes, {work.tokens_forwarded:,} tokens "
                  f"({work.padding_tokens:,} padding)", flush=True)
            answers, seconds, counter, instances = run_lm_eval(lm, scorer.model, workload, args.seed)
            lm_answers = lm_answers if attempt else answers
            lm_times.append(seconds)
            print(f"  lm-eval   {seconds:8.2f} s  {counter.passes} passes, {counter.tokens:,} tokens, "
                  f"{instances} instances  [1-min load {os.getloadavg()[0]:.2f}]", flush=True)
        fp_s, lm_s = min(fp_times), min(lm_times)
        load1 = os.getloadavg()[0]
        agreement = compare(workload, fp_answers, lm_answers)
        for k, ours, theirs in agreement.get("first_differences", []):
            print(f"  differs #{k}: factprobe {ours!r} vs lm-eval {theirs!r}")
        ratio = lm_s / fp_s if fp_s > 0 else float("inf")
        target = SPEED_TARGETS[name]
        computed = work.tokens_forwarded - work.padding_tokens
        share = peak.peak_share(peak.model_flops(weights, computed), fp_s, gemm)
        rows.append({"workload": name, "requests": len(workload.requests), "lm_eval_instances": instances,
                     "factprobe_s": round(fp_s, 3), "lm_eval_s": round(lm_s, 3), "ratio": round(ratio, 3),
                     "factprobe_runs_s": [round(x, 3) for x in fp_times], "lm_eval_runs_s": [round(x, 3) for x in lm_times],
                     "speed_target": target, "speed_pass": ratio >= max(1.0, target),
                     "factprobe_passes": work.forward_passes, "factprobe_tokens": work.tokens_forwarded,
                     "factprobe_padding": work.padding_tokens,
                     "lm_eval_passes": counter.passes, "lm_eval_tokens": counter.tokens,
                     "load_avg": [round(load0, 2), round(load1, 2)],
                     "peak_share": None if share is None else round(share, 4),
                     "far_from_peak_because": peak.why_far(work.tokens_forwarded, work.padding_tokens,
                                                           work.forward_passes, workload.kind),
                     **{k: v for k, v in agreement.items() if k != "first_differences"}})

    print()
    header = (f"{'workload':<12} {'reqs':>5} {'factprobe s':>11} {'lm-eval s':>10} {'ratio':>7} {'target':>7} {'':4}  "
              f"{'agreement':<30} {'':4}  {'fp passes':>9} {'fp tokens':>10} {'lm passes':>9} {'lm tokens':>10} "
              f"{'of peak':>7}")
    print(header)
    print("-" * len(header))
    for r in rows:
        agree = "n/a" if r["agree"] is None else ("PASS" if r["agree"] else "FAIL")
        print(f"{r['workload']:<12} {r['requests']:>5} {r['factprobe_s']:>11.2f} {r['lm_eval_s']:>10.2f} "
              f"{r['ratio']:>6.2f}x {'>=' + format(r['speed_target'], 'g') + 'x':>7} "
              f"{'PASS' if r['speed_pass'] else 'FAIL':4}  {r['agreement']:<30} {agree:4}  "
              f"{r['factprobe_passes']:>9,} {r['factprobe_tokens']:>10,} {r['lm_eval_passes']:>9,} {r['lm_eval_tokens']:>10,} "
              f"{'n/a' if r['peak_share'] is None else format(r['peak_share'], '.1%'):>7}")
    shared = [r for r in rows if r["peak_share"] is not None]
    if shared:
        far = min(shared, key=lambda r: r["peak_share"])
        print(f"of peak: model FLOPs of the tokens factprobe fed (2 x {weights:,} parameters x tokens not padding; "
              f"attention and the head not counted) / its time / the matmul peak above. Furthest from the limit: "
              f"{far['workload']} at {far['peak_share']:.1%}: {far['far_from_peak_because']}")
    ok = all(r["speed_pass"] and r["agree"] is not False for r in rows)
    busy = max((max(r["load_avg"]) for r in rows), default=0) > 1.5 * args.threads
    if busy:
        print(f"warning: other work shared the machine (1-min load above {1.5 * args.threads:g} with "
              f"{args.threads} torch threads): the times, and so the ratios, are not reliable")
    if args.quick:
        print("note: --quick sizes are too small for the speed targets to mean anything")
    print(f"targets: ratio lm-eval/factprobe >= 1 everywhere and as listed; agreement <= {TOLERANCE:g} nats, "
          f"greedy texts identical: {'ALL PASS' if ok else 'SOME FAIL'}")
    summary = {"bench": "peer", "model": scorer.identity, "device": "cpu", "dtype": str(scorer.model.dtype),
               "matmul_peak_flops": gemm, "per_token_parameters": weights,
               "threads": args.threads, "cores": os.cpu_count(), "torch": torch.__version__,
               "transformers": transformers.__version__, "lm_eval": getattr(lm_eval, "__version__", None),
               "lm_eval_batch_size": args.lm_eval_batch_size, "factprobe_batch_size": args.batch_size,
               "quick": args.quick, "scale": args.scale, "repeat": args.repeat, "seed": args.seed, "busy": busy, "pass": ok, "rows": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "peer.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Projects full MyriadLAMA BELIEF-ICL and full T-REx-MC IC-LKE for a 7-8B model on one GPU, from
token counts measured here and a roofline of the device, with the method printed beside the numbers.

    python bench/project.py                        # Llama-3-8B shape on an H100 SXM, bf16
    python bench/project.py --gpu-flops 1979e12 --gpu-bandwidth 4.8e12   # an H200 / fp8 what-if

1. Tokens. The prompts are written by factprobe's own methods (`ICLKE.prompt`,
   `BeliefICL.prompt`) from real Wikidata names (the shipped sample graph's English labels) and the
   shipped templates, and tokenized with SmolLM2's tokenizer (a 49k BPE; Llama 3's 128k one gives
   somewhat fewer tokens, so the counts are on the safe side). Counted per fact/prompt: the
   context, the continuations, and the tokens a run forwards with and without prefix sharing.
2. Cost per token. Prefill (scoring, and the prompt of a generation) is compute-bound: 2 x params
   FLOPs per token at an assumed share `--mfu` of the device's dense bf16 peak. Decoding is
   bandwidth-bound: one step reads the weights once for all `--decode-rows` rows plus each row's
   KV cache. Measured here on the CPU for calibration: SmolLM2's prefill rate and its implied
   FLOP/s, so the reader sees how far the CPU is from its own roofline.
3. Totals: tokens x cost, for the published dataset sizes (DESIGN.md).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Published sizes (DESIGN.md, "Published numbers to check against").
MYRIADLAMA_PROMPTS = 6_492_800
MYRIADLAMA_FACTS = 34_048
MYRIADLAMA_PAIRS = 24_643  # subject-relation pairs (000:128): BELIEF-ICL samples one prompt of each drawn pair
TREX_MC_TEST_FACTS = 20_000
TREX_MC_RELATIONS = 50
TREX_MC_CHOICES = 100
TREX_MC_EXAMPLES = 50


def sample_names() -> list[str]:
    names = []
    for line in (ROOT / "kg/data/sample_wikidata.json").read_text(encoding="utf-8").splitlines():
        line = line.strip().rstrip(",")
        if line.startswith("{"):
            label = json.loads(line).get("labels", {}).get("en", {}).get("value")
            if label:
                names.append(label)
    return names


def iclke_tokens(tokenizer, names: list[str], rng: random.Random, facts: int) -> dict[str, float]:
    from factprobe.probes.methods import MethodContext
    from factprobe.probes.methods.ic_lke import ICLKE

    method = ICLKE(MethodContext({"examples": TREX_MC_EXAMPLES}))
    encode = lambda text: tokenizer(text, add_special_tokens=True)["input_ids"]  # noqa: E731
    plain, shared, demo, continuation = [], [], [], []
    lines = [{"subject": rng.choice(names), "object": rng.choice(names), "kind": "true"}
             for _ in range(TREX_MC_EXAMPLES)]
    demo_tokens = len(encode(method.prompt({"subject_label": ""}, lines)))
    for _ in range(facts):
        item = {"subject_label": rng.choice(names)}
        context = len(encode(method.prompt(item, lines)))
        choices = [len(tokenizer(" " + rng.choice(names), add_special_tokens=False)["input_ids"])
                   for _ in range(TREX_MC_CHOICES)]
        plain.append(sum(context + c for c in choices))  # every (context, choice) pair on its own
        shared.append(context + sum(choices))  # the context once, its choices after it
        demo.append(context - demo_tokens + sum(choices))  # fixed examples: the demonstrations once per relation
        continuation.append(sum(choices))
    return {"context": demo_tokens, "per_fact_plain": statistics.mean(plain),
            "per_fact_shared_context": statistics.mean(shared), "per_fact_fixed_examples": statistics.mean(demo),
            "continuation": statistics.mean(continuation)}


def belief_icl_tokens(tokenizer, names: list[str], rng: random.Random, prompts: int) -> dict[str, float]:
    from factprobe.probes.methods import MethodContext
    from factprobe.probes.methods.belief_icl import BeliefICL
    from factprobe.probes.templates import load_templates

    templates = [t.text for entry in load_templates().values() for t in entry.object_final_clozes()]
    method = BeliefICL(MethodContext({}))
    lengths = []
    for _ in range(prompts):
        demos = [{"template": rng.choice(templates), "subject_label": rng.choice(names),
                  "object_label": rng.choice(names)} for _ in range(4)]
        item = {"id": "x", "prompt": rng.choice(templates).replace("[X]", rng.choice(names)),
                "demonstrations": {"x-template": demos}}
        lengths.append(len(tokenizer(method.prompt(item, "x-template"), add_special_tokens=True)["input_ids"]))
    return {"prompt": statistics.mean(lengths)}


def belief_icl_answers(prompts: int, pairs: int, *, samples: int, sample_prompts: int | str) -> tuple[int, int]:
    """(greedy answers, sampled answers) of one BELIEF-ICL setting: a greedy answer per prompt, and
    `samples` answers on one prompt of each of up to `sample_prompts` pairs (the paper's 10K,
    000:106; factprobe's default) or on every prompt ("all")."""
    sampled = prompts if sample_prompts == "all" else min(int(sample_prompts), pairs)
    return prompts, sampled * samples


def cpu_prefill_rate(scorer, tokens: int = 512, repeats: int = 3) -> float:
    import torch

    ids = torch.randint(100, 10_000, (1, tokens))
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats):
            started = time.perf_counter()
            scorer.model(input_ids=ids, use_cache=False, logits_to_keep=1)
            best = min(best, time.perf_counter() - started)
    return tokens / best


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--params", type=float, default=8.03e9, help="model parameters (Llama-3-8B)")
    parser.add_argument("--kv-bytes-per-token", type=float, default=2 * 32 * 8 * 128 * 2,
                        help="KV cache bytes per token (Llama-3-8B: 2 x 32 layers x 8 KV heads x 128 x bf16)")
    parser.add_argument("--gpu-flops", type=float, default=989e12, help="dense bf16 peak (H100 SXM)")
    parser.add_argument("--gpu-bandwidth", type=float, default=3.35e12, help="HBM bytes/s (H100 SXM)")
    parser.add_argument("--mfu", type=float, default=0.45, help="share of the peak a prefill pass reaches")
    parser.add_argument("--bandwidth-use", type=float, default=0.7, help="share of HBM bandwidth decoding reaches")
    parser.add_argument("--decode-rows", type=int, default=256, help="rows per decode step")
    parser.add_argument("--samples", type=int, default=100, help="sampled answers per sampled BELIEF-ICL prompt")
    parser.add_argument("--sample-prompts", default="10000",
                        help="BELIEF-ICL prompts that get samples: one of each of up to N pairs, or all")
    parser.add_argument("--answer-tokens", type=float, default=4.0,
                        help="mean generated tokens per answer (an answer ends with its line)")
    parser.add_argument("--facts", type=int, default=200, help="facts/prompts drawn to count tokens")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU calibration (no model load)")
    args = parser.parse_args(argv)

    from factprobe.probes.scoring.loader import load_scorer

    scorer = load_scorer("smollm2-135m-instruct", device="cpu", dtype="float32")
    rng = random.Random(0)
    names = sample_names()
    ic = iclke_tokens(scorer.tokenizer, names, rng, args.facts)
    bi = belief_icl_tokens(scorer.tokenizer, names, rng, args.facts)

    flops_per_token = 2 * args.params
    prefill_rate = args.gpu_flops * args.mfu / flops_per_token  # tokens/s
    weights = 2 * args.params  # bf16
    step_bytes = weights + args.decode_rows * (bi["prompt"] + args.answer_tokens) * args.kv_bytes_per_token
    decode_rate = args.decode_rows / (step_bytes / (args.gpu_bandwidth * args.bandwidth_use))  # tokens/s

    print(f"roofline: prefill {prefill_rate:,.0f} tok/s ({args.mfu:.0%} of {args.gpu_flops / 1e12:.0f} TFLOP/s at "
          f"{flops_per_token / 1e9:.1f} GFLOP/token); decode {decode_rate:,.0f} tok/s "
          f"({args.decode_rows} rows/step, {step_bytes / 1e9:.1f} GB read per step at "
          f"{args.bandwidth_use:.0%} of {args.gpu_bandwidth / 1e12:.2f} TB/s)")

    rows = []
    # T-REx-MC IC-LKE: 20,000 test facts, 100 choices, 50 in-context examples.
    for label, per_fact, extra in (
            ("every (context, choice) pair on its own (lm-eval)", ic["per_fact_plain"], 0),
            ("context once per fact (factprobe, random examples)", ic["per_fact_shared_context"], 0),
            ("examples once per relation (factprobe, fixed_examples)", ic["per_fact_fixed_examples"],
             TREX_MC_RELATIONS * ic["context"])):
        tokens = TREX_MC_TEST_FACTS * per_fact + extra
        rows.append(("T-REx-MC IC-LKE", label, tokens, 0, tokens / prefill_rate))
    # MyriadLAMA BELIEF-ICL (one setting, e.g. 4-template): a greedy answer per prompt, samples on
    # the sampled prompts; a sampled prompt's request prefills it once for all its samples.
    for label, chosen in ((f"greedy every prompt, {args.samples} samples on {args.sample_prompts} pairs' prompts",
                           args.sample_prompts), (f"greedy and {args.samples} samples on every prompt", "all")):
        greedy, sampled = belief_icl_answers(MYRIADLAMA_PROMPTS, MYRIADLAMA_PAIRS, samples=args.samples,
                                             sample_prompts=chosen)
        prefill = (greedy + sampled // args.samples) * bi["prompt"]
        answers = (greedy + sampled) * args.answer_tokens
        rows.append(("MyriadLAMA BELIEF-ICL", label, prefill, answers, prefill / prefill_rate + answers / decode_rate))

    print(f"\nmeasured token counts (SmolLM2 tokenizer, {args.facts} draws): IC-LKE context "
          f"{ic['context']:.0f} tokens of examples, {ic['continuation']:.0f} continuation tokens per fact; "
          f"BELIEF-ICL prompt {bi['prompt']:.0f} tokens, {args.answer_tokens:g} per answer, {args.samples} samples "
          f"per sampled prompt\n")
    print(f"{'workload':<22} {'how':<56} {'prefill tok':>14} {'decode tok':>13} {'one GPU':>10}")
    for workload, how, prefill, decode, seconds in rows:
        print(f"{workload:<22} {how:<56} {prefill:>14,.0f} {decode:>13,.0f} {hours(seconds):>10}")

    summary = {"bench": "project", "prefill_tok_s": round(prefill_rate), "decode_tok_s": round(decode_rate),
               "iclke": ic, "belief_icl": bi,
               "hours": {f"{w} | {h}": round(s / 3600, 3) for w, h, _, _, s in rows}}
    if not args.no_cpu:
        import torch

        torch.set_num_threads(2)
        rate = cpu_prefill_rate(scorer)
        achieved = rate * 2 * sum(p.numel() for p in scorer.model.parameters())
        print(f"\nCPU calibration: SmolLM2-135M prefill {rate:,.0f} tok/s with 2 threads = "
              f"{achieved / 1e9:.1f} GFLOP/s achieved")
        summary["cpu_prefill_tok_s"] = round(rate)
        summary["cpu_gflops"] = round(achieved / 1e9, 1)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

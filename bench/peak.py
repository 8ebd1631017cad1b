"""How near the matmul limit of this machine a scorer runs: a GEMM peak measured in the same run,
and the model FLOPs of the tokens the scorer computed (bench/peer.py prints their ratio).

The FLOPs are a floor, stated so: 2 x the parameters every fed token passes through (the decoder
layers' weights; the embedding is a lookup, and the vocabulary head runs only at the positions
whose logits are read, which `Work` does not count) x the tokens fed that are not padding.
Attention's score and value products are left out too, so a share near 1 is the limit, and a
share far below it is time spent elsewhere: matrix-vector passes bound by memory, padding, the
head, Python between passes.
"""

from __future__ import annotations

import time

import torch

GEMM_SIZE = 1024  # square float32 operands: large enough to reach a CPU's peak, small enough to time quickly


def matmul_peak(size: int = GEMM_SIZE, repeats: int = 5, dtype: torch.dtype = torch.float32) -> float:
    """FLOP/s of the fastest of `repeats` products of two `size` x `size` matrices, on the threads
    torch is set to use (2 size^3 FLOPs each)."""
    a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
    torch.matmul(a, b)  # the first call picks its kernel and allocates: not timed
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - started)
    return 2 * size ** 3 / best


def per_token_parameters(model) -> int:
    """The parameters every fed token passes through: all but the input embedding's and the
    vocabulary head's (a tied head shares the embedding's, counted once and left out once)."""
    skipped = {id(p) for module in (model.get_input_embeddings(), model.get_output_embeddings())
               if module is not None for p in module.parameters()}
    return sum(p.numel() for p in model.parameters() if id(p) not in skipped)


def model_flops(parameters: int, tokens: int) -> float:
    """The floor of the FLOPs of `tokens` fed tokens through `parameters` weights: a multiply and
    an add each."""
    return 2.0 * parameters * tokens


def peak_share(flops: float, seconds: float, peak: float) -> float | None:
    """Achieved FLOP/s over the measured peak; None when nothing was timed."""
    return flops / seconds / peak if seconds > 0 and peak > 0 else None


def why_far(tokens: int, padding: int, passes: int, kind: str) -> str:
    """The likeliest reason a workload stays far from the peak, read from its counts."""
    per_pass = (tokens - padding) / passes if passes else 0
    if kind == "generate" and per_pass < 64:
        return (f"decoding feeds {per_pass:.0f} tokens a pass on average: matrix-vector products, bound by "
                "memory bandwidth rather than the matmul peak")
    if tokens and padding / tokens > 0.1:
        return f"{padding / tokens:.0%} of the positions fed are padding"
    if per_pass < 64:
        return f"passes of {per_pass:.0f} tokens on average are too short to keep the cores' matrix units busy"
    return ("the vocabulary head, attention and the work between passes, which the FLOPs floor does "
            "not count")

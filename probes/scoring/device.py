"""Where the model runs and in what precision: CUDA + bf16 when present, CPU + fp32 otherwise."""

from __future__ import annotations

import torch

_DTYPES = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16,
           "bf16": torch.bfloat16, "float16": torch.float16, "fp16": torch.float16,
           "float64": torch.float64}  # float64: to check that a result depends on the data, not on rounding


# Where a model can run; torch also parses "meta", "lazy", "vulkan", ... which hold no weights
# a model can be scored on.
RUNS_ON = ("cpu", "cuda", "mps", "xpu")


def choose_device(device: str | None = None) -> torch.device:
    """The device named ("cpu", "cuda", "cuda:1", "mps", "xpu"), or CUDA when present for None /
    "auto"; ValueError in one line for a name torch does not parse or a device not here."""
    if device in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        chosen = torch.device(device)
    except RuntimeError:
        chosen = None
    if chosen is None or chosen.type not in RUNS_ON:
        raise ValueError(f"device {device!r} is not one a model runs on: use auto, cpu, cuda, cuda:N, mps or xpu")
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} was asked for, but torch sees no CUDA device here")
    if chosen.type == "cuda" and chosen.index is not None and chosen.index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r} was asked for, but torch sees {torch.cuda.device_count()} CUDA "
                         f"device(s) here (cuda:0 to cuda:{torch.cuda.device_count() - 1})")
    available = {"mps": lambda: torch.backends.mps.is_available(),
                 "xpu": lambda: hasattr(torch, "xpu") and torch.xpu.is_available()}
    if chosen.type in available and not available[chosen.type]():
        raise ValueError(f"device {device!r} was asked for, but torch sees no {chosen.type} device here")
    return chosen


def choose_dtype(device: torch.device, dtype: str | torch.dtype | None = None) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype in (None, "", "auto"):
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    try:
        return _DTYPES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {', '.join(sorted(_DTYPES))}") from None


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def is_out_of_memory(error: BaseException) -> bool:
    """True for an allocation failure on either device (CUDA raises its own type; CPU a RuntimeError)."""
    if isinstance(error, torch.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and (
        "out of memory" in str(error) or "can't allocate memory" in str(error)
    )


def release_memory(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.empty_cache()

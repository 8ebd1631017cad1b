"""KV-cache views the causal scorer (hf_causal.py) shares between its scoring passes and its
generation (hf_generation.py, hf_decode.py): a cache copied so a forward appends to the copy
only, expanded across rows without copying, reordered to follow beams; the float32 log-softmax
every pass takes; and the keyword a forward takes its cache by.
"""

from __future__ import annotations

import copy
import functools
import inspect

import torch


@functools.lru_cache(maxsize=None)
def _cache_keyword(forward) -> str:
    return "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"


def with_cache(model, cache) -> dict:
    """Keyword arguments handing `model` a KV cache. transformers 5.24 renamed `past_key_values`
    to `cache` (the old name warns, and goes in 5.40); the range pyproject accepts spans both."""
    forward = model.forward  # from the instance: wrappers that pass attributes through work too
    return {_cache_keyword(getattr(forward, "__func__", forward)): cache}


def cache_of(out):
    """The KV cache a forward returned, under either name (see `with_cache`)."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def log_softmax_row(logits: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the last dimension, in float32 whatever the model's dtype."""
    return torch.log_softmax(logits.float(), dim=-1)


def expanded_cache(cache, batch: int):
    """A fresh cache whose layers view the prefix's keys/values across `batch` rows, no copy.

    Each forward appends to (and so replaces) a layer's tensors, so the prefix's own cache stays
    untouched and serves the next batch.
    """
    fresh = _copied(cache)
    for layer in fresh.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            layer.keys = layer.keys.expand(batch, *layer.keys.shape[1:])
            layer.values = layer.values.expand(batch, *layer.values.shape[1:])
    return fresh


def _copied(cache):
    """A fresh cache over the prefix's tensors: the next forward appends to the copy only."""
    fresh = copy.copy(cache)
    fresh.layers = [copy.copy(layer) for layer in cache.layers]
    return fresh


def reordered_cache(cache, rows: torch.Tensor):
    """A cache whose batch rows are `rows` of the given one (beams follow their parents)."""
    fresh = _copied(cache)
    for layer in fresh.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            layer.keys = layer.keys.index_select(0, rows)
            layer.values = layer.values.index_select(0, rows)
    return fresh


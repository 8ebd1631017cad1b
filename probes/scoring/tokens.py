"""Token facts every causal backend shares: where the context ends in token space, and which
tokens end a text (`eos_ids`).

The context and continuation are tokenized together, because a tokenizer may merge across the
boundary (a context's trailing space usually becomes part of the continuation's first token).
The scored tokens are those after the longest common prefix of the joint tokenization and the
context's own tokenization. When the two share no token (nothing before the continuation, or a
merge at the very first token), a start token is put in front so the first scored token has
something to condition on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(frozen=True)
class Split:
    ids: tuple[int, ...]  # joint tokenization, start token included when one was needed
    split: int  # ids[split:] are the continuation's tokens; always 1 <= split < len(ids)


def common_prefix_len(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def split_at_context(encode: Callable[[str], list[int]], context: str, continuation: str,
                     start_id: int, context_ids: Sequence[int] | None = None) -> Split:
    ctx = encode(context) if context_ids is None else context_ids
    joint = list(encode(context + continuation))
    n = common_prefix_len(ctx, joint)
    if n == 0:
        joint.insert(0, start_id)
        n = 1
    if n >= len(joint):
        raise ValueError(f"continuation {continuation!r} adds no token after context {context[-40:]!r}")
    return Split(tuple(joint), n)


def eos_ids(tokenizer, model) -> list[int]:
    """Every token that ends a text for this model: the generation config's and the tokenizer's,
    each once, in that order."""
    found = model.generation_config.eos_token_id if model.generation_config is not None else None
    ids = [*(found if isinstance(found, list) else [found]), tokenizer.eos_token_id]
    return list(dict.fromkeys(int(i) for i in ids if i is not None))

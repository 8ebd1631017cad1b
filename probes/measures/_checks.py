"""Input checks shared by every metric: empty input and sequences of different lengths raise
ValueError, with a message naming the argument.
"""

from __future__ import annotations

from typing import Sequence


# ---------------------------------------------------------------------------------------------
# Input checks


def _require_items(values: Sequence, name: str) -> None:
    if len(values) == 0:
        raise ValueError(f"{name} is empty")


def _require_same_length(a: Sequence, b: Sequence, name_a: str, name_b: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"{name_a} and {name_b} differ in length ({len(a)} != {len(b)})")


def _require_prompts(per_fact: Sequence[Sequence], name: str) -> None:
    """Per-fact, per-prompt input: at least one fact, and every fact has at least one prompt."""
    _require_items(per_fact, name)
    for i, prompts in enumerate(per_fact):
        if len(prompts) == 0:
            raise ValueError(f"{name}[{i}] has no prompts")

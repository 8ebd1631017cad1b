"""Which BELIEF-ICL prompts get sampled answers behind their confidence. The paper samples 100
answers for 10K prompts drawn from 10K distinct subject-relation pairs, "due to the high cost"
(000_d5e47173cc9830b1.txt:106), and computes Ovconf over them; `sample_prompts=all` samples every
prompt (factprobe's variant).

The draw, over the probe set's test items (all of them, before --limit, so a resumed, limited or
sharded run draws the same): the pairs (`pair_key`: subject id, else label, and relation) sorted as
text; `random.Random(f"{seed}|belief-icl|sample-pairs").sample(pairs, N)` when there are more than
N, else every pair; then in each drawn pair the k-th of its asked prompts (in file order),
k = `random.Random(f"{seed}|belief-icl|sample-prompt|{pair}").randrange(its count)`.
"""

from __future__ import annotations

import random
from typing import Callable, Iterable

ALL = "all"
PAPER_SAMPLE_PROMPTS = 10_000  # 000_d5e47173cc9830b1.txt:106


def sampled_prompts(questions: Iterable[tuple[str, str, list]], limit: int | str,
                    rng_of: Callable[..., random.Random]) -> set[tuple[str, object]] | None:
    """(item id, question key) of the prompts that get samples; None when every prompt does.

    `questions`: (pair, item id, the item's question keys in file order) per test item; a key is
    a prompt's position in a cloze item, None for a belief-icl item (one question)."""
    if limit == ALL:
        return None
    by_pair: dict[str, list[tuple[str, list]]] = {}
    for pair, item_id, keys in questions:
        if keys:
            by_pair.setdefault(pair, []).append((item_id, keys))
    pairs = sorted(by_pair)
    if len(pairs) > int(limit):
        pairs = rng_of("belief-icl", "sample-pairs").sample(pairs, int(limit))
    chosen = set()
    for pair in pairs:
        entries = by_pair[pair]
        k = rng_of("belief-icl", "sample-prompt", pair).randrange(sum(len(keys) for _, keys in entries))
        for item_id, keys in entries:
            if k < len(keys):
                chosen.add((item_id, keys[k]))
                break
            k -= len(keys)
    return chosen

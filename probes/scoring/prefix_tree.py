"""The radix tree of token prefixes one loglikelihood call feeds the model (hf_causal.py).

Each continuation inserts the tokens it feeds (context + continuation, less the last token) and
marks the positions whose next-token distribution it reads; sequences that start alike share
nodes, so a shared prefix is one run of tokens however many contexts hang off it. A node is
identified by the token prefix that leads to it; its position in a sequence is its depth.
Design notes: docs/design/scoring.md, probes/scoring/hf_causal.py.
"""

from __future__ import annotations

from typing import Iterator, Sequence


class Node:
    __slots__ = ("tokens", "depth", "children", "keep", "size", "kept", "longest")

    def __init__(self, tokens: list[int], depth: int) -> None:
        self.tokens = tokens
        self.depth = depth  # position of tokens[0]
        self.children: dict[int, Node] = {}  # by first token
        # offset in `tokens` -> {next token read there: [continuation slots]}
        self.keep: dict[int, dict[int, list[int]]] = {}
        # filled by PrefixTree.measure(), kept true by split()
        self.size = 0  # tokens in the subtree, this run included
        self.kept = 0  # positions read in the subtree
        self.longest = 0  # tokens on the longest path down from this run's start

    @property
    def end(self) -> int:
        return self.depth + len(self.tokens)

    def is_chain(self) -> bool:
        return self.size == self.longest

    def preorder(self) -> Iterator[Node]:
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(list(node.children.values())))


class PrefixTree:
    def __init__(self) -> None:
        self.root = Node([], 0)

    def insert(self, seq: Sequence[int]) -> None:
        seq = list(seq)  # runs are lists: a tuple slice never equals them
        node, i = self.root, 0
        while i < len(seq):
            child = node.children.get(seq[i])
            if child is None:
                node.children[seq[i]] = Node(list(seq[i:]), i)
                return
            run = child.tokens
            if seq[i:i + len(run)] != run:  # slices compare in C; the loop runs only on a split
                k = 1
                while k < len(run) and i + k < len(seq) and run[k] == seq[i + k]:
                    k += 1
                if k < len(run):
                    self.split(child, k)
            node, i = child, i + len(child.tokens)

    def mark(self, seq: Sequence[int], position: int, target: int, slot: int) -> None:
        """Continuation `slot` reads P(target | seq[:position + 1]); seq must be inserted."""
        node, offset = self.locate(seq, position)
        node.keep.setdefault(offset, {}).setdefault(target, []).append(slot)

    def locate(self, seq: Sequence[int], position: int) -> tuple[Node, int]:
        node = self.root
        while position >= node.end:
            node = node.children[seq[node.end]]
        return node, position - node.depth

    @staticmethod
    def split(node: Node, k: int) -> Node:
        """Cut `node`'s run after k tokens; `node` keeps the head (so references to it stay
        right) and the new tail takes its children and the rest of its marks."""
        tail = Node(node.tokens[k:], node.depth + k)
        tail.children, node.children = node.children, {tail.tokens[0]: tail}
        head_keep = {o: t for o, t in node.keep.items() if o < k}
        tail.keep = {o - k: t for o, t in node.keep.items() if o >= k}
        node.keep, node.tokens = head_keep, node.tokens[:k]
        tail.size, tail.longest = node.size - k, node.longest - k
        tail.kept = node.kept - len(head_keep)
        return tail

    def cut(self, seq: Sequence[int], depth: int) -> Node:
        """The node that ends at `depth` along seq (the root at 0), splitting a run if needed."""
        if depth == 0:
            return self.root
        node, offset = self.locate(seq, depth - 1)
        if offset + 1 < len(node.tokens):
            self.split(node, offset + 1)
        return node

    def measure(self) -> int:
        """Fill size, kept and longest for every node; return the tokens in the tree."""
        order = list(self.root.preorder())
        for node in reversed(order):
            below = node.children.values()
            node.size = len(node.tokens) + sum(c.size for c in below)
            node.kept = len(node.keep) + sum(c.kept for c in below)
            node.longest = len(node.tokens) + max((c.longest for c in below), default=0)
        return self.root.size


def distinct_prefixes(seqs: Sequence[Sequence[int]]) -> int:
    """Tokens in the prefix tree of seqs: what an engine that shares every prefix must feed."""
    ordered = sorted(set(map(tuple, seqs)))
    total = sum(len(s) for s in ordered)
    for a, b in zip(ordered, ordered[1:]):
        total -= _common(a, b)
    return total


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo

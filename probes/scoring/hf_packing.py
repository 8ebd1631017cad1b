"""How the causal scorer (hf_causal.py) lays the prefix tree's pieces into forward passes.

A unit is what hangs off the node whose keys and values are cached: a whole subtree (read in
that pass) or a shared node's own run (its subtree runs later, over it). Units are packed into
rows (first fit, longest first), rows into passes (by count, memory and padding). A packed row
holds several units in tree order, each token seeing the cache and its own ancestors; a chain
row (for attention kernels that take no mask) holds one chain, right-padded, plain causal.
Design notes: docs/design/scoring.md, probes/scoring/hf_causal.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from .prefix_tree import Node


@dataclass
class Unit:
    node: Node
    whole: bool  # the node's subtree; else its run only
    # Nodes above `node` (below the cache) that run again in every unit under them; True marks
    # the first copy, the one read.
    prefix: tuple[tuple[Node, bool], ...] = ()

    @property
    def tokens(self) -> int:
        return sum(len(n.tokens) for n, _ in self.prefix) + (self.node.size if self.whole else len(self.node.tokens))

    @property
    def kept(self) -> int:
        own = self.node.kept if self.whole else len(self.node.keep)
        return own + sum(len(n.keep) for n, first in self.prefix if first)

    @property
    def start(self) -> int:
        return self.prefix[0][0].depth if self.prefix else self.node.depth

    def run_tokens(self) -> list[int]:
        """The tokens of a run-only unit, prefix included, in order."""
        return [t for n, _ in self.prefix for t in n.tokens] + self.node.tokens

    def nodes(self):
        """(node, read?) in tree order."""
        yield from self.prefix
        for node in (self.node.preorder() if self.whole else (self.node,)):
            yield node, True


@dataclass
class Row:
    units: list[Unit] = field(default_factory=list)
    tokens: int = 0
    kept: int = 0
    capacity: int = 0
    kept_at: set[int] = field(default_factory=set)  # chain rows: columns read

    def add(self, unit: Unit, chain: bool) -> None:
        self.units.append(unit)
        self.tokens += unit.tokens
        self.kept += unit.kept
        if chain:
            self.kept_at |= {n.depth - unit.start + o for n, read in unit.nodes() if read for o in n.keep}


def pack_rows(units: list[Unit], width: int, most: int, chain: bool, fits: Callable[[int, int], bool]) -> list[Row]:
    """First fit decreasing; a row is as wide as `width` or its first unit and holds at most
    `most` units. Chain rows hold one unit."""
    rows: list[Row] = []
    for unit in sorted(units, key=lambda u: -u.tokens):
        for row in ([] if chain else rows):
            if (row.tokens + unit.tokens <= row.capacity and len(row.units) < most
                    and fits(row.tokens + unit.tokens, row.kept + unit.kept)):
                row.add(unit, chain)
                break
        else:
            row = Row(capacity=max(width, unit.tokens))
            row.add(unit, chain)
            rows.append(row)
    return rows


def head_positions(rows: list[Row], chain: bool) -> int:
    """Positions per row that go through the LM head: packed rows keep their read positions at
    the end, chain rows keep the union of theirs."""
    if chain:
        return max(1, len(set().union(*(r.kept_at for r in rows))))
    return max(1, max(r.kept for r in rows))


def cut_passes(rows: list[Row], batch_size: int, padding_share: float, chain: bool,
               fits: Callable[[int, int, int], bool]) -> list[list[Row]]:
    """Longest rows first; a pass grows while its units, padding and memory allow."""
    passes: list[list[Row]] = []
    current: list[Row] = []
    units = padding = 0
    for row in sorted(rows, key=lambda r: -r.tokens):
        if current:
            width = current[0].tokens
            grown = current + [row]
            if (units + len(row.units) <= batch_size
                    and padding + width - row.tokens <= padding_share * width * len(grown)
                    and fits(len(grown), width, head_positions(grown, chain))):
                current.append(row)
                units += len(row.units)
                padding += width - row.tokens
                continue
            passes.append(current)
        current, units, padding = [row], len(row.units), 0
    if current:
        passes.append(current)
    return passes


@dataclass
class Layout:
    ids: torch.Tensor  # [rows, width]
    positions: torch.Tensor | None  # None: the cache length onwards (chain rows)
    sees: torch.Tensor | None  # [rows, width, cached + width]; None: plain causal
    keep: int | torch.Tensor  # logits_to_keep
    kept: list[tuple[int, int, Node, int]]  # (row, index among the kept logits, node, offset)
    edges: list[tuple[Unit, int, list[int]]]  # (run-only unit, row, its columns in depth order)
    padding: int


def _flatten(row: Row):
    """A row's tokens in tree order: token, position, end of its subtree, read position or None;
    and each run-only unit's token indices."""
    tokens, positions, ends, reads, edges = [], [], [], [], []
    for unit in row.units:
        start = len(tokens)
        for node, read in unit.nodes():
            first = len(tokens)
            if node.depth < unit.node.depth:  # a prefix node: the rest of the unit descends from it
                end = start + unit.tokens
            else:
                end = first + (node.size if unit.whole else len(node.tokens))
            for offset, token in enumerate(node.tokens):
                tokens.append(token)
                positions.append(node.depth + offset)
                ends.append(end)
                reads.append((node, offset) if read and offset in node.keep else None)
        if not unit.whole:
            edges.append((unit, list(range(start, len(tokens)))))
    return tokens, positions, ends, reads, edges


def packed_layout(rows: list[Row], cached: int, pad_id: int) -> Layout:
    """Rows right-aligned (padding on the left) with their read positions last, so the last
    `keep` positions of every row cover them; a token sees the cache and its own ancestors."""
    flat = [_flatten(r) for r in rows]
    width = max(len(f[0]) for f in flat)
    keep = max(1, max(sum(x is not None for x in f[3]) for f in flat))
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    positions = torch.full((len(rows), width), cached, dtype=torch.long)
    sees = torch.zeros((len(rows), width, cached + width), dtype=torch.bool)
    kept, edges, padding = [], [], 0
    for b, (tokens, pos, ends, reads, runs) in enumerate(flat):
        pad = width - len(tokens)
        padding += pad
        # Order within a row is free (positions and mask say everything): reads go last.
        order = [i for i, r in enumerate(reads) if r is None] + [i for i, r in enumerate(reads) if r is not None]
        o = torch.tensor(order)
        ends_o = torch.tensor(ends)[o]
        ids[b, pad:] = torch.tensor(tokens)[o]
        positions[b, pad:] = torch.tensor(pos)[o]
        sees[b, pad:, :cached] = True
        sees[b, pad:, cached + pad:] = (o[None, :] <= o[:, None]) & (o[:, None] < ends_o[None, :])
        idle = torch.arange(pad)
        sees[b, idle, cached + idle] = True  # padding sees itself, so no softmax row is empty
        n_reads = len(tokens) - sum(r is None for r in reads)
        column = {i: pad + c for c, i in enumerate(order)}
        for c, i in enumerate(order[len(order) - n_reads:]):
            node, offset = reads[i]
            kept.append((b, keep - n_reads + c, node, offset))
        edges += [(unit, b, [column[i] for i in indices]) for unit, indices in runs]
    return Layout(ids, positions, sees, keep, kept, edges, padding)


def chain_layout(rows: list[Row], pad_id: int, device) -> Layout:
    """One chain per row from column 0, right-padded: a causal model never lets a real token see
    the padding after it, so no mask is needed."""
    flat = [_flatten(r) for r in rows]
    width = max(len(f[0]) for f in flat)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    columns = sorted(set().union(*(r.kept_at for r in rows))) or [width - 1]
    index = {c: k for k, c in enumerate(columns)}
    kept, edges, padding = [], [], 0
    for b, (tokens, _, _, reads, runs) in enumerate(flat):
        ids[b, :len(tokens)] = torch.tensor(tokens)
        padding += width - len(tokens)
        kept += [(b, index[c], *r) for c, r in enumerate(reads) if r is not None]
        edges += [(unit, b, indices) for unit, indices in runs]
    return Layout(ids, None, None, torch.tensor(columns, device=device), kept, edges, padding)


def windowed(sees: torch.Tensor, positions: torch.Tensor, cached: int, window: int) -> torch.Tensor:
    """`sees` limited to keys fewer than `window` positions back (sliding-window layers)."""
    keys = torch.cat([torch.arange(cached).expand(len(positions), cached), positions], dim=1)
    return sees & (positions[:, :, None] - keys[:, None, :] < window)

"""Label paths and the token trie of candidate object names, the search space of ApprOpt
(probes/scoring/appropt.py). A path is the tokens of " " + name, then EOS; the trie does not
depend on the prompt, so it is built once per (model, candidate set), which assumes the tokenizer
does not merge across the space before a name (why that holds: docs/design/scoring.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from .tokens import eos_ids

ROOT = 0
_FORMAT = 1  # bump when the on-disk layout or the path definition changes


@dataclass(frozen=True)
class Terminal:
    """One entity whose name ends at a trie's EOS node."""

    entity: str
    name: str


@dataclass(frozen=True)
class LabelPath:
    """A candidate name and its tokens, EOS excluded: what a trie is built from (and stored as)."""

    entity: str
    name: str
    tokens: tuple[int, ...]


@dataclass
class LabelTrie:
    eos_id: int
    token: list[int] = field(default_factory=lambda: [-1])  # token on the edge into each node
    parent: list[int] = field(default_factory=lambda: [-1])
    depth: list[int] = field(default_factory=lambda: [0])
    children: list[dict[int, int]] = field(default_factory=lambda: [{}])
    below: list[int] = field(default_factory=lambda: [0])  # terminal entries in the subtree
    terminals: dict[int, tuple[Terminal, ...]] = field(default_factory=dict)  # EOS node -> entities
    by_entity: dict[str, tuple[int, ...]] = field(default_factory=dict)  # entity -> its EOS nodes
    paths: tuple[LabelPath, ...] = ()  # what it was built from, sorted (kept for the disk cache)
    model: str | None = None  # identity of the scorer whose tokenizer made the paths, when known

    # -- building ------------------------------------------------------------------------------

    @classmethod
    def from_paths(cls, paths: Iterable[LabelPath], eos_id: int, model: str | None = None) -> LabelTrie:
        trie = cls(eos_id, model=model)
        # Sorted input gives the same node ids whatever order the caller's mapping had.
        ordered = tuple(sorted(set(paths), key=lambda p: (p.entity, p.name, p.tokens)))
        found: dict[int, dict[str, str]] = {}
        for path in ordered:
            if not path.tokens:
                continue
            node = ROOT
            for token in (*path.tokens, eos_id):
                node = trie._child(node, token)
            names = found.setdefault(node, {})
            if path.entity not in names or path.name < names[path.entity]:
                names[path.entity] = path.name
        entity_nodes: dict[str, list[int]] = {}
        for node, names in found.items():
            trie.terminals[node] = tuple(Terminal(e, names[e]) for e in sorted(names))
            for entity in names:
                entity_nodes.setdefault(entity, []).append(node)
            trie._add_below(node, len(names))
        trie.by_entity = {e: tuple(sorted(nodes)) for e, nodes in entity_nodes.items()}
        trie.paths = ordered
        return trie

    @classmethod
    def build(cls, tokenize: Callable[[Sequence[str]], list[list[int]]],
              candidates: Mapping[str, Iterable[str]], eos_id: int, model: str | None = None) -> LabelTrie:
        """`tokenize` maps texts to token ids without special tokens; each name is given as " " + name."""
        pairs = sorted({(entity, name.strip()) for entity, names in candidates.items()
                        for name in names if name and name.strip()})
        token_lists = tokenize(label_texts(name for _, name in pairs)) if pairs else []
        paths = [LabelPath(e, n, tuple(t)) for (e, n), t in zip(pairs, token_lists)]
        return cls.from_paths(paths, eos_id, model)

    @classmethod
    def for_scorer(cls, scorer, candidates: Mapping[str, Iterable[str]]) -> LabelTrie:
        return cls.build(lambda texts: _tokenize(scorer.tokenizer, texts), candidates, label_end_id(scorer),
                         scorer.identity)

    def check_model(self, scorer) -> None:
        """Token ids mean nothing under another tokenizer: refuse a trie built for another model."""
        if self.model is not None and self.model != scorer.identity:
            raise ValueError(f"this label trie was built for {self.model}, not {scorer.identity}")

    def _child(self, node: int, token: int) -> int:
        found = self.children[node].get(token)
        if found is not None:
            return found
        new = len(self.token)
        self.token.append(token)
        self.parent.append(node)
        self.depth.append(self.depth[node] + 1)
        self.children.append({})
        self.below.append(0)
        self.children[node][token] = new
        return new

    def _add_below(self, node: int, count: int) -> None:
        while node != -1:
            self.below[node] += count
            node = self.parent[node]

    # -- reading -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.token)

    @property
    def entities(self) -> frozenset[str]:
        return frozenset(self.by_entity)

    def tokens_to(self, node: int) -> tuple[int, ...]:
        """The tokens on the path from the root to `node` (EOS included for a terminal)."""
        out = []
        while node != ROOT:
            out.append(self.token[node])
            node = self.parent[node]
        return tuple(reversed(out))

    def blocked(self, banned: Iterable[str]) -> frozenset[int]:
        """Nodes whose every terminal entry belongs to a banned entity: a search never enters them.

        Only the ancestors of banned entities' terminals can be blocked, so the cost is the
        banned paths' length, not the trie's size."""
        banned_below: dict[int, int] = {}
        for entity in set(banned):
            for node in self.by_entity.get(entity, ()):
                while node != -1:
                    banned_below[node] = banned_below.get(node, 0) + 1
                    node = self.parent[node]
        return frozenset(node for node, count in banned_below.items() if count == self.below[node])


# -- the path of a name ---------------------------------------------------------------------------


def label_texts(names: Iterable[str]) -> list[str]:
    """What each name's path spells: " " + the name, stripped."""
    return [" " + name.strip() for name in names]


def label_tokens(tokenizer, names: Sequence[str]) -> list[tuple[int, ...]]:
    """Each name's path without EOS: the tokens of " " + name on its own, no special tokens."""
    return [tuple(ids) for ids in _tokenize(tokenizer, label_texts(names))] if names else []


def prompt_tokens(encode: Callable[[str], list[int]], prompt: str, start_id: int) -> list[int]:
    """The prompt's tokens as the engine encodes a context. A trailing space is dropped: every
    label path starts with its own space token. An empty prompt is the start token."""
    return encode(prompt.rstrip(" ")) or [start_id]


def prompt_ids(scorer, prompt: str) -> list[int]:
    """`prompt_tokens` with a causal scorer's encoding and start token."""
    return prompt_tokens(scorer.encode, prompt, scorer.start_id)


def end_of_label(tokenizer, model, identity: str = "the model") -> int:
    """The one EOS token that ends a label. The tokenizer's EOS is what the model was trained to end
    its text with; a generation config may list more (chat turn ends), and any one of them would
    do, but the trie needs a single deterministic id."""
    tokenizer_eos = tokenizer.eos_token_id
    if tokenizer_eos is not None:
        return int(tokenizer_eos)
    ids = eos_ids(tokenizer, model)
    if not ids:
        raise ValueError(f"{identity}: the model names no EOS token to end a label with")
    return int(min(ids))


def label_end_id(scorer) -> int:
    """`end_of_label` for a causal scorer."""
    return end_of_label(scorer.tokenizer, scorer.model, scorer.identity)


def _tokenize(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    return [list(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def candidates_digest(candidates: Mapping[str, Iterable[str]]) -> str:
    """Names the candidate set (entity -> names) independently of order and of duplicates."""
    canonical = sorted({(e, n.strip()) for e, names in candidates.items() for n in names if n and n.strip()})
    return hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode()).hexdigest()


class TrieCache:
    """Tries by (scorer identity, key, digest of the candidates): built once, then from memory.

    With a directory (default `$FACTPROBE_CACHE/tries`, else ~/.cache/factprobe/tries), a built
    trie's tokenized paths are also written there as JSON (to a temporary file, then renamed, so
    a killed writer leaves no half file), and a later process loads them instead of tokenizing
    again. A file that does not parse or names another key is ignored and rebuilt. Memory keeps
    the `max_tries` most recently used tries.
    """

    def __init__(self, directory: str | Path | None = None, *, on_disk: bool = True, max_tries: int = 256) -> None:
        if on_disk and directory is None:
            from .gguf_cache import default_cache_dir

            directory = default_cache_dir() / "tries"
        self.directory = Path(directory) if on_disk and directory is not None else None
        self.max_tries = max_tries
        self.builds = 0  # tries built by tokenizing names
        self.disk_loads = 0  # tries read back from the directory
        self._memory: OrderedDict[tuple[str, str, str], LabelTrie] = OrderedDict()

    def get(self, scorer, key: str, candidates: Mapping[str, Iterable[str]]) -> LabelTrie:
        digest = candidates_digest(candidates)
        memo = (scorer.identity, key, digest)
        trie = self._memory.get(memo)
        if trie is not None:
            self._memory.move_to_end(memo)
            return trie
        eos_id = label_end_id(scorer)
        trie = self._load(memo, eos_id)
        if trie is None:
            trie = LabelTrie.for_scorer(scorer, candidates)
            self.builds += 1
            self._store(memo, trie)
        self._memory[memo] = trie
        while len(self._memory) > self.max_tries:
            self._memory.popitem(last=False)
        return trie

    def _file(self, memo: tuple[str, str, str]) -> Path | None:
        if self.directory is None:
            return None
        # Identities hold ':' and '/', keys anything: the file is named by a hash of all three.
        name = hashlib.sha256(json.dumps([_FORMAT, *memo]).encode()).hexdigest()[:32]
        return self.directory / f"{name}.json"

    def _load(self, memo: tuple[str, str, str], eos_id: int) -> LabelTrie | None:
        path = self._file(memo)
        if path is None or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != _FORMAT or data.get("memo") != list(memo) or data.get("eos_id") != eos_id:
                return None
            paths = [LabelPath(str(e), str(n), tuple(int(t) for t in tokens)) for e, n, tokens in data["paths"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self.disk_loads += 1
        return LabelTrie.from_paths(paths, eos_id, memo[0])

    def _store(self, memo: tuple[str, str, str], trie: LabelTrie) -> None:
        path = self._file(memo)
        if path is None:
            return
        data = {"format": _FORMAT, "memo": list(memo), "eos_id": trie.eos_id,
                "paths": [[p.entity, p.name, list(p.tokens)] for p in trie.paths]}
        temp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".partial")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(data, out, ensure_ascii=False)
            os.replace(temp, path)
        except OSError:
            # The disk copy only saves a later process some tokenizing; never fail a search for it.
            if temp is not None and os.path.exists(temp):
                os.unlink(temp)

"""A tokenizer as the token backend needs it: each token's bytes, whether its first and last
characters could glue a letter or digit onto a name, the token sequences a name can take in
running text, and whether a document's tokens can find every name the text rule finds.

A byte-level BPE writes " London" and "London" apart, and "Romeo" as "Rome" + "o": a name is
looked for in each of its surface forms (its words in lower, Title and UPPER case, with and
without a leading space), and an occurrence counts only where the neighbouring tokens glue no
letter or digit onto it (index/text.py's rule). That finds exactly what the text rule finds in a
document whose text is *token-regular* (`token_regular`): no character of a script written
without spaces, normalization that only lowers each character, every word in one of those three
casings, and a token boundary at every word edge (a leading space may ride along). Any other
document is counted on its normalized text instead (index/infini_gram/store.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from pathlib import Path

import numpy as np

from ..text import normalize
from ..writing_systems import unspaced

WORDS = re.compile(r"[^\W_]+")  # runs of str.isalnum characters: where index/text.py's edges can fall
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
MAX_FORMS = 729  # casings of a name's first words looked up; the rest is checked on the decoded text
CONTEXTS = ("", "(", "\n", " ", "'", "\u2019")  # what a form is encoded after, as running text holds it
# a token may begin one character before a word with one of these (" London", "'s"): the name's
# form then carries it, and it glues nothing on
LEADS = (" ", "'", "\u2019")
NO_GLUE, GLUE, UNSURE = 0, 1, 2


def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's printable stand-in for each byte, reversed."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = keep[:]
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(keep, chars)}


@dataclass(eq=False)  # one loaded tokenizer, hashed by identity (forms are cached per vocabulary)
class Vocabulary:
    """One tokenizer.json, loaded with the `tokenizers` library."""

    path: Path

    def __post_init__(self) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(self.path))
        spec = json.loads(Path(self.path).read_text(encoding="utf-8"))
        self.size = self.tokenizer.get_vocab_size(with_added_tokens=True)
        self.pieces = self._pieces(spec)
        lengths = np.array([len(p) for p in self.pieces], dtype=np.int64)
        self.lengths = lengths
        self.first = np.array([_edge_class(p, 0) for p in self.pieces], dtype=np.int8)
        self.last = np.array([_edge_class(p, -1) for p in self.pieces], dtype=np.int8)

    @property
    def token_width(self) -> int:
        return 2 if self.size < 0xFFFF else 4  # the top value of a width is its document separator

    def _pieces(self, spec: dict) -> list[bytes]:
        decoder = spec.get("decoder") or {}
        kinds = {decoder.get("type")} | {d.get("type") for d in decoder.get("decoders", []) or []}
        alphabet = _byte_level_alphabet() if "ByteLevel" in kinds else None
        pieces = []
        for i in range(self.size):
            piece = self.tokenizer.id_to_token(i) or ""
            if alphabet is not None and all(ch in alphabet for ch in piece):
                pieces.append(bytes(alphabet[ch] for ch in piece))
                continue
            byte = _BYTE_PIECE.fullmatch(piece)
            pieces.append(bytes([int(byte.group(1), 16)]) if byte else piece.replace("\u2581", " ").encode())
        return pieces

    def encode_batch(self, texts: list[str]):
        return self.tokenizer.encode_batch(texts, add_special_tokens=False)

    def text_of(self, ids) -> bytes:
        pieces = self.pieces
        return b"".join(pieces[int(i)] for i in ids)

    def forms(self, variant: str) -> set[tuple[tuple[int, ...], int]]:
        """The token sequences `variant` takes in running text, each with the bytes of the leading
        character it carries (LEADS; 0 for none): encoded alone and after a few contexts, keeping
        those where a token boundary falls at the variant's start or one LEADS character before it."""
        return _forms(self, variant)


@lru_cache(maxsize=100_000)
def _forms_cached(vocabulary: Vocabulary, variant: str) -> frozenset:
    found = set()
    for context in CONTEXTS:
        encoding = vocabulary.tokenizer.encode(context + variant, add_special_tokens=False)
        at = len(context)
        ids, lead = [], None
        for token, (a, b) in zip(encoding.ids, encoding.offsets):
            if b <= at and not (a == b == at):
                continue
            if a < at < b:
                if a == at - 1 and context[-1:] in LEADS and lead is None:
                    lead = len(context[-1].encode())
                else:
                    ids = []
                    break
            elif lead is None:
                lead = 0
            ids.append(token)
        if ids and vocabulary.text_of(ids) == ((context[-1] if lead else "") + variant).encode():
            found.add((tuple(ids), lead))
    return frozenset(found)


def _forms(vocabulary: Vocabulary, variant: str) -> set:
    return set(_forms_cached(vocabulary, variant))


def _edge_class(piece: bytes, where: int) -> int:
    if not piece:
        return UNSURE
    byte = piece[where]
    if byte >= 0x80:  # a character beyond ASCII, or part of one: decided on the decoded text
        return UNSURE
    return GLUE if chr(byte).isalnum() else NO_GLUE


def casings(word: str) -> set[str]:
    return {word, word.upper(), word[:1].upper() + word[1:]}


def variants(core: str) -> tuple[list[str], int]:
    """Surface forms of a name's core (normalized, from its first to its last letter or digit):
    each word in lower, UPPER and Title case, those that normalize back to it; and how many
    characters of the core they spell. Past MAX_FORMS combinations they spell the longest
    prefix that ends a word and stays within it: the rest of the name is then compared on the
    decoded text (count.py), so no casing is missed."""
    pieces = re.split(r"([^\W_]+)", core)  # odd indices: words
    choices = [sorted(casings(p)) if i % 2 else [p] for i, p in enumerate(pieces)]
    total, upto = 1, 1
    for i, options in enumerate(choices):
        total *= len(options)
        if total > MAX_FORMS:
            break
        if i % 2:
            upto = i + 1  # through this word
    covered = len("".join(pieces[:upto]))
    made = {"".join(c) for c in product(*choices[:upto])}
    prefix = core[:covered]
    return sorted(v for v in made if normalize(v) == prefix), covered


def core_of(key: str) -> tuple[int, int]:
    """Where a name key's core lies: from its first to its last letter or digit."""
    words = [m.span() for m in WORDS.finditer(key)]
    return words[0][0], words[-1][1]


_ASCII_WORD = np.array([chr(b).isalnum() for b in range(128)], dtype=bool)
_ASCII_LOWER = np.array([chr(b).islower() for b in range(128)], dtype=bool)
_ASCII_UPPER = np.array([chr(b).isupper() for b in range(128)], dtype=bool)
_ASCII_LEAD = np.array([chr(b) in LEADS for b in range(128)], dtype=bool)


def _ascii_words(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Word starts and ends of ASCII text (as `codes`), or None when a word is in none of
    lower, UPPER and Title case (a lower letter, and an upper one past its first character)."""
    word = _ASCII_WORD[codes]
    edge = np.diff(np.concatenate(([False], word, [False])).astype(np.int8))
    starts, ends = np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)
    if not starts.size:
        return starts, ends
    lower = _ASCII_LOWER[codes]
    inner_upper = _ASCII_UPPER[codes].copy()
    inner_upper[starts] = False
    ids = np.cumsum(edge[:-1] == 1) - 1  # the word each character belongs to (or follows)
    has_lower = np.bincount(ids[lower], minlength=starts.size) > 0
    has_upper = np.bincount(ids[inner_upper], minlength=starts.size) > 0
    if (has_lower & has_upper).any():
        return None
    return starts, ends


def token_regular(text: str, offsets: np.ndarray, convert=None) -> bool:
    """Whether the tokens of `text` (their character offsets, n x 2) find every name the text
    rule finds in it, and only those: see the module's docstring."""
    size = len(text)
    index = np.int32 if size < 2**31 - 2 else np.int64  # a long document's arrays stay small
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        words = _ascii_words(codes)
        if words is None:
            return False
        starts, ends = words[0].astype(index), words[1].astype(index)
        lead = _ASCII_LEAD[codes]
    else:
        normalized = normalize(convert(text) if convert else text)
        if normalized != text.lower() or (convert is not None and convert(text) != text):
            return False
        if any(map(unspaced, normalized)):
            return False
        edges = []
        for match in WORDS.finditer(text):
            word = match.group()
            low = word.lower()
            if word != low and word != low.upper() and word != low[:1].upper() + low[1:]:
                return False
            edges.append(match.span())
        bounds = np.array(edges, dtype=index).reshape(-1, 2)
        starts, ends = bounds[:, 0], bounds[:, 1]
        lead = np.array([ch in LEADS for ch in text], dtype=bool)
    if not starts.size:
        return True
    spans = np.asarray(offsets, dtype=index).reshape(-1, 2)
    wide = spans[spans[:, 1] - spans[:, 0] >= 2]
    inside = np.bincount(wide[:, 0] + 1, minlength=size + 2)[:size + 2]  # positions strictly inside a token
    inside -= np.bincount(wide[:, 1], minlength=size + 2)[:size + 2]
    inside = np.cumsum(inside) > 0
    if inside[ends].any():
        return False
    straddled = starts[inside[starts]]
    if straddled.size:
        before = straddled - 1
        begins = np.zeros(size + 1, dtype=bool)
        begins[spans[:, 0]] = True
        if not (begins[before] & ~inside[before] & lead[before]).all():
            return False
    return True

"""Which entities a document mentions: one Aho-Corasick pass over the text for all names at once.

The automaton reads the text rewritten (`scanned`) so that a hit obeys index/text.py's edge rule
by construction: every character that is not a letter or digit is a mark, a mark stands between
a character of a script without spaces and any other character, and each name is written the
same way with a mark at each edge that needs a boundary. Letters from U+1100 on (Han, Hangul,
Kana, ...) are written as three symbols each, so that no node of the automaton has thousands of
children to look through. Each hit is confirmed against the normalized text; documents are
scanned a batch at a time. Why: docs/design/frequency.md.

With mentions="maximal" (IndexSettings' default) a confirmed hit that a longer confirmed hit of
another name contains is dropped before its entities count (index/text.py `outermost`, decided for
a whole batch at once by `outermost_mask`): the automaton reports every name ending at a position,
so "czech" and "czech republic" are both hits in "czech republic" and only the longer one counts.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Callable, Iterable, Sequence

import ahocorasick
import numpy as np

from .corpus import Document
from .writing_systems import UNSPACED_RANGES, unspaced
from .settings import MENTIONS
from .korean import ends_open
from .text import AliasFilter, at_word_boundaries, name_key, normalize

MARK = "\x01"  # a character that is not a letter or digit, or a boundary put between two characters
SOLO_MARK = "\x02"  # a character that is neither, of a script without spaces (a Thai vowel sign)
SPELLED = 0x1100  # letters and digits from here on are spelled in three symbols: code point >> 12
DIGITS = 0xE000  # from DIGITS, then its two low 6-bit groups from DIGITS + 512 and DIGITS + 576
CHUNK = 8_000_000  # characters of text scanned in one automaton pass
_ASCII_MARKS = bytes(b if chr(b).isalnum() else 1 for b in range(128)) + bytes(range(128, 256))
_WORD, _UNSPACED = 1, 2
_FIRSTS = np.array([a for a, _ in UNSPACED_RANGES], dtype=np.uint32)
_LASTS = np.array([b for _, b in UNSPACED_RANGES], dtype=np.uint32)


@lru_cache(maxsize=1)
def _bmp_classes() -> np.ndarray:
    """Per BMP code point: bit 1 letter or digit (str.isalnum), bit 2 of a script without spaces."""
    table = np.array([chr(c).isalnum() for c in range(0x10000)], dtype=np.uint8)
    for first, last in UNSPACED_RANGES:
        if first < 0x10000:
            table[first:min(last, 0xFFFF) + 1] |= _UNSPACED
    return table


def _classes(points: np.ndarray) -> np.ndarray:
    classes = _bmp_classes()[np.minimum(points, 0xFFFF)]
    astral = np.flatnonzero(points > 0xFFFF)  # beyond the table: ask Python and the ranges, they are rare
    if len(astral):
        high = points[astral]
        at = np.searchsorted(_FIRSTS, high, side="right") - 1
        inside = (at >= 0) & (high <= _LASTS[np.maximum(at, 0)])
        classes[astral] = [chr(p).isalnum() for p in high.tolist()] | (inside * _UNSPACED)
    return classes


def _spelled(point: int) -> str:
    return chr(DIGITS + (point >> 12)) + chr(DIGITS + 512 + ((point >> 6) & 63)) + chr(DIGITS + 576 + (point & 63))


def scanned(text: str) -> str:
    """What the automaton reads for `text`, one character at a time (the slow definition): a
    letter or digit stays, spelled in three symbols from SPELLED on; any other character is
    SOLO_MARK if it is of a script without spaces, MARK if not; and a MARK goes between a
    character of a script without spaces and one that is not."""
    out = []
    for i, ch in enumerate(text):
        if i and unspaced(ch) != unspaced(text[i - 1]):
            out.append(MARK)
        if ch.isalnum():
            out.append(ch if ord(ch) < SPELLED else _spelled(ord(ch)))
        else:
            out.append(SOLO_MARK if unspaced(ch) else MARK)
    return "".join(out)


def scan_text(text: str) -> tuple[str, np.ndarray | None]:
    """`scanned(text)`, vectorized, and where each character of `text` begins in it: None when
    every character is one symbol there (Latin text), else an array of positions."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_MARKS).decode("ascii"), None
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    classes = _classes(points)
    word, apart = (classes & _WORD).astype(bool), (classes & _UNSPACED).astype(bool)
    spelled = word & (points >= SPELLED)
    between = np.zeros(len(points), dtype=bool)  # a MARK before this character
    np.not_equal(apart[1:], apart[:-1], out=between[1:])
    # every symbol is below U+10000 and no surrogate: 16 bits each
    first = apart.astype(np.uint16) + np.uint16(1)  # MARK or SOLO_MARK
    np.copyto(first, points, where=word & ~spelled, casting="unsafe")
    if not between.any() and not spelled.any():
        return first.tobytes().decode("utf-16-le"), None
    np.copyto(first, (points >> 12) + np.uint32(DIGITS), where=spelled, casting="unsafe")
    slots = np.empty((len(points), 4), dtype=np.uint16)  # four per character, the unused ones dropped
    slots[:, 0], slots[:, 1] = 1, first
    np.add(points >> 6 & 63, DIGITS + 512, out=slots[:, 2], casting="unsafe")
    np.add(points & 63, DIGITS + 576, out=slots[:, 3], casting="unsafe")
    keep = np.empty((len(points), 4), dtype=bool)
    keep[:, 0], keep[:, 1], keep[:, 2], keep[:, 3] = between, True, spelled, spelled
    index = np.int32 if 4 * len(points) < 2**31 else np.int64
    width = between.astype(index)
    width += 1
    np.add(width, 2, out=width, where=spelled)
    begins = np.cumsum(width, dtype=index)
    begins -= width
    begins += between
    return slots[keep].tobytes().decode("utf-16-le"), begins


def pattern(key: str, particles: bool = False) -> tuple[str, int]:
    """What the automaton looks for to find the name key `key`, and where the name begins in it:
    `scanned(key)`, with a MARK before (after) it unless its first (last) character is of a
    script without spaces (such an edge needs no boundary). A pattern begins with MARK exactly
    when it has one before the name, so names written alike begin alike. With `particles` a key
    ending in Hangul has no MARK after it: its end is confirmed by `at_word_boundaries`, since
    Korean particles written onto it make a boundary there (index/korean.py)."""
    before, after = not unspaced(key[0]), not unspaced(key[-1]) and not ends_open(key, particles)
    return MARK * before + scanned(key) + MARK * after, int(before)


def outermost_mask(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """index/text.py's `outermost` for spans given as two integer arrays (non-negative, end >
    start), vectorized: True where no other, distinct span contains the span. The distinct spans
    are sorted by start, the longer first (one int64 key), and a span is contained exactly when
    an earlier one in that order ends at or after its end."""
    if len(starts) == 0:
        return np.zeros(0, dtype=bool)
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    width = int(ends.max()) + 1
    unique, inverse = np.unique(starts * width + (width - 1 - ends), return_inverse=True)
    last = width - 1 - unique % width
    kept = np.ones(len(unique), dtype=bool)
    kept[1:] = last[1:] > np.maximum.accumulate(last)[:-1]
    return kept[inverse.reshape(-1)]


class MentionFinder:
    """Built once from (entity, name) pairs; then called on a batch of documents, it gives the set
    of entities each one mentions. `convert`, when given, rewrites every name and every text before
    they are matched (Chinese to simplified characters, index/chinese.py): a name occurs where its
    converted form occurs in the converted text. `mentions` as IndexSettings.mentions: "maximal",
    an occurrence inside a longer occurrence of another of these names is none; "any", every one.
    `particles` as IndexSettings.ko_particles: a Hangul name's end is a boundary before Korean
    particles (index/korean.py)."""

    def __init__(self, names: Iterable[tuple[str, str]], alias_filter: AliasFilter = AliasFilter(),
                 convert: Callable[[str], str] | None = None, mentions: str = "maximal",
                 particles: bool = False) -> None:
        if mentions not in MENTIONS:
            raise ValueError(f"mentions {mentions!r}: use one of {', '.join(MENTIONS)}")
        self.maximal = mentions == "maximal"
        self.particles = particles
        self.convert = convert
        if convert is not None:
            alias_filter = alias_filter.converted(convert)
        by_name: dict[str, set[str]] = defaultdict(set)
        for entity, name in names:
            key = name_key(convert(name) if convert else name)
            if alias_filter.keeps(key):
                by_name[key].add(entity)
        by_pattern: dict[str, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)
        begins: dict[str, int] = {}
        for key, entities in by_name.items():
            written, begins[written] = pattern(key, particles)
            by_pattern[written].append((key, tuple(sorted(entities))))
        self.automaton = ahocorasick.Automaton()
        for written, candidates in by_pattern.items():
            self.automaton.add_word(written, (len(written) - 1 - begins[written], tuple(candidates)))
        self.names = len(by_name)
        self.entities = len({e for es in by_name.values() for e in es})
        if self.names:
            self.automaton.make_automaton()

    def __call__(self, documents: Sequence[Document]) -> list[set[str]]:
        """The `mentions` function an index takes."""
        return self.in_texts([d.searchable for d in documents])

    def mentions(self, document: Document) -> set[str]:
        return self.in_texts([document.searchable])[0]

    def in_texts(self, texts: Sequence[str]) -> list[set[str]]:
        """The entities each text mentions; the texts are scanned together, CHUNK characters at a
        time (a spelled Han character takes some 30 bytes of arrays while it is scanned)."""
        found: list[set[str]] = [set() for _ in texts]
        if not self.names or not texts:
            return found
        normalized = [normalize(self.convert(t) if self.convert else t) for t in texts]
        first = size = 0
        for i, text in enumerate(normalized):
            size += len(text) + 1
            if size >= CHUNK or i == len(normalized) - 1:
                self._scan(normalized[first:i + 1], found[first:i + 1])
                first, size = i + 1, 0
        return found

    def _scan(self, normalized: list[str], found: list[set[str]]) -> None:
        starts, ends, at = [], [], 1
        for text in normalized:  # where each text begins and ends in the joined string
            starts.append(at)
            at += len(text)
            ends.append(at)
            at += 1
        joined = MARK + MARK.join(normalized) + MARK
        text, begins = scan_text(joined)
        hits = list(self.automaton.iter(text))
        if not hits:
            return
        # where each hit's name begins in `text`, then in `joined`, and in which document
        at = np.fromiter((end - back for end, (back, _) in hits), dtype=np.int64, count=len(hits))
        if begins is not None:
            char = np.minimum(np.searchsorted(begins, at), len(begins) - 1)
            at = np.where(begins[char] == at, char, -1)  # -1: not the first symbol of a character
        docs = np.searchsorted(np.array(starts), at, side="right") - 1
        if self.maximal:
            self._outermost(joined, ends, at, docs, hits, found)
            return
        for start, doc, (_, (_, candidates)) in zip(at.tolist(), docs.tolist(), hits):
            if start < 0:
                continue
            for name, entities in candidates:
                if self._confirmed(joined, start, name, ends[doc]):
                    found[doc].update(entities)

    def _confirmed(self, joined: str, start: int, name: str, end: int) -> bool:
        """Whether the hit of `name` at `start` is the name in the text; a name whose pattern has
        no MARK after it (a Hangul end, under `particles`) has its end checked here."""
        stop = start + len(name)
        if stop > end or not joined.startswith(name, start):
            return False
        return not ends_open(name, self.particles) or at_word_boundaries(joined, start, stop, True)

    def _outermost(self, joined: str, ends: list[int], at: np.ndarray, docs: np.ndarray, hits: list,
                   found: list[set[str]]) -> None:
        """The entities of the confirmed hits no longer confirmed hit contains. Positions are in
        `joined`, where documents never overlap, so one pass over the batch decides for all."""
        begins, lengths, owners = [], [], []
        for start, doc, (_, (_, candidates)) in zip(at.tolist(), docs.tolist(), hits):
            if start < 0:
                continue
            for name, entities in candidates:
                if self._confirmed(joined, start, name, ends[doc]):
                    begins.append(start)
                    lengths.append(len(name))
                    owners.append((doc, entities))
        if not begins:
            return
        first = np.array(begins, dtype=np.int64)
        for k in np.flatnonzero(outermost_mask(first, first + np.array(lengths, dtype=np.int64))).tolist():
            doc, entities = owners[k]
            found[doc].update(entities)

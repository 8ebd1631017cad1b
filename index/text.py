"""What "a document mentions a name" means, in one place.

Text and names are compared after Unicode NFKC normalization and case folding (NFKC again after
folding, since folding can produce characters NFKC would rewrite). A name occurs where its
normalized form appears and neither of its two edges is glued (`at_word_boundaries`): "Paris"
occurs in "paris," and "(PARIS)" but not in "Parisian". Characters of scripts written without
spaces (Han, Kana, Thai, ...; index/writing_systems.py) never glue, so "伦敦" occurs in "英国的首都是伦敦",
and in mixed text a change between such a script and any other is a boundary: "Paris" occurs in
"巴黎Paris。" and in "Paris是法国的首都", "东京" and "Tokyo" both in "东京Tokyo".
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from .korean import hangul, particle_end
from .writing_systems import han, unspaced


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def name_key(name: str) -> str:
    """A name as it is matched: normalized, without surrounding white space."""
    return normalize(name).strip()


def glued(outside: str, inside: str) -> bool:
    """True when the text character `outside`, next to the name's edge character `inside`, makes
    that edge no boundary: `outside` is a letter or digit (str.isalnum) and neither character
    belongs to a script written without spaces (index/writing_systems.py)."""
    return outside.isalnum() and not unspaced(outside) and not unspaced(inside)


def at_word_boundaries(text: str, start: int, end: int, particles: bool = False) -> bool:
    """True when neither edge of text[start:end] (non-empty) is glued to the text around it.

    The rule as it was before scripts without spaces, for every other character: the text
    character outside an edge must not be a letter or digit, whatever the name's edge character
    is ("(foo)" occurs in " (foo)" but not in "x(foo)"). An edge where the outside or the inside
    character is Han, Kana, Thai, ... needs nothing: such a character is a word of its own, so
    "京(foo)" holds "(foo)" and "ab东京" holds "东京". Hangul is written with spaces and keeps
    word boundaries ("서울" is not in "서울은"); with `particles` (IndexSettings.ko_particles) a
    Hangul name's end is a boundary before Korean particles too ("서울" is in "서울은", not in
    "서울역"; index/korean.py)."""
    return ((start == 0 or not glued(text[start - 1], text[start]))
            and (end == len(text) or not glued(text[end], text[end - 1])
                 or (particles and hangul(text[end - 1]) and hangul(text[end]) and particle_end(text, end))))


def occurs(normalized_text: str, normalized_name: str, particles: bool = False) -> bool:
    """The slow, obvious definition (a scan with str.find); the reference the indexes are tested against."""
    start = normalized_text.find(normalized_name)
    while start != -1:
        if at_word_boundaries(normalized_text, start, start + len(normalized_name), particles):
            return True
        start = normalized_text.find(normalized_name, start + 1)
    return False


# Very short names match nearly everything: by default a name counts from this many characters
# (after normalization). `corpus index --min-alias-length`, a pipeline's corpus and an index's
# recorded settings default to it.
MIN_ALIAS_LENGTH = 2
# A name written in Han characters counts from this many: one Han character is a word, and can be
# a whole name (铁 iron, 秦 Qin); KDF counts an entity's Chinese name whatever its length
# (003:227-238). Where a Chinese or Japanese language is indexed (index/settings.py).
MIN_HAN_LENGTH = 1


@dataclass(frozen=True)
class AliasFilter:
    """Which names count as mentions: none shorter than `min_length` characters (after
    normalization, MIN_ALIAS_LENGTH unless told), a name written in Han characters none shorter
    than `han_min_length` (None: `min_length` too); `excluded` drops chosen ones (compared
    normalized)."""

    min_length: int = MIN_ALIAS_LENGTH
    excluded: frozenset[str] = field(default_factory=frozenset)
    han_min_length: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "excluded", frozenset(normalize(x) for x in self.excluded))

    def converted(self, convert: Callable[[str], str]) -> AliasFilter:
        """The filter for names that went through `convert` (index/chinese.py): its excluded names too."""
        return AliasFilter(self.min_length, frozenset(map(convert, self.excluded)), self.han_min_length)

    def keeps(self, normalized_name: str) -> bool:
        shortest = self.min_length
        if self.han_min_length is not None and normalized_name and all(map(han, normalized_name)):
            shortest = self.han_min_length
        return (len(normalized_name) >= shortest and normalized_name not in self.excluded
                and any(ch.isalnum() for ch in normalized_name))


def outermost(spans: Sequence[tuple[int, int]]) -> list[bool]:
    """Which of the occurrences `spans` ((start, end), end > start, positions in one text) are
    mentions as a reader takes them: True where no other, distinct span of the list contains it
    (start' <= start and end <= end'). "czech" inside "czech republic" is not the Czech language's
    mention; two spans that overlap without one holding the other are both kept, and a span listed
    several times (one name key of several entities) is kept or dropped as one. Every backend
    decides with this function, so they count one thing. O(n log n): distinct spans sorted by
    start, the longer first, are contained exactly when an earlier one reaches as far."""
    order = sorted(set(spans), key=lambda span: (span[0], -span[1]))
    kept: dict[tuple[int, int], bool] = {}
    reach = -1  # the furthest end of the distinct spans sorted before this one
    for start, end in order:
        kept[(start, end)] = end > reach
        reach = max(reach, end)
    return [kept[(start, end)] for start, end in spans]


def mentioned_keys(normalized_text: str, keys: Iterable[str], particles: bool = False) -> set[str]:
    """The slow, obvious definition of which name keys a text mentions when a name inside a
    longer indexed name does not count (`IndexSettings.mentions` "maximal"): every occurrence of
    every key (str.find, `at_word_boundaries`), then those `outermost` keeps. The reference the
    indexes' fast paths are tested against."""
    found: list[tuple[int, int]] = []
    of: list[str] = []
    for key in set(keys):
        start = normalized_text.find(key) if key else -1
        while start != -1:
            if at_word_boundaries(normalized_text, start, start + len(key), particles):
                found.append((start, start + len(key)))
                of.append(key)
            start = normalized_text.find(key, start + 1)
    return {key for key, keep in zip(of, outermost(found)) if keep}

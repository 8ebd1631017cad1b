"""Korean particles: where a name written in Hangul ends though more Hangul follows it.

Korean is written with spaces between words, but a noun's particles (조사) are written onto it:
우주가, 우주의, 우주에서는 all mention 우주 (the universe). A suffix that makes another word is
written onto it just the same: 포르투갈어 (the Portuguese language), 미국인 (an American). So the
end of a Hangul name followed by Hangul is a boundary exactly when the Hangul that follows, up to
the next character that is not a Hangul syllable, is one to three particles of PARTICLES in a
row (에서 + 는, 으로 + 부터 + 는).

The list is the particles of the Standard Korean Language Dictionary's (표준국어대사전) three
classes, case particles (격조사), auxiliary particles (보조사) and conjunctive particles
(접속조사), in the forms written after a noun, with the copula 이다's forms written onto a noun
(미국이다, 미국이었다). Left out on purpose: 인 (the copula's attributive form is also the suffix
of 미국인), the vocatives 아 / 야 and the bare 다 / 고 / 며 after a vowel, each far more often
the end of another word than a particle after a name. docs/building-graphs.md gives the
measured agreement with a hand count.
"""

from __future__ import annotations

from functools import lru_cache

CASE = ("이", "가", "께서", "에서", "을", "를", "의", "에", "에게", "께", "한테", "더러", "에게서", "한테서",
        "로", "으로", "로서", "으로서", "로써", "으로써", "와", "과", "하고", "이랑", "랑", "보다", "처럼",
        "같이", "만큼", "서")
AUXILIARY = ("은", "는", "도", "만", "까지", "부터", "마저", "조차", "밖에", "마다", "나", "이나", "나마",
             "이나마", "든지", "이든지", "라도", "이라도", "뿐", "대로")
COPULA = ("이다", "이며", "이고", "이었다", "였다", "이었고", "였고", "이었으며", "였으며", "이자", "이던",
          "였던", "이었던", "이라", "라는", "이라는", "라고", "이라고")
PARTICLES = frozenset(CASE + AUXILIARY + COPULA)
MOST_IN_A_ROW = 3
_LONGEST = max(map(len, PARTICLES))
# what a reader of bytes takes after a name to see its particles whole: the longest run of
# particles and the syllable after it, three UTF-8 bytes each
PARTICLE_BYTES = 3 * (_LONGEST * MOST_IN_A_ROW + 1)


def hangul(ch: str) -> bool:
    """A precomposed Hangul syllable (가-힣), the letters words are written in."""
    return "\uac00" <= ch <= "\ud7a3"


def ends_open(name: str, particles: bool) -> bool:
    """Whether `name`'s end is decided by the particles after it (a Hangul end, under `particles`)
    rather than by a boundary character: every backend asks this one question."""
    return particles and hangul(name[-1])


@lru_cache(maxsize=65_536)
def particles_only(run: str) -> bool:
    """Whether `run` (Hangul syllables) is one to MOST_IN_A_ROW particles written in a row."""
    reachable = {0: 0}  # position -> fewest particles that reach it
    for at in range(len(run)):
        if at not in reachable or reachable[at] >= MOST_IN_A_ROW:
            continue
        for size in range(1, min(_LONGEST, len(run) - at) + 1):
            if run[at:at + size] in PARTICLES:
                reachable[at + size] = min(reachable.get(at + size, MOST_IN_A_ROW), reachable[at] + 1)
    return len(run) in reachable and len(run) > 0


def particle_end(text: str, end: int) -> bool:
    """Whether the Hangul name ending at `end` ends there though text[end] is Hangul: what follows,
    up to the first character that is not a Hangul syllable, is particles only."""
    stop = end
    while stop < len(text) and hangul(text[stop]) and stop - end <= _LONGEST * MOST_IN_A_ROW:
        stop += 1
    return particles_only(text[end:stop])

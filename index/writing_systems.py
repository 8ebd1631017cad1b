"""Which characters belong to scripts written without spaces between words.

In such text (Chinese, Japanese, Thai, ...) a word has no boundary to find, so a name counts
wherever it occurs (index/text.py says how). The table lists the code points whose Unicode Script
property is one of UNSPACED_SCRIPTS (Unicode 17; a test checks it against the `regex` module's
script data where that is installed), plus the Japanese length and repetition marks, whose Script
is Common although they are written in kana text only. Hangul is written with spaces: not here.
"""

from __future__ import annotations

from bisect import bisect_right

UNSPACED_SCRIPTS = ("Han", "Hiragana", "Katakana", "Bopomofo", "Nushu", "Tangut", "Khitan_Small_Script", "Yi",
                    "Thai", "Lao", "Khmer", "Myanmar", "Tibetan", "Tai_Le", "New_Tai_Lue", "Tai_Tham", "Tai_Viet",
                    "Balinese", "Javanese")

# (first, last) code points, inclusive, by script.
_RANGES = {
    "Han": "2E80-2E99 2E9B-2EF3 2F00-2FD5 3005 3007 3021-3029 3038-303B 3400-4DBF 4E00-9FFF F900-FA6D FA70-FAD9 "
           "16FE2-16FE3 16FF0-16FF6 20000-2A6DF 2A700-2B81E 2B820-2CEAD 2CEB0-2EBE0 2EBF0-2EE5D 2F800-2FA1D "
           "30000-3134A 31350-33479",
    "Hiragana": "3041-3096 309D-309F 1B001-1B11F 1B123 1B132 1B150-1B152 1F200",
    "Katakana": "30A1-30FA 30FD-30FF 31F0-31FF 32D0-32FE 3300-3357 FF66-FF6F FF71-FF9D 1AFF0-1AFF3 1AFF5-1AFFB "
                "1AFFD-1AFFE 1B000 1B120-1B122 1B124-1B128 1B155 1B164-1B168",
    "Bopomofo": "2EA-2EB 3105-312F 31A0-31BF",
    "Nushu": "16FE1 1B170-1B2FB",
    "Tangut": "16FE0 17000-18AFF 18D00-18D20 18D80-18DF2",
    "Khitan_Small_Script": "16FE4 18B00-18CDA 18CFF",
    "Yi": "A000-A48C A490-A4C6",
    "Thai": "E01-E3A E40-E5B",
    "Lao": "E81-E82 E84 E86-E8A E8C-EA3 EA5 EA7-EBD EC0-EC4 EC6 EC8-ECE ED0-ED9 EDC-EDF",
    "Khmer": "1780-17DD 17E0-17E9 17F0-17F9 19E0-19FF",
    "Myanmar": "1000-109F A9E0-A9FE AA60-AA7F 116D0-116E3",
    "Tibetan": "F00-F47 F49-F6C F71-F97 F99-FBC FBE-FCC FCE-FD4 FD9-FDA",
    "Tai_Le": "1950-196D 1970-1974",
    "New_Tai_Lue": "1980-19AB 19B0-19C9 19D0-19DA 19DE-19DF",
    "Tai_Tham": "1A20-1A5E 1A60-1A7C 1A7F-1A89 1A90-1A99 1AA0-1AAD",
    "Tai_Viet": "AA80-AAC2 AADB-AADF",
    "Balinese": "1B00-1B4C 1B4E-1B7F",
    "Javanese": "A980-A9CD A9D0-A9D9 A9DE-A9DF",
}
# Script Common, written in Japanese only: 〆 and 〼, the kana repetition marks 〱-〵, the sound
# marks ゛゜, the double hyphen ゠ and the length mark ー (full and half width).
JAPANESE_MARKS = "3006 3031-3035 303C 309B-309C 30A0 30FC FF70"


def _parse(spans: str) -> list[tuple[int, int]]:
    out = []
    for span in spans.split():
        first, _, last = span.partition("-")
        out.append((int(first, 16), int(last or first, 16)))
    return out


def _merged() -> tuple[tuple[int, int], ...]:
    spans = sorted(s for text in (*_RANGES.values(), JAPANESE_MARKS) for s in _parse(text))
    out: list[list[int]] = []
    for first, last in spans:
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return tuple((a, b) for a, b in out)


UNSPACED_RANGES = _merged()
_FIRSTS = [a for a, _ in UNSPACED_RANGES]


def script_ranges(script: str) -> list[tuple[int, int]]:
    """The (first, last) code point ranges listed for one of UNSPACED_SCRIPTS."""
    return _parse(_RANGES[script])


def unspaced(ch: str) -> bool:
    """True when the character `ch` belongs to a script written without spaces."""
    point = ord(ch)
    i = bisect_right(_FIRSTS, point) - 1
    return i >= 0 and point <= UNSPACED_RANGES[i][1]


_HAN = tuple(script_ranges("Han"))
_HAN_FIRSTS = [a for a, _ in _HAN]


def han(ch: str) -> bool:
    """True when the character `ch` is a Han character (Script=Han: Chinese characters, kanji,
    hanja). One of them alone can be a whole word, and a whole name (铁, 秦, 沪)."""
    point = ord(ch)
    i = bisect_right(_HAN_FIRSTS, point) - 1
    return i >= 0 and point <= _HAN[i][1]

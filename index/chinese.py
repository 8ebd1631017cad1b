"""Chinese in one script: when an index counts names in a Chinese language, every name and every
document is converted from traditional to simplified characters (OpenCC) before they are matched.

Why: Chinese is written in two scripts and Wikidata's `zh` names come in either (London's is 倫敦,
simplified articles write 伦敦), so names matched as written count only in text of their own
script. Converted, both sides read 伦敦. The conversion goes to simplified because that direction
merges (發 and 髮 both become 发) where the other one has to choose (发 is 發 or 髮 by context).

Which OpenCC configuration: hk2s by default. Measured per character with OpenCC 1.4: of the
4,961 simplified characters that have a traditional form, a simplified character and its
traditional form (written by s2t / s2tw / s2hk) convert to different characters under hk2s for
44 / 54 / 44 of them, t2s 44 / 55 / 50, tw2s 47 / 47 / 52; those left are rare variants (㓰, 侭).
hk2s is t2s plus the Hong Kong forms (衞生 becomes 卫生; t2s leaves 衞). tw2s is not a fixed point
on simplified text (a lone 么 becomes 幺 while 麼 becomes 么). `none` matches names as written.

A document is converted whole, then matched; an index keeps which documents mention an entity,
never offsets, so a conversion that changed a text's length would change no count. (OpenCC's
dictionaries map each character and phrase to one of the same length.) The conversion applies to
the names of every language indexed with a Chinese one, since it rewrites whole documents.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable

ZH_CONVERSIONS = ("hk2s", "t2s", "tw2s", "none")  # OpenCC's traditional-to-simplified configurations, or none
DEFAULT_ZH_CONVERSION = "hk2s"
# Sinitic languages that Wikidata names in Han characters, in either script; also with a region or
# script subtag (zh-hant, zh-tw, yue-hk, ...). Wikipedia's zh-yue, zh-classical, zh-min-nan are zh-*.
SINITIC = frozenset({"zh", "cmn", "yue", "lzh", "wuu", "gan", "hak", "hsn", "cdo", "cpx", "cjy", "nan"})
INSTALL = "pip install 'factprobe[frequency]'"
# The codes Wikidata keeps Chinese labels under: `zh` and its script and region variants. An
# entity whose Chinese label is only `zh-hant: 倫敦` has no `zh` name at all.
ZH_VARIANTS = ("zh", "zh-hans", "zh-hant", "zh-cn", "zh-tw", "zh-hk", "zh-sg", "zh-mo", "zh-my")
ZH_VARIANT_RULES = ("all", "as-given")  # every variant code's names under `zh`, or only the codes given


def with_zh_variants(languages: Iterable[str]) -> tuple[str, ...]:
    """`languages` with every Chinese variant code after a bare `zh`, each code once, in order."""
    out: list[str] = []
    for lang in languages:
        out.extend(ZH_VARIANTS if lang == "zh" else (lang,))
    return tuple(dict.fromkeys(out))
_SURROGATES = re.compile("([\ud800-\udfff]+)")


class ConverterMissing(RuntimeError):
    """OpenCC is not installed and an index would convert Chinese: one line that says what to install."""


def is_chinese(language: str) -> bool:
    return language.lower().split("-")[0] in SINITIC


def chinese_indexed(languages: Iterable[str]) -> bool:
    return any(map(is_chinese, languages))


@lru_cache(maxsize=None)
def converter(config: str) -> Callable[[str], str]:
    """A function that converts text with the OpenCC configuration `config` (one of ZH_CONVERSIONS
    but none). ASCII text is returned as it is, without a call into OpenCC."""
    if config not in ZH_CONVERSIONS or config == "none":
        raise ValueError(f"zh conversion {config!r}: use one of {', '.join(ZH_CONVERSIONS[:-1])}")
    try:
        import opencc
    except ImportError:
        raise ConverterMissing(f"Chinese names are matched in simplified characters, converted by OpenCC, which is "
                               f"not installed: {INSTALL} (or --zh-convert none to match them as "
                               f"written)") from None
    engine = opencc.OpenCC(config)

    def convert(text: str) -> str:
        if text.isascii():
            return text
        try:
            return engine.convert(text)
        except UnicodeEncodeError:  # a lone surrogate (JSON may escape one): OpenCC reads UTF-8, so around it
            pieces = _SURROGATES.split(text)
            return "".join(p if i % 2 else engine.convert(p) for i, p in enumerate(pieces))

    return convert

"""What "a document mentions an entity" means for one index, and where an entity's names come from.

The settings are recorded in the index when it is first built: every count it gives, and every
document added to it later, then share one meaning, whichever backend holds it. `names`: "all"
(labels and aliases) or "label" (KDF's one name per language). `zh_convert`: how Chinese is
compared where a Chinese language is indexed (index/chinese.py: OpenCC to simplified, or "none").
`zh_variants`: whose names `zh` stands for, "all" the codes Wikidata keeps Chinese labels under
(zh, zh-hans, zh-hant, zh-cn, zh-tw, ...) or "as-given" (`zh` alone). `min_han_length`: from how
many characters a name in Han characters counts where Chinese or Japanese is indexed (1: 铁 is a
name). `mentions`: "maximal" counts only occurrences no longer occurrence of another indexed name
contains (index/text.py `outermost`: "Czech" inside "Czech Republic" is no mention), "any" every
occurrence (KDF's "documents that mention both entities", 003:237, does not say which).
`ko_particles`: where Korean is indexed, a name ending in Hangul also ends before Korean
particles written onto it (우주가, 우주의; index/korean.py), never before another suffix (포르투갈어).

An index recorded before a setting existed reads as it then counted: names "all", zh_convert
"none", zh_variants "as-given", min_han_length = min_alias_length, mentions "any", ko_particles
off. Link-based counting has no names inside names: it ignores `mentions`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator

from ..kg.model import LANGUAGES
from .chinese import (DEFAULT_ZH_CONVERSION, ZH_CONVERSIONS, ZH_VARIANT_RULES, chinese_indexed, converter,
                      is_chinese, with_zh_variants)
from .text import MIN_ALIAS_LENGTH, MIN_HAN_LENGTH, AliasFilter, name_key

METHODS = ("names", "links")
NAMES = ("all", "label")  # which of an entity's names count as mentions
MENTIONS = ("maximal", "any")  # which occurrences of a name count: outermost only, or every one


@dataclass(frozen=True)
class IndexSettings:
    method: str = "names"  # "names": labels and aliases in the text; "links": the corpus's own entity links
    languages: tuple[str, ...] = LANGUAGES  # the store's default name languages
    min_alias_length: int = MIN_ALIAS_LENGTH
    excluded: tuple[str, ...] = ()
    names: str = "all"  # "all": labels and aliases; "label": the label in each language only
    zh_convert: str = DEFAULT_ZH_CONVERSION  # with a Chinese language: OpenCC to simplified, or "none"
    min_han_length: int = MIN_HAN_LENGTH  # with a Chinese or Japanese language: names in Han characters
    mentions: str = "maximal"  # "maximal": no name inside a longer indexed name counts; "any": every occurrence
    zh_variants: str = ZH_VARIANT_RULES[0]  # "all": zh means every Chinese variant code; "as-given": zh alone
    ko_particles: bool = True  # with Korean indexed: a Hangul name ends before particles written onto it

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method {self.method!r}: use one of {', '.join(METHODS)}")
        if self.names not in NAMES:
            raise ValueError(f"names {self.names!r}: use one of {', '.join(NAMES)}")
        if self.zh_convert not in ZH_CONVERSIONS:
            raise ValueError(f"zh_convert {self.zh_convert!r}: use one of {', '.join(ZH_CONVERSIONS)}")
        if self.mentions not in MENTIONS:
            raise ValueError(f"mentions {self.mentions!r}: use one of {', '.join(MENTIONS)}")
        if self.zh_variants not in ZH_VARIANT_RULES:
            raise ValueError(f"zh_variants {self.zh_variants!r}: use one of {', '.join(ZH_VARIANT_RULES)}")
        object.__setattr__(self, "languages", tuple(self.languages))
        object.__setattr__(self, "excluded", tuple(sorted(self.alias_filter.excluded)))

    @property
    def alias_filter(self) -> AliasFilter:
        return AliasFilter(min_length=self.min_alias_length, excluded=frozenset(self.excluded),
                           han_min_length=self.min_han_length if self.han_written else None)

    @property
    def han_written(self) -> bool:
        """Whether names are counted in a language written in Han characters (Chinese, Japanese):
        where `min_han_length` applies; elsewhere a Han name is held to `min_alias_length`."""
        return self.method == "names" and any(is_chinese(lang) or lang.split("-")[0] == "ja"
                                              for lang in self.languages)

    @property
    def particles(self) -> bool:
        """Whether Korean particles end a Hangul name here (`ko_particles`, where Korean is indexed)."""
        return self.method == "names" and self.ko_particles and any(lang.split("-")[0] == "ko"
                                                                     for lang in self.languages)

    @property
    def chinese(self) -> bool:
        """Whether names are counted in a Chinese language (the case `zh_convert` is about)."""
        return self.method == "names" and chinese_indexed(self.languages)

    @property
    def name_languages(self) -> tuple[str, ...]:
        """The language codes whose names are read: `languages`, with `zh` standing for every
        Chinese variant code under zh_variants="all"."""
        return with_zh_variants(self.languages) if self.zh_variants == "all" else self.languages

    def converter(self) -> Callable[[str], str] | None:
        """What names and documents go through before they are matched: None when nothing is converted.
        ConverterMissing (one line) when a conversion is set and OpenCC is not installed."""
        return converter(self.zh_convert) if self.chinese and self.zh_convert != "none" else None

    def to_dict(self) -> dict:
        """As recorded in an index; `names` only where it is not "all", `zh_convert` only where
        something is converted, `min_han_length` only where it applies and differs from
        `min_alias_length` and `mentions` only where it is "maximal", so that an index built
        before any of them existed keeps its settings and takes more documents."""
        if self.method == "links":
            return {"method": "links"}
        out = {"method": "names", "languages": list(self.languages), "min_alias_length": self.min_alias_length,
               "excluded": list(self.excluded)}
        if self.names != "all":
            out["names"] = self.names
        if self.chinese and self.zh_convert != "none":
            out["zh_convert"] = self.zh_convert
        if self.han_written and self.min_han_length != self.min_alias_length:
            out["min_han_length"] = self.min_han_length
        if self.mentions == "maximal":
            out["mentions"] = self.mentions
        if "zh" in self.languages and self.zh_variants == "all":
            out["zh_variants"] = self.zh_variants
        if self.particles:
            out["ko_particles"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict) -> IndexSettings:
        if data.get("method") == "links":
            return cls(method="links")
        return cls("names", tuple(data["languages"]), int(data["min_alias_length"]), tuple(data["excluded"]),
                   data.get("names", "all"), data.get("zh_convert", "none"),
                   int(data.get("min_han_length", data["min_alias_length"])), data.get("mentions", "any"),
                   data.get("zh_variants", "as-given"), bool(data.get("ko_particles", False)))

    def describe(self) -> str:
        """One line for summaries: how a document's mentions were found."""
        if self.method == "links":
            return "the corpus's own entity links"
        which = "labels and aliases" if self.names == "all" else "labels only (--names label)"
        script = ""
        if self.chinese:
            script = ("; Chinese as written (--zh-convert none)" if self.zh_convert == "none"
                      else f"; Chinese in simplified characters (OpenCC {self.zh_convert})")
        counted = ("; names inside longer names do not count (--mentions maximal)" if self.mentions == "maximal"
                   else "; every occurrence, inside longer names too (--mentions any)")
        variants = ("; zh: every Chinese variant code (zh-hans, zh-hant, zh-tw, ...)"
                    if "zh" in self.languages and self.zh_variants == "all" else "")
        korean = "; Korean: a name also ends before particles (우주가, 우주의)" if self.particles else ""
        return f"names in {','.join(self.languages)}: {which}{script}{variants}{korean}{counted}"


class StoreNames:
    """An entity's match keys (its labels, and aliases unless names="label", in the settings'
    languages, converted, normalized and filtered as the settings say), read from the
    knowledge-graph store on demand: a backend that matches names at query time needs only the
    entities it is asked about."""

    def __init__(self, store: str | Path, settings: IndexSettings) -> None:
        from ..kg.graph import KnowledgeGraph

        self.convert = settings.converter() or (lambda name: name)  # first: without OpenCC, fail before any work
        self.kg = KnowledgeGraph(store)
        self.settings = settings
        self._keep = settings.alias_filter.converted(self.convert).keeps
        self.of = lru_cache(maxsize=200_000)(self._of)

    def _of(self, entity: str) -> tuple[str, ...]:
        keys = set()
        for lang in self.settings.name_languages:
            labels = self.kg.labels(entity, lang)
            names = (labels.label, *labels.aliases) if self.settings.names == "all" else (labels.label,)
            keys.update(name_key(self.convert(n)) for n in names if n)
        return tuple(sorted(k for k in keys if self._keep(k)))

    def __call__(self, entity: str) -> tuple[str, ...]:
        return self.of(entity)

    def pairs(self) -> Iterator[tuple[str, str]]:
        """Every (entity, name) in the settings' languages, unfiltered (a MentionFinder filters)."""
        return self.kg.names(self.settings.name_languages, aliases=self.settings.names == "all")

    def close(self) -> None:
        self.kg.close()

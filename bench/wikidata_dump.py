"""A seeded, deterministic Wikidata JSON dump laid out like the real ones (`[`, one entity per
line ending in `,`, `]`) with a realistic mix: humans, places, scholarly articles, taxa,
organisations and some property entities; labels in dozens of languages, aliases, sitelinks,
many external ids, every value type, P580/P582/P585 qualifiers, references, ranks,
somevalue/novalue. Used by bench/ingest.py (and bench/scale.py); generation is never measured.
"""

from __future__ import annotations

import bz2
import gzip
import multiprocessing
import random
import time
from pathlib import Path

import orjson

SEED = 20240601
WD = "http://www.wikidata.org/entity/"

# ---------------------------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------------------------

# Real items carry labels/descriptions in dozens of languages; we keep only "en".
LANGS = ["en", "de", "fr", "es", "it", "nl", "pt", "ru", "ja", "zh", "pl", "sv", "uk", "ca", "ar", "fa", "ko", "cs", "hu", "fi", "he", "id", "vi", "tr", "da", "nb", "ro", "sr", "el", "bg", "eo", "eu", "gl", "hy", "ka", "sk", "sl", "ta", "th", "ur", "bn", "hi", "ms", "et", "lt", "lv", "sq", "mk", "be", "az", "kk"]
COMMON_LANGS = LANGS[:12]
# Popular objects of item-valued claims (countries, classes, occupations, ...).
COUNTRIES = ["Q30", "Q183", "Q142", "Q145", "Q38", "Q29", "Q17", "Q148", "Q159", "Q668", "Q155",
             "Q16", "Q408", "Q96", "Q36", "Q45", "Q55", "Q39", "Q40", "Q34", "Q20", "Q35", "Q33"]
OCCUPATIONS = ["Q82955", "Q36180", "Q1930187", "Q33999", "Q177220", "Q639669", "Q1028181",
               "Q901", "Q1622272", "Q40348", "Q937857", "Q169470", "Q11063", "Q483501",
               "Q49757", "Q593644", "Q81096", "Q188094", "Q2526255", "Q10800557"]
PLACE_CLASSES = ["Q515", "Q532", "Q3957", "Q1549591", "Q747074", "Q484170", "Q262166",
                 "Q5119", "Q2983893", "Q15284"]
ORG_CLASSES = ["Q4830453", "Q783794", "Q43229", "Q3918", "Q163740", "Q31855", "Q327333",
               "Q11032", "Q2085381", "Q7278"]
TAXON_RANKS = ["Q7432", "Q34740", "Q35409", "Q36602", "Q37517", "Q68947"]
JOURNALS = [f"Q{n}" for n in range(15716000, 15716400, 7)]
LANGUAGES_ITEMS = ["Q1860", "Q188", "Q150", "Q1321", "Q652", "Q7737", "Q5287", "Q7850", "Q5146"]
UNITS = {"area": "Q712226", "length": "Q11573", "mass": "Q11570", "height": "Q11573",
         "people": "1", "money": "Q4917"}
CALENDAR = WD + "Q1985727"
# External-id properties by entity kind (real items have many: authority files, databases).
EXT_HUMAN = ["P214", "P213", "P227", "P244", "P268", "P269", "P646", "P2163", "P345", "P1006",
             "P7859", "P1263", "P2002", "P2003", "P434", "P1015", "P950", "P906", "P396", "P1207",
             "P5361", "P8189", "P409", "P691", "P1053", "P496", "P3430", "P4823", "P1280", "P1417"]
EXT_PLACE = ["P1566", "P402", "P646", "P214", "P227", "P244", "P1667", "P982", "P6766",
             "P3417", "P1417", "P8168", "P7197", "P2581", "P1997", "P4672", "P9957", "P300"]
EXT_ARTICLE = ["P356", "P698", "P932", "P8978", "P819", "P2888", "P5875", "P6179", "P1055"]
EXT_TAXON = ["P685", "P846", "P830", "P3151", "P815", "P960", "P1070", "P5037", "P7715",
             "P10585", "P9157", "P6034", "P1939", "P3099", "P2464", "P1772", "P4301", "P627"]
EXT_ORG = ["P214", "P646", "P1278", "P2002", "P2013", "P4264", "P3500", "P1320", "P2088",
           "P6782", "P3417", "P8168", "P2427", "P227", "P244"]

WORDS = ["alpha", "beta", "gamma", "delta", "river", "north", "south", "mount", "lake", "saint", "new", "old", "great", "little", "royal", "institute", "society", "journal", "protein", "gene", "cell", "analysis", "study", "effect", "model", "theory", "data", "network", "quantum", "system", "human", "natural", "energy", "water", "light", "history", "music", "art", "united", "national", "city", "county", "valley", "castle", "church", "bridge", "field", "house", "park", "school", "college", "university", "museum", "library", "station", "island", "forest", "bay", "port", "green", "red", "black", "white"]
GIVEN = ["John", "Mary", "James", "Anna", "Peter", "Maria", "Paul", "Elena", "David", "Sarah", "Michael", "Laura", "Thomas", "Julia", "Carlos", "Yuki", "Hans", "Ingrid", "Pierre", "Sofia", "Ahmed", "Olga", "Ivan", "Chen", "Priya", "Kofi", "Lars", "Ana"]
FAMILY = ["Smith", "Müller", "García", "Rossi", "Dubois", "Kowalski", "Ivanov", "Tanaka", "Wang", "Silva", "Jensen", "Novak", "Nagy", "Kim", "Nguyen", "Schmidt", "Martin", "López", "Andersson", "Horvat", "Papadopoulos", "Öztürk"]


class Gen:
    """Builds one entity's JSON object; every choice comes from `rng`."""

    def __init__(self, rng: random.Random, n_entities: int):
        self.r = rng
        self.n = n_entities

    # -- small helpers ----------------------------------------------------------------------

    def hex(self, bits: int) -> str:
        return f"{self.r.getrandbits(bits):0{bits // 4}x}"

    def guid(self, eid: str) -> str:
        h = f"{self.r.getrandbits(128):032X}"
        return f"{eid}${h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def some_entity(self) -> str:
        return f"Q{self.r.randrange(1, self.n) * 3 + 100000}"

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.r.choice(WORDS) for _ in range(self.r.randint(lo, hi)))

    @staticmethod
    def item_value(qid: str) -> dict:
        return {"value": {"entity-type": "item", "numeric-id": int(qid[1:]), "id": qid},
                "type": "wikibase-entityid"}

    def time_value(self, lo: int = 1700, hi: int = 2023, precision: int | None = None) -> dict:
        p = precision or self.r.choice((11, 11, 11, 10, 9, 9, 8))
        y = self.r.randint(lo, hi)
        m = self.r.randint(1, 12) if p >= 10 else 0
        d = self.r.randint(1, 28) if p >= 11 else 0
        return {"value": {"time": f"+{y:04d}-{m:02d}-{d:02d}T00:00:00Z", "timezone": 0,
                          "before": 0, "after": 0, "precision": p, "calendarmodel": CALENDAR},
                "type": "time"}

    def quantity_value(self, amount: float, unit: str, bounds: bool = False) -> dict:
        v = {"amount": f"{amount:+g}", "unit": unit if unit == "1" else WD + unit}
        if bounds:
            v["upperBound"] = f"{amount * 1.01:+g}"
            v["lowerBound"] = f"{amount * 0.99:+g}"
        return {"value": v, "type": "quantity"}

    @staticmethod
    def string_value(s: str) -> dict:
        return {"value": s, "type": "string"}

    @staticmethod
    def mono_value(text: str, lang: str) -> dict:
        return {"value": {"text": text, "language": lang}, "type": "monolingualtext"}

    def coord_value(self) -> dict:
        return {"value": {"latitude": round(self.r.uniform(-60, 70), 6),
                          "longitude": round(self.r.uniform(-180, 180), 6), "altitude": None,
                          "precision": self.r.choice((0.0001, 0.000277778, 0.01)),
                          "globe": WD + "Q2"}, "type": "globecoordinate"}

    def snak(self, prop: str, datatype: str, datavalue: dict | None, snaktype: str = "value") -> dict:
        s = {"snaktype": snaktype, "property": prop, "hash": self.hex(160)}
        if snaktype == "value":
            s["datavalue"] = datavalue
        s["datatype"] = datatype
        return s

    def reference(self) -> dict:
        r = self.r
        kind = r.random()
        if kind < 0.45:  # "imported from Wikimedia project"
            snaks = {"P143": [self.snak("P143", "wikibase-item", self.item_value(r.choice(
                ["Q328", "Q48183", "Q8447", "Q11920", "Q206855"])))]}
        elif kind < 0.8:  # "stated in" + id + "retrieved"
            snaks = {"P248": [self.snak("P248", "wikibase-item", self.item_value(r.choice(
                         ["Q36578", "Q54919", "Q19938912", "Q2629164", "Q15241312"])))],
                     "P214": [self.snak("P214", "external-id", self.string_value(str(r.randrange(10**8))))],
                     "P813": [self.snak("P813", "time", self.time_value(2013, 2024, 11))]}
        else:  # "reference URL" + "retrieved"
            snaks = {"P854": [self.snak("P854", "url", self.string_value(
                         f"https://www.example.org/{self.words(1, 3).replace(' ', '/')}/{r.randrange(10**6)}"))],
                     "P813": [self.snak("P813", "time", self.time_value(2013, 2024, 11))]}
        return {"hash": self.hex(160), "snaks": snaks, "snaks-order": list(snaks)}

    def statement(self, eid: str, prop: str, datatype: str, datavalue: dict | None, *,
                  qualifiers: dict[str, list[tuple[str, dict]]] | None = None,
                  rank: str | None = None, refs: float = 0.4, snaktype: str = "value") -> dict:
        r = self.r
        if rank is None:
            x = r.random()
            rank = "deprecated" if x < 0.006 else "preferred" if x < 0.03 else "normal"
        st = {"mainsnak": self.snak(prop, datatype, datavalue, snaktype), "type": "statement"}
        if qualifiers:
            st["qualifiers"] = {p: [self.snak(p, dt, dv) for dt, dv in snaks]
                                for p, snaks in qualifiers.items()}
            st["qualifiers-order"] = list(qualifiers)
        st["id"] = self.guid(eid)
        st["rank"] = rank
        if r.random() < refs:
            st["references"] = [self.reference() for _ in range(r.choice((1, 1, 1, 1, 2)))]
        return st

    def item_claim(self, eid: str, prop: str, qid: str, **kw) -> dict:
        return self.statement(eid, prop, "wikibase-item", self.item_value(qid), **kw)

    def validity(self, p: float = 1.0) -> dict | None:
        """P580/P582 (start/end) qualifiers on some statements."""
        if self.r.random() >= p:
            return None
        start = self.time_value(1800, 2015)
        q = {"P580": [("time", start)]}
        if self.r.random() < 0.6:
            y0 = int(start["value"]["time"][1:5])
            q["P582"] = [("time", self.time_value(min(y0 + 1, 2023), 2023))]
        return q

    def externals(self, eid: str, props: list[str], lo: int, hi: int) -> list[tuple[str, dict]]:
        r = self.r
        chosen = r.sample(props, min(len(props), r.randint(lo, hi)))
        return [(p, self.statement(eid, p, "external-id",
                                   self.string_value(f"{r.choice(('', 'n', 'nm', 'sh'))}{r.randrange(10**9)}"),
                                   refs=0.3, rank="normal"))
                for p in chosen]

    def names(self, base: str, n_langs: int, desc: str, n_desc: int, n_aliases: int) -> dict:
        r = self.r
        langs = ["en"] + r.sample(LANGS[1:], n_langs - 1)
        labels = {}
        for lang in langs:
            v = base if lang in COMMON_LANGS or r.random() < 0.7 else f"{base} ({lang})"
            labels[lang] = {"language": lang, "value": v}
        dlangs = ["en"] + r.sample(LANGS[1:], n_desc - 1) if n_desc else []
        descriptions = {lang: {"language": lang, "value": desc if lang == "en" else f"{desc} [{lang}]"}
                        for lang in dlangs}
        aliases: dict[str, list] = {}
        for _ in range(n_aliases):
            lang = "en" if r.random() < 0.5 else r.choice(langs)
            text = self.words(1, 3).title() if r.random() < 0.7 else base.upper()
            aliases.setdefault(lang, []).append({"language": lang, "value": text})
        return {"labels": labels, "descriptions": descriptions, "aliases": aliases}

    def sitelinks(self, title: str, n: int) -> dict:
        langs = ["en"] + self.r.sample(LANGS[1:], min(n, len(LANGS)) - 1) if n else []
        return {f"{lang}wiki": {"site": f"{lang}wiki", "title": title, "badges": []} for lang in langs}

    # -- entity kinds -----------------------------------------------------------------------

    def human(self, eid: str) -> tuple[dict, dict, int]:
        r = self.r
        name = f"{r.choice(GIVEN)} {r.choice(FAMILY)}"
        fame = min(r.paretovariate(2.0), 8.0)
        names = self.names(name, min(len(LANGS), int(3 + 4 * fame)), r.choice(
            ["American actor", "German politician", "French writer", "Japanese painter",
             "British physicist", "Brazilian footballer"]), min(len(LANGS), int(2 + 3 * fame)),
            r.randint(0, 4))
        c: list[tuple[str, dict]] = [("P31", self.item_claim(eid, "P31", "Q5"))]
        c.append(("P21", self.item_claim(eid, "P21", r.choice(["Q6581097", "Q6581072"]))))
        for _ in range(r.choice((1, 1, 2))):
            c.append(("P27", self.item_claim(eid, "P27", r.choice(COUNTRIES))))
        for _ in range(r.randint(1, 4)):
            c.append(("P106", self.item_claim(eid, "P106", r.choice(OCCUPATIONS))))
        born = self.time_value(1700, 2005)
        c.append(("P569", self.statement(eid, "P569", "time", born)))
        if r.random() < 0.5:
            c.append(("P570", self.statement(eid, "P570", "time", self.time_value(
                min(int(born["value"]["time"][1:5]) + 20, 2024), 2024))
                if r.random() < 0.97 else self.statement(eid, "P570", "time", None, snaktype="somevalue")))
        c.append(("P19", self.item_claim(eid, "P19", self.some_entity())))
        c.append(("P735", self.item_claim(eid, "P735", self.some_entity())))
        c.append(("P734", self.item_claim(eid, "P734", self.some_entity())))
        for _ in range(r.randint(0, 3)):
            c.append(("P1412", self.item_claim(eid, "P1412", r.choice(LANGUAGES_ITEMS), refs=0.2)))
        for _ in range(r.choice((0, 0, 1, 2, 3))):
            c.append(("P39", self.item_claim(eid, "P39", self.some_entity(), qualifiers=self.validity())))
        for _ in range(r.choice((0, 1, 1, 2))):
            c.append(("P69", self.item_claim(eid, "P69", self.some_entity(), qualifiers=self.validity(0.5))))
        if r.random() < 0.3:
            c.append(("P26", self.item_claim(eid, "P26", self.some_entity(), qualifiers=self.validity())))
        for _ in range(r.choice((0, 0, 0, 1, 2))):
            c.append(("P166", self.item_claim(eid, "P166", self.some_entity(),
                                              qualifiers={"P585": [("time", self.time_value(1900, 2023, 9))]})))
        if r.random() < 0.4:
            c.append(("P18", self.statement(eid, "P18", "commonsMedia", self.string_value(f"{name} {r.randrange(2000)}.jpg"))))
        if r.random() < 0.2:
            c.append(("P856", self.statement(eid, "P856", "url", self.string_value(f"https://{name.split()[1].lower()}.example.com/"))))
        c += self.externals(eid, EXT_HUMAN, 2, int(4 + 6 * fame))
        return names, self.claims(c), int(fame * 3)

    def place(self, eid: str) -> tuple[dict, dict, int]:
        r = self.r
        name = self.words(1, 2).title()
        names = self.names(name, r.randint(8, 40), r.choice(["village in Poland", "city in Germany",
                           "commune in France", "human settlement", "town in Brazil"]), r.randint(4, 30),
                           r.randint(0, 2))
        c = [("P31", self.item_claim(eid, "P31", r.choice(PLACE_CLASSES)))]
        c.append(("P17", self.item_claim(eid, "P17", r.choice(COUNTRIES))))
        c.append(("P131", self.item_claim(eid, "P131", self.some_entity())))
        if r.random() < 0.3:
            c.append(("P131", self.item_claim(eid, "P131", self.some_entity(), qualifiers=self.validity(), rank="normal")))
        c.append(("P625", self.statement(eid, "P625", "globe-coordinate", self.coord_value())))
        years = sorted(r.sample(range(1950, 2024), r.choice((1, 1, 2, 3, 5))))
        for i, y in enumerate(years):
            c.append(("P1082", self.statement(
                eid, "P1082", "quantity", self.quantity_value(r.randrange(50, 10**6), "1"),
                qualifiers={"P585": [("time", self.time_value(y, y, 9))]},
                rank="preferred" if i == len(years) - 1 and len(years) > 1 else "normal")))
        if r.random() < 0.6:
            c.append(("P2046", self.statement(eid, "P2046", "quantity",
                                              self.quantity_value(round(r.uniform(1, 500), 2), UNITS["area"], True))))
        if r.random() < 0.4:
            c.append(("P1448", self.statement(eid, "P1448", "monolingualtext", self.mono_value(name, r.choice(COMMON_LANGS)))))
        if r.random() < 0.5:
            c.append(("P281", self.statement(eid, "P281", "string", self.string_value(f"{r.randrange(10000, 99999)}"))))
        c.append(("P421", self.item_claim(eid, "P421", r.choice(["Q6655", "Q6723", "Q25989", "Q2086913"]), refs=0.1)))
        if r.random() < 0.3:
            c.append(("P18", self.statement(eid, "P18", "commonsMedia", self.string_value(f"{name} view.jpg"))))
        c += self.externals(eid, EXT_PLACE, 2, 9)
        return names, self.claims(c), r.randint(1, 40)

    def article(self, eid: str) -> tuple[dict, dict, int]:
        r = self.r
        title = self.words(5, 14).capitalize()
        year = r.randint(1950, 2023)
        # Bots gave scholarly articles descriptions in dozens of languages, labels in few.
        names = self.names(title, r.choice((1, 1, 2, 4)), f"scientific article published in {year}",
                           r.randint(3, 25), 0)
        c = [("P31", self.item_claim(eid, "P31", "Q13442814", refs=0.8))]
        c.append(("P1476", self.statement(eid, "P1476", "monolingualtext", self.mono_value(title, "en"), refs=0.6)))
        for i in range(r.randint(1, 12)):
            q = {"P1545": [("string", self.string_value(str(i + 1)))]}
            if r.random() < 0.4:
                c.append(("P50", self.item_claim(eid, "P50", self.some_entity(), qualifiers=q, refs=0.6)))
            else:
                c.append(("P2093", self.statement(eid, "P2093", "string",
                                                  self.string_value(f"{r.choice(GIVEN)} {r.choice(FAMILY)}"),
                                                  qualifiers=q, refs=0.6)))
        c.append(("P577", self.statement(eid, "P577", "time", self.time_value(year, year, 11), refs=0.6)))
        c.append(("P1433", self.item_claim(eid, "P1433", r.choice(JOURNALS), refs=0.6)))
        c.append(("P478", self.statement(eid, "P478", "string", self.string_value(str(r.randint(1, 300))), refs=0.6)))
        c.append(("P304", self.statement(eid, "P304", "string", self.string_value(f"{r.randint(1, 900)}-{r.randint(901, 999)}"), refs=0.6)))
        if r.random() < 0.6:
            c.append(("P433", self.statement(eid, "P433", "string", self.string_value(str(r.randint(1, 24))), refs=0.6)))
        for _ in range(r.choice((0, 0, 0, 2, 5, 10, 20))):
            c.append(("P2860", self.item_claim(eid, "P2860", self.some_entity(), refs=0.6)))
        for _ in range(r.choice((0, 1, 2))):
            c.append(("P921", self.item_claim(eid, "P921", self.some_entity(), refs=0.2)))
        c.append(("P407", self.item_claim(eid, "P407", "Q1860", refs=0.3)))
        c += self.externals(eid, EXT_ARTICLE, 1, 5)
        return names, self.claims(c), 0

    def taxon(self, eid: str) -> tuple[dict, dict, int]:
        r = self.r
        genus = self.words(1, 1).capitalize() + "us"
        name = f"{genus} {self.words(1, 1)}ensis"
        names = self.names(name, r.randint(2, 30), r.choice(["species of insect", "species of plant",
                           "species of fungus", "species of bird"]), r.randint(3, 25), r.choice((0, 0, 1)))
        c = [("P31", self.item_claim(eid, "P31", "Q16521"))]
        c.append(("P105", self.item_claim(eid, "P105", r.choice(TAXON_RANKS))))
        c.append(("P171", self.item_claim(eid, "P171", self.some_entity())))
        c.append(("P225", self.statement(eid, "P225", "string", self.string_value(name),
                                         qualifiers={"P405": [("wikibase-item", self.item_value(self.some_entity()))],
                                                     "P574": [("time", self.time_value(1758, 2020, 9))]})))
        for lang in r.sample(COMMON_LANGS, r.choice((0, 0, 1, 3))):
            c.append(("P1843", self.statement(eid, "P1843", "monolingualtext", self.mono_value(self.words(1, 3), lang))))
        if r.random() < 0.3:
            c.append(("P141", self.item_claim(eid, "P141", "Q211005")))
        c += self.externals(eid, EXT_TAXON, 3, 14)
        return names, self.claims(c), r.randint(0, 20)

    def organisation(self, eid: str) -> tuple[dict, dict, int]:
        r = self.r
        name = self.words(1, 3).title() + r.choice(["", " Inc.", " GmbH", " University", " FC"])
        names = self.names(name, r.randint(2, 25), r.choice(["company", "university", "football club",
                           "band", "non-profit organization"]), r.randint(2, 20), r.randint(0, 5))
        c = [("P31", self.item_claim(eid, "P31", r.choice(ORG_CLASSES)))]
        c.append(("P17", self.item_claim(eid, "P17", r.choice(COUNTRIES))))
        c.append(("P159", self.item_claim(eid, "P159", self.some_entity(), qualifiers=self.validity(0.2))))
        c.append(("P571", self.statement(eid, "P571", "time", self.time_value(1800, 2022))))
        if r.random() < 0.2:
            c.append(("P576", self.statement(eid, "P576", "time", self.time_value(1950, 2023))))
        for _ in range(r.choice((0, 1, 2))):
            y = r.randint(1990, 2023)
            c.append(("P1128", self.statement(eid, "P1128", "quantity", self.quantity_value(r.randrange(5, 10**5), "1"),
                                              qualifiers={"P585": [("time", self.time_value(y, y, 9))]})))
        if r.random() < 0.3:
            c.append(("P2139", self.statement(eid, "P2139", "quantity",
                                              self.quantity_value(r.randrange(10**5, 10**10), UNITS["money"]),
                                              qualifiers={"P585": [("time", self.time_value(2000, 2023, 9))]})))
        if r.random() < 0.5:
            c.append(("P856", self.statement(eid, "P856", "url", self.string_value(f"https://www.{name.split()[0].lower()}.example/"))))
        if r.random() < 0.3:
            c.append(("P154", self.statement(eid, "P154", "commonsMedia", self.string_value(f"{name} logo.svg"))))
        if r.random() < 0.1:
            c.append(("P1813", self.statement(eid, "P1813", "monolingualtext", self.mono_value(name[:6], "en"))))
        if r.random() < 0.05:
            c.append(("P112", self.statement(eid, "P112", "wikibase-item", None, snaktype="novalue")))
        c += self.externals(eid, EXT_ORG, 1, 10)
        return names, self.claims(c), r.randint(0, 30)

    def property(self, pid: str) -> dict:
        r = self.r
        datatype = r.choice(["external-id", "external-id", "wikibase-item", "string", "time", "quantity"])
        name = self.words(2, 4)
        names = self.names(name, r.randint(10, 45), f"identifier or relation {pid}", r.randint(10, 40), r.randint(1, 6))
        c = [("P31", self.item_claim(pid, "P31", r.choice(["Q19847637", "Q18608871", "Q18616576"])))]
        c.append(("P1629", self.item_claim(pid, "P1629", self.some_entity())))
        c.append(("P1630", self.statement(pid, "P1630", "string", self.string_value("https://example.org/id/$1"))))
        c.append(("P1896", self.statement(pid, "P1896", "url", self.string_value("https://example.org/"))))
        for _ in range(r.randint(1, 4)):
            c.append(("P1855", self.item_claim(pid, "P1855", self.some_entity(), refs=0.0)))
        return {"type": "property", "datatype": datatype, "id": pid, **names, "claims": self.claims(c),
                "pageid": r.randrange(10**8), "ns": 120, "title": f"Property:{pid}",
                "lastrevid": r.randrange(10**9), "modified": "2024-05-01T12:00:00Z"}

    @staticmethod
    def claims(pairs: list[tuple[str, dict]]) -> dict:
        out: dict[str, list] = {}
        for prop, st in pairs:
            out.setdefault(prop, []).append(st)
        return out

    def entity(self, index: int) -> dict:
        r = self.r
        if index % 500 == 7:  # some property entities mixed in, as in real dumps
            return self.property(f"P{index // 500 + 1}")
        eid = f"Q{index * 3 + 100000}"
        x = r.random()
        kind = (self.article if x < 0.33 else self.human if x < 0.55 else self.place if x < 0.72
                else self.taxon if x < 0.86 else self.organisation)
        names, claims, n_sitelinks = kind(eid)
        label = names["labels"]["en"]["value"]
        return {"type": "item", "id": eid, **names, "claims": claims,
                "sitelinks": self.sitelinks(label, min(n_sitelinks, len(LANGS))),
                "pageid": r.randrange(10**8), "ns": 0, "title": eid,
                "lastrevid": r.randrange(10**9), "modified": "2024-05-01T12:00:00Z"}


def _generate_block(args: tuple[int, int, int]) -> bytes:
    """Lines for entities [lo, hi), each seeded by its index: blocks are independent, so
    generation parallelises and the dump is the same whatever the number of processes."""
    lo, hi, n = args
    out = []
    for i in range(lo, hi):
        g = Gen(random.Random(SEED * 1_000_003 + i), n)
        out.append(orjson.dumps(g.entity(i)) + b",\n")
    if hi == n:  # the last entity has no comma in real dumps
        out[-1] = out[-1][:-2] + b"\n"
    return b"".join(out)


def _open_out(path: Path, compression: str):
    if compression == "gz":
        return gzip.GzipFile(path, "wb", compresslevel=6, mtime=0)  # level 6: gzip's default
    if compression == "bz2":
        return bz2.BZ2File(path, "wb", compresslevel=9)
    return open(path, "wb")


def generate(path: Path, n: int, compression: str, procs: int) -> tuple[int, float]:
    """Write the dump; returns (decompressed bytes, seconds)."""
    started = time.perf_counter()
    tmp = path.with_name(path.name + ".part")
    step = 2000
    blocks = [(lo, min(lo + step, n), n) for lo in range(0, n, step)]
    size = 0
    with _open_out(tmp, compression) as f, multiprocessing.get_context("fork").Pool(procs) as pool:
        f.write(b"[\n")
        size += 2
        for data in pool.imap(_generate_block, blocks):
            f.write(data)
            size += len(data)
        f.write(b"]\n")
        size += 2
    tmp.replace(path)
    return size, time.perf_counter() - started



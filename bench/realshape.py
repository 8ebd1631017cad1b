"""A generated graph with the shape that broke HNSW on real Wikidata: most entities are cities
that differ only by their country and region, a few hundred of them are capitals, and people
point at them with heavy-tailed popularity.

- countries: Zipf-sized (the largest holds about a tenth of all cities), each with a capital
  (P31 city + capital, P1376 its country) and regions (P131) in proportion to its size;
- cities: P31 city, town or village (a tenth of the cities also "big city"), P17 country,
  P131 region; names drawn from a small stock with suffixes, so thousands share a label
  ("Springfield" in 40 countries) and two entities may share a name across countries;
- humans (a third of the entities by default): P31 human, P27 country, P19 birthplace (Zipf over
  cities: a few cities are born in by thousands), P106 occupation (Zipf over 200), P21 sex;
  long and multilingual names among them.

`entities(n, seed)` yields (qid, label, aliases, claims) with claims as {pid: [qid, ...]};
`feature_bags(...)` turns them into the bags `factprobe.index.semantic.feature_bags` makes from a
store, and `wikidata_record(...)` into a line of a Wikidata JSON dump. The same seed gives the same
graph. Both the benchmarks and the tests use it, so a failure it shows is shown in both.
"""

from __future__ import annotations

import itertools
import random
from typing import Iterator

CITY, TOWN, VILLAGE, BIG_CITY, CAPITAL = "Q515", "Q3957", "Q532", "Q1549591", "Q5119"
COUNTRY, HUMAN, REGION = "Q6256", "Q5", "Q10864048"
CLASSES = {CITY: "city", TOWN: "town", VILLAGE: "village", BIG_CITY: "big city", CAPITAL: "capital",
           COUNTRY: "country", HUMAN: "human", REGION: "first-level administrative division",
           "Q6581097": "male", "Q6581072": "female"}
STEMS = ["Spring", "River", "Green", "Oak", "Salt", "Black", "White", "New", "Fair", "Long", "North", "Stone",
         "Ash", "Bay", "Clear", "Elm", "Frank", "Glen", "High", "Iron", "Lake", "Mill", "Port", "Red",
         "São ", "Sankt ", "Nová ", "Ciudad ", "Villa", "Nowa ", "Neu", "Öster", "Bad ", "Kota ", "Ban "]
ENDS = ["field", "ton", "ville", "burg", "dale", "ford", "haven", "wood", "mouth", "stadt", " Paulo", " Petersburg",
        " Ves", " Real", "nueva", " Wieś", "dorf", "sund", " Ems", " Baru", " Na"]
FIRST = ["Anna", "José", "Li", "Mohammed", "Olga", "Jean-Baptiste", "Aiko", "Søren", "Nguyễn", "María José",
         "Ólafur", "Zoë", "Чингиз", "Αλέξανδρος", "محمد", "さくら", "Kwame", "Priya"]
LAST = ["Smith", "García", "Wang", "Müller", "Kowalski", "de la Cruz Fernández", "Ivanova", "Tanaka", "O'Brien",
        "Van der Berg", "Nakamura-Schmidt", "Öztürk", "Петров", "Παπαδόπουλος", "Ndiaye", "Sørensen"]


def _zipf_weights(n: int, s: float = 1.0) -> list[float]:
    return list(itertools.accumulate(1 / (r + 1) ** s for r in range(n)))


def entities(n: int, seed: int = 0, *, countries: int = 250, human_share: float = 0.33
             ) -> Iterator[tuple[str, str, tuple[str, ...], dict[str, list[str]]]]:
    """About n entities: classes, countries, regions, cities (capitals among them) and humans."""
    rng = random.Random(seed)
    humans = int(n * human_share)
    cities = max(countries * 2, n - humans - countries * 8)
    yield from ((qid, label, (), {}) for qid, label in CLASSES.items())
    country_ids = [f"Q{1_000_000 + i}" for i in range(countries)]
    # Zipf-sized countries: a country's share of cities falls with its rank.
    country_w = _zipf_weights(countries, 0.9)
    city_ids = [f"Q{2_000_000 + i}" for i in range(cities)]
    city_country = [country_ids[i] if i < countries else rng.choices(country_ids, cum_weights=country_w)[0]
                    for i in range(cities)]  # the first city of each country is its capital
    per_country: dict[str, int] = {}
    for c in city_country:
        per_country[c] = per_country.get(c, 0) + 1
    regions = {c: [f"Q{3_000_000 + k * 1000 + j}" for j in range(max(1, per_country[c] // 150))]
               for k, c in enumerate(country_ids)}
    for k, c in enumerate(country_ids):
        yield c, f"Country {k}", (f"C{k}",), {"P31": [COUNTRY], "P36": [city_ids[k]]}
        for j, r in enumerate(regions[c]):
            yield r, f"Region {k}-{j}", (), {"P31": [REGION], "P17": [c]}
    stem_w = _zipf_weights(len(STEMS) * len(ENDS), 0.7)
    names = [s + e for s, e in itertools.product(STEMS, ENDS)]
    for i, (qid, country) in enumerate(zip(city_ids, city_country)):
        capital = i < countries
        kind = CITY if capital else rng.choices([CITY, TOWN, VILLAGE], [0.6, 0.3, 0.1])[0]
        types = [CITY, CAPITAL] if capital else [kind] + ([BIG_CITY] if kind == CITY and rng.random() < 0.1 else [])
        claims = {"P31": types, "P17": [country], "P131": [rng.choice(regions[country])]}
        if capital:
            claims["P1376"] = [country]
        label = rng.choices(names, cum_weights=stem_w)[0]
        if rng.random() < 0.5:  # half the towns carry a distinguishing number, as "Springfield 2" never does
            label = f"{label} {rng.randrange(1, 400)}"
        yield qid, label, (), claims
    city_w = _zipf_weights(cities, 1.1)
    occupations = [f"Q{4_000_000 + j}" for j in range(200)]
    occupation_w = _zipf_weights(len(occupations))
    for j, occupation in enumerate(occupations):
        yield occupation, f"occupation {j}", (), {"P31": ["Q12737077"]}
    for i in range(humans):
        qid = f"Q{5_000_000 + i}"
        birthplace = rng.choices(range(cities), cum_weights=city_w)[0]
        claims = {"P31": [HUMAN], "P21": [rng.choice(["Q6581097", "Q6581072"])],
                  "P27": [city_country[birthplace]], "P19": [city_ids[birthplace]],
                  "P106": sorted(set(rng.choices(occupations, cum_weights=occupation_w, k=rng.randint(1, 3))))}
        yield qid, f"{rng.choice(FIRST)} {rng.choice(LAST)}", (), claims


def feature_bags(n: int, seed: int = 0, **kw) -> Iterator[tuple[str, list[str]]]:
    """The semantic index's bags (itself, relations, objects, relation=object), in id order as a
    store yields them."""
    bags = []
    for qid, _, _, claims in entities(n, seed, **kw):
        bag = [qid]
        for relation in sorted(claims):
            for obj in claims[relation]:
                bag += [relation, obj, f"{relation}={obj}"]
        bags.append((qid, bag))
    bags.sort()
    yield from bags


def types_of(n: int, seed: int = 0, **kw) -> dict[str, tuple[str, ...]]:
    """entity -> its P31 types."""
    return {qid: tuple(claims.get("P31", ())) for qid, _, _, claims in entities(n, seed, **kw)}


def wikidata_record(qid: str, label: str, aliases: tuple[str, ...], claims: dict[str, list[str]]) -> dict:
    """One entity as a Wikidata JSON dump line has it (English label and aliases, item claims)."""
    statements = {
        prop: [{"mainsnak": {"snaktype": "value", "property": prop, "datatype": "wikibase-item",
                             "datavalue": {"type": "wikibase-entityid",
                                           "value": {"entity-type": "item", "numeric-id": int(obj[1:]), "id": obj}}},
                "type": "statement", "id": f"{qid}${prop}-{k}", "rank": "normal"}
               for k, obj in enumerate(objs)]
        for prop, objs in claims.items()}
    return {"type": "item", "id": qid, "labels": {"en": {"language": "en", "value": label}},
            "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
            "claims": statements}

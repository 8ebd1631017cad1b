"""Inputs of bench/scale.py: a Wikidata-format dump whose names and degrees look like the real
graph's, and a corpus that mentions its entities. Seeded and deterministic; never measured.

On top of bench/wikidata_dump.py's record layout (dozens of label languages, external ids,
qualifiers, references, ranks), the scale dump changes what makes a million entities hard:
- Names from a 30,000-word vocabulary (~15% with non-ASCII letters), not 64 words: family
  and place names have a Zipf head (`common_rank`), so "John <common name>" and "<common
  word> <place>" recur hundreds of times (near-duplicates), most others are rare.
- Objects are heavy-tailed: half of the entity-valued claims point at a log-uniform rank
  (a few entities are named by tens of thousands of facts), half anywhere.
- The shared objects (countries, occupations, classes, languages, journals, genders) are
  entities of the dump, with names, so the probe-set builders find gold labels.

The corpus (JSONL id/title/text) is written from the ingested store: each document is about
one subject (popular subjects get many), says some of its facts in sentences with both names,
and mentions a few other entities; the rest is filler. Documents are written in shuffled
order, as no real corpus is sorted by subject.
"""

from __future__ import annotations

import gzip
import math
import multiprocessing
import random
import sqlite3
import time
from pathlib import Path

import orjson

from wikidata_dump import (COUNTRIES, GIVEN, JOURNALS, LANGUAGES_ITEMS, OCCUPATIONS,
                           ORG_CLASSES, PLACE_CLASSES, SEED, TAXON_RANKS, Gen)

VOCABULARY = 30_000
_ONSETS = ["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
           "br", "ch", "dr", "gr", "kr", "sh", "st", "tr", "th"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ou", "ea", "é", "ö", "ü", "å"]
_CODAS = ["", "", "n", "r", "l", "s", "t", "m", "nd", "rk", "st", "ng"]
OTHER_HUBS = {"Q5": "human", "Q13442814": "scholarly article", "Q16521": "taxon",
              "Q6581097": "male", "Q6581072": "female", "Q6256": "country", "Q1860": "English"}


def vocabulary(n: int = VOCABULARY, seed: int = SEED) -> list[str]:
    """Distinct pronounceable pseudo-words, 2-4 syllables; the accented vowels make ~15%
    of them non-ASCII."""
    r = random.Random(seed)
    words: dict[str, None] = {}
    while len(words) < n:
        w = "".join(r.choice(_ONSETS) + r.choice(_VOWELS) + r.choice(_CODAS)
                    for _ in range(r.choice((2, 2, 3, 3, 4))))
        words[w] = None
    return list(words)


_WORDS = vocabulary()


def zipf_rank(r: random.Random, n: int) -> int:
    """A log-uniform rank in [0, n): P(rank k) ~ 1/(k+1), the shape of degree distributions."""
    return min(n - 1, int(math.exp(r.random() * math.log(n + 1))) - 1)


def common_rank(r: random.Random, n: int) -> int:
    """A name's rank: 3% from a Zipf head, the rest uniform. The most common place or family
    name is then shared by ~0.2% of its kind (hundreds of entities at a million), as the
    real "Springfield"s and "Smith"s are; a pure Zipf head gave one name to 6.7% of all
    places and 1,200 entity mentions per document (bench/README.md)."""
    return zipf_rank(r, n) if r.random() < 0.03 else r.randrange(n)


def hub_ids(n: int) -> list[str]:
    """The shared objects, minus any that a generated entity id would take."""
    generated = lambda q: q[1:].isdigit() and (int(q[1:]) - 100000) % 3 == 0 and 0 <= (int(q[1:]) - 100000) // 3 < n
    ids = [*COUNTRIES, *OCCUPATIONS, *PLACE_CLASSES, *ORG_CLASSES, *TAXON_RANKS, *JOURNALS,
           *LANGUAGES_ITEMS, *OTHER_HUBS]
    return [q for q in dict.fromkeys(ids) if not generated(q)]


class ScaleGen(Gen):
    def words(self, lo: int, hi: int) -> str:
        return " ".join(_WORDS[self.r.randrange(VOCABULARY)] for _ in range(self.r.randint(lo, hi)))

    def common_word(self) -> str:
        return _WORDS[common_rank(self.r, VOCABULARY)]

    def some_entity(self) -> str:
        r = self.r
        k = zipf_rank(r, self.n - 1) + 1 if r.random() < 0.5 else r.randrange(1, self.n)
        if k % 500 == 7:  # a property slot: take the next item
            k += 1
        return f"Q{k * 3 + 100000}"

    def human(self, eid: str):
        names, claims, links = super().human(eid)
        # Re-name: a common given name and a Zipf family name (near-duplicates by the hundred).
        label = f"{self.r.choice(GIVEN)} {self.common_word().title()}"
        self._rename(names, label)
        return names, claims, links

    def place(self, eid: str):
        names, claims, links = super().place(eid)
        label = self.common_word().title()
        if self.r.random() < 0.5:
            label += " " + self.words(1, 1).title()
        self._rename(names, label)
        return names, claims, links

    def _rename(self, names: dict, label: str) -> None:
        for lang, entry in names["labels"].items():
            entry["value"] = label if lang == "en" or self.r.random() < 0.8 else f"{label} ({lang})"

    def hub(self, qid: str, index: int) -> dict:
        r = self.r
        kind = OTHER_HUBS.get(qid) or ("country" if qid in COUNTRIES else "occupation" if qid in OCCUPATIONS
                                       else "journal" if qid in JOURNALS else "language"
                                       if qid in LANGUAGES_ITEMS else "class")
        label = OTHER_HUBS.get(qid) or f"{_WORDS[(index * 7919) % VOCABULARY].title()} {kind}"
        names = self.names(label, r.randint(20, 50), f"{kind} (hub {index})", r.randint(10, 40), r.randint(1, 4))
        parent = {"country": "Q6256", "occupation": "Q12737077", "journal": "Q5633421",
                  "language": "Q34770"}.get(kind, "Q16889133")
        claims = self.claims([("P31", self.item_claim(qid, "P31", parent))])
        return {"type": "item", "id": qid, **names, "claims": claims,
                "sitelinks": self.sitelinks(label, r.randint(20, 50)), "ns": 0, "title": qid}


def _block(args: tuple[int, int, int]) -> tuple[int, bytes]:
    """Entities [lo, hi), gzipped by the worker (a dump of gzip members is a valid .gz, and the
    ingest's reader continues across members): one process compressing 14 GB would take the
    time of the whole generation, and results waiting for it would fill memory."""
    lo, hi, n = args
    out = []
    for i in range(lo, hi):
        g = ScaleGen(random.Random(SEED * 1_000_003 + i), n)
        out.append(orjson.dumps(g.entity(i)) + b",\n")
    if hi == n:
        out[-1] = out[-1][:-2] + b"\n"
    data = b"".join(out)
    return len(data), gzip.compress(data, 6, mtime=0)


def generate_dump(path: Path, n: int, procs: int = 2) -> tuple[int, float]:
    """Hub entities first, then `n` generated ones; gzip. Returns (JSON bytes, seconds)."""
    started = time.perf_counter()
    tmp = path.with_name(path.name + ".part")
    head = b"[\n" + b"".join(orjson.dumps(ScaleGen(random.Random(SEED + j), n).hub(q, j)) + b",\n"
                             for j, q in enumerate(hub_ids(n)))
    size = len(head) + 2
    blocks = [(lo, min(lo + 2000, n), n) for lo in range(0, n, 2000)]
    with open(tmp, "wb") as f, multiprocessing.get_context("fork").Pool(procs) as pool:
        f.write(gzip.compress(head, 6, mtime=0))
        window = 4 * procs  # blocks in flight: memory stays bounded
        for start in range(0, len(blocks), window):
            for raw, packed in pool.imap(_block, blocks[start:start + window]):
                f.write(packed)
                size += raw
        f.write(gzip.compress(b"]\n", 6, mtime=0))
    tmp.replace(path)
    return size, time.perf_counter() - started


# -- corpus ----------------------------------------------------------------------------------

_PHRASES = {"P27": "is a citizen of", "P106": "worked as", "P19": "was born in", "P39": "held the position of",
            "P69": "studied at", "P26": "married", "P17": "is in", "P131": "lies in", "P159": "has its seat in",
            "P50": "was written by", "P407": "is written in", "P1412": "speaks", "P31": "is a"}
_FILLER = ("the of and in to a was is for on as with by at from that which were his her also after "
           "first new year two during years later known between under early being since many "
           "however other where became several including part time called work while area").split()


def generate_corpus(store: Path, path: Path, documents: int, seed: int = 7) -> tuple[int, float]:
    """`documents` JSONL lines about the store's subjects, shuffled; plain text. Returns
    (bytes, seconds)."""
    started = time.perf_counter()
    r = random.Random(seed)
    db = sqlite3.connect(store)
    labels = dict(db.execute("SELECT id, label FROM entities WHERE label IS NOT NULL"))
    subjects = [s for (s,) in db.execute("SELECT DISTINCT subject FROM facts ORDER BY subject")
                if s in labels]
    r.shuffle(subjects)  # popularity rank independent of id
    popular = list(labels)
    r.shuffle(popular)
    buckets = 64
    parts = [path.with_name(f"{path.name}.part{i}") for i in range(buckets)]
    outs = [open(p, "wb") for p in parts]
    size = written = 0
    try:
        while written < documents:
            subject = subjects[zipf_rank(r, len(subjects)) if r.random() < 0.7 else r.randrange(len(subjects))]
            facts = db.execute("SELECT relation, object FROM facts WHERE subject=? AND object IS NOT NULL "
                               "LIMIT 8", (subject,)).fetchall()
            name = labels[subject]
            sentences = [f"{name} is a subject of this page."]
            for relation, obj in r.sample(facts, min(len(facts), r.randint(1, 4))):
                if obj in labels:
                    sentences.append(f"{name} {_PHRASES.get(relation, 'is related to')} {labels[obj]}.")
            for _ in range(r.randint(1, 3)):
                sentences.append(f"It is also linked to {labels[popular[zipf_rank(r, len(popular))]]}.")
            for _ in range(r.randint(4, 10)):
                sentences.append(" ".join(r.choice(_FILLER) for _ in range(r.randint(6, 14))).capitalize() + ".")
            r.shuffle(sentences)
            line = orjson.dumps({"id": f"doc{written}", "title": name, "text": " ".join(sentences)}) + b"\n"
            outs[r.randrange(buckets)].write(line)
            size += len(line)
            written += 1
    finally:
        for f in outs:
            f.close()
        db.close()
    with open(path, "wb") as out:
        for p in parts:
            out.write(p.read_bytes())
            p.unlink()
    return size, time.perf_counter() - started


def gzip_size(path: Path) -> int:
    with gzip.open(path, "rb") as f:
        return sum(len(b) for b in iter(lambda: f.read(1 << 20), b""))

#!/usr/bin/env python3
"""Build the shipped sample corpus, ``sample_corpus.jsonl``, from the sample graph.

Facts are spread, seeded, over the KDF frequency buckets (how: docs/design/graph.md); the output
is byte-for-byte reproducible. Usage: python build_corpus.py [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
GRAPH = HERE / "sample_wikidata.json"
OUT_DEFAULT = HERE / "sample_corpus.jsonl"
RELATIONS = {
    "P36": ["{o} is the capital of {s}.", "The government of {s} sits in {o}.", "Visitors to {s} often start in {o}.",
            "{o}, the capital city of {s}, hosted the summit."],
    "P37": ["In {s} people speak {o}.", "{o} is an official language of {s}.", "Schools in {s} teach in {o}."],
    "P30": ["{s} lies in {o}.", "{s} is a country of {o}.", "Travelling across {o}, we reached {s}."],
}
ALONE = ["{s} released new statistics this year.", "A report about {s} was published.", "News from {s} today."]
BUCKET_RANGES = [(0, 0), (1, 9), (10, 99), (100, 130)]


def load_graph(path: Path) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    labels, facts = {}, []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            entity = json.loads(line)
            label = entity.get("labels", {}).get("en", {}).get("value")
            if label:
                labels[entity["id"]] = label
            for relation in RELATIONS:
                for statement in entity.get("claims", {}).get(relation, []):
                    if statement.get("rank") == "deprecated" or "P582" in statement.get("qualifiers", {}):
                        continue  # an ended fact: the corpus talks about the present
                    value = statement["mainsnak"].get("datavalue", {}).get("value", {})
                    if isinstance(value, dict) and "id" in value:
                        facts.append((entity["id"], relation, value["id"]))
    return labels, sorted(set(facts))


def build(out: Path) -> int:
    labels, facts = load_graph(GRAPH)
    rng = random.Random(0)
    documents = []
    for subject, relation, obj in facts:
        if subject not in labels or obj not in labels:
            continue
        low, high = BUCKET_RANGES[rng.randrange(len(BUCKET_RANGES))]
        for _ in range(rng.randint(low, high)):
            text = rng.choice(RELATIONS[relation]).format(s=labels[subject], o=labels[obj])
            documents.append(text)
        for _ in range(rng.randint(0, 3)):
            documents.append(rng.choice(ALONE).format(s=labels[subject]))
    rng.shuffle(documents)
    with open(out, "w", encoding="utf-8") as sink:
        for k, text in enumerate(documents):
            sink.write(json.dumps({"id": f"doc{k:06d}", "title": "", "text": text}, ensure_ascii=False) + "\n")
    return len(documents)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT_DEFAULT)
    args = parser.parse_args()
    print(f"{build(args.out):,} documents -> {args.out}")


if __name__ == "__main__":
    main()

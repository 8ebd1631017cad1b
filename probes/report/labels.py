"""The names a report shows beside ids: a relation's label ("capital (P36)") and an entity's
("Q1435" -> "Zagreb"), gathered from what the report has at hand, no store: the probe sets it
found (each item names its relation, subject, object, options and distractors) and the runs'
own records (a Wikidata fact id starts with its subject's QID, "Q224$7BE7...", beside which a
record keeps `subject_label`). A report whose probe sets are missing still names most entities
so: the objects of one relation are often the subjects of another (a capital is a city's fact).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

# An entity id as Wikidata writes it: what a pick shows when no name for it is known.
ENTITY_ID = re.compile(r"Q\d+")


@dataclass
class Names:
    relations: dict[str, str] = field(default_factory=dict)  # P36 -> capital
    entities: dict[str, str] = field(default_factory=dict)  # Q1435 -> Zagreb

    def relation(self, pid: str) -> str:
        """ "capital (P36)"; the id alone where no label is known (or the label is the id)."""
        label = self.relations.get(pid)
        return f"{label} ({pid})" if label and label != pid else pid

    def entity(self, text: str | None) -> str | None:
        """`text` with its name where it is a bare entity id this report knows; else unchanged."""
        if isinstance(text, str) and ENTITY_ID.fullmatch(text) and self.entities.get(text):
            return self.entities[text]
        return text

    def add(self, ids: Mapping[str, str], into: dict[str, str]) -> None:
        for key, label in ids.items():
            if isinstance(key, str) and isinstance(label, str) and label:
                into.setdefault(key, label)  # the first source wins: probe sets are read first


def _pairs(item: Mapping) -> dict[str, str]:
    """The entity ids of a probe item or run record with their names."""
    found: dict[str, str] = {}
    for id_key, label_key in (("subject", "subject_label"), ("object", "object_label")):
        if isinstance(item.get(id_key), str) and isinstance(item.get(label_key), str):
            found[item[id_key]] = item[label_key]
    fact = item.get("fact")
    if isinstance(fact, str) and "$" in fact and isinstance(item.get("subject_label"), str):
        subject = fact.split("$", 1)[0]
        if ENTITY_ID.fullmatch(subject):
            found.setdefault(subject, item["subject_label"])
    ids, options = item.get("option_ids"), item.get("options") or item.get("choices")
    if isinstance(ids, list) and isinstance(options, list) and len(ids) == len(options):
        found.update({i: str(o) for i, o in zip(ids, options) if isinstance(i, str)})
    for listed in (item.get("distractors") or {}).values() if isinstance(item.get("distractors"), dict) else ():
        for d in listed if isinstance(listed, list) else ():
            if isinstance(d, dict) and isinstance(d.get("entity"), str) and isinstance(d.get("label"), str):
                found.setdefault(d["entity"], d["label"])
    return found


def gather(names: Names, items: Iterable[Mapping]) -> Names:
    """`names` with the relations and entities `items` (probe items or run records) name."""
    for item in items:
        if not isinstance(item, Mapping):
            continue
        relation, label = item.get("relation"), item.get("relation_label")
        if isinstance(relation, str) and isinstance(label, str):
            names.relations.setdefault(relation, label)
        names.add(_pairs(item), names.entities)
    return names

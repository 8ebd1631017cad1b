"""What became of each fact of a fact list (probes/formats/fact_list.py) in a build: selected, or left
out with a reason. Only the listed facts are candidates; each still passes the selection's
rules (truth at the date, labels, provenance, frequency, caps) and the kind's (an item made of
it), and every one that does not is named, with the line that listed it, in the build's output
and in the sidecar's `source.fact_list`, beside the file's SHA-256.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

from ...kg.graph import KnowledgeGraph
from ..formats.fact_list import FactList, ListedFact

# Reason -> how a summary counts it.
REASONS = {
    "unknown-fact": "fact id not in the store",
    "not-in-store": "not in the store",
    "deprecated": "deprecated in the store",
    "other-relation": "of a relation not asked (--relation)",
    "not-true": "not true at the date",
    "no-label": "without a label",
    "provenance": "without provenance from the annotators asked",
    "not-counted": "not counted in the corpus",
    "other-bucket": "in a bucket not asked",
    "capped": "left out by the caps",
    "demonstration": "asked only as demonstrations",
    "no-item": "no item made by the kind",
}
SUBJECTS_PER_QUERY = 500  # KnowledgeGraph.statement_groups(subjects=...)


class ListCheck:
    """The listed facts a selection may take, and why each one it does not take is left out."""

    def __init__(self, kg: KnowledgeGraph, listed: FactList, relations: Iterable[str] = ()) -> None:
        self.listed = listed
        self.why: dict[ListedFact, tuple[str, str]] = {}
        self.kept: dict[tuple[str, str, str], str] = {}  # triple -> the ProbeFact id selected
        self.rows: dict[tuple[str, str, str], ListedFact] = {}
        self.repeated = listed.repeated
        for row in listed.facts:
            triple = row.triple or self._resolved(kg, row)
            if triple is None:
                continue
            if triple in self.rows:  # a fact id naming a triple listed already
                self.repeated += 1
                continue
            self.rows[triple] = row
        asked = set(relations)
        for (s, r, o), row in self.rows.items():
            if asked and r not in asked:
                self.why[row] = ("other-relation", f"{r} is not among --relation")

    def _resolved(self, kg: KnowledgeGraph, row: ListedFact) -> tuple[str, str, str] | None:
        fact = kg.fact(row.fact_id or "")
        if fact is None or fact.object is None:
            what = "not in the store" if fact is None else "a statement without an entity object"
            self.why[row] = ("unknown-fact", f"fact {row.fact_id} is {what}")
            return None
        return fact.subject, fact.relation, fact.object

    def relations(self) -> list[str]:
        """The relations of the listed facts still wanted, sorted."""
        return sorted({r for (_, r, _), row in self.rows.items() if row not in self.why})

    def subject_batches(self, relation: str) -> list[list[str]]:
        subjects = sorted({s for (s, r, _), row in self.rows.items() if r == relation and row not in self.why})
        return [subjects[k:k + SUBJECTS_PER_QUERY] for k in range(0, len(subjects), SUBJECTS_PER_QUERY)]

    def wants(self, subject: str, relation: str, obj: str) -> bool:
        row = self.rows.get((subject, relation, obj))
        return row is not None and row not in self.why

    def drop(self, subject: str, relation: str, obj: str, reason: str, text: str) -> None:
        self.why[self.rows[(subject, relation, obj)]] = (reason, text)

    def keep(self, subject: str, relation: str, obj: str, fact_id: str) -> None:
        self.kept[(subject, relation, obj)] = fact_id

    def finish(self, kg: KnowledgeGraph) -> None:
        """Why each listed fact the scans never met is not there: deprecated, or not in the store
        (with what the store holds of its subject and relation, to spot a mistyped id)."""
        for (s, r, o), row in self.rows.items():
            if row in self.why or (s, r, o) in self.kept:
                continue
            statements = list(kg.facts(relation=r, subject=s, include_deprecated=True, entity_objects_only=True))
            objects = sorted({f.object for f in statements if f.object})
            if o in objects:
                self.why[row] = ("deprecated", "deprecated in the store")
            elif objects:
                more = f" and {len(objects) - 3} more" if len(objects) > 3 else ""
                self.why[row] = ("not-in-store", f"not in the store (it holds {s} {r} {', '.join(objects[:3])}{more})")
            else:
                held = f"{s} has no {r} there" if kg.entity(s) is not None else f"nor is {s}"
                self.why[row] = ("not-in-store", f"not in the store ({held})")

    def outcome(self, asked: set[str], kind: str, demonstrations: set[str] = frozenset()) -> dict:
        """What the sidecar records: the file, its SHA-256, the counts, and every listed fact not
        selected, by the line that listed it. `asked`: the fact ids the kind's test items ask;
        `demonstrations`: those of its demonstration items."""
        why = dict(self.why)
        for triple, fact_id in self.kept.items():
            if fact_id in demonstrations and fact_id not in asked:
                why[self.rows[triple]] = ("demonstration", f"selected, but a demonstration of the {kind} set, not a "
                                                           "test item")
            elif fact_id not in asked:
                why[self.rows[triple]] = ("no-item", f"selected, but the {kind} build made no item of it (see its "
                                                     "warnings)")
        missing = sorted(why.items(), key=lambda entry: (entry[0].line, entry[0].entry or 0))
        unknown = sum(1 for reason, _ in why.values() if reason == "unknown-fact")
        return {"file": Path(self.listed.path).name, "sha256": self.listed.sha256, "shape": self.listed.shape,
                "listed": len(self.rows) + unknown, "repeated": self.repeated,
                "selected": sum(1 for triple in self.kept if self.rows[triple] not in why),
                "by_reason": dict(Counter(reason for reason, _ in why.values()).most_common()),
                "not_selected": [{"line": row.line, **({"entry": row.entry} if row.entry else {}),
                                  "subject": row.subject, "relation": row.relation,
                                  "object": row.object, **({"fact_id": row.fact_id} if row.fact_id else {}),
                                  "reason": reason, "why": text} for row, (reason, text) in missing]}


def fact_list_lines(source: dict) -> tuple[list[str], list[str]]:
    """A build's fact list as a summary line (stdout) and one note per listed fact not selected
    (stderr, file:line first), from the sidecar's source; nothing for a build without a list."""
    listed = source.get("fact_list")
    if not listed:
        return [], []
    counts = ", ".join(f"{n} {REASONS.get(reason, reason)}" for reason, n in listed["by_reason"].items())
    summary = (f"fact list {listed['file']} (sha256 {listed['sha256']}): {listed['listed']:,} listed, "
               f"{listed['selected']:,} selected" + (f"; not selected: {counts}" if counts else ""))
    notes = []
    for entry in listed["not_selected"]:
        named = (f"({entry['subject']}, {entry['relation']}, {entry['object']})" if entry["subject"]
                 else f"fact {entry.get('fact_id')}")
        place = f"{entry['line']}" + (f" (entry {entry['entry']})" if entry.get("entry") else "")
        notes.append(f"{listed['file']}:{place}: {named} not selected: {entry['why']}")
    return [summary], notes

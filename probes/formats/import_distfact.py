"""DistFact's verbalization errors (004:225-239) as the two probe sets `factprobe assess
--flawed / --corrected` compares: the same facts, asked with the flawed sentence in one and its
correction in the other, as each item's own `clozes` (probes/methods/clozes.py).

Read: scripts/taxonomy/taxonomy_hichem.csv of Orange-OpenSource/DistFactAssessLM (GPL-2.0-or-
later; users read it, it is not shipped): an unnamed pandas index, `triples_raw` "('Q1033',
'P2936', 'Q3438755')", `triples` "(Nigeria, language used, Koenoem, start=None, end=None)",
`popularity`, `context` (present/past), `verbalization`, `errors` ("-": none) and `correction`.
As the paper: the 77 present-context facts (004:225), the flawed ones, each sentence asked up to
the label it ends with: 32 of 35 (004:237). One ending with its subject is asked as (o, r, s), as
the authors' notebook swaps it (`subject_final="drop"` leaves it out); one ending with neither is
left out. A closing quote after the label is dropped, as the notebook strips it.

Without `onto` the items have no distractors (the baselines run them); `onto`, a set holding the
facts (a distractor set built from your store), gives its items the clozes, distractors, names
and ids kept. Those distractors serve both sentences, where the notebook searches ApprOpt's
again per sentence: a Dist. ApprOpt row is not quite its experiment (Random, Sem: the same).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ...kg.jsonl import read_jsonl
from .import_rows import ImportReport, ImportRowError, file_rows, guarded_items, row_field

FORMAT = "distfact-taxonomy"
SIDES = ("flawed", "corrected")  # the row's `verbalization`, or its `correction`
SUBJECT_FINAL = ("swap", "drop")  # the authors' notebook's first
CONTEXT = "present"
RAW_TRIPLE = re.compile(r"\(\s*'(Q\d+)',\s*'(P\d+)',\s*'(Q\d+)'\s*\)")
LABELS = re.compile(r"\((.*), start=[^,]*, end=[^,]*\)")
CLOSING = " \t\u201d\u00bb\""  # what may follow the last label and is not asked (closing quotes)


@dataclass(frozen=True)
class Imported:
    items: list[dict]
    report: ImportReport
    kind: str
    params: dict  # what the sidecar records of the import


@dataclass(frozen=True)
class Cloze:
    text: str  # the sentence up to its last label, that label replaced by [Y]
    inverse: bool  # it ends with the subject: asked as (o, r, s)


def taxonomy_import(files: Sequence[str | Path], side: str, *, onto: str | Path | None = None,
                    subject_final: str = SUBJECT_FINAL[0]) -> Imported:
    """The flawed (`side="flawed"`) or the corrected set of the files' rows (see the module)."""
    if side not in SIDES:
        raise ValueError(f"--verbalization {side!r}: flawed (the row's verbalization) or corrected (its correction)")
    if subject_final not in SUBJECT_FINAL:
        raise ValueError(f"--subject-final {subject_final!r}: swap (the authors' notebook) or drop")
    base = _base_items(Path(onto)) if onto is not None else None
    report = ImportReport()

    def convert(row: dict) -> dict | None:
        made = _row_item(row, side, subject_final, report)
        return made if made is None or base is None else _onto(made, base, onto)

    rows = ((where, row) for path in files for where, row in file_rows(Path(path)))
    items = [i for i in guarded_items(rows, report, convert) if i is not None]
    if not items:
        left = [f"{count} {what}" for what, count in report.notes.items()]
        if report.rejected:
            left.append(f"{len(report.rejected)} rejected, the first {report.rejected[0]}")
        raise ValueError(f"{', '.join(map(str, files))}: no row left to ask ({'; '.join(left) or 'no rows'})")
    report.items = len(items)
    kind = items[0]["kind"] if items and base is not None else "distractor"
    if base is None and items:
        report.notes["items without distractors (the published file has none: baselines run them; pass --onto a "
                     "distractor set holding the facts for the distractor method)"] = len(items)
    params = {"import": FORMAT, "verbalization": side, "subject_final": subject_final,
              "onto": None if onto is None else Path(onto).name}
    return Imported(items, report, kind, params)


def _row_item(row: dict, side: str, subject_final: str, report: ImportReport) -> dict | None:
    """The row's item with its `side`'s cloze, or None (noted) for a row the experiment leaves out."""
    if str(row_field(row, "context")).strip() != CONTEXT:
        report.note(f"rows of another context than {CONTEXT} (the paper's 77 facts are the present ones)")
        return None
    errors = str(row_field(row, "errors")).strip()
    if errors in ("-", "ignore"):
        report.note("rows without an error" if errors == "-" else "rows the annotator marked ignore")
        return None
    subject, relation, obj = _ids(row)
    sentences = {name: str(row_field(row, column)).strip()
                 for name, column in zip(SIDES, ("verbalization", "correction"))}
    s_label, r_label, o_label = _labels(row, sentences.values())
    clozes = {name: _cloze(text, s_label, o_label) for name, text in sentences.items()}
    if any(c is None for c in clozes.values()):
        report.note("rows whose verbalization or correction ends with neither the subject's nor the object's label "
                    "(no cloze before an entity; left out as in the authors' 32)")
        return None
    if clozes["flawed"].inverse != clozes["corrected"].inverse:
        raise ImportRowError("correction: ends with the other entity than the verbalization does")
    cloze = clozes[side]
    if cloze.inverse:
        if subject_final == "drop":
            report.note("rows whose sentences end with the subject, left out (--subject-final drop)")
            return None
        report.note("rows whose sentences end with the subject, asked as (o, r, s) (--subject-final swap)")
        subject, obj, s_label, o_label = obj, subject, o_label, s_label
    number = str(row.get("") or "").strip() or None
    fact = f"{FORMAT}:{number}" if number else f"{FORMAT}:{subject}|{relation}|{obj}"
    return {"id": f"distractor:{fact}", "kind": "distractor", "split": "test", "fact": fact, "relation": relation,
            "relation_label": r_label, "subject": subject, "subject_label": s_label, "object": obj,
            "object_label": o_label, "gold": [o_label], "frequency": None, "bucket": None,
            "source_format": FORMAT, "object_names": [o_label], "distractors": {}, "shortfall": None,
            "clozes": [cloze.text],
            "verbalization": {"side": side, "row": number, "errors": [e.strip() for e in errors.split(",")],
                              "sentence": sentences[side], "inverse": cloze.inverse}}


def _ids(row: dict) -> tuple[str, str, str]:
    match = RAW_TRIPLE.fullmatch(str(row_field(row, "triples_raw")).strip())
    if match is None:
        raise ImportRowError(f"triples_raw: {row['triples_raw']!r} is not ('Q..', 'P..', 'Q..')")
    return match.group(1), match.group(2), match.group(3)


def _labels(row: dict, sentences) -> tuple[str, str, str]:
    """Subject, relation and object labels from `triples`, whose labels may hold ", " themselves:
    of the ways to cut it in three, those whose subject and object both stand in every sentence,
    then those whose sentences end with one of the two, then the shortest relation label."""
    text = str(row_field(row, "triples")).strip()
    match = LABELS.fullmatch(text)
    if match is None:
        raise ImportRowError(f"triples: {text!r} is not (subject, relation, object, start=..., end=...)")
    parts = match.group(1).split(", ")
    cuts = [(", ".join(parts[:i]), ", ".join(parts[i:j]), ", ".join(parts[j:]))
            for i in range(1, len(parts)) for j in range(i + 1, len(parts))]
    found = [c for c in cuts if all(c[0] in s and c[2] in s for s in sentences)]
    if not found:
        raise ImportRowError(f"triples: no subject and object label of {text!r} stand in the verbalization and "
                             "its correction")
    ending = [c for c in found if all(_cloze(s, c[0], c[2]) for s in sentences)]
    return min(ending or found, key=lambda c: len(c[1]))


def _cloze(sentence: str, subject: str, obj: str) -> Cloze | None:
    """The sentence up to the label it ends with (the object's first; the longer where both
    do), closing quotes after it dropped; None when it ends with neither or names only one."""
    text = sentence.rstrip(CLOSING)
    ends = [(label, inverse) for label, inverse in ((obj, False), (subject, True)) if text.endswith(label)]
    if not ends:
        text = text.rstrip(" .!?").rstrip(CLOSING)  # "... Paris." ("F.C." ends a label itself)
        ends = [(label, inverse) for label, inverse in ((obj, False), (subject, True)) if text.endswith(label)]
    if not ends:
        return None
    label, inverse = max(ends, key=lambda e: len(e[0]))
    before = text[: len(text) - len(label)]
    other = obj if inverse else subject
    if other not in before or not before.strip():
        return None
    return Cloze(before + "[Y]", inverse)


def _base_items(path: Path) -> dict[tuple[str, str, str], list[dict]]:
    """The --onto set's test items by (subject, relation, object)."""
    out: dict[tuple[str, str, str], list[dict]] = {}
    for item in read_jsonl(path):
        if isinstance(item, dict) and item.get("split", "test") == "test":
            out.setdefault((item.get("subject"), item.get("relation"), item.get("object")), []).append(item)
    if not out:
        raise ValueError(f"{path}: no test items to give the clozes to")
    return out


def _onto(made: dict, base: dict, onto) -> dict:
    """The --onto item of the same fact, with the row's cloze and provenance."""
    key = (made["subject"], made["relation"], made["object"])
    found = base.get(key, [])
    if len(found) != 1:
        asked = " (the sentence ends with the subject: asked as (o, r, s))" if made["verbalization"]["inverse"] else ""
        raise ImportRowError(f"{Path(onto).name} holds {len(found) or 'no'} items of ({', '.join(key)}){asked}")
    return {**found[0], "clozes": made["clozes"], "verbalization": made["verbalization"]}

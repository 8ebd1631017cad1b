"""LAMA's probe sets and the sets made from its rows, as cloze items: LAMA T-REx (one JSONL per
relation, every row naming its relation), ParaRel (LAMA T-REx facts as labels only, the relation
only in the file's name) and LAMA Google-RE (three Freebase relations, read as their Wikidata
properties). Fields read: docs/design/probe-sets.md.

An item's `subject` and `object` are Wikidata ids or None, never another scheme's ids: a
Google-RE entity that LAMA gives only as a Freebase mid keeps the mid in the item's `freebase`,
and the report counts those items. A row that does not fit is named by file, line and field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Iterator

from .import_rows import ImportReport, ImportRowError, file_rows, guarded_items, row_field, row_text

PROPERTY = re.compile(r"P[1-9][0-9]*")
ITEM = re.compile(r"Q[1-9][0-9]*")
MID = re.compile(r"/m/[0-9a-z_]+")
DATE = re.compile(r"-?[0-9]{1,4}(-[0-9]{2}(-[0-9]{2})?)?")
# Google-RE's relations and the Wikidata properties of the same meaning (LAMA asks place of birth
# and of death with the templates of T-REx's P19 and P20)
GOOGLE_RE = {"/people/person/place_of_birth": "P19", "/people/person/date_of_birth": "P569",
             "/people/deceased_person/place_of_death": "P20"}
# the names mLAMA (and LAMA's relations_googlere.jsonl) give the same three relations, file and template
GOOGLE_RE_NAMES = {"place_of_birth": "P19", "date_of_birth": "P569", "place_of_death": "P20"}
SUBJECT_FREEBASE_ONLY = "items whose subject has only a Freebase mid (no Wikidata id in the row)"
OBJECT_FREEBASE_ONLY = "items whose object has only a Freebase mid (no Wikidata id in the row)"

Templates = dict[str, list[str]]


def cloze_item(fact: str, relation: str, subject: str | None, subject_label: str, obj: str | None,
               object_label: str, source_format: str, templates: Templates) -> dict:
    prompts = [{"template": t, "template_id": k, "subject_name": subject_label,
                "text": t.replace("[X]", subject_label)} for k, t in enumerate(templates.get(relation, []))]
    return {"id": f"cloze:{fact}", "kind": "cloze", "split": "test", "fact": fact, "relation": relation,
            "relation_label": None, "subject": subject, "subject_label": subject_label, "object": obj,
            "object_label": object_label, "gold": [object_label], "frequency": None, "bucket": None,
            "source_format": source_format, "prompts": prompts}


def _rows(files: Iterable[str | Path]) -> Iterator[tuple[str, dict]]:
    return (found for path in files for found in file_rows(Path(path)))


def lama_trex_items(files: Iterable[str | Path], templates: Templates, report: ImportReport) -> Iterator[dict]:
    def convert(row: dict) -> dict:
        if "__error__" not in row and row.get("predicate_id") in (None, ""):
            raise ImportRowError(f"predicate_id: missing{_other_format(row)}")
        relation = str(row_field(row, "predicate_id"))
        subject, subject_label = str(row_field(row, "sub_uri")), str(row_field(row, "sub_label"))
        obj, obj_label = str(row_field(row, "obj_uri")), str(row_field(row, "obj_label"))
        fact = str(row.get("uuid") or f"{subject}|{relation}|{obj}")
        return cloze_item(fact, relation, subject, subject_label, obj, obj_label, "lama-trex", templates)

    yield from guarded_items(_rows(files), report, convert)


def _other_format(row: dict) -> str:
    """A row of LAMA's other shapes, given as T-REx: the format that reads it."""
    if "masked_sentences" in row:  # LAMA's SQuAD and ConceptNet probes: their own sentences, no relation id
        return " (a row with its own sentences: --format lama-conceptnet, or lama-squad)"
    if "pred" in row:
        return " (a Google-RE row: --format lama-google-re)"
    if "sub_uri" not in row and "sub_label" in row:
        return " (ParaRel's rows name their relation only in the file's name: --format pararel)"
    return ""


def file_relation(path: Path, given: str | None) -> str:
    """A ParaRel file's relation: --relation, else the file's name (P36.jsonl). ValueError when
    there is none or the two disagree (a set of files named by relation, one --relation for all)."""
    named = path.stem if PROPERTY.fullmatch(path.stem) else None
    if given and named and given != named:
        raise ValueError(f"{path}: its name says relation {named}, --relation says {given}: import the files of "
                         "other relations without --relation")
    if not (given or named):
        raise ValueError(f"{path}: no relation for its rows: ParaRel rows carry none, its name is not a property "
                         "id (like P36.jsonl) and --relation was not given")
    return given or named


def pararel_items(files: Iterable[str | Path], relation: str | None, templates: Templates,
                  report: ImportReport) -> Iterator[dict]:
    # every file's relation before any row is read: a file without one refuses the import whole
    relations = [(Path(path), file_relation(Path(path), relation)) for path in files]

    def convert(pair: tuple[str, dict]) -> dict:
        relation, row = pair
        subject_label, object_label = row_text(row, "sub_label"), row_text(row, "obj_label")
        stated = row.get("predicate_id")
        if stated not in (None, "") and stated != relation:
            raise ImportRowError(f"predicate_id: {stated}, but the file's relation is {relation}")
        subject, obj = wikidata_id(row, "sub_uri"), wikidata_id(row, "obj_uri")
        fact = str(row.get("uuid") or f"{subject or subject_label}|{relation}|{obj or object_label}")
        return cloze_item(fact, relation, subject, subject_label, obj, object_label, "pararel", templates)

    rows = ((where, (named, row)) for path, named in relations for where, row in file_rows(path))
    yield from guarded_items(rows, report, convert)


def wikidata_id(row: dict, name: str) -> str | None:
    """An optional Wikidata item id: None when the row gives none."""
    value = row.get(name)
    if value in (None, ""):
        return None
    if not (isinstance(value, str) and ITEM.fullmatch(value)):
        raise ImportRowError(f"{name}: {value!r} is not a Wikidata item id")
    return value


def google_re_items(files: Iterable[str | Path], templates: Templates, report: ImportReport) -> Iterator[dict]:
    def convert(row: dict) -> dict:
        pred = row_text(row, "pred")
        if pred not in GOOGLE_RE:
            raise ImportRowError(f"pred: {pred!r} is not one of Google-RE's relations ({', '.join(GOOGLE_RE)})")
        relation, sub, obj = GOOGLE_RE[pred], row_text(row, "sub"), row_text(row, "obj")
        if not MID.fullmatch(sub):
            raise ImportRowError(f"sub: {sub!r} is not a Freebase mid (/m/...)")
        # a date of birth is a value, not an entity: LAMA asks for its year (obj_label), the row's
        # date is kept beside it
        if relation == "P569" and not DATE.fullmatch(obj):
            raise ImportRowError(f"obj: {obj!r} is not a date (YYYY, YYYY-MM or YYYY-MM-DD)")
        if relation != "P569" and not MID.fullmatch(obj):
            raise ImportRowError(f"obj: {obj!r} is not a Freebase mid (/m/...)")
        subject_label, object_label = row_text(row, "sub_label"), row_text(row, "obj_label")
        subject, obj_id = wikidata_id(row, "sub_w"), wikidata_id(row, "obj_w")
        fact = str(row.get("uuid") or f"{sub}|{relation}|{obj}")
        is_mid = relation != "P569"
        return {**cloze_item(fact, relation, subject, subject_label, obj_id, object_label, "lama-google-re",
                             templates),
                "source_relation": pred, "freebase": {"subject": sub, "object": obj if is_mid else None},
                "object_value": None if is_mid else obj}

    for item in guarded_items(_rows(files), report, convert):
        if item["subject"] is None:
            report.note(SUBJECT_FREEBASE_ONLY)
        if item["object"] is None and item["freebase"]["object"]:
            report.note(OBJECT_FREEBASE_ONLY)
        yield item

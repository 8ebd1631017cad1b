"""Importers: existing probe sets into factprobe items, so one evaluation runs on both.

LAMA T-REx and MyriadLAMA rows become cloze items, T-REx-MC rows icl-mc items, lm-evaluation-harness
multiple_choice tasks icl-mc items with their own prompt (probes/import_lm_eval.py); a row that
does not fit is reported by file, line and field, counted and skipped. Fields read:
docs/design-notes.md.

Item ids are unique (eval resumes by id): a LAMA row whose id (its uuid, else subject, relation
and object) an earlier row took is rejected naming that row; T-REx-MC rows are numbered; a
MyriadLAMA uuid is one item whose rows are its prompts, so a row of a known uuid with another
relation or subject entity, or a prompt it already has, is rejected; two lm-eval tasks of one
name are refused (their documents are numbered within the task).
"""

from __future__ import annotations

import ast
import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..kg.jsonl import jsonl_lines

FORMATS = ("lama-trex", "trex-mc", "myriadlama", "lm-eval")


class ImportRowError(ValueError):
    pass


@dataclass
class ImportReport:
    rows: int = 0
    items: int = 0
    rejected: list[str] = field(default_factory=list)  # "file:line: field: why"

    def to_dict(self) -> dict:
        return {"rows": self.rows, "items": self.items, "rejected": len(self.rejected)}


def import_items(fmt: str, files: Iterable[str | Path], templates: dict[str, list[str]] | None = None
                 ) -> tuple[list[dict], ImportReport]:
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: use one of {', '.join(FORMATS)}")
    report = ImportReport()
    if fmt == "lm-eval":  # task YAMLs, not rows: probes/import_lm_eval.py
        return _lm_eval(files, report)
    rows = ((where, row) for path in files for where, row in _rows(Path(path)))
    if fmt == "lama-trex":
        items = list(_lama(rows, templates or {}, report))
    elif fmt == "trex-mc":
        items = list(_trex_mc(rows, report))
    else:
        items = _myriadlama(rows, report)
    report.items = len(items)
    return items, report


def _lm_eval(files: Iterable[str | Path], report: ImportReport) -> tuple[list[dict], ImportReport]:
    from .import_lm_eval import task_items

    items: list[dict] = []
    tasks: dict[str, str | Path] = {}
    for path in files:
        task, found, rejected, documents = task_items(path)
        if task in tasks:
            raise ValueError(f"{path}: task {task!r} is also the task of {tasks[task]}: its items would take the "
                             "same ids (lm-eval:TASK:N); import one of them, or give one another `task:` name")
        tasks[task] = path
        items += found
        report.rows += documents
        report.rejected += rejected
    report.items = len(items)
    return items, report


def _rows(path: Path) -> Iterator[tuple[str, dict]]:
    if path.suffix.lower() == ".csv":
        with open(path, encoding="utf-8", newline="") as handle:
            for number, row in enumerate(csv.DictReader(handle), start=2):
                yield f"{path}:{number}", row
        return
    for line in jsonl_lines(path):
        row = {"__error__": line.error} if line.error else line.value
        # Rows are read by field name: a list or a number on a line is a bad row, not a crash.
        if not isinstance(row, dict):
            row = {"__error__": f"not a JSON object (a {type(row).__name__})"}
        yield line.where(path), row


def _field(row: dict, name: str) -> object:
    if "__error__" in row:
        raise ImportRowError(row["__error__"])
    value = row.get(name)
    if value in (None, ""):
        raise ImportRowError(f"{name}: missing")
    return value


def _guarded(rows, report: ImportReport, convert):
    """`convert` over the rows, a row it refuses reported by place; so is an item whose id an
    earlier row's item took (`convert` returning None adds to an earlier item instead)."""
    first: dict[str, str] = {}
    for where, row in rows:
        report.rows += 1
        try:
            item = convert(row)
            if item is not None and item["id"] in first:
                raise ImportRowError(f"id {item['id']!r} is also the id of the row at {first[item['id']]}")
        except ImportRowError as error:
            report.rejected.append(f"{where}: {error}")
            continue
        if item is not None:
            first[item["id"]] = where
        yield item


def _lama(rows, templates: dict[str, list[str]], report: ImportReport) -> Iterator[dict]:
    def convert(row: dict) -> dict:
        relation = str(_field(row, "predicate_id"))
        subject, subject_label = str(_field(row, "sub_uri")), str(_field(row, "sub_label"))
        obj, obj_label = str(_field(row, "obj_uri")), str(_field(row, "obj_label"))
        fact = str(row.get("uuid") or f"{subject}|{relation}|{obj}")
        prompts = [{"template": t, "template_id": k, "subject_name": subject_label,
                    "text": t.replace("[X]", subject_label)} for k, t in enumerate(templates.get(relation, []))]
        return {"id": f"cloze:{fact}", "kind": "cloze", "split": "test", "fact": fact, "relation": relation,
                "relation_label": None, "subject": subject, "subject_label": subject_label, "object": obj,
                "object_label": obj_label, "gold": [obj_label], "frequency": None, "bucket": None,
                "source_format": "lama-trex", "prompts": prompts}

    yield from _guarded(rows, report, convert)


def _choices(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value).strip()
    for parse in (json.loads, ast.literal_eval):
        try:
            parsed = parse(text)
        except (ValueError, SyntaxError):
            continue
        if isinstance(parsed, (list, tuple)):
            return [str(v) for v in parsed]
    raise ImportRowError("Multiple Choices: not a list (nor its JSON or Python text)")


def _trex_mc(rows, report: ImportReport) -> Iterator[dict]:
    count = 0

    def convert(row: dict) -> dict:
        nonlocal count
        relation, subject, obj = (str(_field(row, k)).strip() for k in ("Relation_ID", "Subject", "Object"))
        choices = _choices(_field(row, "Multiple Choices"))
        if obj not in choices:
            raise ImportRowError(f"Multiple Choices: the Object {obj!r} is not among them")
        if len(set(choices)) != len(choices):
            raise ImportRowError("Multiple Choices: a choice appears twice")
        count += 1
        fact = f"trex-mc:{count}"
        return {"id": f"icl-mc:{fact}", "kind": "icl-mc", "split": "test", "fact": fact, "relation": relation,
                "relation_label": None, "subject": None, "subject_label": subject, "object": None,
                "object_label": obj, "gold": [obj], "frequency": None, "bucket": None, "source_format": "trex-mc",
                "choices": choices, "choice_ids": None, "answer_index": choices.index(obj)}

    yield from _guarded(rows, report, convert)


def _entity(value: object, name: str) -> tuple[str | None, str]:
    """(id, label) from an id string, a label string or a {uri/id, label/name} object."""
    if isinstance(value, dict):
        uri = value.get("uri") or value.get("id")
        label = value.get("label") or value.get("name")
        if not label and not uri:
            raise ImportRowError(f"{name}: an object with neither label nor uri")
        return (str(uri) if uri else None), str(label or uri)
    text = str(value)
    is_id = text[:1] in "QP" and text[1:].isdigit()
    return (text if is_id else None), text


def _objects(value: object) -> list:
    """obj_ents as a non-empty list: the first entry becomes the item's object, so an empty list
    (or an empty entry) is a bad row to report, not a crash of the whole import."""
    objects = value if isinstance(value, list) else [value]
    if not objects:
        raise ImportRowError("obj_ents: an empty list")
    if any(o in (None, "") for o in objects):
        raise ImportRowError("obj_ents: an empty entry")
    return objects


def _myriadlama(rows, report: ImportReport) -> list[dict]:
    by_uuid: dict[str, dict] = {}
    # relation -> template text -> id, shared by all items of the relation (not a position within
    # one item: the same template must keep one id wherever it occurs)
    template_ids: dict[str, dict[str, int]] = {}

    def convert(row: dict) -> None:
        uuid, relation, template = (str(_field(row, k)) for k in ("uuid", "rel_uri", "template"))
        subject, subject_label = _entity(_field(row, "sub_ent"), "sub_ent")
        objects = _objects(_field(row, "obj_ents"))
        aliases = row.get("obj_aliases") or []
        if not isinstance(aliases, list):
            raise ImportRowError("obj_aliases: not a list")
        if "[X]" not in template:
            raise ImportRowError(f"template: {template!r} has no [X]")
        item = by_uuid.get(uuid)
        if item is not None:
            _same_pair(item, uuid, relation, subject, subject_label, template)
        else:
            first_id, first_label = _entity(objects[0], "obj_ents")
            gold = [_entity(o, "obj_ents")[1] for o in objects]
            for group in aliases:
                for alias in (group if isinstance(group, list) else [group]):
                    if str(alias) not in gold:
                        gold.append(str(alias))
            item = by_uuid[uuid] = {
                "id": f"cloze:{uuid}", "kind": "cloze", "split": "test", "fact": uuid, "relation": relation,
                "relation_label": None, "subject": subject, "subject_label": subject_label, "object": first_id,
                "object_label": first_label, "gold": gold, "frequency": None, "bucket": None,
                "source_format": "myriadlama", "unit": "pair", "prompts": []}  # a uuid is a subject-relation pair
        ids = template_ids.setdefault(relation, {})
        template_id = ids.setdefault(template, len(ids))
        item["prompts"].append({"template": template, "template_id": template_id,
                                "subject_name": subject_label, "text": template.replace("[X]", subject_label)})

    for _ in _guarded(rows, report, convert):
        pass
    return list(by_uuid.values())


def _same_pair(item: dict, uuid: str, relation: str, subject: str | None, subject_label: str,
               template: str) -> None:
    """A further row of a MyriadLAMA uuid: another prompt (template, subject name) of the same
    subject-relation pair; the subject's name may be another alias, not another entity."""
    if item["relation"] != relation or (item["subject"] and subject and item["subject"] != subject):
        raise ImportRowError(f"uuid {uuid}: its first row is of {item['subject'] or item['subject_label']} "
                             f"{item['relation']}, this one of {subject or subject_label} {relation} (one uuid is "
                             "one subject-relation pair)")
    if any((p["template"], p["subject_name"]) == (template, subject_label) for p in item["prompts"]):
        raise ImportRowError(f"template: uuid {uuid} already has {template!r} for {subject_label!r}")

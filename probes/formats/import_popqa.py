"""PopQA (Mallen et al. 2023, "When Not to Trust Language Models") as cloze items: one item per
question, its subject's Wikipedia page views (`s_pop`) the item's `popularity`, so accuracy
reads against popularity as the paper's figures draw it.

The published file is popQA.tsv (tab-separated, csv quoting; a JSON Lines copy with the same
fields reads too). Fields (the dataset card, the repository's README): id, subj, prop, obj,
subj_id, prop_id, obj_id, s_aliases, o_aliases (JSON lists), s_uri, o_uri (Wikidata entity
URLs), s_wiki_title, o_wiki_title, s_pop, o_pop (page views), question, possible_answers (a JSON
list: obj and its aliases).

PopQA's prop_id is its own number for the relation (22 for occupation), not a Wikidata property,
and subj_id / obj_id are its own entity numbers: the relation is read by its name (`prop`) as the
Wikidata property of that meaning (POPQA_RELATIONS), the entities from s_uri / o_uri; PopQA's
numbers are kept beside them. A row that does not fit is named by file, line and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from ...kg.jsonl import JsonRefused, parse_json
from .import_lama import ITEM, Templates, cloze_item
from .import_rows import ImportReport, ImportRowError, csv_records, file_rows, guarded_items, open_csv, row_field, \
    row_text

# PopQA's 16 relations by the name its `prop` gives, and the Wikidata property each asks
POPQA_RELATIONS = {
    "occupation": "P106", "place of birth": "P19", "genre": "P136", "father": "P22", "country": "P17",
    "producer": "P162", "director": "P57", "capital of": "P1376", "screenwriter": "P58", "composer": "P86",
    "color": "P462", "religion": "P140", "sport": "P641", "author": "P50", "mother": "P25", "capital": "P36"}
POPULARITY = "s_pop: the subject's monthly Wikipedia page views, as PopQA (Mallen et al. 2023) counted them"


def popqa_rows(path: Path) -> Iterator[tuple[str, dict]]:
    """("file:line", row) of popQA.tsv (or of a JSONL / CSV copy); a record with a cell that
    cannot be read comes as a row holding only `__error__`."""
    if path.suffix.lower() != ".tsv":
        yield from file_rows(path)
        return
    with open_csv(path) as handle:
        header: list[str] | None = None
        for record in csv_records(handle, delimiter="\t"):
            if header is None:
                if record.bad:
                    raise ValueError(f"{path}:{record.line}: the header's {record.problem()}")
                header = record.cells or None
                continue
            if record.bad:
                yield f"{path}:{record.line}", {"__error__": record.problem(header)}
            elif len(record.cells) not in (0, len(header)):  # a tab lost or added: every cell may be misplaced
                yield f"{path}:{record.line}", {"__error__": f"{len(record.cells)} cells, the header names "
                                                              f"{len(header)}"}
            elif record.cells:
                yield f"{path}:{record.line}", dict(zip(header, record.cells))


def _texts(row: dict, name: str, empty: bool) -> list[str]:
    """A list of names: a JSON list in the TSV's cell, a list in JSONL."""
    value = row.get(name)
    if value in (None, "") and empty:
        return []
    value = row_field(row, name)
    if isinstance(value, str):
        try:
            value = parse_json(value, finite=True)
        except JsonRefused as refused:
            raise ImportRowError(f"{name}: {refused.reason}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ImportRowError(f"{name}: not a list of names")
    if not value and not empty:
        raise ImportRowError(f"{name}: an empty list")
    return value


def _entity(row: dict, name: str) -> str:
    """A Wikidata item id from its entity URL (http://www.wikidata.org/entity/Q82955)."""
    text = row_text(row, name).strip().rstrip("/").rsplit("/", 1)[-1]
    if not ITEM.fullmatch(text):
        raise ImportRowError(f"{name}: {row[name]!r} is not a Wikidata entity (…/entity/Q…)")
    return text


def _views(row: dict, name: str) -> int:
    value = row_field(row, name)
    text = str(value).strip() if not isinstance(value, bool) else ""
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    if not text.isascii() or not text.isdigit():
        raise ImportRowError(f"{name}: {value!r} is not a number of page views (a whole number, 0 or more)")
    return int(text)


def _number(row: dict, name: str) -> str | None:
    """PopQA's own id for a relation or an entity, kept as it is written."""
    value = row.get(name)
    return None if value in (None, "") else str(value)


def popqa_items(files: Iterable[str | Path], templates: Templates, report: ImportReport) -> Iterator[dict]:
    def convert(row: dict) -> dict:
        number, prop = str(row_field(row, "id")).strip(), row_text(row, "prop")
        relation = POPQA_RELATIONS.get(prop)
        if relation is None:
            raise ImportRowError(f"prop: {prop!r} is not one of PopQA's 16 relations ({', '.join(POPQA_RELATIONS)})")
        subject_label, object_label = row_text(row, "subj"), row_text(row, "obj")
        subject, obj = _entity(row, "s_uri"), _entity(row, "o_uri")
        answers = _texts(row, "possible_answers", empty=False)
        item = cloze_item(f"popqa:{number}", relation, subject, subject_label, obj, object_label, "popqa", templates)
        item.update({
            "relation_label": prop, "gold": list(dict.fromkeys([object_label, *answers])),
            "subject_aliases": _texts(row, "s_aliases", empty=True),
            "object_aliases": _texts(row, "o_aliases", empty=True),
            "question": row_text(row, "question"), "popularity": _views(row, "s_pop"), "popularity_bin": None,
            "object_popularity": _views(row, "o_pop"),
            "wiki_titles": {"subject": row.get("s_wiki_title") or None, "object": row.get("o_wiki_title") or None},
            "popqa": {"prop_id": _number(row, "prop_id"), "subj_id": _number(row, "subj_id"),
                      "obj_id": _number(row, "obj_id")}})
        return item

    rows = ((where, row) for path in files for where, row in popqa_rows(Path(path)))
    yield from guarded_items(rows, report, convert)

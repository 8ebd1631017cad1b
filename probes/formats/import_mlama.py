"""mLAMA (Kassner et al. 2021, "Multilingual LAMA") as cloze items in their language, each asked
with its language's own template.

mLAMA 1.1 is one folder per language (mlama1.1/fr/) holding one JSON Lines file per relation
(P19.jsonl; Google-RE's as date_of_birth.jsonl, place_of_birth.jsonl, place_of_death.jsonl)
and templates.jsonl ({"relation", "template"}, LAMA's templates translated). The shape is what
mLAMA's own dataset/cleanup.py writes: rows {sub_uri, obj_uri, sub_label, obj_label, lineid},
labels in the folder's language; Google-RE rows have no Wikidata ids. The language is the
folder's name (or given), the relation the file's name, the prompts that folder's
templates.jsonl (probes/templates/imported.py reads it). A row that does not fit is named by
file, line and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from .import_lama import GOOGLE_RE_NAMES, PROPERTY, cloze_item, wikidata_id
from .import_rows import ImportReport, ImportRowError, file_rows, guarded_items, row_text
from ..templates import LANGUAGE_CODE
from ..templates.imported import read_templates

NO_TEMPLATE = "items without a prompt (their folder's templates.jsonl has no template for the relation)"


def file_place(path: Path, language: str | None) -> tuple[str, str]:
    """(relation, language) of mlama1.1/fr/P19.jsonl; ValueError for a file its place does not name."""
    relation = GOOGLE_RE_NAMES.get(path.stem, path.stem)
    if path.name == "templates.jsonl":
        raise ValueError(f"{path}: mLAMA's templates, not its facts: give the relation files (P19.jsonl); "
                         "the templates beside them are read with them")
    if not PROPERTY.fullmatch(relation):
        raise ValueError(f"{path}: mLAMA names each file by its relation (P19.jsonl, date_of_birth.jsonl): "
                         f"{path.stem!r} is neither")
    lang = language or path.parent.name
    if not LANGUAGE_CODE.fullmatch(lang or ""):
        raise ValueError(f"{path}: its folder {path.parent.name!r} names no language (mlama1.1/fr/P19.jsonl); "
                         "give --language")
    return relation, lang


def _folder_templates(folder: Path, language: str, report: ImportReport) -> dict[str, list[str]]:
    path = folder / "templates.jsonl"
    if not path.is_file():
        return {}
    found = read_templates("mlama", [path], language=language)
    report.resources.append(path)
    for line in found.rejected:
        report.note(f"templates skipped (templates.jsonl rows that are no template): {line}")
    return {relation: [t.text for t in entry.cloze] for (relation, _), entry in found.found.items()}


def mlama_items(files: Iterable[str | Path], report: ImportReport, *, language: str | None = None) -> Iterator[dict]:
    placed = [(Path(path), *file_place(Path(path), language)) for path in files]  # every name before any row
    templates: dict[tuple[Path, str], dict[str, list[str]]] = {}
    for path, _, lang in placed:
        if (path.parent, lang) not in templates:
            templates[path.parent, lang] = _folder_templates(path.parent, lang, report)

    def rows() -> Iterator[tuple[str, tuple]]:
        for path, relation, lang in placed:
            for number, (where, row) in enumerate(file_rows(path), start=1):
                yield where, (path, relation, lang, number, row)

    def convert(entry: tuple) -> dict:
        path, relation, lang, number, row = entry
        subject_label, object_label = row_text(row, "sub_label"), row_text(row, "obj_label")
        line = row.get("lineid", number - 1)  # cleanup.py numbers a file's rows from 0
        if isinstance(line, bool) or not isinstance(line, int):
            raise ImportRowError(f"lineid: {line!r} is not a whole number")
        fact = f"mlama:{lang}:{path.stem}:{line}"
        item = cloze_item(fact, relation, wikidata_id(row, "sub_uri"), subject_label, wikidata_id(row, "obj_uri"),
                          object_label, "mlama", templates[path.parent, lang])
        item.update({"language": lang, "source_relation": path.stem, "lineid": line})
        return item

    for item in guarded_items(rows(), report, convert):
        if not item["prompts"]:
            report.note(NO_TEMPLATE)
        yield item

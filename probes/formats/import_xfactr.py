"""X-FACTR (Jiang et al. 2020, "X-FACTR: Multilingual Factual Knowledge Retrieval from Pretrained
Language Models") as cloze items in one of its 23 languages, asked with that language's prompt.

X-FACTR's data folder (its README's "Dataset"): `mTRExf/sub/P19.jsonl` the facts (LAMA T-REx
rows, English labels, with `count`), `TREx_prompts.csv` the prompts (columns pid, relation, then
one per language), `mTRExf_unicode_escape.txt` each entity's names (`Q90<TAB>"Paris"@fr<TAB>...`),
`mTRExf_gender.txt` (`Q90<TAB>none|male|female`) and `alias/mTRExf/fr.txt` (`Q90<TAB>alias...`).
The files beside the facts are found where X-FACTR keeps them: the data folder two levels above
the facts' file, named after the facts' folder (mTRExf, mTREx or TREx); only those are read.

A name missing in the language falls back to the English one, as X-FACTR's probe does by default
(scripts/probe.py, get_queries), counted in the report's notes. X-FACTR's prompts mark
inflection: `[X.Nom]` (a case), `[né;X-Gender=MASC|née;X-Gender=FEM]` (agreement with the
subject's or the object's gender) and articles or prepositions chosen by the entity (`[DEF;X]`, `[PREPLOC;Y]`).
Here a case mark asks the name as written; an agreement takes its entity's gender from the
gender file as X-FACTR's GENDER_MAP reads it (male MASC, female FEM, none NEUT), the first form
where the prompt has none for that gender or the file none for the entity (X-FACTR guesses a NEUT
one from the word's ending); a prompt with any other mark is kept on the item (`xfactr_prompt`)
but not asked: factprobe has not X-FACTR's per-language article rules.
Each is counted in the notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from .import_lama import ITEM, PROPERTY, cloze_item
from .import_rows import ImportReport, ImportRowError, csv_records, file_rows, guarded_items, open_csv, row_text
from ..templates import LANGUAGE_CODE

ENGLISH_NAME = "items with an English name where the language has none (X-FACTR's default)"
CASE_UNINFLECTED = "items whose prompt marks a case (X.Nom): asked with the names as written"
GENDER_UNKNOWN = "items whose prompt agrees with a gender it has no form for: asked with the first form"
NOT_ASKED = "items whose prompt needs X-FACTR's article or preposition rules: kept (xfactr_prompt), not asked"
NO_PROMPT = "items whose relation has no prompt in the language"
LFS_POINTER = "version https://git-lfs"  # what a clone without git-lfs holds for X-FACTR's large files
_MARK = re.compile(r"\[([^\[\]]*)\]")
_CASE = re.compile(r"([XY])\.[A-Za-z+]+")
_FORM = re.compile(r"([^;|]*);([XY])-Gender=(MASC|FEM|NEUT)")
GENDERS = {"male": "MASC", "female": "FEM", "none": "NEUT"}  # X-FACTR's prompt.py GENDER_MAP


@dataclass
class Resources:
    """What the data folder holds for one language."""
    prompts: dict[str, str] = field(default_factory=dict)  # relation -> the language's prompt
    names: dict[str, dict[str, str]] = field(default_factory=dict)  # entity -> language -> name
    genders: dict[str, str] = field(default_factory=dict)  # entity -> male | female
    aliases: dict[str, list[str]] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)  # the files read, for the sidecar to tie to their bytes


def data_folder(path: Path) -> tuple[Path, str]:
    """(X-FACTR's data folder, the facts' set name) of data/mTRExf/sub/P19.jsonl."""
    if path.parent.name != "sub" or len(path.parents) < 3:
        raise ValueError(f"{path}: not in X-FACTR's layout (data/mTRExf/sub/P19.jsonl): the prompts and names "
                         "are read from the data folder beside the facts")
    return path.parents[2], path.parents[1].name


def read_resources(folder: Path, facts: str, language: str) -> Resources:
    found = Resources()
    prompts = folder / "TREx_prompts.csv"
    if not prompts.is_file():
        raise ValueError(f"{prompts}: X-FACTR's prompts are not there")
    with open_csv(prompts) as handle:
        header: list[str] | None = None
        for record in csv_records(handle):
            if header is None:
                header = record.cells
                if language not in header or "pid" not in header:
                    raise ValueError(f"{prompts}: no column for language {language!r} (it has "
                                     f"{', '.join(header[2:])})")
                continue
            cells = dict(zip(header, record.cells))
            if cells.get("pid") and cells.get(language, "").strip():
                found.prompts[cells["pid"]] = " ".join(cells[language].split())
    names, genders = folder / f"{facts}_unicode_escape.txt", folder / f"{facts}_gender.txt"
    aliases = folder / "alias" / facts / f"{language}.txt"
    if language != "en" and not names.is_file():
        raise ValueError(f"{names}: X-FACTR's names of the entities are not there: without them every name "
                         "would be English")
    for line in _tab_lines(names):
        entity = found.names.setdefault(line[0], {})
        for entry in line[1:]:
            label, _, lang = entry.rpartition("@")
            entity[lang] = label.strip('"')
    for line in _tab_lines(genders):
        if len(line) > 1 and line[1] in GENDERS:
            found.genders[line[0]] = line[1]
    for line in _tab_lines(aliases):
        found.aliases.setdefault(line[0], []).extend(a for a in line[1:] if a)  # an entity's lines add up
    found.files = [path for path in (prompts, names, genders, aliases) if path.is_file()]
    return found


def _tab_lines(path: Path) -> Iterator[list[str]]:
    """The tab-separated lines of an optional file (none: no lines)."""
    if not path.is_file():
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, text in enumerate(handle, start=1):
            if number == 1 and text.startswith(LFS_POINTER):
                raise ValueError(f"{path}: a Git LFS pointer, not X-FACTR's file (fetch it: git lfs pull)")
            cells = text.rstrip("\r\n").split("\t")
            if cells[0]:
                yield cells


def render(prompt: str, gender: str | None, object_gender: str | None = None) -> tuple[str | None, set[str]]:
    """(the template factprobe asks, or None; the notes it earns) of one X-FACTR prompt."""
    notes: set[str] = set()

    def mark(found: re.Match) -> str:
        inner = found.group(1)
        if inner in ("X", "Y"):
            return found.group()
        if _CASE.fullmatch(inner):
            notes.add(CASE_UNINFLECTED)
            return f"[{inner[0]}]"
        forms = [_FORM.fullmatch(option) for option in inner.split("|")]
        if forms and all(forms) and len({f.group(2) for f in forms}) == 1:
            wanted = GENDERS.get((gender if forms[0].group(2) == "X" else object_gender) or "")
            chosen = next((f.group(1) for f in forms if f.group(3) == wanted), None)
            if chosen is None:
                notes.add(GENDER_UNKNOWN)
                chosen = forms[0].group(1)
            return chosen
        notes.add(NOT_ASKED)
        return found.group()

    text = _MARK.sub(mark, prompt)
    return (None, {NOT_ASKED}) if NOT_ASKED in notes else (text, notes)  # how it would be asked: moot


def xfactr_items(files: Iterable[str | Path], report: ImportReport, *, language: str | None) -> Iterator[dict]:
    if not language or not LANGUAGE_CODE.fullmatch(language):
        raise ValueError("--format x-factr asks in one of X-FACTR's languages: give --language (en, fr, ru, ...)")
    placed = [(Path(path), *data_folder(Path(path))) for path in files]
    resources = {(folder, facts): read_resources(folder, facts, language) for _, folder, facts in placed}
    report.resources.extend(path for found in resources.values() for path in found.files)

    def rows() -> Iterator[tuple[str, tuple]]:
        for path, folder, facts in placed:
            for where, row in file_rows(path):
                yield where, (path, resources[folder, facts], row)

    def name(found: Resources, entity: str, english: str) -> tuple[str, bool]:
        names = found.names.get(entity, {})
        if language in names:
            return names[language], False
        return names.get("en", english), language != "en"

    def convert(entry: tuple) -> dict:
        path, found, row = entry
        relation = row_text(row, "predicate_id")
        if not PROPERTY.fullmatch(relation) or relation != path.stem:
            raise ImportRowError(f"predicate_id: {relation!r} is not the file's relation {path.stem}")
        subject, obj = row_text(row, "sub_uri"), row_text(row, "obj_uri")
        for key, value in (("sub_uri", subject), ("obj_uri", obj)):
            if not ITEM.fullmatch(value):
                raise ImportRowError(f"{key}: {value!r} is not a Wikidata item id")
        subject_label, subject_english = name(found, subject, row_text(row, "sub_label"))
        object_label, object_english = name(found, obj, row_text(row, "obj_label"))
        prompt = found.prompts.get(relation)
        template, notes = render(prompt, found.genders.get(subject), found.genders.get(obj)) if prompt else (None, {NO_PROMPT})
        fact = str(row.get("uuid") or f"{subject}|{relation}|{obj}")
        item = cloze_item(f"x-factr:{language}:{fact}", relation, subject, subject_label, obj, object_label,
                          "x-factr", {relation: [template]} if template else {})
        gold = [object_label, *found.aliases.get(obj, [])]
        item.update({"language": language, "gold": list(dict.fromkeys(gold)), "xfactr_prompt": prompt,
                     "subject_gender": found.genders.get(subject), "object_gender": found.genders.get(obj), "count": row.get("count")})
        if subject_english or object_english:
            notes.add(ENGLISH_NAME)
        item["_notes"] = notes
        return item

    for item in guarded_items(rows(), report, convert):
        for note in sorted(item.pop("_notes")):
            report.note(note)
        yield item

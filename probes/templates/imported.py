"""Template files other probing work ships, read into factprobe's relation templates: LAMA's
`relations.jsonl` (one row per relation: `relation`, `template`, `label`, `description`), ParaRel's
`pattern_data/graphs_json/P*.jsonl` (one paraphrase per row, `pattern`; the relation is the file's
name) and mLAMA's `templates.jsonl` (LAMA's rows, translated; the language is the folder's name,
mlama1.1/fr/templates.jsonl, or given; its Google-RE rows name place_of_birth, date_of_birth and
place_of_death, read as P19, P569 and P20).

Each template keeps its words exactly (LAMA's "[X] was born in [Y] ." with its space before the
period is the prompt LAMA asked) and names the file and line it was read from (`origin`). A row
that cannot be a template costs only itself, named by file and line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...kg.outputs import replace_file
from ..formats.import_lama import GOOGLE_RE_NAMES
from . import (BASE_LANGUAGE, LANGUAGE_CODE, RELATION_ID, RelationTemplates, Template, TemplateError, dump,
               load_file, slot_problem)

FORMATS = ("lama", "pararel", "mlama")


@dataclass
class TemplateImport:
    """What an import read: per (relation, language) its templates and label, and the rejects."""
    found: dict[tuple[str, str], RelationTemplates] = field(default_factory=dict)
    rows: int = 0
    rejected: list[str] = field(default_factory=list)  # "file:line: why"

    def add(self, relation: str, language: str, template: Template, label: str = "", description: str | None = None):
        entry = RelationTemplates(relation, label, (template,), (), description, language=language)
        old = self.found.get((relation, language))
        self.found[(relation, language)] = old.merged(entry) if old else entry


def read_templates(fmt: str, files: Iterable[str | Path], *, language: str | None = None,
                   relation: str | None = None) -> TemplateImport:
    """The templates of `files` in `fmt` (FORMATS). `language`: mLAMA's, where the folder does not
    say it; `relation`: ParaRel's, where the file's name does not."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: use one of {', '.join(FORMATS)}")
    out = TemplateImport()
    for path in map(Path, files):
        lang = _language(fmt, path, language)
        for line, row in _rows(path, out):
            where = f"{path}:{line}"
            text_key = "pattern" if fmt == "pararel" else "template"
            rel = (relation or path.stem.split(".")[0]) if fmt == "pararel" else row.get("relation")
            if fmt == "mlama":  # its Google-RE templates name their relation as LAMA's files do
                rel = GOOGLE_RE_NAMES.get(rel, rel) if isinstance(rel, str) else rel
            text = row.get(text_key)
            if not isinstance(rel, str) or not RELATION_ID.fullmatch(rel):
                out.rejected.append(f"{where}: {'the file name' if fmt == 'pararel' else 'relation'} names no "
                                    f"property id ({rel!r}){'; give --relation' if fmt == 'pararel' else ''}")
                continue
            if not isinstance(text, str) or not text.strip():
                out.rejected.append(f"{where}: {text_key} is missing or empty")
                continue
            problem = slot_problem(" ".join(text.split()), "cloze")
            if problem:
                out.rejected.append(f"{where}: {json.dumps(text, ensure_ascii=False)} {problem}")
                continue
            label = row.get("label") if isinstance(row.get("label"), str) else ""
            description = row.get("description") if isinstance(row.get("description"), str) else None
            out.add(rel, lang, Template(" ".join(text.split()), "manual", "cloze", f"{path.name}:{line}"),
                    label, description)
    return out


def write_templates(found: TemplateImport, out_dir: str | Path, fresh: Iterable[str] = ()) -> list[Path]:
    """One factprobe template file per relation in `out_dir`, added to a template file already
    there (its templates first, texts it has skipped) unless its relation is in `fresh` (then
    replaced); a file there that is no template file is refused, never replaced."""
    fresh = set(fresh)
    out_dir = Path(out_dir)
    by_relation: dict[str, list[RelationTemplates]] = {}
    for (relation, _), entry in sorted(found.found.items()):
        by_relation.setdefault(relation, []).append(entry)
    written = []
    for relation, entries in by_relation.items():
        path = out_dir / f"{relation}.yaml"
        base = next((e for e in entries if e.language == BASE_LANGUAGE), None)
        others = tuple(e for e in entries if e.language != BASE_LANGUAGE)
        new = RelationTemplates(relation, (base.label if base else "") or (others[0].label if others else ""),
                                base.cloze if base else (), (), base.description if base else None,
                                other_languages=others)
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise TemplateError(f"{path}: not a regular file; not written")
        if path.exists() and relation not in fresh:
            try:
                new = load_file(path).merged(new)
            except TemplateError as error:
                raise TemplateError(f"{path} is there and is no template file ({error}); not replaced") from None
        out_dir.mkdir(parents=True, exist_ok=True)
        replace_file(path, dump(new))
        written.append(path)
    return written


def _language(fmt: str, path: Path, given: str | None) -> str:
    if fmt != "mlama":
        return BASE_LANGUAGE
    lang = given or path.parent.name
    if not LANGUAGE_CODE.fullmatch(lang or ""):
        raise ValueError(f"{path}: its folder {path.parent.name!r} names no language; give --language")
    return lang


def _rows(path: Path, out: TemplateImport) -> Sequence[tuple[int, dict]]:
    rows = []
    with open(path, encoding="utf-8-sig") as handle:
        for line, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            out.rows += 1
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as error:
                out.rejected.append(f"{path}:{line}: malformed JSON ({error.msg})")
                continue
            if not isinstance(row, dict):
                out.rejected.append(f"{path}:{line}: not a JSON object")
                continue
            rows.append((line, row))
    return rows

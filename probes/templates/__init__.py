"""Relation templates: one YAML file per relation, cloze templates (`[X]` subject, `[Y]` object)
and QA templates (`[X]` only), each marked manual or generated; the top level is English, and
`languages` holds the same sections in other languages (`in_language` picks one).

    relation: P36
    label: capital
    description: ...                        # optional
    cloze:
      - {text: "The capital of [X] is [Y].", source: manual}
    qa:
      - {text: "What is the capital of [X]?", source: manual}
    kdf: "The capital of [X] is [Y]"        # optional: the KDF paper's sentence (its Table 3)
    languages:                              # optional
      zh: {label: 首都, kdf: "[X]的行政中心是[Y]。", qa: [{text: "[X]的首都是哪里？", source: manual}]}

Shipped files live in `relations/`; user folders (arguments, or FACTPROBE_TEMPLATES) are read
after them and add their templates to the shipped ones of the same relation. The rules the probes
share live here: `object_final`, `question()` (the QA question) and `kdf_question()` (KDF's).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import yaml

SHIPPED_DIR = Path(__file__).resolve().parent / "relations"
# LAMA's own template per relation, as LAMA asked it (lama/README.md): added for LAMA-style imports
LAMA_DIR = Path(__file__).resolve().parent / "lama"
LAMA_FORMATS = ("lama-trex", "lama-google-re", "pararel")
ENV_VAR = "FACTPROBE_TEMPLATES"

TemplateKind = Literal["cloze", "qa"]
Source = Literal["manual", "generated"]
TEMPLATE_KINDS: tuple[TemplateKind, ...] = ("cloze", "qa")  # a template's kind is its section in a relation's file
SOURCES: tuple[Source, ...] = ("manual", "generated")
FILE_KEYS = ("relation", "label", "description", "cloze", "qa", "kdf", "languages")
SECTION_KEYS = ("label", "cloze", "qa", "kdf")  # what a language under `languages` may hold
ENTRY_KEYS = ("text", "source", "origin")  # origin: where an imported template was read ("relations.jsonl:18")
BASE_LANGUAGE = "en"  # the language of a file's top level
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]+)*")
# The KDF paper's blank ("[masked]", seed 003 line 63; drawn as a line in its Figure 3).
BLANK = "____"
RELATION_ID = re.compile(r"P[1-9][0-9]*")
# Anything that looks like a slot: a typo such as [x] or [Z] would otherwise reach the prompts as text.
SLOT_LIKE = re.compile(r"\[[A-Za-z_]+\]")


class TemplateError(ValueError):
    """A template file that cannot be used; the message names the file and the entry."""


class MissingLanguage(ValueError):
    """A relation has no templates in the language asked for; the message names both."""


@dataclass(frozen=True)
class Template:
    text: str
    source: Source = "manual"
    kind: TemplateKind = "cloze"
    origin: str = ""  # the file and line an imported template comes from

    def fill(self, subject_label: str, object_label: str | None = None) -> str:
        return fill(self, subject_label, object_label)

    def prompt_before_object(self, subject_label: str) -> str:
        return prompt_before_object(self, subject_label)

    @property
    def object_final(self) -> bool:
        """Whether the cloze ends in the object slot (see `object_final`)."""
        return object_final(self)


@dataclass(frozen=True)
class RelationTemplates:
    relation: str
    label: str
    cloze: tuple[Template, ...] = ()
    qa: tuple[Template, ...] = ()
    description: str | None = None
    kdf: Template | None = None  # the KDF paper's sentence for this relation, when written
    language: str = BASE_LANGUAGE
    other_languages: tuple[RelationTemplates, ...] = ()  # the same sections in other languages

    @property
    def languages(self) -> tuple[str, ...]:
        """Every language this relation has templates in, its own first."""
        return (self.language, *(t.language for t in self.other_languages))

    def in_language(self, language: str) -> RelationTemplates:
        """This relation's templates in `language` alone; MissingLanguage when it has none there
        (a question is never asked in another language than the one asked for)."""
        for entry in (self, *self.other_languages):
            if entry.language == language:
                return replace(entry, other_languages=())
        raise MissingLanguage(f"{self.relation} has no {language} template (it has {', '.join(self.languages)})")

    @property
    def manual_cloze(self) -> tuple[Template, ...]:
        return tuple(t for t in self.cloze if t.source == "manual")

    @property
    def generated_cloze(self) -> tuple[Template, ...]:
        return tuple(t for t in self.cloze if t.source == "generated")

    def object_final_clozes(self) -> tuple[Template, ...]:
        """The clozes that end in the object slot, in file order: the ones a causal LM can be asked
        to continue with the object (the distractor measure, the baselines, ApprOpt)."""
        return tuple(t for t in self.cloze if t.object_final)

    def question(self) -> str:
        """The question asked about this relation, [X] unfilled: its first QA template, else a cloze
        with [Y] replaced by a blank "___" -- the first object-final cloze (the blank then ends the
        sentence, as a question's answer does), falling back to the first cloze. Every shipped
        relation has a QA template, so the fallback only reaches user templates."""
        if self.qa:
            return self.qa[0].text
        clozes = self.object_final_clozes() or self.cloze
        if not clozes:
            raise ValueError(f"{self.relation}: no QA or cloze template to write a question from")
        return clozes[0].text.replace("[Y]", "___")

    def kdf_question(self) -> str:
        """The KDF paper's question, [X] unfilled: its pattern "The [relation] of [head] is
        [masked]" (seed 003 line 63) with the blank "____". The relation's `kdf` sentence, else,
        in English only, the pattern itself with the relation's label; ValueError otherwise."""
        if self.kdf is not None:
            return self.kdf.text.replace("[Y]", BLANK)
        if self.language == BASE_LANGUAGE and self.label:
            return f"The {self.label} of [X] is {BLANK}"
        raise ValueError(f"{self.relation} has no {self.language} KDF sentence (`kdf` in its template file)")

    def fill(self, template: Template | str, subject_label: str, object_label: str | None = None) -> str:
        return fill(template, subject_label, object_label)

    def prompt_before_object(self, template: Template | str, subject_label: str) -> str:
        return prompt_before_object(template, subject_label)

    def merged(self, other: RelationTemplates) -> RelationTemplates:
        """This relation's templates followed by `other`'s, dropping texts already present, per
        language (a `kdf` sentence already written wins)."""
        languages = {t.language: t for t in self.other_languages}
        for entry in other.other_languages:
            languages[entry.language] = languages[entry.language].merged(entry) if entry.language in languages else entry
        return replace(self, label=self.label or other.label, description=self.description or other.description,
                       cloze=_unique(self.cloze + other.cloze), qa=_unique(self.qa + other.qa),
                       kdf=self.kdf or other.kdf, other_languages=tuple(languages.values()))


def normalize(text: str) -> str:
    """The form duplicates are compared in: case-folded, whitespace collapsed."""
    return " ".join(text.split()).casefold()


def fill(template: Template | str, subject_label: str, object_label: str | None = None) -> str:
    """The template with [X] (and [Y] when `object_label` is given) replaced."""
    text = template.text if isinstance(template, Template) else template
    if object_label is not None and "[Y]" not in text:
        raise ValueError(f"{text!r} has no [Y] slot to put {object_label!r} in")
    # [Y] first: a subject label containing "[Y]" must stay text.
    if object_label is not None:
        text = text.replace("[Y]", object_label)
    return text.replace("[X]", subject_label)


def prompt_before_object(template: Template | str, subject_label: str) -> str:
    """The text before [Y] with [X] filled, right-stripped: what a causal LM continues with the object."""
    text = template.text if isinstance(template, Template) else template
    if "[Y]" not in text:
        raise ValueError(f"{text!r} has no [Y] slot (a QA template has no text before the object)")
    return text.split("[Y]", 1)[0].replace("[X]", subject_label).rstrip()


def object_final(template: Template | str) -> bool:
    """Whether a cloze ends in the object slot: it ends with [Y] once trailing " .!?" are stripped,
    and does not start with [Y] (a template that is only "[Y]..." has no prompt before the object).
    "The capital of [X] is [Y]." is object-final; "[Y] is the capital of [X]." is not."""
    text = (template.text if isinstance(template, Template) else template).strip()
    return text.rstrip(" .!?").endswith("[Y]") and not text.startswith("[Y]")


def slot_problem(text: str, kind: TemplateKind) -> str | None:
    """Why `text` is not a valid template of `kind`, or None when it is."""
    for slot in ("[X]", "[Y]"):
        wanted = 1 if kind == "cloze" or slot == "[X]" else 0
        count = text.count(slot)
        if count == wanted:
            continue
        if count == 0:
            return f"has no {slot} slot"
        if wanted == 0:
            return f"has a {slot} slot (a question names only the subject, [X])"
        return f"has {count} {slot} slots (needs exactly one)"
    stray = sorted(set(SLOT_LIKE.findall(text)) - {"[X]", "[Y]"})
    if stray:
        return f"has an unknown slot {stray[0]} (only [X] and [Y])"
    return None


# -- loading ------------------------------------------------------------------------------------


def template_dirs_from_env() -> list[Path]:
    return [Path(p) for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]


def load_templates(dirs: Sequence[Path | str] | None = None) -> dict[str, RelationTemplates]:
    """Relation id -> its templates: the shipped ones, then those of `dirs` (default: the folders in
    FACTPROBE_TEMPLATES, os.pathsep-separated) added after them, duplicates (by normalized text) dropped."""
    dirs = template_dirs_from_env() if dirs is None else [Path(d) for d in dirs]
    out: dict[str, RelationTemplates] = {}
    for folder in [SHIPPED_DIR, *dirs]:
        for entry in load_dir(folder):
            out[entry.relation] = out[entry.relation].merged(entry) if entry.relation in out else entry
    return dict(sorted(out.items(), key=lambda kv: int(kv[0][1:])))


@functools.cache
def shipped_labels() -> dict[str, tuple[str, ...]]:
    """Relation id -> the labels its shipped template file gives it, English first: how a relation
    is named where the store holds no label of it (kg/relations.py resolve_relation's fallback)."""
    return {relation: tuple(dict.fromkeys(e.label for e in (entry, *entry.other_languages) if e.label))
            for relation, entry in load_templates([]).items()}


def template_files(folder: Path | str) -> list[Path]:
    folder = Path(folder)
    if not folder.is_dir():
        raise TemplateError(f"{folder}: no such template folder")
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def load_dir(folder: Path | str) -> list[RelationTemplates]:
    return [load_file(p) for p in template_files(folder)]


def load_file(path: Path | str) -> RelationTemplates:
    """One relation's file, validated; every error names the file (and the entry)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise TemplateError(f"{path}: cannot read: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise TemplateError(f"{path}: not valid YAML{line}: {getattr(error, 'problem', None) or error}") from None
    return parse(data, path)


def parse(data: object, path: Path) -> RelationTemplates:
    def fail(message: str) -> TemplateError:
        return TemplateError(f"{path}: {message}")

    if not RELATION_ID.fullmatch(path.stem):
        raise fail("the file name must be the relation id, e.g. P36.yaml")
    if not isinstance(data, dict):
        raise fail("must be a mapping with relation, label, cloze and qa")
    unknown = [k for k in data if k not in FILE_KEYS]
    if unknown:
        raise fail(f"unknown key {unknown[0]!r} (allowed: {', '.join(FILE_KEYS)})")
    relation = data.get("relation")
    if relation != path.stem:
        raise fail(f"relation {relation!r} does not match the file name {path.name}" if relation is not None
                   else f"has no relation (expected relation: {path.stem})")
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise fail("description must be a string")
    entry = _section(data, relation, BASE_LANGUAGE, fail)
    return replace(entry, description=description, other_languages=_languages(data.get("languages"), relation, fail))


def _section(data: dict, relation: str, language: str, fail) -> RelationTemplates:
    """The label, cloze, qa and kdf of one language (the file's top level, or one of `languages`)."""
    where = "" if language == BASE_LANGUAGE else f"languages.{language}: "
    label = data.get("label")
    if label is not None and not (isinstance(label, str) and label.strip()):
        raise fail(f"{where}label must be a non-empty string")
    sections = {kind: _entries(data.get(kind), kind, lambda m: fail(where + m)) for kind in TEMPLATE_KINDS}
    kdf = data.get("kdf")
    if kdf is not None:
        if not isinstance(kdf, str) or not kdf.strip():
            raise fail(f"{where}kdf must be one sentence with [X] and [Y]")
        kdf = " ".join(kdf.split())
        problem = slot_problem(kdf, "cloze")
        if problem:
            raise fail(f"{where}kdf: {json.dumps(kdf, ensure_ascii=False)} {problem}")
        kdf = Template(kdf)
    return RelationTemplates(relation, (label or "").strip(), _unique(sections["cloze"]), _unique(sections["qa"]),
                             kdf=kdf, language=language)


def _languages(data: object, relation: str, fail) -> tuple[RelationTemplates, ...]:
    if data is None:
        return ()
    if not isinstance(data, dict):
        raise fail("languages must map a language code (zh, ja, ...) to its label, cloze, qa and kdf")
    out = []
    for language, section in data.items():
        if not isinstance(language, str) or not LANGUAGE_CODE.fullmatch(language) or language == BASE_LANGUAGE:
            raise fail(f"languages: {language!r} is not a language code other than {BASE_LANGUAGE} "
                       f"(the top level is {BASE_LANGUAGE})")
        if not isinstance(section, dict):
            raise fail(f"languages.{language}: must be a mapping with label, cloze, qa or kdf")
        unknown = [k for k in section if k not in SECTION_KEYS]
        if unknown:
            raise fail(f"languages.{language}: unknown key {unknown[0]!r} (allowed: {', '.join(SECTION_KEYS)})")
        out.append(_section(section, relation, language, fail))
    return tuple(out)


def _entries(items: object, kind: TemplateKind, fail) -> tuple[Template, ...]:
    if items is None:
        return ()
    if not isinstance(items, list):
        raise fail(f"{kind} must be a list of {{text, source}} entries")
    out = []
    for i, item in enumerate(items):
        where = f"{kind}[{i}]"
        if not isinstance(item, dict):
            raise fail(f"{where}: must be a mapping {{text: ..., source: manual|generated}}, not {item!r}")
        unknown = [k for k in item if k not in ENTRY_KEYS]
        if unknown:
            raise fail(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(ENTRY_KEYS)})")
        text, source = item.get("text"), item.get("source")
        if not isinstance(text, str) or not text.strip():
            raise fail(f"{where}: text must be a non-empty string")
        text = " ".join(text.split())
        problem = slot_problem(text, kind)
        if problem:
            raise fail(f"{where}: {json.dumps(text, ensure_ascii=False)} {problem}")
        if source not in SOURCES:
            raise fail(f"{where}: source {source!r} is not manual or generated")
        origin = item.get("origin", "")
        if not isinstance(origin, str):
            raise fail(f"{where}: origin must be a string (a file and line)")
        out.append(Template(text, source, kind, origin))
    return tuple(out)


def _unique(templates: Iterable[Template]) -> tuple[Template, ...]:
    seen: set[str] = set()
    out = []
    for t in templates:
        key = normalize(t.text)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return tuple(out)


# -- writing ------------------------------------------------------------------------------------


def dump(entry: RelationTemplates) -> str:
    """A file in the shipped layout: one flow mapping per template (JSON strings are YAML too)."""
    def q(s: str) -> str:
        return json.dumps(s, ensure_ascii=False)

    def sections(e: RelationTemplates, indent: str) -> list[str]:
        out = []
        for kind in TEMPLATE_KINDS:
            templates = getattr(e, kind)
            out.append(f"{indent}{kind}:" if templates else f"{indent}{kind}: []")
            out += [f"{indent}  - {{text: {q(t.text)}, source: {t.source}"
                    + (f", origin: {q(t.origin)}" if t.origin else "") + "}" for t in templates]
        return out + ([f"{indent}kdf: {q(e.kdf.text)}"] if e.kdf is not None else [])

    lines = [f"relation: {entry.relation}", f"label: {q(entry.label or entry.relation)}"]
    if entry.description:
        lines.append(f"description: {q(entry.description)}")
    lines += sections(entry, "")
    if entry.other_languages:
        lines.append("languages:")
    for other in entry.other_languages:
        lines.append(f"  {other.language}:")
        lines += ([f"    label: {q(other.label)}"] if other.label else []) + sections(other, "    ")
    return "\n".join(lines) + "\n"

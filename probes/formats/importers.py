"""Importers: existing probe sets into factprobe items, so one evaluation runs on both.

LAMA T-REx, ParaRel, LAMA Google-RE (probes/formats/import_lama.py), PopQA (probes/formats/import_popqa.py),
EntityQuestions (probes/formats/import_entityquestions.py), mLAMA (probes/formats/import_mlama.py), X-FACTR
(probes/formats/import_xfactr.py), KILT T-REx (probes/formats/import_kilt.py) and MyriadLAMA rows become cloze items, T-REx-MC rows icl-mc items, lm-evaluation-harness multiple_choice tasks icl-mc items with
their own prompt (probes/formats/import_lm_eval.py); a row that does not fit is reported by file, line
and field, counted and skipped (probes/formats/import_rows.py). Fields read: docs/design/probe-sets.md.

Item ids are unique (eval resumes by id): a LAMA row whose id (its uuid, else subject, relation
and object) an earlier row took is rejected naming that row; T-REx-MC rows are numbered; a
MyriadLAMA uuid is one item whose rows are its prompts, so a row of a known uuid with another
relation or subject entity, or a prompt it already has, is rejected; two lm-eval tasks of one
name are refused (their documents are numbered within the task).
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ...kg.jsonl import JsonRefused, parse_json
from .import_lama import PROPERTY, google_re_items, lama_trex_items, pararel_items
from .import_entityquestions import entityquestions_items
from .import_kilt import kilt_trex_items
from .import_mlama import mlama_items
from .import_xfactr import xfactr_items
from .import_lama_sentences import SENTENCE_FORMATS, sentence_items
from .import_popqa import POPULARITY, popqa_items
from .import_rows import ImportReport, ImportRowError, file_rows, guarded_items, row_field

__all__ = ["FORMATS", "ImportFormat", "ImportReport", "ImportRowError", "import_items"]


@dataclass(frozen=True)
class ImportFormat:
    """One `probeset import --format`: declared here once, the CLI's choices and help read it."""
    name: str
    kind: str  # the kind of the items it makes
    reads: str  # the files and fields it reads, for --help
    templates: bool = False  # --with-templates gives its items our cloze templates
    # what the sidecar's `source` says of fields the format fills ("popularity": what it counts)
    source: dict[str, str] = field(default_factory=dict)


_DECLARED = (
    ImportFormat("lama-trex", "cloze", "LAMA T-REx JSONL (sub_uri, sub_label, predicate_id, obj_uri, obj_label)",
                 templates=True),
    ImportFormat("pararel", "cloze", "ParaRel's LAMA rows (sub_label, obj_label; the relation from --relation or "
                                     "the file's name, P36.jsonl)", templates=True),
    ImportFormat("lama-google-re", "cloze", "LAMA Google-RE rows (pred, sub, obj, sub_w, obj_w, sub_label, "
                                            "obj_label), read as P19, P569, P20 with their Freebase ids kept beside",
                 templates=True),
    ImportFormat("lama-squad", "cloze", "LAMA's SQuAD probe (masked_sentences, obj_label, id): each sentence a "
                                        "prompt as written, the mask the answer's slot"),
    ImportFormat("lama-conceptnet", "cloze", "LAMA's ConceptNet probe (masked_sentences, obj_label, sub, pred, uuid): "
                                             "each sentence a prompt as written, the relation the row's pred"),
    ImportFormat("popqa", "cloze", "PopQA's popQA.tsv (subj, prop, obj, s_uri, o_uri, s_aliases, o_aliases, "
                                   "s_pop, o_pop, question, possible_answers): one item per question, its "
                                   "relation read from prop's name as the Wikidata property, s_pop (page "
                                   "views) the item's popularity", templates=True,
                 source={"popularity": POPULARITY}),
    ImportFormat("entityquestions", "cloze", "EntityQuestions' files, one per relation and split (P36.test.json "
                                             "or .jsonl; rows question, answers): the relation from the file's "
                                             "name, the subject read out of the question by the file's shared "
                                             "template", templates=True),
    ImportFormat("mlama", "cloze", "mLAMA 1.1's relation files (mlama1.1/fr/P19.jsonl, date_of_birth.jsonl; rows "
                                   "sub_uri, obj_uri, sub_label, obj_label, lineid): items in the folder's language "
                                   "(or --language), asked with the templates.jsonl beside them"),
    ImportFormat("x-factr", "cloze", "X-FACTR's facts (data/mTRExf/sub/P19.jsonl) in --language: names, aliases, "
                                     "genders and the language's prompt read from X-FACTR's data folder "
                                     "(TREx_prompts.csv, mTRExf_unicode_escape.txt, mTRExf_gender.txt, "
                                     "alias/mTRExf/LANG.txt)"),
    ImportFormat("kilt-trex", "cloze", "KILT's T-REx slot filling (trex-dev-kilt.jsonl; rows id, input 'subject "
                                       "[SEP] relation label', output[].answer): the relation read from its label",
                 templates=True),
    ImportFormat("trex-mc", "icl-mc", "rows with Relation_ID, Subject, Object, Multiple Choices (JSONL or CSV)"),
    ImportFormat("myriadlama", "cloze", "rows uuid, rel_uri, sub_ent, obj_ents, obj_aliases, template (one per "
                                        "prompt)"),
    ImportFormat("lm-eval", "icl-mc", "lm-evaluation-harness multiple_choice task YAMLs with JSON data files in "
                                      "the task's folder (icl-mc items with their own prompt, for --method mc; "
                                      "templates render sandboxed, !function is never run, nothing outside the "
                                      "folder is read)"),
    ImportFormat("distfact-taxonomy", "cloze", "DistFact's verbalization errors (scripts/taxonomy/"
                                               "taxonomy_hichem.csv), the flawed or the corrected sentence as each "
                                               "item's cloze, for `assess --flawed/--corrected` (see "
                                               "--verbalization)"),
)
FORMATS: dict[str, ImportFormat] = {f.name: f for f in _DECLARED}
# read by probes/formats/import_distfact.py (its own options, a probe set to join): not through import_items
OWN_READER = ("distfact-taxonomy",)
LANGUAGE_FORMATS = ("mlama", "x-factr")  # their items are in a language --language may name


def import_items(fmt: str, files: Iterable[str | Path], templates: dict[str, list[str]] | None = None, *,
                 relation: str | None = None, language: str | None = None) -> tuple[list[dict], ImportReport]:
    """`relation`: the relation of ParaRel files whose names do not say it (P36.jsonl does);
    `language`: X-FACTR's language to ask in, mLAMA's where the folder does not say it."""
    if fmt not in FORMATS or fmt in OWN_READER:
        raise ValueError(f"format {fmt!r}: use one of {', '.join(f for f in FORMATS if f not in OWN_READER)}")
    if relation is not None and fmt != "pararel":
        raise ValueError(f"--relation is for --format pararel: {fmt} rows name their own relation")
    if language is not None and fmt not in LANGUAGE_FORMATS:
        raise ValueError(f"--language is for --format {' or '.join(LANGUAGE_FORMATS)}: {fmt} rows are in one language")
    if relation is not None and not PROPERTY.fullmatch(relation):
        raise ValueError(f"--relation {relation!r}: not a property id (like P36)")
    report = ImportReport()
    if fmt == "lm-eval":  # task YAMLs, not rows: probes/formats/import_lm_eval.py
        return _lm_eval(files, report)
    files, templates = list(files), templates or {}
    if fmt == "lama-trex":
        items = list(lama_trex_items(files, templates, report))
    elif fmt == "pararel":
        items = list(pararel_items(files, relation, templates, report))
    elif fmt == "lama-google-re":
        items = list(google_re_items(files, templates, report))
    elif fmt in SENTENCE_FORMATS:
        items = list(sentence_items(files, fmt, report))
    elif fmt == "popqa":
        items = list(popqa_items(files, templates, report))
    elif fmt == "entityquestions":
        items = list(entityquestions_items(files, templates, report))
    elif fmt == "mlama":
        items = list(mlama_items(files, report, language=language))
    elif fmt == "x-factr":
        items = list(xfactr_items(files, report, language=language))
    elif fmt == "kilt-trex":
        items = list(kilt_trex_items(files, templates, report))
    else:
        rows = ((where, row) for path in files for where, row in file_rows(Path(path)))
        items = list(_trex_mc(rows, report)) if fmt == "trex-mc" else _myriadlama(rows, report)
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


def _choices(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value).strip()
    try:
        parsed = parse_json(text)
    except JsonRefused as refused:
        if not refused.syntax:  # JSON, but too deep, a number too long, a lone surrogate
            raise ImportRowError(f"Multiple Choices: {refused.reason}") from None
        parsed = _python_list(text)
    if isinstance(parsed, (list, tuple)) and all(isinstance(v, (str, int, float)) for v in parsed):
        choices = [str(v) for v in parsed]
        if any(c.encode("utf-8", "surrogatepass") != c.encode("utf-8", "replace") for c in choices):
            # a Python escape (\ud800) makes a lone surrogate json would have refused
            raise ImportRowError("Multiple Choices: a choice holds a lone surrogate (an \\ud800-\\udfff escape): not text")
        return choices
    raise ImportRowError("Multiple Choices: not a list (nor its JSON or Python text)")


def _python_list(text: str) -> object:
    """The published CSV writes Python's repr: "['Paris', 'Lyon']". Parsed, never run; only a
    bracketed text, and without the parser's warnings (an odd text makes one per token, each a
    line on stderr)."""
    if not (text[:1] in "[(" and text[-1:] in "])"):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, RecursionError, MemoryError):  # deep: RecursionError, SyntaxError
            return None


def _trex_mc(rows, report: ImportReport) -> Iterator[dict]:
    count = 0

    def convert(row: dict) -> dict:
        nonlocal count
        relation, subject, obj = (str(row_field(row, k)).strip() for k in ("Relation_ID", "Subject", "Object"))
        choices = _choices(row_field(row, "Multiple Choices"))
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

    yield from guarded_items(rows, report, convert)


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
        uuid, relation, template = (str(row_field(row, k)) for k in ("uuid", "rel_uri", "template"))
        subject, subject_label = _entity(row_field(row, "sub_ent"), "sub_ent")
        # the published rows: sub_ent is one expression of the subject, its entity is sub_uri; obj_ents
        # are the objects' names, obj_uris their entities
        subject = subject or _uri(row.get("sub_uri"))
        objects = _objects(row_field(row, "obj_ents"))
        uris = row.get("obj_uris") if isinstance(row.get("obj_uris"), list) else []
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
            first_id = first_id or _uri(uris[0] if uris else None)
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
        prompt = {"template": template, "template_id": template_id, "subject_name": subject_label,
                  "text": template.replace("[X]", subject_label)}
        if isinstance(row.get("is_manual"), bool):  # the template was written by hand, not paraphrased by GPT-4
            prompt["manual"] = row["is_manual"]
        item["prompts"].append(prompt)

    for _ in guarded_items(rows, report, convert):
        pass
    return list(by_uuid.values())


def _uri(value: object) -> str | None:
    """An entity id given on its own (sub_uri, obj_uris): "Q1406", or its Wikidata URL's last part."""
    text = str(value or "").strip().rstrip("/").rsplit("/", 1)[-1]
    return text if text[:1] in "QP" and text[1:].isdigit() else None


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

"""KILT's T-REx slot filling (Petroni et al. 2021, "KILT: a Benchmark for Knowledge Intensive
Language Tasks") as cloze items: trex-dev-kilt.jsonl and its train file, one JSON object a line.

The rows are KILT's format (the KILT repository's README, "KILT data format"): {id, input,
output: [{answer, provenance: [{wikipedia_id, title, ...}]}], meta}; for slot filling the input is
"subject [SEP] relation", the relation by its Wikidata label ("place of birth"). The relation is
read by that label as the property our templates name (`relation_labels`, from the shipped and
FACTPROBE_TEMPLATES template files); a label none names is the row's fault, named. Every
output's answer is a gold answer, the first the item's object; the Wikipedia pages of the
provenance are kept (`provenance`), and so is the row's meta. KILT's test file has no answers:
its rows are rejected as such. A row that does not fit is named by file, line and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from .import_lama import Templates, cloze_item
from .import_rows import ImportReport, ImportRowError, file_rows, guarded_items, row_field, row_text

SEPARATOR = " [SEP] "


def relation_labels() -> dict[str, str]:
    """Wikidata property label (lowercased) -> property id, from the template files in use."""
    from ..templates import LAMA_DIR, load_templates, template_dirs_from_env

    entries = load_templates([LAMA_DIR, *template_dirs_from_env()])
    return {entry.label.strip().lower(): relation for relation, entry in sorted(entries.items()) if entry.label}


def _answers(row: dict) -> tuple[list[str], list[dict]]:
    output = row_field(row, "output")
    if not isinstance(output, list):
        raise ImportRowError("output: not a list")
    answers: list[str] = []
    pages: list[dict] = []
    for k, entry in enumerate(output):
        if not isinstance(entry, dict):
            raise ImportRowError(f"output[{k}]: not an object")
        answer = entry.get("answer")
        if answer is not None and not (isinstance(answer, str) and answer.strip()):
            raise ImportRowError(f"output[{k}].answer: not a name")
        if answer is not None:
            answers.append(answer)
        for page in entry.get("provenance") or []:
            if isinstance(page, dict) and (page.get("wikipedia_id") or page.get("title")):
                pages.append({"wikipedia_id": page.get("wikipedia_id"), "title": page.get("title")})
    if not answers:
        raise ImportRowError("output: no answer (KILT's test file holds none: import the train or dev file)")
    return list(dict.fromkeys(answers)), pages


def kilt_trex_items(files: Iterable[str | Path], templates: Templates, report: ImportReport, *,
                    labels: dict[str, str] | None = None) -> Iterator[dict]:
    labels = relation_labels() if labels is None else labels

    def convert(row: dict) -> dict:
        number, text = str(row_field(row, "id")), row_text(row, "input")
        subject_label, separator, label = text.rpartition(SEPARATOR)
        if not separator or not subject_label.strip() or not label.strip():
            raise ImportRowError(f"input: {text!r} is not KILT's slot filling input (subject [SEP] relation)")
        relation = labels.get(label.strip().lower())
        if relation is None:
            raise ImportRowError(f"input: the relation {label.strip()!r} is the label of none of our templates' "
                                 "properties (add a template file naming it: FACTPROBE_TEMPLATES)")
        answers, pages = _answers(row)
        item = cloze_item(f"kilt-trex:{number}", relation, None, subject_label.strip(), None, answers[0],
                          "kilt-trex", templates)
        meta = row.get("meta")
        item.update({"relation_label": label.strip(), "gold": answers, "provenance": pages,
                     "kilt_meta": meta if isinstance(meta, dict) and meta else None})
        return item

    rows = ((where, row) for path in files for where, row in file_rows(Path(path)))
    yield from guarded_items(rows, report, convert)

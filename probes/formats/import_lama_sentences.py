"""LAMA's SQuAD and ConceptNet probes as cloze items with their own sentences: rows that carry
`masked_sentences` (each with one [MASK]) and `obj_label`, no relation id. SQuAD's rows
(`id`, `sub_label` "Squad") come from SQuAD questions rewritten as statements; ConceptNet's
(`uuid`, `sub`, `pred`, `obj`, `sub_label`) from ConceptNet triples in OMCS sentences. Each
sentence is one prompt, asked as written with the mask as the object slot; the item's relation is
the row's `pred` (ConceptNet) or `squad`, never a Wikidata property, so no template applies."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from .import_rows import ImportReport, ImportRowError, file_rows, guarded_items, row_field, row_text

MASK = "[MASK]"
SENTENCE_FORMATS = {"lama-squad": "squad", "lama-conceptnet": "conceptnet"}


def sentence_items(files: Iterable[str | Path], fmt: str, report: ImportReport) -> Iterator[dict]:
    source = SENTENCE_FORMATS[fmt]

    def convert(row: dict) -> dict:
        sentences = row_field(row, "masked_sentences")
        if not isinstance(sentences, list) or not sentences:
            raise ImportRowError("masked_sentences: not a list of sentences")
        prompts = []
        for k, sentence in enumerate(sentences):
            if not isinstance(sentence, str) or sentence.count(MASK) != 1:
                raise ImportRowError(f"masked_sentences[{k}]: needs exactly one {MASK}")
            text = sentence.replace(MASK, "[Y]")
            prompts.append({"template": text, "template_id": k, "subject_name": "", "text": text})
        answer = row_text(row, "obj_label")
        if source == "squad":
            key, relation, subject = row_text(row, "id"), "squad", ""
        else:
            key, relation, subject = row_text(row, "uuid"), row_text(row, "pred"), row_text(row, "sub")
        return {"id": f"cloze:{source}:{key}", "kind": "cloze", "split": "test", "fact": f"{source}:{key}",
                "relation": relation, "relation_label": None, "subject": None, "subject_label": subject,
                "object": None, "object_label": answer, "gold": [answer], "frequency": None, "bucket": None,
                "source_format": fmt, "prompts": prompts}

    rows = ((where, row) for path in files for where, row in file_rows(Path(path)))
    yield from guarded_items(rows, report, convert)

"""EntityQuestions (Sciavolino et al. 2021, "Simple Entity-centric Questions Challenge Dense
Retrievers") as cloze items: one file per relation and split (dataset/test/P36.test.json, or
the .jsonl copy), each row {"question", "answers"}.

The rows carry neither ids nor the subject's name: the relation is the file's name (P36), and
the subject is read out of the question. The paper writes every question of a relation from one
template ("What is the capital of [X]?"), so the file's questions share that template's text
before and after the subject: their common beginning and end (cut back to whole words) are the
template, what lies between is the subject. A file whose questions share no such text (fewer
than two distinct questions, or under two words in common) keeps its items' questions and
answers without a subject, counted in the report's notes. A row that does not fit is named by
file and line (JSONL) or file and position (#N, a JSON array).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator

from ...kg.jsonl import read_json_file
from .import_lama import PROPERTY, Templates, cloze_item
from .import_rows import ImportReport, ImportRowError, file_rows, guarded_items, row_field

SPLITS = ("train", "dev", "test")
NO_SUBJECT = "items whose subject could not be read out of the question (their file's questions share no template)"


def file_relation(path: Path) -> tuple[str, str]:
    """(relation, split) from P36.test.json; ValueError for a file its name does not place."""
    parts = path.name.split(".")
    if not PROPERTY.fullmatch(parts[0]):
        raise ValueError(f"{path}: EntityQuestions names each file by its relation (P36.test.json): "
                         f"{parts[0]!r} is not a property id")
    return parts[0], (parts[1] if len(parts) > 2 and parts[1] in SPLITS else "test")


def _file_rows(path: Path) -> list[tuple[str, dict]]:
    if path.suffix.lower() != ".json":
        return list(file_rows(path))
    value = read_json_file(path, finite=True)  # ValueError, one line, for a file that is not JSON
    if not isinstance(value, list):
        raise ValueError(f"{path}: not a JSON array of questions")
    return [(f"{path}#{n}", row if isinstance(row, dict) else {"__error__": f"not a JSON object (a "
                                                                           f"{type(row).__name__})"})
            for n, row in enumerate(value, start=1)]


def question_template(questions: Iterable[str]) -> tuple[str, str] | None:
    """(text before the subject, text after it) that more than half of the distinct questions
    share, in whole words (and the end of the subject's last word that every such question has,
    "'s child?"); None when they share no template. A row of another shape does not change it."""
    distinct = sorted(set(questions))
    if len(distinct) < 2:
        return None
    words = [q.split(" ") for q in distinct]
    before = _majority(words, len(distinct))
    members = [w[len(before):] for w in words if w[:len(before)] == before]
    after = _majority([w[::-1] for w in members], len(distinct))[::-1]
    members = [w for w in members if len(w) > len(after) and (not after or w[-len(after):] == after)]
    if len(members) * 2 <= len(distinct):
        return None
    # the last word of the subject may end with the template's text too ("Bob's child?")
    ends = [w[-len(after) - 1] if after else w[-1] for w in members]
    tail = os.path.commonprefix([e[::-1] for e in ends])[::-1]
    while tail and tail[0].isalnum():
        tail = tail[1:]
    start = " ".join(before) + " " if before else ""
    end = tail + (" " + " ".join(after) if after else "")
    if len((start + " " + end).split()) < 2:
        return None
    return start, end


def _majority(words: list[list[str]], total: int) -> list[str]:
    """The longest word prefix more than half of `total` questions have, each keeping a word after it."""
    prefix: list[str] = []
    while True:
        k = len(prefix) + 1
        counts = Counter(tuple(w[:k]) for w in words if len(w) > k and w[:k - 1] == prefix)
        if not counts:
            return prefix
        top, count = counts.most_common(1)[0]
        if count * 2 <= total:
            return prefix
        prefix = list(top)


def _subject(question: str, template: tuple[str, str] | None) -> str | None:
    if template is None:
        return None
    before, after = template
    if len(question) < len(before) + len(after) or not (question.startswith(before) and question.endswith(after)):
        raise ImportRowError(f"question: {question!r} is not of its file's template {before + '[X]' + after!r}")
    subject = question[len(before):len(question) - len(after)].strip()
    if not subject:
        raise ImportRowError(f"question: {question!r} names no subject")
    return subject


def entityquestions_items(files: Iterable[str | Path], templates: Templates, report: ImportReport) -> Iterator[dict]:
    placed = [(Path(path), *file_relation(Path(path))) for path in files]  # every name before any row

    def rows() -> Iterator[tuple[str, tuple]]:
        for path, relation, split in placed:
            found = _file_rows(path)
            template = question_template(r["question"] for _, r in found if isinstance(r.get("question"), str))
            for number, (where, row) in enumerate(found, start=1):
                yield where, (path, relation, split, template, number, row)

    def convert(entry: tuple) -> dict:
        path, relation, split, template, number, row = entry
        question = row_field(row, "question")
        if not isinstance(question, str):
            raise ImportRowError(f"question: not a string (a {type(question).__name__})")
        answers = row_field(row, "answers")
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) and a for a in answers):
            raise ImportRowError("answers: not a non-empty list of names")
        subject_label = _subject(question, template)
        fact = f"entityquestions:{path.name.split('.')[0]}.{split}:{number}"
        item = cloze_item(fact, relation, None, subject_label or "", None, answers[0], "entityquestions",
                          templates if subject_label else {})
        item.update({"subject_label": subject_label, "gold": list(dict.fromkeys(answers)), "question": question,
                     "source_split": split,
                     "question_template": None if template is None else template[0] + "[X]" + template[1]})
        return item

    for item in guarded_items(rows(), report, convert):
        if item["subject_label"] is None:
            report.note(NO_SUBJECT)
        yield item

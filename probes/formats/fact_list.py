"""A fact list: the facts a probe set is built over (`probeset build --facts FILE`), such as
DistFact's human-judged facts (004:178) or those of its verbalization errors. The file may come
from anyone: it is read once, as data (nothing in it is run, no other file is opened), and its
SHA-256 is taken over the very bytes parsed, so a probe set names what it was computed from.

Shapes, told from the content: JSON lines, each an object with `subject`, `relation` and
`object` (a probe set's items are such lines) or a `fact` id, or a list `[s, r, o]` or DistFact's
`[[s, r, o], score]`; one JSON array of those (DistFact's wikidata_triples_to_human_scores.json);
CSV or TSV (a tab in the first line) with a header naming subject, relation and object, or fact,
or DistFact's `triples_raw` "('Q1', 'P36', 'Q2')" (its taxonomy_hichem.csv), or without a header
when the first row is three Wikidata ids. Other keys and columns (a score) are ignored; an
entity URI (http://www.wikidata.org/entity/Q42) reads as its id. A row naming both a triple
and a fact id is read as the triple. A row that cannot be read stops the build with a one-line
error naming file:line.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ...kg.jsonl import JsonRefused, parse_json
from .import_rows import csv_records

MAX_BYTES = 64 * 2**20  # far above any hand-made list; a bigger file is a mistake, not a list
ENTITY = re.compile(r"[QPL][1-9][0-9]{0,11}")
PROPERTY = re.compile(r"P[1-9][0-9]{0,9}")
FACT_ID = re.compile(r"[^\s\x00-\x1f]{1,200}")
RAW_TRIPLE = re.compile(r"\(\s*'([^']*)',\s*'([^']*)',\s*'([^']*)'\s*\)")  # DistFact's triples_raw, never eval'd
PREFIXES = ("http://www.wikidata.org/entity/", "https://www.wikidata.org/entity/",
            "http://www.wikidata.org/prop/direct/", "https://www.wikidata.org/prop/direct/", "wd:", "wdt:")
COLUMNS = ("subject", "relation", "object", "fact", "triples_raw")


@dataclass(frozen=True)
class ListedFact:
    """One row of the list: where it stands and what it names (a triple, or only a fact id)."""
    line: int
    subject: str | None
    relation: str | None
    object: str | None
    fact_id: str | None = None
    entry: int | None = None  # its place in a JSON array (DistFact's is one line)

    @property
    def triple(self) -> tuple[str, str, str] | None:
        return (self.subject, self.relation, self.object) if self.subject else None  # type: ignore[return-value]


@dataclass(frozen=True)
class FactList:
    path: str
    sha256: str  # of the bytes read
    shape: str  # jsonl, json, csv or tsv
    facts: tuple[ListedFact, ...]  # each fact once, in the order first listed
    repeated: int  # rows naming a fact an earlier row named


def read_fact_list(path: str | Path) -> FactList:
    """The list at `path`. ValueError, one line naming the file (and line), for a file that is
    missing, too big, not UTF-8, of no known shape, holds a row it cannot read, or lists nothing."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no fact list there (a JSONL, JSON, CSV or TSV file)")
    with open(path, "rb") as stream:
        data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path}: over {MAX_BYTES // 2**20} MiB, too big for a fact list")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ValueError(f"{path}:{line}: not UTF-8 text") from None
    shape = _shape(path, text)
    rows = {"jsonl": _jsonl_rows, "json": _array_rows}.get(shape, _delimited_rows)(path, text, shape)
    facts: dict[Any, ListedFact] = {}
    repeated = 0
    for fact in rows:
        key = fact.triple or ("fact", fact.fact_id)
        if key in facts:
            repeated += 1
        else:
            facts[key] = fact
    if not facts:
        raise ValueError(f"{path}: lists no facts")
    return FactList(str(path), hashlib.sha256(data).hexdigest(), shape, tuple(facts.values()), repeated)


def _shape(path: Path, text: str) -> str:
    head = text.lstrip()
    if head.startswith("{"):
        return "jsonl"
    if head.startswith("["):
        try:
            value = parse_json(text, finite=True)
        except JsonRefused as refused:
            if head.split("\n", 1)[0].strip() == "[" or "\n" not in head.strip():  # one array, broken
                raise ValueError(f"{path}:{refused.line or 1}: {refused.reason}") from None
            return "jsonl"  # lines of [s, r, o]: each line says what is wrong with it
        return "jsonl" if _is_row(value) else "json"
    first = head.split("\n", 1)[0]
    return "tsv" if "\t" in first else "csv"


def _is_row(value: Any) -> bool:
    """[s, r, o] or [[s, r, o], score]: one row, not an array of rows."""
    return isinstance(value, list) and (
        (len(value) == 3 and all(isinstance(v, str) for v in value))
        or (len(value) == 2 and isinstance(value[0], list) and isinstance(value[1], (int, float))))


def _jsonl_rows(path: Path, text: str, _shape: str) -> Iterator[ListedFact]:
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 is no line end in JSON
        if not line.strip():
            continue
        try:
            value = parse_json(line, finite=True)
        except JsonRefused as refused:
            raise ValueError(f"{path}:{number}: {refused.reason}") from None
        yield _json_row(value, path, number)


def _array_rows(path: Path, text: str, _shape: str) -> Iterator[ListedFact]:
    """Each entry of the one array, with the line it starts on."""
    decoder = json.JSONDecoder()
    pos = _skip(text, text.index("[") + 1)
    entry, line, counted = 0, 1, 0
    while pos < len(text) and text[pos] != "]":
        value, end = decoder.raw_decode(text, pos)  # the whole text parsed already (_shape)
        entry, line, counted = entry + 1, line + text.count("\n", counted, pos), pos
        yield _json_row(value, path, line, entry)
        pos = _skip(text, end)
        pos = _skip(text, pos + 1) if text[pos] == "," else pos


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _json_row(value: Any, path: Path, line: int, entry: int | None = None) -> ListedFact:
    where = f"{path}:{line}" + (f" (entry {entry})" if entry is not None else "")
    if isinstance(value, dict):
        return _fact_of({k: value.get(k) for k in COLUMNS[:4]}, where, line, entry)
    triple = value[0] if isinstance(value, list) and len(value) == 2 and isinstance(value[0], list) else value
    if isinstance(triple, list) and len(triple) == 3:  # [s, r, o], or DistFact's [[s, r, o], score]
        return _fact_of(dict(zip(("subject", "relation", "object"), triple)), where, line, entry)
    raise ValueError(f"{where}: expected an object with subject, relation and object (or fact), [s, r, o] or "
                     f"[[s, r, o], score]; got {json.dumps(value)[:80]}")


def _delimited_rows(path: Path, text: str, shape: str) -> Iterator[ListedFact]:
    header: list[str] | None = None
    for record in csv_records(io.StringIO(text, newline=""), delimiter="\t" if shape == "tsv" else ","):
        line, cells = record.line, record.cells
        if record.bad:
            raise ValueError(f"{path}:{line}: {record.problem(header)}")
        if not any(c.strip() for c in cells):
            continue
        if header is None:
            names = [c.strip().lower() for c in cells]
            if set(names) & set(COLUMNS):
                header = names
                if not ({"subject", "relation", "object"} <= set(names) or {"fact", "triples_raw"} & set(names)):
                    raise ValueError(f"{path}:{line}: the header names {', '.join(sorted(set(names) & set(COLUMNS)))}"
                                     "; a fact needs subject, relation and object, or fact, or triples_raw")
                continue
            if len(cells) < 3 or not all(_looks_like_id(c) for c in cells[:3]):
                raise ValueError(f"{path}:{line}: name the columns in a header (subject, relation, object; or fact; "
                                 "or DistFact's triples_raw), or give rows of three Wikidata ids")
            header = ["subject", "relation", "object"]
        row = {name: (cells[k].strip() or None) if k < len(cells) else None for k, name in enumerate(header)}
        raw = row.get("triples_raw")
        if raw and not row.get("subject"):
            match = RAW_TRIPLE.fullmatch(raw)
            if match is None:
                raise ValueError(f"{path}:{line}: triples_raw {raw[:80]!r} is not ('Q..', 'P..', 'Q..')")
            row.update(zip(("subject", "relation", "object"), match.groups()))
        yield _fact_of(row, f"{path}:{line}", line)


def _looks_like_id(cell: str) -> bool:
    return bool(ENTITY.fullmatch(_bare(cell.strip())))


def _bare(text: str) -> str:
    for prefix in PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _fact_of(row: dict, where: str, line: int, entry: int | None = None) -> ListedFact:
    """A row's triple (each id checked) or its fact id."""
    parts = {k: row.get(k) for k in ("subject", "relation", "object")}
    given = [k for k, v in parts.items() if v not in (None, "")]
    fact_id = row.get("fact")
    if fact_id is not None and (not isinstance(fact_id, str) or not FACT_ID.fullmatch(fact_id.strip())):
        raise ValueError(f"{where}: fact {str(fact_id)[:80]!r} is not a fact id (1-200 characters, no spaces)")
    if not given and fact_id:
        return ListedFact(line, None, None, None, fact_id.strip(), entry)
    if len(given) < 3:
        missing = [k for k in parts if k not in given]
        raise ValueError(f"{where}: no {' and '.join(missing)} (a fact needs subject, relation and object, or fact)")
    ids = {}
    for name, value in parts.items():
        pattern = PROPERTY if name == "relation" else ENTITY
        bare = _bare(value.strip()) if isinstance(value, str) else None
        if bare is None or not pattern.fullmatch(bare):
            what = "a Wikidata property id (P36)" if name == "relation" else "a Wikidata id (Q42)"
            raise ValueError(f"{where}: {name} {json.dumps(value)[:80]} is not {what}")
        ids[name] = bare
    return ListedFact(line, ids["subject"], ids["relation"], ids["object"], fact_id.strip() if fact_id else None,
                      entry)

"""kg/jsonl.py, the one JSONL reader: line numbers as an editor shows them, blank lines skipped,
bad lines named, pages read from the middle, and records whose strings hold the characters that
str.splitlines cuts at (U+2028, U+0085), which json.dumps(ensure_ascii=False) writes raw."""

from __future__ import annotations

import json

import pytest

from factprobe.kg.jsonl import jsonl_lines, read_jsonl


def test_lines_are_numbered_as_in_the_file_and_bad_ones_named(tmp_path):
    path = tmp_path / "x.jsonl"
    records = [{"id": "a", "text": "line\u2028separator"}, {"id": "b", "text": "next\x85line"}]
    path.write_text(json.dumps(records[0], ensure_ascii=False) + "\n\n{oops\n" +
                    json.dumps(records[1], ensure_ascii=False) + "\n", encoding="utf-8")
    lines = list(jsonl_lines(path))
    assert [(line.number, line.value, line.error) for line in lines] == [
        (1, records[0], None), (3, None, "not JSON (Expecting property name enclosed in double quotes)"),
        (4, records[1], None)]
    assert lines[1].where(path) == f"{path}:3"
    with pytest.raises(ValueError, match=r"x.jsonl:3: not JSON"):
        list(read_jsonl(path))
    assert list(read_jsonl(path, start=3)) == [records[1]]  # a page from line index 3 on
    assert [line.number for line in jsonl_lines(path, start=0, stop=2)] == [1]


def test_a_byte_order_mark_starting_the_file_is_not_part_of_line_one(tmp_path):
    path = tmp_path / "marked.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"id": "a"}\n{"id": "b"}\n')
    assert list(read_jsonl(path)) == [{"id": "a"}, {"id": "b"}]
    assert [line.number for line in jsonl_lines(path, start=1)] == [2]

"""The CLI's own glances at JSON files (is this output ours? the headline of a finished run? a
facts line) take a file nested 100,000 deep, not UTF-8 or holding a 5,000-digit number as
"not ours / nothing to show", never a RecursionError (issue 44 A)."""

from __future__ import annotations

import pytest

from factprobe.cli.outputs import COUNTS, DISTRACTORS
from factprobe.cli.pipeline import headline_lines

HOSTILE = [b"[" * 100_000, b'{"fact": ' + b"[" * 5_000 + b"}", b'{"fact": "\xff"}', b'{"fact": ' + b"9" * 5_000 + b"}"]


@pytest.mark.parametrize("first", HOSTILE)
def test_a_hostile_first_line_is_not_ours(tmp_path, first):
    path = tmp_path / "counts.jsonl"
    path.write_bytes(first + b"\n")
    assert COUNTS(path) is False and DISTRACTORS(path) is False


@pytest.mark.parametrize("aggregate", HOSTILE + [b"[1, 2]"])
def test_a_run_whose_aggregate_is_hostile_has_no_headline(tmp_path, aggregate):
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder in (good, bad):
        folder.mkdir()
    (good / "aggregate.json").write_text('{"method": "kdf", "items": 3}')
    (bad / "aggregate.json").write_bytes(aggregate)
    lines = headline_lines([(bad, tmp_path / "none.jsonl"), (good, tmp_path / "none.jsonl")])
    assert len(lines) == 1 and lines[0].startswith("good (3 items):")

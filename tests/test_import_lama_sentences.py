"""LAMA's SQuAD and ConceptNet probes (issue 46 item 1): rows with their own `masked_sentences`
and no relation id import as cloze items asking those sentences, where `--format lama-trex`
rejected each row with a hint that did not fit. SQuAD rows: tests/data/lama/squad/test.jsonl (the
first 5 of LAMA's file; source in tests/data/README.md). ConceptNet rows follow LAMA's published
fields (sub, obj, pred, masked_sentences, obj_label, uuid, sub_label), written here."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

SQUAD = Path(__file__).parent / "data" / "lama" / "squad" / "test.jsonl"


def items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_squad_rows_ask_their_own_sentences(tmp_path):
    out = tmp_path / "squad.jsonl"
    proc = run_cli("probeset", "import", "--format", "lama-squad", str(SQUAD), "--out", str(out), check=True)
    assert "5 cloze items from 5 lama-squad rows" in proc.stdout
    first = items(out)[0]
    assert (first["id"], first["relation"], first["gold"]) == ("cloze:squad:56be4db0acb8001400a502f0_0", "squad", ["gold"])
    assert [p["text"] for p in first["prompts"]] == [
        "To emphasize the 50th anniversary of the Super Bowl the [Y] color was used."]


def test_conceptnet_rows_keep_their_relation_and_every_sentence(tmp_path):
    rows = [{"sub": "alive", "obj": "think", "pred": "HasSubevent", "obj_label": "think", "sub_label": "alive",
             "uuid": "u1", "masked_sentences": ["One of the things you do when you are alive is [MASK].",
                                                "When you are alive you [MASK]."]},
            {"sub": "x", "pred": "IsA", "obj_label": "y", "uuid": "u2", "masked_sentences": ["No mask here."]},
            {"sub": "x", "pred": "IsA", "obj_label": "y", "uuid": "u3", "masked_sentences": "[MASK] is text"}]
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "cn.jsonl"
    proc = run_cli("probeset", "import", "--format", "lama-conceptnet", str(path), "--out", str(out))
    assert proc.returncode == 3
    assert f"{path}:2" in proc.stderr and "masked_sentences[0]: needs exactly one [MASK]" in proc.stderr
    assert f"{path}:3" in proc.stderr and "masked_sentences: not a list of sentences" in proc.stderr
    [item] = items(out)
    assert (item["relation"], item["subject_label"], item["gold"]) == ("HasSubevent", "alive", ["think"])
    assert [p["text"] for p in item["prompts"]] == ["One of the things you do when you are alive is [Y].",
                                                    "When you are alive you [Y]."]


def test_lama_trex_points_such_rows_to_their_format(tmp_path):
    proc = run_cli("probeset", "import", "--format", "lama-trex", str(SQUAD), "--out", str(tmp_path / "t.jsonl"))
    assert proc.returncode == 3
    assert "predicate_id: missing (a row with its own sentences: --format lama-conceptnet, or lama-squad)" in proc.stderr

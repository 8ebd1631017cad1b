"""Peak memory of `factprobe ingest wikidata` on a few MB of gzip that expand to one huge record.

    python bench/hostile_memory.py                  # a 1 GiB line, and a 1 GiB pretty-printed object
    python bench/hostile_memory.py --mib 512        # smaller

What is measured. Two gzip files, written here in a streaming pass (never held whole):
  line    a Wikidata JSON dump: 14 real entities (tests/fixtures/wikidata/dump.json), then one
          line of --mib MiB (an entity whose label value is that long), then the 14 again
          under new ids;
  object  a pretty-printed EntityData file (`{"entities": {...}}` over many lines) of --mib MiB.
Each is ingested by the console script in a new process with --workers 0; its peak resident
set (ru_maxrss from wait4) is printed next to that of the same ingest on the dump without the
huge line (the interpreter, its imports and SQLite: the baseline).

Target: the over-long record is one reject naming file:line ("line longer than 64 MiB ..."),
the 28 good entities are stored, and the peak stays under baseline + 2 x the cap on one record
(kg/readers.MAX_RECORD_BYTES, 64 MiB) + 64 MiB, whatever --mib is. Before that cap, the 512 MiB
line peaked at 2.1 GB, 1 GiB at 4.2 GB, the 1 GiB object at 3.1 GB. The exit status is 0 only
when the targets hold.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DUMP = HERE.parent / "tests" / "fixtures" / "wikidata" / "dump.json"
MIB = 1 << 20


def good_lines() -> list[str]:
    lines = [x.strip().rstrip(",") for x in DUMP.read_text(encoding="utf-8").splitlines()]
    return [x for x in lines if x not in ("[", "]", "")]


def renamed(line: str, suffix: str) -> str:
    entity = json.loads(line)
    old = entity["id"]
    entity["id"] = old + suffix
    for statements in entity.get("claims", {}).values():
        for st in statements:
            if "id" in st:
                st["id"] = entity["id"] + st["id"][len(old):]
    return json.dumps(entity, ensure_ascii=False)


def write_stream(path: Path, pieces) -> None:
    with gzip.open(path, "wb", compresslevel=1) as f:
        for piece in pieces:
            f.write(piece)


def huge(mib: int, prefix: bytes, suffix: bytes):
    yield prefix
    block = b"a" * MIB
    for _ in range(mib):
        yield block
    yield suffix


def dump_pieces(mib: int | None):
    good = good_lines()
    yield ("[\n" + ",\n".join(good) + ",\n").encode()
    if mib:
        yield from huge(mib, b'{"type":"item","id":"Q1","labels":{"en":{"language":"en","value":"', b'"}}},\n')
    yield (",\n".join(renamed(x, "0") for x in good) + "\n]\n").encode()


def object_pieces(mib: int):
    yield b'{\n  "entities": {\n    "Q1": {\n      "id": "Q1",\n      "labels": {\n        "en": {\n'
    yield from huge(mib, b'          "value": "', b'"\n        }\n      }\n    }\n  }\n}\n')


def peak_rss(args: list[str]) -> tuple[int, int, str]:
    """(exit status, peak RSS in bytes, stderr) of a command run in a new process."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return proc.returncode, usage.ru_maxrss * 1024, err.read().decode("utf-8", "replace")


def factprobe() -> list[str]:
    script = Path(sys.executable).with_name("factprobe")
    return [str(script)] if script.exists() else [sys.executable, "-m", "factprobe.cli.main"]


def ingest(path: Path, store: Path) -> tuple[int, int, str, list[dict], int]:
    code, peak, err = peak_rss([*factprobe(), "ingest", "wikidata", str(path), "--store", str(store),
                                "--quiet", "--workers", "0"])
    rejects_file = Path(f"{store}.rejects.jsonl")
    rejects = [json.loads(x) for x in rejects_file.read_text().splitlines()] if rejects_file.exists() else []
    with sqlite3.connect(store) as conn:
        entities = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
    return code, peak, err, rejects, entities


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="size of the huge record in MiB (default 1024)")
    args = parser.parse_args()
    from factprobe.kg.readers import MAX_RECORD_BYTES

    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        clean = folder / "clean.json.gz"
        write_stream(clean, dump_pieces(None))
        code, base, err, rejects, entities = ingest(clean, folder / "clean.sqlite")
        assert code == 0 and not rejects and entities == 28, (code, err, rejects, entities)
        bound = base + 2 * MAX_RECORD_BYTES + 64 * MIB
        print(f"baseline (28 entities, no huge record): peak RSS {base / MIB:,.0f} MiB; "
              f"bound {bound / MIB:,.0f} MiB")
        cases = {"line": (dump_pieces(args.mib), 28, 16), "object": (object_pieces(args.mib), 0, 1)}
        for name, (pieces, good, line) in cases.items():
            path = folder / f"{name}.json.gz"
            write_stream(path, pieces)
            code, peak, err, rejects, entities = ingest(path, folder / f"{name}.sqlite")
            reasons = [(r["line"], r["reason"]) for r in rejects]
            held = code == 3 and entities == good and len(rejects) == 1 and rejects[0]["line"] == line \
                and peak <= bound
            ok &= held
            print(f"{name}: {args.mib:,} MiB expanded from {path.stat().st_size / MIB:.1f} MiB of gzip: "
                  f"exit {code}, peak RSS {peak / MIB:,.0f} MiB, {entities} entities stored, rejects {reasons}"
                  f"{'' if held else '  <- TARGET MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Ingest throughput vs the raw rate of decompressing + JSON-parsing the same dump.

    python bench/ingest.py                      # 200k entities, gzip, default workers
    python bench/ingest.py --reuse              # keep an already generated dump
    python bench/ingest.py --compression bz2 --entities 50000

Generates (seeded, deterministic) a Wikidata JSON dump of realistic mix with
bench/wikidata_dump.py (labels in dozens of languages, of which we keep English, external ids,
every value type, qualifiers, references, ranks). Generation is not measured.

Then, in one run:
  raw     one process: decompress (with the same reader the ingest uses) and orjson-parse
          every line, nothing else;
  ingest  the real `ingest(Store(...), WikidataJsonSource(), path)` into a fresh SQLite store
          (Store open to close, so the final WAL checkpoint counts).
It prints entities/s and MB/s of both, the ratio ingest/raw, the rows written, the verdict of
the target (ratio >= 0.5) and a one-line JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import time
from pathlib import Path

import orjson
from factprobe.kg.ingest import default_workers, ingest
from factprobe.kg.readers import decompressed_blocks
from factprobe.kg.sources.wikidata_json import WikidataJsonSource
from factprobe.kg.store import Store

sys.path.insert(0, str(Path(__file__).parent))
from wikidata_dump import generate  # noqa: E402

TARGET = 0.5

# ---------------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------------

def raw_rate(path: Path) -> tuple[int, int, float]:
    """Decompress with the ingest's own reader (`decompressed_blocks`, the same decompressor
    the ingest's reader thread drives) and orjson-parse every entity line; nothing else.
    Returns (entities, decompressed bytes, seconds)."""
    loads = orjson.loads
    started = time.perf_counter()
    n = size = 0
    carry = b""
    for block, _ in decompressed_blocks(path):
        size += len(block)
        lines = (carry + block).split(b"\n")
        carry = lines.pop()
        for line in lines:
            if len(line) > 2:  # skips "[" and "]"
                loads(line[:-1] if line.endswith(b",") else line)
                n += 1
    if len(carry) > 2:
        loads(carry)
        n += 1
    return n, size, time.perf_counter() - started


def reader_name(path: Path) -> str:
    """Which decompressor the ingest's reader uses for this file."""
    from factprobe.kg import readers

    make = readers._decompressor_factory(path.name.lower())
    return "plain" if make is None else type(make()).__module__ + "." + type(make()).__name__


def run_ingest(path: Path, store_path: Path, workers: int | None) -> tuple[object, float, dict]:
    for suffix in ("", "-wal", "-shm"):
        Path(str(store_path) + suffix).unlink(missing_ok=True)
    started = time.perf_counter()
    store = Store(store_path)
    try:
        report = ingest(store, WikidataJsonSource(), path, workers=workers)
    finally:
        store.close()  # the final WAL checkpoint is part of the ingest's cost
    seconds = time.perf_counter() - started
    conn = sqlite3.connect(store_path)
    counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("entities", "facts", "names", "types")}
    conn.close()
    return report, seconds, counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=200_000)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--compression", choices=("gz", "bz2", "none"), default="gz")
    ap.add_argument("--workers", type=int, default=None,
                    help=f"ingest parsing processes (default: the ingest's default, here {default_workers()})")
    ap.add_argument("--reuse", action="store_true", help="keep an already generated dump")
    args = ap.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    ext = {"gz": ".json.gz", "bz2": ".json.bz2", "none": ".json"}[args.compression]
    dump = args.out / f"wikidata-{args.entities}{ext}"
    if args.reuse and dump.exists():
        print(f"dump: reusing {dump}")
    else:
        print(f"dump: generating {args.entities:,} entities -> {dump} ...", flush=True)
        _, secs = generate(dump, args.entities, args.compression, os.cpu_count() or 1)
        print(f"dump: generated in {secs:.1f} s (not measured)")
    disk = dump.stat().st_size
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"reader: {reader_name(dump)}", flush=True)

    ents, raw_bytes, raw_s = raw_rate(dump)
    print(f"dump: {ents:,} entities, {raw_bytes / 1e6:,.1f} MB decompressed "
          f"({raw_bytes / max(ents, 1) / 1e3:.2f} KB/entity), {disk / 1e6:,.1f} MB on disk")
    print(f"raw    (decompress + orjson.loads, 1 process): {raw_s:7.2f} s  "
          f"{ents / raw_s:10,.0f} entities/s  {raw_bytes / raw_s / 1e6:7.1f} MB/s "
          f"({disk / raw_s / 1e6:.1f} MB/s on disk)", flush=True)

    store_path = args.out / "ingest.sqlite"
    workers = default_workers() if args.workers is None else args.workers
    report, ing_s, counts = run_ingest(dump, store_path, args.workers)
    print(f"ingest (workers={workers}, store {store_path.name}):          {ing_s:7.2f} s  "
          f"{ents / ing_s:10,.0f} entities/s  {raw_bytes / ing_s / 1e6:7.1f} MB/s "
          f"({disk / ing_s / 1e6:.1f} MB/s on disk)")
    print(f"rows written: entities {counts['entities']:,}  facts {counts['facts']:,}  "
          f"names {counts['names']:,}  types {counts['types']:,}  "
          f"(records {report.records:,}, rejected {report.rejected}, complete {report.complete})")
    ratio = raw_s / ing_s
    ok = ratio >= TARGET
    print(f"ratio ingest/raw: {ratio:.3f}  target >= {TARGET}: {'PASS' if ok else 'FAIL'}")
    summary = {
        "bench": "ingest", "entities": ents, "compression": args.compression,
        "dump_bytes_on_disk": disk, "dump_bytes_decompressed": raw_bytes, "workers": workers,
        "cores": os.cpu_count(),
        "raw_seconds": round(raw_s, 3), "raw_entities_per_s": round(ents / raw_s),
        "raw_mb_per_s": round(raw_bytes / raw_s / 1e6, 1),
        "ingest_seconds": round(ing_s, 3), "ingest_entities_per_s": round(ents / ing_s),
        "ingest_mb_per_s": round(raw_bytes / ing_s / 1e6, 1),
        "ratio": round(ratio, 3), "target": TARGET, "pass": ok, "rows": counts,
        "rejected": report.rejected, "complete": report.complete,
    }
    print(json.dumps(summary))
    return 0 if ok and report.complete else 1


if __name__ == "__main__":
    sys.exit(main())

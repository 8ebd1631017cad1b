"""What knowing an ingest input by its bytes costs: the hash's throughput against the ingest's.

    python bench/input_hash.py                       # 1 GiB hash file, sample dump x200 (plain and gz)
    python bench/input_hash.py --hash-mib 256 --replicas 50 --reuse

An ingest hashes every byte of its input (kg/identity.py): in its own read for a new input, and
in a pass of its own before it skips an input as already ingested (or resumes one). Measured:
  hash     MB/s of reading a file and hashing it, for each candidate algorithm (the file is read
           once before, so this is the hash against the page cache, not the disk), and for the
           ingest's own code (kg.identity.InputDigest, SHA-256);
  ingest   the real `ingest(Store(...), WikidataJsonSource(), dump)` of a real-shaped dump:
           kg/data/sample_wikidata.json replicated with its ids renumbered per copy, plain and
           gzipped; records/s and MB/s (of the file on disk and of the JSON);
  share    the seconds to hash the dump over the seconds to ingest it: the most the hash adds
           (an ingest hashes in its reader thread, beside the parsing), and what checking an
           unchanged dump costs before it is skipped. Projected for a 100 GB dump from the rates.
It prints a table and a one-line JSON summary.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import re
import time
from pathlib import Path

from factprobe.kg.identity import InputDigest
from factprobe.kg.ingest import default_workers, ingest
from factprobe.kg.sources.wikidata_json import WikidataJsonSource
from factprobe.kg.store import Store

SAMPLE = Path(__file__).resolve().parents[1] / "kg" / "data" / "sample_wikidata.json"
ALGORITHMS = ("sha256", "blake2b", "sha1", "md5", "sha512", "blake2s", "sha3_256")
BLOCK = 4 << 20
GB100 = 100e9
_ITEM = re.compile(rb'"Q([0-9]+)')


def hash_file(path: Path, size_mib: int, reuse: bool) -> Path:
    if not (reuse and path.exists() and path.stat().st_size == size_mib << 20):
        with open(path, "wb") as f:
            for _ in range(0, size_mib, 64):
                f.write(os.urandom(64 << 20))
    return path


def read_rate(path: Path, algorithm: str | None) -> float:
    """MB/s of reading `path` in the ingest's block size and hashing it (None: reading only)."""
    h = hashlib.new(algorithm) if algorithm else None
    started = time.perf_counter()
    with open(path, "rb") as f:
        while block := f.read(BLOCK):
            if h:
                h.update(block)
    return path.stat().st_size / (time.perf_counter() - started) / 1e6


def digest_seconds(path: Path) -> float:
    started = time.perf_counter()
    InputDigest().finish(path)
    return time.perf_counter() - started


def replicated_dump(out: Path, replicas: int, reuse: bool) -> tuple[Path, Path]:
    """The sample dump's records `replicas` times, item ids moved by 10^8 per copy (so every
    copy adds entities instead of replacing the last), plain and gzipped (level 6)."""
    plain, packed = out / f"sample-x{replicas}.json", out / f"sample-x{replicas}.json.gz"
    if reuse and plain.exists() and packed.exists():
        return plain, packed
    records = [x.rstrip(b",\n") for x in SAMPLE.read_bytes().splitlines(keepends=True) if x.startswith(b"{")]
    with open(plain, "wb") as f:
        f.write(b"[\n")
        for k in range(replicas):
            shift = k * 100_000_000
            for i, record in enumerate(records):
                moved = _ITEM.sub(lambda m: b'"Q%d' % (int(m.group(1)) + shift), record) if k else record
                last = k == replicas - 1 and i == len(records) - 1
                f.write(moved + (b"\n" if last else b",\n"))
        f.write(b"]\n")
    with open(plain, "rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
        while block := src.read(BLOCK):
            dst.write(block)
    return plain, packed


def timed_ingest(dump: Path, store_path: Path, workers: int | None) -> tuple[object, float, float]:
    """(report, seconds of a first ingest, seconds of a second one: already ingested)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store_path}{suffix}").unlink(missing_ok=True)
    seconds = []
    for _ in range(2):
        started = time.perf_counter()
        with Store(store_path) as store:
            report = ingest(store, WikidataJsonSource(), dump, workers=workers)
        seconds.append(time.perf_counter() - started)
    assert report.already_done, "the second run should find the dump already ingested"
    return report, seconds[0], seconds[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hash-mib", type=int, default=1024, help="size of the file the algorithms hash")
    ap.add_argument("--replicas", type=int, default=200, help="copies of the sample dump (1.35 MB each)")
    ap.add_argument("--workers", type=int, default=None,
                    help=f"ingest parsing processes (default: the ingest's default, here {default_workers()})")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--reuse", action="store_true", help="keep files generated by an earlier run")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{__import__('ssl').OPENSSL_VERSION}", flush=True)

    big = hash_file(args.out / f"hash-{args.hash_mib}MiB.bin", args.hash_mib, args.reuse)
    read_rate(big, None)  # into the page cache
    rates = {"read only": read_rate(big, None)}
    rates.update((name, read_rate(big, name)) for name in ALGORITHMS)
    rates["InputDigest (sha256)"] = big.stat().st_size / digest_seconds(big) / 1e6
    print(f"\nhash of a {args.hash_mib} MiB file (page-cached), MB/s:")
    for name, rate in rates.items():
        print(f"  {name:22s} {rate:8,.0f}")
    hash_rate = rates["InputDigest (sha256)"]

    plain, packed = replicated_dump(args.out, args.replicas, args.reuse)
    json_bytes = plain.stat().st_size
    rows, summary = [], {"bench": "input_hash", "cores": os.cpu_count(), "hash_mb_per_s": {
        k: round(v) for k, v in rates.items()}, "dumps": {}}
    for dump in (plain, packed):
        disk = dump.stat().st_size
        hash_s = digest_seconds(dump)
        report, ingest_s, again_s = timed_ingest(dump, args.out / "input_hash.sqlite", args.workers)
        share = hash_s / ingest_s
        projected = {"hash_s": GB100 / (disk / hash_s), "ingest_s": GB100 / (disk / ingest_s)}
        rows.append((dump.name, disk, report, ingest_s, again_s, hash_s, share, projected))
        summary["dumps"][dump.name] = {
            "bytes_on_disk": disk, "json_bytes": json_bytes, "records": report.lines_read - 2,
            "ingest_s": round(ingest_s, 2), "records_per_s": round((report.lines_read - 2) / ingest_s),
            "ingest_mb_per_s_on_disk": round(disk / ingest_s / 1e6, 1),
            "ingest_mb_per_s_json": round(json_bytes / ingest_s / 1e6, 1),
            "hash_s": round(hash_s, 3), "already_ingested_s": round(again_s, 3), "share": round(share, 4),
            "projected_100gb_hash_s": round(projected["hash_s"]), "projected_100gb_ingest_s": round(projected["ingest_s"])}
    print(f"\ningest of kg/data/sample_wikidata.json x{args.replicas} "
          f"(workers={default_workers() if args.workers is None else args.workers}):")
    for name, disk, report, ingest_s, again_s, hash_s, share, projected in rows:
        records = report.lines_read - 2
        print(f"  {name}: {disk / 1e6:,.1f} MB on disk, {records:,} records: ingest {ingest_s:.2f} s "
              f"({records / ingest_s:,.0f} records/s, {disk / ingest_s / 1e6:,.1f} MB/s on disk, "
              f"{json_bytes / ingest_s / 1e6:,.1f} MB/s of JSON)")
        print(f"    hash {hash_s:.3f} s ({disk / hash_s / 1e6:,.0f} MB/s) = {share:.2%} of the ingest; "
              f"already ingested: {again_s:.3f} s")
        print(f"    a 100 GB dump like it: hash {projected['hash_s']:,.0f} s, ingest {projected['ingest_s']:,.0f} s")
    print(f"\nhash rate used for the projection: {hash_rate:,.0f} MB/s -> {GB100 / hash_rate / 1e6:,.0f} s per 100 GB")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

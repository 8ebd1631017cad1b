"""The whole job at a million entities: every stage as a user runs it, with its cost.

    python bench/scale.py                                  # 1M entities, 1M documents (~1 h)
    python bench/scale.py --entities 20000 --documents 20000 --out bench/out/scale-20k  # quick check
    python bench/scale.py --reuse                          # keep generated inputs from an earlier run

Generates (seeded, not measured; bench/scale_data.py) a Wikidata JSON dump of realistic shape
and, once the graph is in, a corpus that mentions its entities. Then runs, each as its own
`factprobe` process:

  ingest-all         ingest wikidata DUMP (every relation; the projection's "without filters")
  ingest-templates   ingest wikidata DUMP --relations templates (the store the rest uses)
  corpus-index       corpus index CORPUS --count-facts R... (embedded index)
  frequency          frequency annotate --relation R... --to-store
  distractors-build  distractors build (TF-IDF + the Sem self-check)
  probeset-*         probeset build of every kind (cloze, icl-mc, kdf, distractor with random
                     and sem, belief-icl), each over at least --facts facts, with frequency buckets
  eval-kdf           eval --method kdf --limit 20 on SmolLM2 (one small evaluation)

For each stage it prints wall time, peak memory (resident set of the process and all its
children together, sampled every 0.1 s) and disk (the stage's outputs, and the peak of the
output folder while it ran, which counts the staging store). Targets: the whole run under 60
minutes and every stage under 8 GB. Exit 0 only when every stage succeeded and both hold.
Results go to OUT/scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))
from scale_data import generate_corpus, generate_dump  # noqa: E402

TARGET_SECONDS = 3600
TARGET_BYTES = 8 << 30
# Relations counted in the corpus and probed: the dump's most used templated relations
# (P31 too would add a fact per entity; it has no interesting object to probe).
PROBED = ("P27", "P106", "P19", "P17", "P131", "P159", "P69", "P39", "P1412", "P407", "P50")


@dataclass
class Stage:
    name: str
    argv: list[str]
    outputs: list[str]
    seconds: float = 0.0
    peak_rss: int = 0
    peak_disk: int = 0
    disk: int = 0
    rc: int | None = None
    cpu: float = 0.0  # CPU seconds of the stage's whole process tree
    cpu_main: float = 0.0  # of its first process alone (an ingest's reader and SQLite writer)
    summary: str = ""
    extra: dict = field(default_factory=dict)


def tree_rss(proc: psutil.Process) -> int:
    total = 0
    try:
        tree = [proc, *proc.children(recursive=True)]
    except psutil.Error:  # the stage has just exited
        return 0
    for p in tree:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for f in files:
            try:
                total += os.stat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def path_bytes(path: Path) -> int:
    if path.is_dir():
        return folder_bytes(path)
    return sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{path}{s}").exists())


def run_stage(stage: Stage, out: Path, env: dict) -> Stage:
    print(f"\n== {stage.name}: factprobe {' '.join(stage.argv)}", flush=True)
    log = open(out / f"{stage.name}.log", "w")
    started = time.perf_counter()
    proc = subprocess.Popen([str(Path(sys.executable).with_name("factprobe")), *stage.argv], cwd=out,
                            stdout=subprocess.PIPE, stderr=log, env=env, text=True)
    ps = psutil.Process(proc.pid)
    stop = threading.Event()
    base_disk = folder_bytes(out)
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)

    def sample() -> None:
        tick = 0
        while not stop.is_set():
            stage.peak_rss = max(stage.peak_rss, tree_rss(ps))
            try:
                times = ps.cpu_times()
                stage.cpu_main = times.user + times.system
            except psutil.Error:
                pass
            if tick % 10 == 0:
                stage.peak_disk = max(stage.peak_disk, folder_bytes(out) - base_disk)
            tick += 1
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, _ = proc.communicate()
    stop.set()
    sampler.join()
    stage.seconds = time.perf_counter() - started
    stage.rc = proc.returncode
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stage.cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    log.close()
    stage.peak_disk = max(stage.peak_disk, folder_bytes(out) - base_disk)
    stage.disk = sum(path_bytes(out / o) for o in stage.outputs)
    (out / f"{stage.name}.out").write_text(stdout)
    try:
        stage.extra = json.loads(stdout)
    except ValueError:
        stage.extra = {}
    tail = (out / f"{stage.name}.log").read_text().strip().splitlines()[-3:]
    print(f"   rc {stage.rc}, {stage.seconds:,.1f} s (CPU {stage.cpu:,.0f} s, first process {stage.cpu_main:,.0f} s), peak {stage.peak_rss / 2**30:.2f} GiB, "
          f"outputs {stage.disk / 2**20:,.0f} MiB (peak growth {stage.peak_disk / 2**20:,.0f} MiB)", flush=True)
    if stage.rc not in (0,):
        print("   " + "\n   ".join(tail), flush=True)
    return stage


def stages(args, dump: Path, corpus: Path) -> list[Stage]:
    rel = [x for r in PROBED for x in ("--relation", r)]
    per = str(max(1, -(-args.facts // len(PROBED))))
    build = ["probeset", "build", "--store", "kg.sqlite", *rel, "--per-relation", per,
             "--corpus", "freq", "--quiet", "--json"]
    workers = ["--workers", str(args.workers)] if args.workers is not None else []
    out = [
        Stage("ingest-all", ["ingest", "wikidata", str(dump), "--store", "all.sqlite", *workers,
                             "--quiet", "--json"], ["all.sqlite"]),
        Stage("ingest-templates", ["ingest", "wikidata", str(dump), "--store", "kg.sqlite",
                                   "--relations", "templates", *workers, "--quiet", "--json"],
              ["kg.sqlite"]),
        Stage("corpus-index", ["corpus", "index", str(corpus), "--store", "kg.sqlite", "--index",
                               "freq.sqlite", *[x for r in PROBED for x in ("--count-facts", r)],
                               "--quiet", "--json"], ["freq.sqlite"]),
        Stage("frequency", ["frequency", "annotate", *rel, "--store", "kg.sqlite", "--index",
                            "freq.sqlite", "--to-store", "--out", "counts.jsonl", "--quiet", "--json"],
              ["counts.jsonl"]),
        Stage("distractors-build", ["distractors", "build", "--store", "kg.sqlite", "--out", "semantic",
                                    "--json"], ["semantic"]),
        Stage("probeset-cloze", [*build, "--kind", "cloze", "--out", "cloze.jsonl"], ["cloze.jsonl"]),
        # Real relations such as P27 have ~200 objects, fewer than 100 wrong ones for some subjects.
        Stage("probeset-icl-mc", [*build, "--kind", "icl-mc", "--allow-fewer-choices", "--out", "mc.jsonl"],
              ["mc.jsonl"]),
        Stage("probeset-kdf", [*build, "--kind", "kdf", "--out", "kdf.jsonl"], ["kdf.jsonl"]),
        Stage("probeset-distractor", [*build, "--kind", "distractor", "--strategy", "random",
                                      "--strategy", "sem", "--semantic", "semantic",
                                      "--out", "distractor.jsonl"], ["distractor.jsonl"]),
        Stage("probeset-belief-icl", [*build, "--kind", "belief-icl", "--out", "belief-icl.jsonl"],
              ["belief-icl.jsonl"]),
        Stage("eval-kdf", ["eval", "--model", "smollm2-135m-instruct", "--method", "kdf", "--probes",
                           "kdf.jsonl", "--out", "runs/kdf", "--limit", "20", "--quiet"], ["runs"]),
    ]
    return [s for s in out if not args.stages or s.name in args.stages]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--documents", type=int, default=1_000_000)
    ap.add_argument("--facts", type=int, default=10_000, help="facts per probe set (at least)")
    ap.add_argument("--workers", type=int, default=None, help="ingest parsing processes")
    ap.add_argument("--out", type=Path, default=Path("bench/out/scale"))
    ap.add_argument("--reuse", action="store_true", help="keep inputs and stores of an earlier run")
    ap.add_argument("--stages", nargs="*", help="only these stages (names as printed)")
    args = ap.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    inputs = out / "inputs"
    inputs.mkdir(exist_ok=True)
    dump = inputs / f"dump-{args.entities}.json.gz"
    corpus = inputs / f"corpus-{args.documents}.jsonl"
    env = {**os.environ, "FACTPROBE_NO_PROGRESS": "1"}
    if not (args.reuse and dump.exists()):
        size, secs = generate_dump(dump, args.entities)
        print(f"generated {dump.name}: {args.entities:,} entities, {size / 2**30:.2f} GiB of JSON, "
              f"{dump.stat().st_size / 2**20:,.0f} MiB gzipped, {secs:.0f} s (not measured)", flush=True)
    if not args.reuse:
        for name in os.listdir(out):
            if name != "inputs":
                p = out / name
                shutil.rmtree(p) if p.is_dir() else p.unlink()

    results: list[Stage] = []
    for stage in stages(args, dump, corpus):
        if stage.name == "corpus-index" and not (args.reuse and corpus.exists()):
            size, secs = generate_corpus(out / "kg.sqlite", corpus, args.documents)
            print(f"generated {corpus.name}: {args.documents:,} documents, {size / 2**20:,.0f} MiB, "
                  f"{secs:.0f} s (not measured)", flush=True)
        results.append(run_stage(stage, out, env))
        if stage.rc != 0 and stage.name in ("ingest-templates", "corpus-index"):
            break  # everything after needs it

    total = sum(s.seconds for s in results)
    peak = max((s.peak_rss for s in results), default=0)
    ok = all(s.rc == 0 for s in results)
    print("\n| stage | wall s | CPU s (first process) | peak memory GiB | outputs MiB | peak disk growth MiB |")
    print("|---|---|---|---|---|---|")
    for s in results:
        print(f"| {s.name} | {s.seconds:,.1f} | {s.cpu:,.0f} ({s.cpu_main:,.0f}) | {s.peak_rss / 2**30:.2f} | "
              f"{s.disk / 2**20:,.0f} | "
              f"{s.peak_disk / 2**20:,.0f} |" + ("" if s.rc == 0 else f" rc {s.rc}"))
    print(f"| **all** | **{total:,.0f}** | | **{peak / 2**30:.2f}** | | |")
    met = ok and total < TARGET_SECONDS and peak < TARGET_BYTES
    print(f"\nwhole run {total / 60:.1f} min (target < 60), peak {peak / 2**30:.2f} GiB (target < 8): "
          + ("met" if met else "NOT met" + ("" if ok else " (a stage failed)")))
    (out / "scale.json").write_text(json.dumps({
        "entities": args.entities, "documents": args.documents, "facts": args.facts,
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                    "memory_gib": round(psutil.virtual_memory().total / 2**30, 1)},
        "stages": [asdict(s) for s in results], "seconds": total, "peak_rss": peak, "met": met,
    }, indent=2))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

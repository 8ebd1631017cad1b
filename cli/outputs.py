"""`--overwrite`, and what each command's own output is, by the output's own format marker.

kg/outputs.py claims an output before a command writes it: a link at it, or the command's
own input, is refused always; an existing output that is not the command's own is refused
unless --overwrite. Here is what "its own" means for each kind the commands write: a merged
run folder holds a run.json or only shards, a report folder the report.html factprobe wrote, a
semantic index its meta.json, a frequency index its tables, a JSONL of counts or distractors the
fields those commands write, a pipeline folder its graph store. A probe set's, an eval run
folder's and a graph store's own tests live beside their writers (probes/building/probeset.py,
probes/evaluation/runner.py, kg/outputs.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

import click

from ..kg.jsonl import json_value
from ..kg.outputs import (SQLITE_BESIDE, Claim, claim_file, claim_folder, is_store, listing, remove, sqlite_tables)

overwrite_option = click.option(
    "--overwrite", is_flag=True,
    help="Replace an output this command did not write (a file of another kind or other content, a folder "
         "holding other files); without it such an output is refused. A link, or the command's own input, is "
         "refused always.")

SEMANTIC_FILES = ("entities.txt", "tfidf.npz", "hnsw.bin", "meta.json")
INDEX_TABLES = {"meta", "documents", "postings"}  # index/embedded.py's schema


def _json_object(path: Path) -> dict | None:
    try:
        value, _ = json_value(path.read_bytes())
    except OSError:
        return None
    return value if isinstance(value, dict) else None


# -- eval, merge ----------------------------------------------------------------------------------


def claim_merge_folder(out, *, overwrite: bool = False, inputs: Iterable = ()) -> Claim:
    """`merge --out`: empty, a run factprobe wrote, or the folder of the shards only (OUT/shard-K-of-N).
    `eval --out` is claimed by the evaluation itself (probes/evaluation/runner.py claim_run_folder)."""
    from ..probes.evaluation.runner import RUN_FILES, is_run_folder  # imported when asked: the CLI starts fast

    def ours(folder: Path) -> bool:
        return is_run_folder(folder) or all(re.fullmatch(r"shard-\d+-of-\d+", name) for name in listing(folder))

    return claim_folder(out, overwrite=overwrite, inputs=inputs, ours=ours, writes=RUN_FILES,
                        what="a factprobe eval run or its shards")


# -- report, semantic index, pipeline -------------------------------------------------------------


def claim_report_folder(out, *, overwrite: bool = False, inputs: Iterable = ()) -> Claim:
    """`report --out`: empty, or holding the report.html a report wrote (its generator line)."""
    from ..probes.report.write import REPORT_FILES, is_report_folder

    writes = [*REPORT_FILES, *(f"{name}.partial" for name in REPORT_FILES)]
    return claim_folder(out, overwrite=overwrite, inputs=inputs, ours=is_report_folder, writes=writes,
                        what="a factprobe report (no report.html it wrote)")


ASSESS_FILES = ("assess.json", "assess.md")


def claim_assess_folder(out, *, overwrite: bool = False, inputs: Iterable = ()) -> Claim:
    """`assess --out`: empty, or holding the assess.json an assessment wrote (its format)."""
    def ours(folder: Path) -> bool:
        return str((_json_object(folder / "assess.json") or {}).get("format", "")).startswith("factprobe-assess/")

    return claim_folder(out, overwrite=overwrite, inputs=inputs, ours=ours, writes=ASSESS_FILES,
                        what="a factprobe assessment (no assess.json it wrote)")


def claim_semantic_folder(out, *, overwrite: bool = False, inputs: Iterable = ()) -> Claim:
    """`distractors build --out`: empty, or a semantic index (its meta.json with a format)."""
    def ours(folder: Path) -> bool:
        return "format" in (_json_object(folder / "meta.json") or {})

    writes = [*SEMANTIC_FILES, *(f"{name}.partial" for name in SEMANTIC_FILES)]
    return claim_folder(out, overwrite=overwrite, inputs=inputs, ours=ours, writes=writes,
                        what="a factprobe semantic index (no meta.json it wrote)")


def claim_pipeline_folder(out, *, overwrite: bool = False, inputs: Iterable = ()) -> Claim:
    """`run --out`, `sample --out`: empty, or a pipeline's folder (its graph.sqlite store)."""
    def ours(folder: Path) -> bool:
        return (folder / "graph.sqlite").is_file() and is_store(folder / "graph.sqlite")

    store = ["graph.sqlite", *(f"graph.sqlite{s}" for s in SQLITE_BESIDE)]  # SQLite writes into them
    return claim_folder(out, overwrite=overwrite, inputs=inputs, ours=ours, writes=["graph.sqlite"], in_place=store,
                        what="a factprobe pipeline's output (no graph.sqlite store)")


# What a pipeline writes into its folder, by place (cli/pipeline.py's layout): these names, their
# locks and their writers' temporaries. `run --restart` removes these and nothing else.
_SQLITE_FILES = r"(?:-wal|-shm|-journal|\.lock|\.rejects\.jsonl|\.staging-[0-9a-f]+)?"
_PIPELINE_TOP = re.compile(rf"graph\.sqlite{_SQLITE_FILES}|[^/]+\.index\.sqlite{_SQLITE_FILES}|frequency-[^/]+\.jsonl")


def pipeline_files(out) -> tuple[list[Path], list[Path]]:
    """The files under a pipeline's folder `out`: those a pipeline writes (its store, index and
    counts at the top, semantic-index/, probesets/ (a set with its factprobe sidecar), runs/*/,
    report/), and the others (a user's notes, a link: factprobe writes no link), each sorted."""
    from ..kg.outputs import LOCK_NAME, TEMP
    from ..probes.building.probeset import is_probeset
    from ..probes.report.write import REPORT_FILES
    from ..probes.evaluation.runner import RUN_FILES

    out = Path(out)
    folders = {"semantic-index": set(SEMANTIC_FILES), "report": set(REPORT_FILES)}

    def written(path: Path) -> bool:
        parts = path.relative_to(out).parts
        name = path.name
        if name == LOCK_NAME or TEMP.fullmatch(name):  # a writer's lock, a killed writer's temporary
            return True
        if len(parts) == 1:
            return bool(_PIPELINE_TOP.fullmatch(name))
        if len(parts) == 2 and parts[0] in folders:
            return name in folders[parts[0]]
        if len(parts) == 2 and parts[0] == "probesets":
            stem = re.sub(r"(\.jsonl(\.lock)?|\.meta\.json|\.parquet)$", "", name)
            return stem != name and is_probeset(path.parent / f"{stem}.jsonl")
        return len(parts) == 3 and parts[0] == "runs" and name in RUN_FILES

    ours, others = [], []
    for folder, subfolders, names in os.walk(out):
        here = Path(folder)
        links = [d for d in subfolders if (here / d).is_symlink()]  # listed, never followed
        for path in sorted([*(here / n for n in names), *(here / d for d in links)]):
            regular = not path.is_symlink() and path.is_file()
            (ours if regular and written(path) else others).append(path)
    return sorted(ours), sorted(others)


def claim_data_folder(data, *, overwrite: bool = False, inputs: Iterable = ()) -> Claim:
    """`serve --data`: empty, or a service's data folder (its jobs.sqlite with the jobs table)."""
    def ours(folder: Path) -> bool:
        return "jobs" in (sqlite_tables(folder / "jobs.sqlite") or set())

    in_place = ["jobs.lock", "jobs.sqlite", *(f"jobs.sqlite{s}" for s in SQLITE_BESIDE)]
    return claim_folder(data, overwrite=overwrite, inputs=inputs, ours=ours, flag="--data", writes=[*in_place, "jobs"],
                        in_place=in_place, what="a factprobe service's data folder (no jobs.sqlite)")


# -- SQLite and JSONL files -----------------------------------------------------------------------


def claim_index(path, *, overwrite: bool = False, inputs: Iterable = ()) -> Claim:
    """`corpus index --index`: a frequency index factprobe wrote (resumed), else refused, or
    removed first with `overwrite` (no foreign database gets our tables)."""
    def ours(file: Path) -> bool:
        tables = sqlite_tables(file)
        return tables is not None and (not tables or INDEX_TABLES <= tables)

    claim = claim_file(path, overwrite=overwrite, inputs=inputs, ours=ours, flag="--index", in_place=True,
                       what="a factprobe frequency index", beside=[f"{path}{s}" for s in SQLITE_BESIDE])
    if claim is Claim.REPLACE:
        remove(path, beside=SQLITE_BESIDE)
    return claim


def claim_cache(path, *, overwrite: bool = False) -> Claim:
    """`model ... --cache`: a result cache factprobe wrote (its results table) is added to;
    another database (a graph store) is refused, or removed first with `overwrite`."""
    def ours(file: Path) -> bool:
        tables = sqlite_tables(file)
        return tables is not None and (not tables or "results" in tables)

    claim = claim_file(path, overwrite=overwrite, ours=ours, flag="--cache", what="a factprobe result cache",
                       beside=[f"{path}{s}" for s in SQLITE_BESIDE], in_place=True)
    if claim is Claim.REPLACE:
        remove(path, beside=SQLITE_BESIDE)
    return claim


def jsonl_of(*keys: str):
    """A file test: empty, or its first line a JSON object with all of `keys` (one of the
    alternatives, when a key is "a|b")."""
    def ours(path: Path) -> bool:
        try:
            with open(path, "rb") as stream:
                first = stream.readline(1 << 20)
        except OSError:
            return False
        if not first.strip():
            return path.stat().st_size == 0
        record, _ = json_value(first)
        return isinstance(record, dict) and all(any(k in record for k in key.split("|")) for key in keys)
    return ours


COUNTS = jsonl_of("fact", "subject", "relation", "object", "documents", "bucket")  # frequency annotate --out
DISTRACTORS = jsonl_of("distractors|rejected")  # distractors add --out
REJECTS = jsonl_of("file", "line", "reason")  # an ingest's rejects file


def claim_jsonl(path, ours, what: str, *, overwrite: bool = False, inputs: Iterable = (), flag: str = "--out",
                remove_replaced: bool = True) -> Claim:
    """A JSONL output: its own kind (`ours`) is resumed or rewritten in place (a hard link there
    is refused); another file is refused, or removed first with `overwrite`."""
    claim = claim_file(path, overwrite=overwrite, inputs=inputs, ours=ours, what=what, flag=flag, in_place=True)
    if claim is Claim.REPLACE and remove_replaced:
        remove(path)
    return claim

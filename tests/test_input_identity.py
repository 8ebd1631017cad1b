"""An ingest input is known by every byte of it (kg/identity.py): a dump changed anywhere is
read again, a resume never continues inside other bytes, and an unchanged dump (moved, copied,
touched) is still "already ingested".

The dumps here are over 2 MiB with the edited record in the middle, outside the first and last
MiB that name the store's slot for an input (readers.fingerprint): an edit there keeps the slot,
so only the hash of the bytes can tell the files apart.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from factprobe.cli.main import main
from factprobe.kg import KnowledgeGraph, Store
from factprobe.kg.identity import InputDigest, mismatch
from factprobe.kg.ingest import ingest
from factprobe.kg.readers import fingerprint
from factprobe.kg.restrict import ingest_relations
from factprobe.kg.sources.wikidata_json import WikidataJsonSource
from factprobe.kg.store import IngestState

from wikidata_builder import item, write_dump

FILLERS = 5000  # 650 bytes each: a 3.3 MB dump
TARGET = "Q4000000"  # in the middle of the dump
CHUNK = 65536  # many checkpoints, for the runs that crash


@pytest.fixture(scope="module")
def original(tmp_path_factory) -> Path:
    entities = [item(f"Q{1000 + n}", f"Filler entity {n:05d}", claims={"P31": ["Q5"], "P17": [f"Q{n % 90 + 1}"]})
                for n in range(FILLERS)]
    entities.insert(FILLERS // 2, item(TARGET, "Target label one", claims={"P36": ["Q64"]}))
    path = write_dump(tmp_path_factory.mktemp("dump") / "dump.json", entities)
    data = path.read_bytes()
    middle = data.index(b"Target label one")
    assert len(data) > 3 << 20 and 1 << 20 < middle < len(data) - (1 << 20)
    return path


def edited(path: Path, old: bytes, new: bytes) -> None:
    """Replace `old` by `new` (same length) in place, keeping the modification time."""
    assert len(old) == len(new)
    stat = path.stat()
    data = path.read_bytes()
    assert data.count(old) == 1
    path.write_bytes(data.replace(old, new))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.fixture
def dump(tmp_path, original) -> Path:
    return Path(shutil.copy(original, tmp_path / "dump.json"))


def run(store: Path, path: Path, source=None, **kw):
    with Store(store) as st:
        return ingest(st, source or WikidataJsonSource(), path, workers=0, **kw)


def label(store: Path, entity: str = TARGET) -> str:
    with KnowledgeGraph(store) as kg:
        return kg.entity(entity).label


def sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


class _Crash(Exception):
    pass


@dataclass(frozen=True)
class Crashing(WikidataJsonSource):
    """Dies after handing over `after` chunks, as a killed process would: the driver has
    committed what it committed."""

    after: int = 0

    def chunks(self, path, start, position, digest=None):
        for i, chunk in enumerate(super().chunks(path, start, position, digest)):
            if i == self.after:
                raise _Crash()
            yield chunk


def crash_midway(store: Path, path: Path) -> int:
    """Ingest until half the dump is committed; returns the records done."""
    with pytest.raises(_Crash):
        run(store, path, Crashing(chunk_bytes=CHUNK, after=30))
    with Store(store) as st:
        [state] = [st.ingest_state(k) for (k,) in st.conn.execute("SELECT key FROM ingests")]
    assert not state.complete and FILLERS // 2 + 2 < state.records_done < FILLERS  # past the target
    return state.records_done


def test_unchanged_dump_is_already_ingested_moved_copied_or_touched(tmp_path, dump):
    store = tmp_path / "s.sqlite"
    first = run(store, dump)
    assert first.complete and first.records == FILLERS + 1 and first.digest == sha256(dump)
    os.utime(dump, (1, 1))  # another modification time: the same bytes
    again = run(store, dump)
    assert again.already_done and again.records == 0 and again.changed == ""
    copy = Path(shutil.copy(dump, tmp_path / "elsewhere.json"))
    assert run(store, copy).already_done


def test_dump_edited_in_the_middle_at_the_same_size_is_read_again(tmp_path, dump):
    store = tmp_path / "s.sqlite"
    run(store, dump)
    key = fingerprint(dump)
    edited(dump, b"Target label one", b"Target label two")
    assert fingerprint(dump) == key  # same size, head and tail: the old slot
    report = run(store, dump)
    assert not report.already_done and report.complete and report.records == FILLERS + 1
    assert report.changed == "its bytes differ from those the earlier run read"
    assert label(store) == "Target label two"
    assert report.digest == sha256(dump)
    # Read again, the edited dump is now the one ingested.
    assert run(store, dump).already_done


def test_resume_after_a_crash_continues_in_the_same_bytes(tmp_path, dump):
    store = tmp_path / "s.sqlite"
    done = crash_midway(store, dump)
    report = run(store, dump)
    assert report.resumed_from == done and report.changed == ""
    assert report.records == FILLERS + 2 - done  # only the rest was read (line 1 is "[")
    assert report.digest == sha256(dump)  # the prefix hashed before, the rest as read
    assert run(store, dump).already_done


def test_dump_changed_inside_the_read_part_after_a_crash_is_read_from_the_start(tmp_path, dump):
    store = tmp_path / "s.sqlite"
    crash_midway(store, dump)
    edited(dump, b"Target label one", b"Target label two")
    report = run(store, dump)
    assert report.resumed_from == 0 and report.records == FILLERS + 1
    assert report.changed.startswith("its first ") and report.changed.endswith(" bytes differ from those the earlier run read")
    assert label(store) == "Target label two"
    assert report.digest == sha256(dump)


def test_gzip_dump_changed_after_a_crash_is_read_from_the_start(tmp_path, dump):
    """Stored (level 0) gzip members: the edit changes the first member's bytes and checksum in
    the middle of the file, and neither its size nor its first and last MiB."""
    data = dump.read_bytes()
    split = data.index(b"Target label one") + (64 << 10)
    packed = tmp_path / "dump.json.gz"

    def pack(text: bytes) -> bytes:
        return b"".join(gzip.compress(part, compresslevel=0, mtime=0) for part in (text[:split], text[split:]))

    packed.write_bytes(pack(data))
    store = tmp_path / "s.sqlite"
    crash_midway(store, packed)
    key = fingerprint(packed)
    packed.write_bytes(pack(data.replace(b"Target label one", b"Target label two")))
    assert fingerprint(packed) == key
    report = run(store, packed)
    assert report.resumed_from == 0 and report.records == FILLERS + 1
    assert report.changed.startswith("its first ") and report.changed.endswith(" bytes differ from those the earlier run read")
    assert label(store) == "Target label two"
    assert report.digest == sha256(packed)  # the compressed bytes, as on disk


def test_a_checkpoint_vouches_for_the_bytes_read_and_no_others(tmp_path, dump):
    """The prefix check: an edit inside the bytes a checkpoint hashed is a mismatch, one past
    them is not (those bytes are read by the resume)."""
    read = 1 << 20
    data = dump.read_bytes()
    state = IngestState("k", "wikidata-json", str(dump), 100, read - 10, complete=False, truncated=False,
                        digest_bytes=read, digest="sha256:" + hashlib.sha256(data[:read]).hexdigest())
    dump.write_bytes(data[:read] + b"x" + data[read + 1:])
    digest = InputDigest()
    assert mismatch(state, dump, digest) == "" and digest.bytes == read
    dump.write_bytes(data[:read - 1] + b"x" + data[read:])
    assert mismatch(state, dump, InputDigest()) == "its first 1048576 bytes differ from those the earlier run read"
    dump.write_bytes(data[:read - 1])
    assert mismatch(state, dump, InputDigest()) == "it is shorter than the 1048576 bytes the earlier run read"


def test_a_run_that_recorded_no_hash_is_not_trusted(tmp_path, dump):
    """A store written before inputs were hashed: its finished input is read again."""
    store = tmp_path / "s.sqlite"
    run(store, dump)
    with Store(store) as st, st.conn:
        st.conn.execute("DELETE FROM input_digests")
    report = run(store, dump)
    assert not report.already_done and report.records == FILLERS + 1
    assert report.changed == "no hash of its bytes was recorded by the earlier run"


def test_filtered_ingest_of_an_edited_dump_is_read_again(tmp_path, dump):
    store = tmp_path / "f.sqlite"
    relations = frozenset({"P36"})
    with Store(store) as st:
        assert ingest_relations(st, WikidataJsonSource(), dump, relations, workers=0).complete
    edited(dump, b"Target label one", b"Target label two")
    with Store(store) as st:
        report = ingest_relations(st, WikidataJsonSource(), dump, relations, workers=0)
        assert not report.already_done and report.changed and report.digest == sha256(dump)
        assert ingest_relations(st, WikidataJsonSource(), dump, relations, workers=0).already_done
    assert label(store) == "Target label two"


def test_cli_says_why_an_input_is_read_again(tmp_path, dump):
    store = tmp_path / "s.sqlite"
    args = ["ingest", "wikidata", str(dump), "--store", str(store), "--quiet", "--workers", "0"]
    assert CliRunner().invoke(main, args).exit_code == 0
    edited(dump, b"Target label one", b"Target label two")
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    [report] = json.loads(result.stdout)["inputs"]
    assert (report["changed"], report["digest"]) == ("its bytes differ from those the earlier run read", sha256(dump))
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and "already ingested" in again.stderr

"""The service's item view over runs of any size (a MyriadLAMA run has millions of records):
items.jsonl is never held whole. Each run is read once into a `RunIndex`, per row of the common
shape (probes/report/items_shape.py): the byte offset of its record, which of the record's rows
it is, its facets as a code into a small table, and a 64-bit hash of its item id; about 30 bytes
a row, rebuilt when the file changes. Its probe set gets a `ProbeIndex` (item offsets by id hash,
the demonstration items the prompts are rebuilt from). `ItemCatalog` holds them for the runs
the service knows, marks the rows the runs disagree on, and answers a filter
(probes/report/items_filter.py `ItemQuery.matches`, applied to each distinct set of facets,
never twice to the same) with a page of rows read from their offsets.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import orjson

from ...kg.jsonl import jsonl_lines
from ...probes.report.items_data import (ProbeItems, ProbeSetChanged, changed_line, facet_values, locate_probe_set,
                                         names_of, needs_tests, prompt_maker, read_probe_items, with_names)
from ...probes.report.labels import Names
from ...probes.report.items_filter import ItemQuery, disagreeing
from ...probes.report.items_page import finite_json
from ...probes.report.items_shape import rows_of
from ...probes.report.loading import Run, load_run

log = logging.getLogger("factprobe.service")

def id_hash(text: str) -> int:
    """A stable signed 64-bit hash of an item id (array 'q'); a match is checked against the id."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


class StaleIndex(RuntimeError):
    """A file changed under its index between the check and the read: one line naming it (409)."""


def _stamp(path: Path) -> tuple[int, int, int]:
    # size, mtime and inode: an edit in place, a replacement renamed over it, a truncation
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


def _stale(path: Path) -> StaleIndex:
    return StaleIndex(f"{path} changed while it was read; ask again (it is indexed anew)")


@dataclass
class RunIndex:
    """One run's items.jsonl, row by row: where each row's record starts and what its facets are."""
    path: Path
    stamp: tuple[int, int, int]
    offsets: array = field(default_factory=lambda: array("q"))
    # which of the record's rows: 32 bits, as a distractor record may have any number of strategies
    parts: array = field(default_factory=lambda: array("I"))
    combos: array = field(default_factory=lambda: array("I"))  # index into `table`
    ids: array = field(default_factory=lambda: array("q"))
    table: list[tuple] = field(default_factory=list)  # (relation, bucket, strategy, setting, outcome)
    rejected: int = 0  # lines that are not item records

    @classmethod
    def build(cls, path: Path, method: str) -> RunIndex:
        index = cls(path, _stamp(path))
        codes: dict[tuple, int] = {}
        offset = 0
        with open(path, "rb") as stream:
            for line in stream:
                start, offset = offset, offset + len(line)
                if not line.strip():
                    continue
                try:
                    record = orjson.loads(line)
                    rows = rows_of(method, record) if isinstance(record, dict) and "id" in record else None
                except (orjson.JSONDecodeError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
                    rows = None
                if rows is None:
                    index.rejected += 1
                    continue
                hashed = id_hash(str(record["id"]))
                for part, row in enumerate(rows):
                    facets = (row.relation, row.bucket, row.strategy, row.setting, row.outcome)
                    code = codes.setdefault(facets, len(codes))
                    index.offsets.append(start)
                    index.parts.append(part)
                    index.combos.append(code)
                    index.ids.append(hashed)
        index.table = list(codes)
        return index

    def record(self, row: int) -> dict:
        """The record of `row`, read at its offset; StaleIndex when the line there is no longer it."""
        with open(self.path, "rb") as stream:
            stream.seek(self.offsets[row])
            line = stream.readline()
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise _stale(self.path) from None
        if not isinstance(record, dict) or "id" not in record or id_hash(str(record["id"])) != self.ids[row]:
            raise _stale(self.path)
        return record

    def rows_of_id(self, item_id: str) -> list[int]:
        """The rows of one item id: a scan of the hashes at C speed, no record read."""
        found, hashed, start = [], id_hash(item_id), 0
        while True:
            try:
                start = self.ids.index(hashed, start)
            except ValueError:
                return found
            found.append(start)
            start += 1


@dataclass
class ProbeIndex:
    """A probe set, by item: its test items' offsets by id hash, its demonstration items kept."""
    path: Path
    stamp: tuple[int, int, int]
    sha256: str = ""  # of the very bytes indexed
    ids: array = field(default_factory=lambda: array("q"))
    offsets: array = field(default_factory=lambda: array("q"))
    demonstrations: dict[str, list[dict]] = field(default_factory=dict)
    tests: dict[str, list[dict]] | None = None  # every test item, for a method that chains them

    @classmethod
    def build(cls, path: Path) -> ProbeIndex:
        index, offset, digest = cls(path, _stamp(path)), 0, hashlib.sha256()
        with open(path, "rb") as stream:
            for line in stream:
                digest.update(line)
                start, offset = offset, offset + len(line)
                try:
                    item = orjson.loads(line) if line.strip() else None
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(item, dict) or "id" not in item:
                    continue
                if item.get("split") == "demo":
                    index.demonstrations.setdefault(item.get("relation"), []).append(item)
                else:
                    index.ids.append(id_hash(str(item["id"])))
                    index.offsets.append(start)
        index.sha256 = digest.hexdigest()
        return index

    def item(self, item_id: str) -> dict | None:
        hashed, start = id_hash(item_id), 0
        with open(self.path, "rb") as stream:
            while True:
                try:
                    start = self.ids.index(hashed, start)
                except ValueError:
                    return None
                stream.seek(self.offsets[start])
                try:
                    item = orjson.loads(stream.readline())
                except orjson.JSONDecodeError:
                    raise _stale(self.path) from None
                if not isinstance(item, dict):
                    raise _stale(self.path)
                if str(item.get("id")) == item_id:
                    return item
                start += 1

    def items(self, method: str) -> ProbeItems:
        """What `prompt_maker` reads: the demonstrations, and every test item when the method chains them."""
        if needs_tests(method) and self.tests is None:
            self.tests = read_probe_items(self.path, set(), tests=True, sha256=self.sha256).tests
        return ProbeItems(self.path, {}, self.demonstrations, self.tests or {})


@dataclass(frozen=True)
class KnownRun:
    """A run folder the service knows: its name in the API, and where its probe set may be."""
    name: str
    folder: Path
    probes: tuple[Path, ...] = ()


@dataclass
class RunView:
    """A known run with its index and, per row, its facet code with the disagree bit."""
    known: KnownRun
    run: Run
    index: RunIndex
    probe_set: Path | None
    codes: array = field(default_factory=lambda: array("I"))
    counts: Counter = field(default_factory=Counter)
    prompt: Callable | None = None
    probe: ProbeIndex | None = None
    probe_note: str | None = None  # why a file of the probe set's name is not used
    watched: tuple = ()  # (path, stamp) of the probe set joined, or of the one refused
    names: Names | None = None  # where the probe set is not joined: what names its bare entity ids

    def probe_changed(self) -> bool:
        """Has the probe set this view joins (or refused) changed since?"""
        for path, stamp in self.watched:
            try:
                if _stamp(path) != stamp:
                    return True
            except OSError:
                return True
        return False

    def facets(self, code: int) -> dict:
        relation, bucket, strategy, setting, outcome = self.index.table[code >> 1]
        return {"run": self.known.name, "method": self.run.method, "relation": relation, "bucket": bucket,
                "strategy": strategy, "setting": setting, "outcome": outcome, "disagree": bool(code & 1)}

    def row(self, position: int) -> dict:
        """The row at `position`, read from its record's offset, its probe item and prompt joined."""
        record = self.index.record(position)
        item = self.probe.item(str(record["id"])) if self.probe is not None else None
        row = rows_of(self.run.method, record, item, self.prompt)[self.index.parts[position]]
        if self.probe is None and self.names is not None:
            row = with_names(row, self.names)  # as the report names them
        return finite_json(row.as_dict(self.known.name, self.run.method, bool(self.codes[position] & 1)))

    def entry(self) -> dict:
        return {"run": self.known.name, "label": f"{self.known.name}: {self.run.name}", "name": self.run.name,
                "model": self.run.model, "method": self.run.method, "folder": str(self.known.folder),
                "probes": self.run.probe_set, "probe_set": None if self.probe_set is None else str(self.probe_set),
                "probe_note": self.probe_note, "items": self.run.item_count, "rows": len(self.index.offsets), "rejected": self.index.rejected}


class ItemCatalog:
    """The item view over the runs `known()` lists (asked again at each request: a finished eval
    job joins), each indexed once and again only when its items.jsonl changes."""

    def __init__(self, known: Callable[[], Sequence[KnownRun]]) -> None:
        self.known = known
        self.lock = threading.Lock()
        self.indexes: dict[Path, RunIndex] = {}
        self.probes: dict[Path, ProbeIndex] = {}
        self.views: tuple[tuple, list[RunView]] = ((), [])

    def warm(self) -> None:
        """Index the known runs in a background thread (a run of millions of records takes a minute)."""
        def index() -> None:
            try:
                self.current()
            except Exception:  # noqa: BLE001  (a request indexes again and answers with the error)
                log.exception("indexing the item view's runs failed")
        threading.Thread(target=index, name="item-index", daemon=True).start()

    def current(self) -> list[RunView]:
        with self.lock:
            found = []
            for known in self.known():
                try:
                    run = load_run(known.folder, items=False)
                    index = self._index(known.folder / "items.jsonl", run.method)
                except (OSError, ValueError):
                    continue  # a folder half written or removed: not a run to show now
                found.append((known, run, index))
            found.sort(key=lambda k: (k[1].model, k[1].method, k[1].probes, k[0].name))
            key = tuple((k.name, str(k.folder), i.stamp) for k, _, i in found)
            if key != self.views[0] or any(view.probe_changed() for view in self.views[1]):
                self.views = (key, self._views(found))
            return self.views[1]

    def _index(self, path: Path, method: str) -> RunIndex:
        held = self.indexes.get(path)
        if held is None or held.stamp != _stamp(path):
            held = self.indexes[path] = RunIndex.build(path, method)
        return held

    def _probe(self, path: Path | None) -> ProbeIndex | None:
        """The probe set's index, built again when the file changed since (size, mtime, inode)."""
        if path is None:
            return None
        held = self.probes.get(path)
        if held is None or held.stamp != _stamp(path):
            held = self.probes[path] = ProbeIndex.build(path)
        return held

    def _views(self, found: list[tuple[KnownRun, Run, RunIndex]]) -> list[RunView]:
        views = []
        for known, run, index in found:
            located = locate_probe_set(known.folder, run.probes, run.probes_sha256, known.probes)
            note, prompt = located.note, None
            try:
                probe = self._probe(located.path)
                if probe is not None and run.probes_sha256 and probe.sha256 != run.probes_sha256:
                    raise ProbeSetChanged(changed_line(probe.path, probe.sha256, run.probes_sha256))
                prompt = prompt_maker(run.method, run.config, probe.items(run.method)) if probe else None
                watched = tuple((path, self.probes[path].stamp if path in self.probes else _stamp(path))
                                for path in (located.path or located.other,) if path is not None)
            except ProbeSetChanged as changed:  # edited between the search and the index: the records alone
                probe, prompt, note = None, None, str(changed)
                watched = ((located.path, self.probes[located.path].stamp),)
            except OSError:  # removed between the search and the index: the records alone
                probe, watched = None, ()
            views.append(RunView(known, run, index, None if probe is None else probe.path, prompt=prompt, probe=probe,
                                 probe_note=note, watched=watched))
        if any(view.probe is None for view in views):
            # Read only when some run's probe set is missing: every run's records, streamed.
            names = names_of([v.probe.path for v in views if v.probe is not None],
                             [_records(v.index.path) for v in views])
            for view in views:
                view.names = names if view.probe is None else None
        _mark_disagreements(views)
        return views

    def forget(self) -> None:
        """Drop every index: after a StaleIndex, the next request indexes each file anew."""
        with self.lock:
            self.indexes.clear()
            self.probes.clear()
            self.views = ((), [])

    def page(self, query: ItemQuery, offset: int, limit: int) -> tuple[int, list[dict], list[RunView]]:
        """(rows matching, the rows offset..offset+limit in run order, the runs)."""
        try:
            return self._page(query, offset, limit)
        except StaleIndex:
            self.forget()
            raise

    def _page(self, query: ItemQuery, offset: int, limit: int) -> tuple[int, list[dict], list[RunView]]:
        views = self.current()
        accepted = [{code for code in view.counts if query.matches(view.facets(code))} for view in views]
        total = sum(view.counts[c] for view, codes in zip(views, accepted) for c in codes)
        rows, skip = [], offset
        for view, codes in zip(views, accepted):
            here = sum(view.counts[c] for c in codes)
            if skip >= here:
                skip -= here
                continue
            for position, code in enumerate(view.codes):
                if code in codes:
                    if skip:
                        skip -= 1
                        continue
                    rows.append(view.row(position))
                    if len(rows) == limit:
                        return total, rows, views
        return total, rows, views

    def same(self, item_id: str) -> list[dict]:
        """Every run's rows of one item, in run order."""
        rows = []
        try:
            for view in self.current():
                rows += [row for row in map(view.row, view.index.rows_of_id(item_id)) if row["id"] == item_id]
        except StaleIndex:
            self.forget()
            raise
        return rows


def facets_of(views: Sequence[RunView]) -> dict[str, list[str]]:
    """Per facet, the values the runs' rows have, in the order the page's filters list them."""
    return facet_values((view.facets(code) for view in views for code in view.counts), [v.known.name for v in views])

def _mark_disagreements(views: list[RunView]) -> None:
    """Each row's code with its disagree bit: runs over one probe set (the only ones that share
    item ids) whose rows of a key (item id, setting or strategy) have different verdicts."""
    groups: dict[str, list[RunView]] = {}
    for view in views:
        groups.setdefault(view.run.probes_sha256 or view.run.probes, []).append(view)
    for group in groups.values():
        # the report's key (item id, setting or strategy) as one int: the id's hash, then the part's
        # number in 32 bits (a record may have tens of thousands of strategies)
        parts: dict[tuple, int] = {}
        keys = [[parts.setdefault(facets[2:4], len(parts)) for facets in view.index.table] for view in group]
        split = disagreeing(((hashed << 32) | part[combo], view.index.table[combo][4])
                            for view, part in zip(group, keys)
                            for hashed, combo in zip(view.index.ids, view.index.combos)) if len(group) > 1 else set()
        for view, part in zip(group, keys):
            index = view.index
            view.codes = array("I", (combo << 1 | (((hashed << 32) | part[combo]) in split)
                                     for hashed, combo in zip(index.ids, index.combos))) if split else \
                array("I", (combo << 1 for combo in index.combos))
            view.counts = Counter(view.codes)


def _records(path: Path):
    """The JSON objects of a run's items.jsonl, one line at a time (kg/jsonl.py's reader, which
    takes a first line's byte order mark off); a line that is none is passed over."""
    try:
        yield from (line.value for line in jsonl_lines(path) if line.error is None and isinstance(line.value, dict))
    except OSError:
        return

"""One writer per output: `hold_output` holds an output's lock while a command writes it, so a
second factprobe process writing the same output (two evals into one --out would write every
item twice) is refused in one line naming the holder's pid. The lock is an flock the kernel lets
go of when its process ends, `kill -9` included, so none is left stuck; its file is FOLDER/
.factprobe.lock for a folder output, FILE.lock beside a file output (a probe set, a store).
"""

from __future__ import annotations

import fcntl
import os
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from .outputs import LOCK_NAME, TEMP, OutputError, PathLike, refuse_hard_link, refuse_link


class OutputBusy(OutputError):
    """Another process writes the output now (it holds the output's lock)."""


_held: dict[str, list] = {}  # lock path -> [descriptor, holds]: this process's locks, re-entrant
_held_guard = threading.Lock()


def lock_path(output: PathLike, *, folder: bool) -> Path:
    """Where the lock of `output` lives: FOLDER/.factprobe.lock, or FILE.lock beside the file."""
    output = Path(output)
    return output / LOCK_NAME if folder else output.with_name(output.name + ".lock")


@contextmanager
def hold_output(output: PathLike, *, folder: bool, flag: str = "--out", beside: Iterable[str] = ()) -> Iterator[None]:
    """Be the one writer of `output` (a folder, or a file) for the block: an exclusive
    flock on its lock file (`lock_path`), which the kernel lets go of when the process ends,
    `kill -9` included, so a lock is never left stuck. OutputBusy, one line naming the output
    and the holder's pid, when another process holds it. Re-entrant within a process (the
    pipeline holds its folder while each step holds its own output). Holding it, the
    temporaries a killed writer left (`temp_name`) are removed: at the top of the folder, or
    beside the file for its name and the `beside` names (a sidecar). A folder, or folders
    above a file, made for the lock and left empty are removed again at the end, so a refused
    command leaves nothing. An output that cannot have a lock (a file where a folder is named,
    a file among the folders above) is left to the command's own claim to refuse."""
    output = Path(output)
    if folder and os.path.lexists(output) and not output.is_dir():
        yield
        return
    lock = lock_path(output, folder=folder)
    try:
        made = _make_folders(lock.parent)
    except OSError:
        yield
        return
    key = os.path.realpath(lock)
    with _held_guard:
        mine = _held.get(key)
        if mine is not None:
            mine[1] += 1
    if mine is not None:
        try:
            yield
        finally:
            with _held_guard:
                mine[1] -= 1
        return
    try:
        fd = _acquire(lock, output, flag)
    except BaseException:
        _remove_empty(made)
        raise
    with _held_guard:
        _held[key] = [fd, 1]
    try:
        _remove_temps(output if folder else output.parent, None if folder else [output.name, *beside])
        yield
    finally:
        with _held_guard:
            _held[key][1] -= 1
            last = _held[key][1] == 0
            if last:
                del _held[key]
        if last:
            _release(lock, fd)
            _remove_empty(made)


def _acquire(lock: Path, output: Path, flag: str) -> int:
    """The lock file's descriptor, flock'ed; the file names our pid. A lock file another
    writer removed as it let go (its last step, `_release`) is opened again: the descriptor
    must be the file at the name."""
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as error:
            refuse_link(lock)
            raise OutputError(f"{lock}: cannot write ({error.strerror})") from None
        try:
            refuse_hard_link(lock, fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                raise OutputBusy(f"{output}: another factprobe process ({holder}) writes it: wait until it ends, "
                                 f"or choose another {flag}") from None
            if _same_file(fd, lock):
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"pid {os.getpid()}\n".encode("ascii"), 0)
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the holder removed it as we opened it: the lock is the file now at the name


def _holder(fd: int) -> str:
    """'pid N' from the lock file; the holder writes it just after taking the lock, so wait a
    moment for it."""
    for _ in range(20):
        text = os.pread(fd, 64, 0).decode("ascii", "replace")
        match = re.match(r"pid (\d+)\n", text)
        if match:
            return f"pid {match.group(1)}"
        time.sleep(0.01)
    return "pid unknown"


def _same_file(fd: int, path: Path) -> bool:
    try:
        held, named = os.fstat(fd), os.lstat(path)
    except FileNotFoundError:
        return False
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def _release(lock: Path, fd: int) -> None:
    """Remove the lock file, then let go: a writer that opened it before the removal finds it
    gone once it holds it, and opens the one at the name (`_acquire`)."""
    try:
        if _same_file(fd, lock):
            lock.unlink()
    except OSError:
        pass  # a read-only folder keeps its lock file: unlocked, harmless
    os.close(fd)


def _make_folders(folder: Path) -> list[Path]:
    """Make `folder` and any missing above it; those made, innermost first."""
    made = []
    path = folder
    while not os.path.lexists(path):
        made.append(path)
        path = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    return made


def _remove_empty(folders: list[Path]) -> None:
    for made in folders:
        try:
            made.rmdir()
        except OSError:
            return  # something was written: the folder stays, and those above it


def _remove_temps(folder: Path, names: list[str] | None) -> None:
    """The temporaries a killed writer left in `folder` (all of them, or those of `names`),
    and the fixed NAME.partial of older versions for `names`; called holding the lock, so no
    writer is using one. Links are removed themselves, never followed; folders stay."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        match = TEMP.fullmatch(entry)
        ours = match is not None and (names is None or match["name"] in names)
        older = names is not None and entry.endswith(".partial") and entry.removesuffix(".partial") in names
        path = os.path.join(folder, entry)
        if (ours or older) and (os.path.islink(path) or not os.path.isdir(path)):
            try:
                os.unlink(path)
            except OSError:
                pass


def _forget_in_child() -> None:
    """A forked child (an ingest's parsing worker) does not hold its parent's locks: an flock
    lasts while any process keeps its descriptor open, so a worker outliving its killed parent
    by the moment it takes to notice would keep the output locked against the rerun. Closing the
    child's copy leaves the parent's lock as it is."""
    for fd, _ in _held.values():
        try:
            os.close(fd)
        except OSError:
            pass
    _held.clear()


os.register_at_fork(after_in_child=_forget_in_child)

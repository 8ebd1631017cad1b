"""Where a command may write: never over a file it did not write, never through a link.

Every command that writes claims its output first (`claim_file`, `claim_folder`):
- a symbolic link at the output file, or at a name the command writes inside its output
  folder, is refused always: factprobe never writes through one (tar's safe extraction);
- an output that is one of the command's own inputs (the same file) is refused always;
- an output that exists and is not the command's own (its `ours` test reads the file's own
  format marker: a probe set's sidecar, a store's tables, a run folder's run.json) is refused
  unless --overwrite, in one line naming it and saying "pass --overwrite to replace it".
The command's own output is resumed or rewritten as before. `replace_file` and `open_append`
write without following a link at the last step (O_NOFOLLOW, a new temporary renamed over).

A write by rename (`replacing`) replaces the name only: another hard link to the old file keeps
its bytes. A write in place (appending a run's items.jsonl a batch at a time, cutting off a torn
last line, SQLite adding to a store) changes the file under every one of its names, so such a
file with another name is refused always (`refuse_hard_link`): a claim refuses it when it names
the file `in_place`, and every in-place open here checks the descriptor it opened before writing
a byte. Temporaries are unique per writer (`temp_name`); `staging` renames several in together
or removes them all; one writer per output is kg/output_lock.py. The lowest layer, so that every
layer can claim and write the same way.
"""

from __future__ import annotations

import enum
import errno
import os
import re
import secrets
import sqlite3
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator, TextIO

OVERWRITE = "pass --overwrite to replace it"


class OutputError(ValueError):
    """An output a command may not write, in one line naming it; the CLI exits 2."""


class Claim(enum.Enum):
    NEW = "new"  # nothing there yet
    OURS = "ours"  # the command's own output: resume it or rewrite it as before
    REPLACE = "replace"  # not the command's own, and --overwrite: the caller replaces it


PathLike = str | os.PathLike


def claim_file(path: PathLike, *, overwrite: bool = False, inputs: Iterable[PathLike] = (),
               ours: Callable[[Path], bool] = lambda _: False, what: str = "this command's output",
               beside: Iterable[PathLike] = (), flag: str = "--out", in_place: bool = False) -> Claim:
    """May a command write the file `path`? `inputs`: the files it reads (never its output);
    `ours(path)`: whether an existing file is this command's own kind; `what`: that kind, as
    the refusal names it ("a factprobe probe set"); `beside`: files written next to it (a
    sidecar, SQLite's -wal), checked as `path` is; `flag`: the option naming `path`, for the
    refusal; `in_place`: the command writes into the existing file (appends, SQLite), so a hard
    link there is refused. OutputError when it may not."""
    path, inputs = Path(path), list(inputs)
    for name in (path, *map(Path, beside)):
        refuse_link(name)
        refuse_input(name, inputs)
        if in_place:
            refuse_hard_link(name)
    if not os.path.lexists(path):
        return Claim.NEW
    if path.is_dir():
        raise OutputError(f"{path} is a folder; this output is a file: name a file")
    if ours(path):
        return Claim.OURS
    if overwrite:
        return Claim.REPLACE
    raise OutputError(f"{path} exists and is not {what}: {OVERWRITE}, or another {flag}")


def claim_folder(folder: PathLike, *, overwrite: bool = False, inputs: Iterable[PathLike] = (),
                 ours: Callable[[Path], bool] = lambda _: False, what: str = "this command's output",
                 writes: Iterable[str] = (), flag: str = "--out", in_place: Iterable[str] = ()) -> Claim:
    """May a command write into `folder`? It may when the folder is missing or empty, or holds
    the command's own output (`ours(folder)`), or with `overwrite`. `writes`: the names it
    writes inside (a link at one is refused, and so is an input that is one of them or the
    folder itself); `in_place`: those of them it writes into as they are (a hard link there is
    refused). The folder as named may itself be a link: the user chose it."""
    folder = Path(folder)
    inputs = [Path(i) for i in inputs]
    if os.path.lexists(folder) and not folder.is_dir():
        raise OutputError(f"{folder} is a file; this output is a folder: name a folder")
    refuse_input(folder, inputs)
    for name in writes:
        target = inside(folder, name)
        refuse_input(target, inputs)
    for name in in_place:
        refuse_hard_link(inside(folder, name))
    if not folder.exists() or not listing(folder):
        return Claim.NEW
    if ours(folder):
        return Claim.OURS
    if overwrite:
        return Claim.REPLACE
    held = listing(folder)
    shown = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
    raise OutputError(f"{folder} holds files that are not {what} ({shown}): {OVERWRITE}, or another {flag}")


def listing(folder: PathLike) -> list[str]:
    """The names in `folder`, sorted, but the lock and the temporaries of a writer
    (`hold_output`, `replacing`): they say nothing of whose output the folder is."""
    return sorted(name for name in os.listdir(folder) if name != LOCK_NAME and not TEMP.fullmatch(name))


def inside(folder: PathLike, name: str) -> Path:
    """`folder/name`, refusing a link at any step below `folder` (the name may have folders)."""
    path = Path(folder)
    if Path(name).is_absolute() or ".." in Path(name).parts:
        raise OutputError(f"{name}: not a name inside {folder}")
    for part in Path(name).parts:
        path = path / part
        refuse_link(path)
    return path


def refuse_link(path: PathLike) -> None:
    """OutputError when `path` is a symbolic link, wherever it points."""
    if os.path.islink(path):
        raise OutputError(f"{path} is a symbolic link (to {os.readlink(path)}); factprobe never writes through "
                          "one: remove it, or choose another output")


def refuse_hard_link(path: PathLike, fd: int | None = None) -> None:
    """OutputError when the file at `path` (open as `fd`, when given: the file actually opened)
    has another name, a hard link: written in place, it would change under that name too (a file
    of ours elsewhere, or any file the user can write). Nothing there: no error."""
    try:
        info = os.fstat(fd) if fd is not None else os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        raise OutputError(f"{path} is a hard link (one file with {info.st_nlink} names): factprobe writes it in "
                          "place and never into a file linked elsewhere: remove it, or choose another output")


def refuse_input(path: PathLike, inputs: Iterable[PathLike]) -> None:
    """OutputError when `path` is (the same file as) one of `inputs`."""
    for given in inputs:
        if given is not None and same_file(path, given):
            also = "" if os.path.abspath(path) == os.path.abspath(given) else f" (as {given})"
            raise OutputError(f"{path} is this command's own input{also}: write the output elsewhere")


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether both exist and are one file (one inode, whatever the spelling or link)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def remove(path: PathLike, *, beside: Iterable[str] = ()) -> None:
    """Remove a file a claim said to replace, and the files named `path` + each suffix of
    `beside` (SQLite's "-wal", "-shm"); a link is removed itself, never its target."""
    for suffix in ("", *beside):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


# -- writing without following a link ---------------------------------------------------------


def replace_file(path: PathLike, data: bytes | str) -> None:
    """Write `path` whole or not at all, never through a link (`replacing`)."""
    with replacing(path) as stream:
        stream.write(data.encode("utf-8") if isinstance(data, str) else data)


@contextmanager
def replacing(path: PathLike) -> Iterator[BinaryIO]:
    """A binary stream whose bytes become `path` when the block ends without an error: a
    temporary beside it, created new (O_EXCL | O_NOFOLLOW), renamed over `path` (a rename
    replaces a link, never its target); an error leaves `path` as it was."""
    with staging() as stage:
        yield stage.open(path)


class Staging:
    """Files written whole, together: `open(path)` gives a binary stream into a temporary of
    this writer's own beside `path` (`temp_name`, created O_EXCL | O_NOFOLLOW); `staging()`
    renames them all over their paths when its block ends without an error, in the order
    opened, and removes them all on an error, so that the paths keep what they held (a
    probe set and its sidecar: an earlier complete pair stays when the disk fills)."""

    def __init__(self) -> None:
        self.files: list[tuple[Path, Path, BinaryIO]] = []

    def open(self, path: PathLike) -> BinaryIO:
        path = Path(path)
        temp = temp_name(path)
        stream = _open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, "wb")
        self.files.append((path, temp, stream))
        return stream


@contextmanager
def staging() -> Iterator[Staging]:
    """A `Staging` whose files become their paths when the block ends without an error (see
    there). A full disk (ENOSPC, EDQUOT) or a file-size limit (EFBIG) while writing one is an
    OSError naming the path it was to become, the temporaries removed."""
    stage = Staging()
    current: Path | None = None
    try:
        yield stage
        for current, _, stream in stage.files:
            stream.close()  # the last buffered bytes: a full disk can refuse them here
        current = None
        for path, temp, _ in stage.files:
            os.replace(temp, path)
    except BaseException as error:
        for _, temp, stream in stage.files:
            try:
                stream.close()
            except OSError:
                pass  # the disk that refused the bytes refuses their flush: the temporary goes anyway
            temp.unlink(missing_ok=True)
        if isinstance(error, OSError) and error.errno in DISK_FULL and error.filename is None:
            where = current or (stage.files[-1][0] if stage.files else None)
            raise OSError(error.errno, f"cannot write ({os.strerror(error.errno)}); nothing of it kept",
                          str(where)) from None
        raise


# What a full disk, a full quota and a file-size limit (ulimit -f) give a write: treated alike.
DISK_FULL = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}

# The lock of a folder output, inside it (kg/output_lock.py; a file output's is NAME.lock beside it).
LOCK_NAME = ".factprobe.lock"

# A writer's temporary: NAME.PID-RANDOM.partial, unique per writer (two builds never share one).
TEMP = re.compile(r"(?P<name>.+)\.\d+-[0-9a-f]{8}\.partial")


def temp_name(path: PathLike) -> Path:
    """A temporary name beside `path` that no other writer uses: its pid and 32 random bits."""
    path = Path(path)
    return path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}.partial")


def open_new(path: PathLike) -> TextIO:
    """`path` created new for writing text (UTF-8); OutputError when something is there, a link
    included. Remove what a claim said to replace first."""
    return _open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, "w")


# Every open below writes in place: never through a symbolic link (O_NOFOLLOW), never into a hard
# link (the descriptor's link count, read before a byte is written or cut).


def open_append(path: PathLike) -> TextIO:
    """`path` opened to append text (UTF-8; created when missing), never through a link."""
    return _open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, "a")


def open_update(path: PathLike) -> TextIO:
    """`path` opened to read and append text (UTF-8; created when missing), never through a
    link: a lock file that names its holder."""
    return _open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, "a+")


def open_truncate(path: PathLike) -> TextIO:
    """`path` emptied (created when missing) for writing text (UTF-8), never through a link."""
    return _open(path, os.O_WRONLY | os.O_CREAT, "w", size=0)


def truncate(path: PathLike, size: int) -> None:
    """Cut the existing file `path` to `size` bytes (a torn last line a killed write left),
    never through a link."""
    _open(path, os.O_WRONLY, "wb", size=size).close()


def _open(path: PathLike, flags: int, mode: str, *, size: int | None = None):
    """The file opened with `flags` as a stream of `mode`, cut to `size` bytes when given
    (after the checks: O_TRUNC would cut before them)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666)
    except FileExistsError:
        refuse_link(path)
        raise OutputError(f"{path} appeared while this command ran: {OVERWRITE}") from None
    except OSError as error:
        refuse_link(path)  # ELOOP: the last step is a link
        raise OutputError(f"{path}: cannot write ({error.strerror})") from None
    try:
        refuse_hard_link(path, fd)
        if size is not None:
            os.ftruncate(fd, size)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, mode) if "b" in mode else os.fdopen(fd, mode, encoding="utf-8")


# -- what a file is, by its own format -----------------------------------------------------------


def sqlite_tables(path: PathLike) -> set[str] | None:
    """The table names of the SQLite database at `path`, read without changing it; None when it
    is not one (an empty file is one with no tables)."""
    path = Path(path)
    try:
        with open(path, "rb") as stream:
            head = stream.read(16)
    except OSError:
        return None
    if head and head != b"SQLite format 3\x00":
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            conn.close()
    except sqlite3.Error:
        return None


# The tables every factprobe graph store has from its creation on (kg/store.py's schema).
STORE_TABLES = {"meta", "entities", "facts", "ingests"}
SQLITE_BESIDE = ("-wal", "-shm", "-journal")


def is_store(path: PathLike) -> bool:
    """A factprobe graph store, or a database with no tables yet (an empty file included)."""
    tables = sqlite_tables(path)
    return tables is not None and (not tables or STORE_TABLES <= tables)


def claim_store(path: PathLike, *, overwrite: bool = False, inputs: Iterable[PathLike] = ()) -> Claim:
    """Claim a graph store to write (`ingest`): a factprobe store is added to; anything else
    is refused, or removed first with `overwrite` (so that no foreign database gets our tables)."""
    beside = [f"{path}{suffix}" for suffix in SQLITE_BESIDE]
    claim = claim_file(path, overwrite=overwrite, inputs=inputs, ours=is_store, what="a factprobe graph store",
                       beside=beside, flag="--store", in_place=True)  # SQLite writes into the file
    if claim is Claim.REPLACE:
        remove(path, beside=SQLITE_BESIDE)
    return claim

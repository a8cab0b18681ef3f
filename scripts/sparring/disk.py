"""The one way sparring writes a file, makes a folder and takes a lock.

- **Whole or not at all.** `write` fills a new temporary file beside the target (created
  exclusively, never through a link) and renames it over the target: a reader sees the old
  file or the new one, never half. `stage` does the first half, for a caller that renames
  later (revert moves what it staged in, one file after another). `create` makes a file
  that must not exist yet.
- **Never through a link.** With `under`, every folder from `under` down to the file is
  opened without following a link (an `openat` walk): a folder someone swapped for a link
  (a sandbox that lets Codex write the project lets it do that inside `.sparring/`) ends the
  write with an OSError before anything is written. The last component is never followed
  either: the temporary file is made with O_EXCL and renamed over whatever stands there.
- **Private.** Folders are made 0700 and files 0600 unless the caller says otherwise
  (`mode`; `exact` sets it whatever the umask).
- **Logs** (`append`) are opened the same way: in a folder reached without a link, never a
  link or a FIFO themselves.
- **Locks** are files opened without following a link and held with `flock`; one that is
  not a regular file (a folder, a FIFO, a link put in its place) is refused (`LockDamaged`),
  never waited on nor created through.

No fsync, decided once for every writer: the rename keeps a file whole when sparring's own
process dies, which is the failure a debate meets (a killed runner, a closed laptop lid,
Ctrl-C); ext4, APFS and XFS also order a rename over an existing file after its data. What a
power loss could still lose is a step of a debate, never a file of the user's (revert stages
the user's files through here too, beside the ones they replace). Syncing every write would
cost the guard's first snapshot one sync per file copied (thousands).

Standard library only: install.py's parts write through here too.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Callable
from types import TracebackType
from typing import BinaryIO, TypeVar

T = TypeVar("T")
P = TypeVar("P", bound="str | os.PathLike[str]")
Fill = Callable[[BinaryIO], T]
Where = str | os.PathLike[str]

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class LockDamaged(OSError):
    """What stands where a lock file goes is not a regular file."""


class FolderSwapped(OSError):
    """A folder on the way below `under` is a link, or no folder (swapped while a Codex
    turn ran, say): nothing is written through it. `filename` names it."""


def write(path: Where, data: bytes | Fill[T], *, mode: int = PRIVATE_FILE,
          exact: bool = True, under: Where | None = None) -> T | None:
    """Replace the file at `path` with `data` (or what `fill(out)` writes: its result is
    returned), whole. `exact`: the file gets `mode` whatever the umask."""
    staged = stage(path, data, mode=mode, exact=exact, under=under)
    try:
        staged.commit()
    finally:
        staged.close()
    result: T | None = staged.result  # type: ignore[assignment]  # what `fill` returned
    return result


def create(path: Where, data: bytes, *, mode: int = PRIVATE_FILE,
           under: Where | None = None) -> None:
    """A new file at `path` holding `data`: FileExistsError when anything stands there (a
    link included, which is never followed)."""
    parent, name = open_parent(path, under=under)
    try:
        create_in(parent, name, data, mode=mode)
    finally:
        os.close(parent)


def create_in(parent: int, name: str, data: bytes, *, mode: int = PRIVATE_FILE) -> None:
    """`create`, in the folder open as `parent` (a caller that walked to it itself)."""
    fd = os.open(name, _NEW, mode, dir_fd=parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    except BaseException:
        _unlink(name, parent)
        raise


def write_in(parent: int, name: str, data: bytes, *, mode: int = PRIVATE_FILE,
             exact: bool = False) -> None:
    """`write`, in the folder open as `parent` (which stays open); `mode` through the umask
    unless `exact`."""
    staged = _stage_in(os.dup(parent), name, data, mode, exact)
    try:
        staged.commit()
    finally:
        staged.close()


class Staged:
    """A temporary file beside its target, filled, to be renamed over it (`commit`) or
    removed (`discard`); `close` releases the folder it was made in."""

    def __init__(self, parent: int, name: str, tmp: str, result: object) -> None:
        self.parent, self.name, self.tmp, self.result = parent, name, tmp, result

    def commit(self, name: str | None = None) -> None:
        try:
            os.replace(self.tmp, name or self.name, src_dir_fd=self.parent,
                       dst_dir_fd=self.parent)
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        _unlink(self.tmp, self.parent)

    def close(self) -> None:
        if self.parent >= 0:
            os.close(self.parent)
            self.parent = -1


def stage(path: Where, data: bytes | Fill[T], *, mode: int = PRIVATE_FILE, exact: bool = True,
          under: Where | None = None) -> Staged:
    """The first half of `write`: the filled temporary file, not yet in place."""
    parent, name = open_parent(path, under=under)
    return _stage_in(parent, name, data, mode, exact)


def _stage_in(parent: int, name: str, data: bytes | Fill[T], mode: int, exact: bool
              ) -> Staged:
    """Staged in the folder open as `parent`, which the Staged now owns (closed with it)."""
    try:
        tmp = f".{name}.{os.urandom(6).hex()}.tmp"
        fd = os.open(tmp, _NEW, mode, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as out:
                result = data(out) if callable(data) else out.write(data)
                if exact:
                    os.fchmod(out.fileno(), mode)
        except BaseException:
            _unlink(tmp, parent)
            raise
    except BaseException:
        os.close(parent)
        raise
    return Staged(parent, name, tmp, None if not callable(data) else result)


def stage_link(path: Where, target: str, *, under: Where | None = None) -> Staged:
    """A symbolic link to `target`, made beside `path` to be renamed over it (`commit`)."""
    parent, name = open_parent(path, under=under)
    tmp = f".{name}.{os.urandom(6).hex()}.tmp"
    try:
        os.symlink(target, tmp, dir_fd=parent)
    except BaseException:
        os.close(parent)
        raise
    return Staged(parent, name, tmp, None)


def folders(path: P, *, under: Where | None = None, mode: int = PRIVATE_DIR) -> P:
    """`path` and its missing parents (below `under`, reached without a link) as folders of
    `mode`; a folder another writer made meanwhile is taken as it is. Returns `path`."""
    os.close(open_folder(path, under=under, mode=mode))
    return path


def open_folder(path: Where, *, under: Where | None, mode: int = PRIVATE_DIR) -> int:
    """`folders`, and the folder's fd: for a caller that then works in it by name (`dir_fd`)
    and must not be sent elsewhere meanwhile (below `under`, FolderSwapped when a folder on
    the way is a link)."""
    return _walk(os.fspath(path), under, make=mode)


def append(path: Where, *, under: Where | None) -> int:
    """The fd of the file at `path`, opened to append to (made PRIVATE_FILE if missing): a
    process's log. Its folder is reached from `under` down without a link (FolderSwapped),
    and the file is never a link nor anything but a regular file with no other name
    (OSError): a FIFO planted there is neither waited on nor written to, nor a file outside
    the project through a hard link."""
    parent, name = open_parent(path, under=under)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_NONBLOCK | os.O_CLOEXEC, PRIVATE_FILE, dir_fd=parent)
    finally:
        os.close(parent)
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode) or found.st_nlink > 1:  # a hard link: a file elsewhere
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file of its own", os.fspath(path))
    os.set_blocking(fd, True)
    return fd


def lstat_in(parent: int, name: str) -> os.stat_result | None:
    """What stands at `name` in the folder open as `parent`, never followed; None: nothing."""
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None


class locked:  # used as `with disk.locked(...)`, as a context manager
    """Hold the lock file at `path` (made if missing, 0600; never through a link). Without
    `wait`, BlockingIOError when someone holds it; LockDamaged when what stands there is not
    a regular file."""

    def __init__(self, path: Where, *, wait: bool = True, under: Where | None = None) -> None:
        self.path, self.wait, self.under, self.fd = path, wait, under, -1

    def __enter__(self) -> None:
        parent, name = open_parent(self.path, under=self.under)
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                         | os.O_NONBLOCK, PRIVATE_FILE, dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                raise LockDamaged(exc.errno, "not a regular file", os.fspath(self.path)
                                  ) from None
            raise
        finally:
            os.close(parent)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise LockDamaged(errno.EISDIR, "not a regular file", os.fspath(self.path))
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if self.wait else fcntl.LOCK_NB))
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 trace: TracebackType | None) -> None:
        os.close(self.fd)
        self.fd = -1


# -- the walk --------------------------------------------------------------------------------


def _unlink(name: str, parent: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=parent)


def open_parent(path: Where, *, under: Where | None) -> tuple[int, str]:
    """(fd of the file's folder, the file's name): the folder opened without following a
    link from `under` down (or as the path names it, without `under`)."""
    folder, name = os.path.split(os.fspath(path))
    return _walk(folder or os.curdir, under), name


def _walk(folder: str, under: Where | None, make: int | None = None) -> int:
    """The folder's fd. Below `under`, each part is opened with O_NOFOLLOW (a link there is
    an OSError: ELOOP, or ENOTDIR); missing parts are made with mode `make`, if given."""
    parts: list[str] = []
    if under is not None:
        top = os.fspath(under)
        below = os.path.relpath(folder, top)
        if below == os.pardir or below.startswith(os.pardir + os.sep):
            raise ValueError(f"{folder} is not below {top}")
        parts = [] if below == os.curdir else below.split(os.sep)
    else:
        top = folder
        if make is not None:
            top, parts = _existing(folder)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    at = top
    for part in parts:  # _step closes the fd it is given, whatever happens
        at = os.path.join(at, part)
        try:
            fd = _step(fd, part, make)
        except OSError as exc:
            if under is not None and exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise FolderSwapped(exc.errno, "a link or no folder", at) from None
            raise
    return fd


def _existing(folder: str) -> tuple[str, list[str]]:
    """The nearest folder that exists above (or at) `folder`, and the parts below it."""
    probe, missing = folder, []
    while not os.path.isdir(probe) and os.path.dirname(probe) != probe:
        probe, name = os.path.split(probe)
        missing.append(name)
    return probe or os.curdir, list(reversed(missing))


def _step(fd: int, part: str, make: int | None) -> int:
    """The folder `part` of the folder `fd` (which is closed), made if missing and asked."""
    try:
        try:
            found = os.open(part, _FOLDER, dir_fd=fd)
        except FileNotFoundError:
            if make is None:
                raise
            try:  # noqa: SIM105 - as _unlink's
                os.mkdir(part, make, dir_fd=fd)
            except FileExistsError:  # another writer made it meanwhile
                pass
            found = os.open(part, _FOLDER, dir_fd=fd)
    finally:
        os.close(fd)
    return found

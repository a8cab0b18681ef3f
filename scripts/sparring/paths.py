"""The one way in for files an argument names: inside the project, no link, opened once.

The launcher is approved with any arguments, and the arguments Claude types are steered by
text it reads (a cloned repository's files, Codex's answers). So a path from an argument, or
from the project's sparring.yaml, is treated as a web server treats a URL path:

- it must lie inside the project (its root, the runner's own state under `.sparring/`
  included); `..` and absolute paths that leave it are refused (`path_outside_project`);
- no symbolic link is followed below the root: every folder on the way is opened with
  O_NOFOLLOW from the one before, so a link anywhere along the path, or one planted in the
  inbox while Codex worked, is refused (`path_is_link`), however it was spelled; a file read
  that has other names too (a hard link to a file elsewhere) is refused the same way;
- a file read must be a regular file (`not_a_file`: no FIFO, socket, device or folder) of
  at most `limit` bytes (`file_too_large`), checked with fstat on the very descriptor that is
  then read, in bounded memory; a file that changes while it is read is refused
  (`input_changed`), and a text that is not UTF-8 too (`not_utf8`, `text_of`);
- a file written never lands in git's, Claude Code's or Codex's own folders, in sparring's
  records, or on a file that instructs an agent (`path_protected`), and never replaces a
  file unless the caller says the file is its own.

Only the standard library: the leaf modules (config.py) use it, and `guard check` runs it
before git starts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from sparring import disk
from sparring.errors import SparringError

# The most of a file (or stdin) the runner reads: far more than any text a debate hands in
# (a prompt holds at most 1 Mi characters; the runner bounds what it carries into one), and
# little enough to hold in memory. A larger file is refused by its size, unread.
MAX_INPUT_BYTES = 16 * 1024 * 1024
# Where a file argument should live: Claude's Write tool may put files there.
INBOX = (".sparring", "inbox")

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20

# The one list of places no file an argument names is written to, in any case and at any
# depth. Folders whose files steer git, Claude Code or Codex, or are sparring's own records
# (`.sparring/inbox` excepted: Claude's own drop):
PROTECTED_FOLDERS = {
    ".git": "git's own folder (hooks and config there run commands)",
    ".claude": "Claude Code's settings and skills (they say what Claude may do)",
    ".codex": "Codex's project settings",
    ".sparring": "sparring's own records",
}
# and files that instruct an agent, or configure git or sparring, wherever they are:
PROTECTED_FILES = {
    "claude.md": "Claude Code reads it as instructions",
    "claude.local.md": "Claude Code reads it as instructions",
    "agents.md": "Codex reads it as instructions",
    "agents.override.md": "Codex reads it as instructions, before AGENTS.md",
    ".mcp.json": "it adds tools to Claude Code",
    "sparring.yaml": "it is sparring's configuration",
    ".gitmodules": "it configures git",
    ".gitattributes": "it configures git",
}


# Plain classes with slots, not dataclasses or named tuples: `status`, `--cwd` and poll's fast
# path come through here every round, and those would bring inspect or typing along.
class Place:
    """Where a path leads: `parts` below `root` (a real path), none of them `.` or `..`."""

    __slots__ = ("given", "parts", "root")

    def __init__(self, root: str, parts: tuple[str, ...], given: str) -> None:
        self.root, self.parts = root, parts
        self.given = given  # as the argument spelled it, for messages

    @property
    def path(self) -> Path:
        return Path(self.root, *self.parts)

    @property
    def text(self) -> str:
        """`path` as str."""
        return os.path.join(self.root, *self.parts)

    @property
    def in_inbox(self) -> bool:
        return self.parts[-3:-1] == INBOX


class Taken:
    """A file read through paths.py: its bytes, where it was, and the file it was (device,
    inode, size, modification and change times), to know it again later."""

    __slots__ = ("data", "identity", "place")

    def __init__(self, data: bytes, place: Place, identity: tuple[int, ...]) -> None:
        self.data, self.place, self.identity = data, place, identity


def place(path: Path | str, root: str | Path, what: str, hint: str = "") -> Place:
    """Where `path` (relative to the working directory, or absolute) leads below `root`,
    without touching the disk; outside the project it is `path_outside_project`."""
    given = os.fspath(path)
    absolute = os.path.normpath(os.path.join(os.getcwd(), given))
    real = os.path.realpath(root)  # the walk starts from the root itself, not a link
    parts = _below(absolute, real)
    if parts is None:
        raise SparringError(
            "path_outside_project", f"{given} ({what}) is outside the project {real}",
            hint or f"sparring reads and writes only inside the project: put the file under "
            f"{real} (files for the runner go into the inbox, .sparring/inbox/) and name it "
            "there", path=absolute, root=real)
    _require_short(parts, given, what, absolute)
    return Place(real, parts, given)


# The longest name a folder holds, and the longest path, on the file systems sparring runs on.
NAME_MAX, PATH_MAX = 255, 4095


def _require_short(parts: tuple[str, ...], given: str, what: str, absolute: str) -> None:
    long = next((part for part in parts if len(os.fsencode(part)) > NAME_MAX), None)
    if long is not None or len(os.fsencode(absolute)) > PATH_MAX:
        too = (f"its name {long[:40]}... has {len(os.fsencode(long))} bytes, more than "
               f"{NAME_MAX}" if long is not None else f"it has more than {PATH_MAX} bytes")
        raise SparringError("path_too_long", f"{given[:80]}{'...' if len(given) > 80 else ''} "
                            f"({what}) cannot be a file's path: {too}",
                            "choose a shorter name", path=absolute[:300])


def _below(absolute: str, root: str) -> tuple[str, ...] | None:
    """The parts of `absolute` below `root`; a path that reaches the root through links
    above it (/tmp -> /private/tmp) counts as inside, nothing else does."""
    base = root.rstrip(os.sep) or os.sep
    if absolute == base:
        return ()
    prefix = base if base.endswith(os.sep) else base + os.sep
    if absolute.startswith(prefix):
        return tuple(absolute[len(prefix):].split(os.sep))
    head, tail = absolute, list[str]()
    while True:
        if os.path.realpath(head) == base:
            return tuple(reversed(tail))
        parent, name = os.path.split(head)
        if parent == head:
            return None
        tail.append(name)
        head = parent


# -- reading -------------------------------------------------------------------------------

def read(path: Path | str, root: str | Path, what: str, limit: int = MAX_INPUT_BYTES) -> Taken:
    """The bytes of the regular file `path` names inside `root`, checked and read through
    one descriptor, never more than `limit` of them in memory."""
    where = place(path, root, what)
    if not where.parts:
        raise _not_a_file(where, what, "a folder")
    parent = _open_folders(where, what, create=False)
    try:
        fd = _open_file(parent, where, what, limit)
    finally:
        os.close(parent)
    try:
        return _read_whole(fd, where, what, limit)
    finally:
        os.close(fd)


def text_of(data: bytes, where: str, hint: str = "") -> str:
    """`data` as text; what is not UTF-8 is refused (`not_utf8`), never silently replaced."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start:exc.start + 1].hex()
        raise SparringError(
            "not_utf8", f"{where} is not UTF-8 text (byte 0x{bad} at offset {exc.start})",
            hint or "save it as UTF-8 text and hand it in again; nothing was done",
            offset=exc.start) from None


def read_text(path: Path | str, root: str | Path, what: str, limit: int = MAX_INPUT_BYTES,
              hint: str = "") -> str:
    """`read`, as UTF-8 text."""
    return text_of(read(path, root, what, limit).data, os.fspath(path), hint)


def check_file(path: Path | str, root: Path, what: str,
               limit: int = MAX_INPUT_BYTES) -> Place:
    """What `read` checks, for a file another module then reads by its path (a guard
    baseline): inside, no link, a regular file within `limit`."""
    where = place(path, root, what)
    if not where.parts:
        raise _not_a_file(where, what, "a folder")
    parent = _open_folders(where, what, create=False)
    try:
        os.close(_open_file(parent, where, what, limit))
    finally:
        os.close(parent)
    return where


def _open_file(parent: int, where: Place, what: str, limit: int) -> int:
    name = where.parts[-1]
    try:  # look before opening: a FIFO or a device is never opened at all
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        raise _missing(where, what) from None
    _require_regular(st, where, what, limit)
    try:
        fd = os.open(name, _READ, dir_fd=parent)
    except FileNotFoundError:
        raise _missing(where, what) from None
    except OSError as exc:  # swapped for a link between the look and the open
        raise _link_or(exc, parent, where, what, where.parts) from None
    try:
        _require_regular(os.fstat(fd), where, what, limit)  # what is read, is what was checked
    except BaseException:
        os.close(fd)
        raise
    return fd


def _require_regular(st: os.stat_result, where: Place, what: str, limit: int) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise _link(where, what, where.path)
    if not stat.S_ISREG(st.st_mode):
        raise _not_a_file(where, what, _kind(st.st_mode))
    if st.st_nlink > 1:  # a hard link: the same file is elsewhere too (~/.ssh/id_rsa, say)
        raise SparringError(
            "path_is_link", f"{where.given} ({what}) is a hard link ({st.st_nlink} names for "
            "one file), and sparring reads only a file that is the project's alone",
            "write the text into a new file in .sparring/inbox/ and name it; nothing was read",
            path=str(where.path), links=st.st_nlink)
    if st.st_size > limit:
        raise SparringError(
            "file_too_large", f"{where.given} ({what}) has {st.st_size:,} bytes; sparring "
            f"reads at most {limit:,}", "hand in a shorter text; nothing was read or done",
            path=str(where.path), size=st.st_size, limit=limit)


def _read_whole(fd: int, where: Place, what: str, limit: int) -> Taken:
    before = os.fstat(fd)
    chunks, total = [], 0
    while chunk := os.read(fd, min(_CHUNK, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            break
    after = os.fstat(fd)
    if _identity(before) != _identity(after) or total != after.st_size:
        raise SparringError(
            "input_changed", f"{where.given} ({what}) changed while sparring read it",
            "hand it in again once nothing writes to it; nothing was done",
            path=str(where.path))
    return Taken(b"".join(chunks), where, _identity(after))


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def stamp(path: str | os.PathLike[str]) -> tuple[int, ...] | None:
    """What changes whenever the file at `path` does: its device, inode, size and times
    (the change time, which no one but root can set back, included); None when it cannot
    be looked at. A file written, replaced or reached through a swapped folder has another."""
    try:
        return _identity(os.stat(path))
    except OSError:
        return None


def still_there(taken: Taken) -> bool:
    """Whether the file `taken` was read from is still the same, unchanged file."""
    try:
        parent = _open_folders(taken.place, "", create=False)
    except SparringError:
        return False
    try:
        st = os.stat(taken.place.parts[-1], dir_fd=parent, follow_symlinks=False)
        return stat.S_ISREG(st.st_mode) and _identity(st) == taken.identity
    except OSError:
        return False
    finally:
        os.close(parent)


def remove_taken(taken: Taken) -> bool:
    """Remove the file `taken` was read from, if it is still that file unchanged (a file
    written there since is someone's new file, and stays)."""
    if not still_there(taken):
        return False
    try:
        parent = _open_folders(taken.place, "", create=False)
    except SparringError:
        return False
    try:
        os.unlink(taken.place.parts[-1], dir_fd=parent)
    except OSError:
        return False
    finally:
        os.close(parent)
    return True


def read_own(path: str | os.PathLike[str], limit: int, tail: int | None = None,
             start: int = 0) -> bytes | None:
    """The bytes (the last `tail` of them, or those from offset `start` on) of a file
    sparring's child writes into the session's own folder (a turn's events, codex's
    stderr): a sandbox that lets Codex write the project lets it swap that file for a link,
    a FIFO (whose open would block the runner and every verb that reads the turn, forever)
    or a huge sparse file. So it is opened without following a link or blocking, and read
    only when fstat says it is a regular file of at most `limit` bytes; None otherwise (a
    missing file included)."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        if tail is not None and st.st_size > tail:
            os.lseek(fd, st.st_size - tail, os.SEEK_SET)
        elif start:
            os.lseek(fd, min(start, st.st_size), os.SEEK_SET)
        chunks, total = [], 0
        while chunk := os.read(fd, min(_CHUNK, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                return None
        return b"".join(chunks)
    finally:
        os.close(fd)


# -- writing -------------------------------------------------------------------------------

def write(path: Path | str, data: bytes | str, root: Path, what: str, *,
          replace: Callable[[Path], bool] | bool = False, mode: int = 0o600,
          make_folders: bool = True) -> Path:
    """Write `data` to the file `path` names inside `root`, making its folders (unless not
    `make_folders`); never into a protected place, never through a link, and over an
    existing file only when `replace` says it is the caller's own (then atomically).
    Returns the file's path."""
    where = place(path, root, what)
    _require_writable(where, what)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    parent = _open_folders(where, what, create=make_folders)
    try:
        name = where.parts[-1]
        existing = disk.lstat_in(parent, name)
        if existing is not None:
            _require_replaceable(existing, where, what, replace)
            _write_replacing(parent, name, raw, mode)
        else:
            _write_new(parent, name, raw, mode, where, what)
    except OSError as exc:
        raise _not_writable(where, what, exc) from None
    finally:
        os.close(parent)
    return where.path


def folder(path: Path | str, root: str | Path, what: str, create: bool = False) -> Place:
    """The folder `path` names inside `root` (made, when `create`, with its parents), reached
    without a link; with `create` it must be a place sparring may write to."""
    where = place(path, root, what)
    if create:
        _require_writable(where, what, folder=True)
    fd = _open_folders(where, what, create=create, last_too=True)
    os.close(fd)
    return where


def check_output(path: Path | str, root: Path, what: str) -> Place:
    """What `write` checks before writing, for a file another module writes (a guard
    baseline): inside, writable there, no link on the way to it or at it."""
    where = place(path, root, what)
    _require_writable(where, what)
    parent = _open_folders(where, what, create=True)
    try:
        existing = disk.lstat_in(parent, where.parts[-1])
    finally:
        os.close(parent)
    if existing is not None and stat.S_ISLNK(existing.st_mode):
        raise _link(where, what, where.path)
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        raise _not_a_file(where, what, _kind(existing.st_mode))
    return where


def protected(parts: Sequence[str], folder: bool = False) -> tuple[str, str] | None:
    """(the part, why) when the path `parts` (a folder, with `folder`) lies in a protected
    place or is a protected file; None when sparring may write there."""
    for i, part in enumerate(parts):
        key = part.casefold()
        if key == ".sparring" and tuple(parts[i:i + 2]) == INBOX and (
                len(parts) > i + 2 or folder):
            continue
        why = PROTECTED_FOLDERS.get(key)
        if why is None and i == len(parts) - 1 and not folder:
            why = PROTECTED_FILES.get(key)
        if why is not None:
            return part, why
    return None


def _require_writable(where: Place, what: str, folder: bool = False) -> None:
    if not where.parts and not folder:
        raise _not_a_file(where, what, "a folder")
    found = protected(where.parts, folder)
    if found is not None:
        raise SparringError(
            "path_protected", f"sparring does not write {where.given} ({what}): "
            f"{found[0]} is {found[1]}", "choose a path elsewhere in the project",
            path=str(where.path))


def _require_replaceable(st: os.stat_result, where: Place, what: str,
                         replace: Callable[[Path], bool] | bool) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise _link(where, what, where.path)
    if not stat.S_ISREG(st.st_mode):
        raise _not_a_file(where, what, _kind(st.st_mode))
    if not (replace(where.path) if callable(replace) else replace):
        raise SparringError(
            "path_protected", f"{where.given} ({what}) exists and sparring did not write it",
            "choose a new file name: sparring never replaces a file it did not write",
            path=str(where.path))


def _write_new(parent: int, name: str, raw: bytes, mode: int, where: Place, what: str) -> None:
    try:
        disk.create_in(parent, name, raw, mode=mode)
    except FileExistsError:  # appeared since we looked: it is someone else's
        raise SparringError(
            "path_protected", f"{where.given} ({what}) appeared while sparring wrote it",
            "choose a new file name: sparring never replaces a file it did not write",
            path=str(where.path)) from None


def _write_replacing(parent: int, name: str, raw: bytes, mode: int) -> None:
    """Readers see the old file or the new one, never half (disk.py)."""
    disk.write_in(parent, name, raw, mode=mode)


# -- the walk ------------------------------------------------------------------------------

def _open_folders(where: Place, what: str, create: bool, last_too: bool = False) -> int:
    """A descriptor of the folder holding `where` (of `where` itself with `last_too`),
    opened one folder at a time from the root without following a link."""
    try:
        fd = os.open(where.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _missing(where, what) if isinstance(exc, FileNotFoundError) else \
            _not_writable(where, what, exc) from None
    folders = where.parts if last_too else where.parts[:-1]
    try:
        for i, part in enumerate(folders):
            fd = _step(fd, part, where, what, create, where.parts[:i + 1])
    except BaseException:
        os.close(fd)
        raise
    return fd


def _step(fd: int, part: str, where: Place, what: str, create: bool,
          reached: tuple[str, ...]) -> int:
    try:
        inner = os.open(part, _FOLDER, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise _missing(where, what) from None
        # sparring's own folders are the user's alone; elsewhere the umask decides, as mkdir
        private = any(p.casefold() == ".sparring" for p in reached)
        try:
            os.mkdir(part, 0o700 if private else 0o777, dir_fd=fd)
        except FileExistsError:
            pass  # made meanwhile: the open below checks what it is
        except OSError as exc:
            raise _not_writable(where, what, exc) from None
        try:
            inner = os.open(part, _FOLDER, dir_fd=fd)
        except OSError as exc:
            raise _link_or(exc, fd, where, what, reached, create) from None
    except OSError as exc:
        raise _link_or(exc, fd, where, what, reached, create) from None
    os.close(fd)
    return inner


def _link_or(exc: OSError, parent: int, where: Place, what: str,
             reached: tuple[str, ...], writing: bool = False) -> SparringError:
    """Why a folder or file would not open without following links: it is a link, or not a
    folder (nothing is found there, nor can anything be written below it), or something
    else went wrong."""
    try:
        st = os.stat(reached[-1], dir_fd=parent, follow_symlinks=False)
    except OSError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        return _link(where, what, os.path.join(where.root, *reached))
    if st is not None and not stat.S_ISDIR(st.st_mode) and reached != where.parts:
        return SparringError(
            "not_writable" if writing else "file_not_found",
            f"{where.given} ({what}): {os.path.join(where.root, *reached)} is not a folder",
            f"check the path given to {what}", path=str(where.path))
    if writing:
        return _not_writable(where, what, exc)
    return SparringError(  # permissions, most often: as a missing file, said plainly
        "file_not_found", f"cannot read {where.given}: {exc.strerror or exc}",
        f"check the path given to {what} and its permissions", path=str(where.path))


# -- errors --------------------------------------------------------------------------------

def _link(where: Place, what: str, link: str | Path) -> SparringError:
    return SparringError(
        "path_is_link", f"{where.given} ({what}): {link} is a symbolic link, and sparring "
        "follows no link in a path it is given",
        "name a plain file inside the project, with no link on the way (write the text into "
        ".sparring/inbox/ again); nothing was read or written", path=str(where.path),
        link=str(link))


def _not_a_file(where: Place, what: str, kind: str) -> SparringError:
    return SparringError(
        "not_a_file", f"{where.given} ({what}) is {kind}, not a regular file",
        "hand in a plain file: write the text into a file in .sparring/inbox/ and name it",
        path=str(where.path))


def _missing(where: Place, what: str) -> SparringError:
    return SparringError(
        "file_not_found", f"{where.given} does not exist",
        f"check the path given to {what}; a file the runner already took from the inbox is "
        "in the session's inputs/ folder", path=str(where.path))


def _not_writable(where: Place, what: str, exc: OSError) -> SparringError:
    return SparringError(
        "not_writable", f"cannot use {where.given} ({what}): {exc.strerror or exc}",
        "check the path and its permissions", path=str(where.path))


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"

"""The witness: the runner's own copy of each record it writes in `.sparring/`, kept where a
Codex sandbox cannot write, so that no record written during a Codex turn is trusted unless
the runner wrote it.

Why a copy out of reach. Under `workspace-write` Codex may write anywhere in the project,
`.sparring/` included, and read everything: a digest kept beside a record proves nothing,
since it is rewritten with the record, and a key would be read. What such a sandbox cannot
write is the rest of the user's home (measured with codex 0.169.0: the project, /tmp and
$TMPDIR are writable, `<project>/.git/` and `.codex/` are not, nor is `~`). So every record
sparring writes there (session.json, the seal, a turn's guard baseline and changes, the
summary) is written twice, under one lock that is out of reach too: first its copy into
`$XDG_STATE_HOME/sparring/witness/` (default `~/.local/state/...`), at the record's own
absolute path below that folder, then the record itself.

While a Codex turn is watched (the runner's snapshot begins a watch, its check ends it), a
record whose bytes are not its copy's was written by someone else. It is never read as
sparring's (nor followed, if it is a link, nor waited on, if it is a FIFO): it is moved
aside (`<name>.foreign-<time>-<id>`, kept for the user to inspect), the copy is put back,
and the event is logged beside the copies, where the turn's check finds it: a change to the
runner's records during a Codex turn is a violation (turn/watch.py). Between turns nothing
of Codex's runs (the runner ends it all), so a record that differs is the user's own edit:
it is read as it is (a damaged one is `state_corrupt`, never repaired), and the next
snapshot adopts it (unless a turn's runner died before its check: then what changed is put
back, since that turn's Codex may have written it; nor a record the check could not put back,
in a folder Codex swapped for a link or made unwritable: that one is Codex's, held until it
is put back: never adopted, and read as sparring wrote it). A record with no copy (made before
witnesses) is read as it is.

This holds for every sandbox the user may allow but `danger-full-access`, under which Codex
runs as the user and can write the witness too; and only while the witness folder is out of
the sandbox's reach: outside the project (`within` says when it is not; `doctor` checks
it), /tmp, $TMPDIR and any writable root the user added to Codex's own configuration.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager

from sparring import disk
from sparring.disk import Where
from sparring.store import locate
from sparring.store.locate import STATE_DIR

_META = ".witness"  # in the copies' own folder: sparring never writes a record of that name
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def home() -> str:
    """Where every project's copies live (the XDG state folder, as the user's shell sets it)."""
    return os.path.join(locate.state_home(), "witness")


def split(path: str | os.PathLike[str]) -> tuple[str, str] | None:
    """(project root, path below its `.sparring/`) of a record, or None for a file that is
    not under a `.sparring/` folder (never witnessed). The parts are read as pathlib reads
    them (no empty or `.` part)."""
    text = os.fspath(path)
    parts = [part for part in text.split(os.sep) if part and part != "."]
    if STATE_DIR not in parts[:-1]:
        return None
    at = len(parts) - 1 - parts[::-1].index(STATE_DIR)
    root = os.sep.join(parts[:at])
    return (os.sep + root if text.startswith(os.sep) else root or "."), "/".join(parts[at + 1:])


def folder(root: Where) -> str:
    """The copies of `root`'s records: the project's real path, mirrored under home()."""
    return os.path.join(home(), os.path.realpath(root).lstrip(os.sep), STATE_DIR)


def copy_of(path: Where) -> str | None:
    found = split(path)
    return None if found is None else os.path.join(folder(found[0]), found[1])


def read(path: str | os.PathLike[str], *, under: Where | None = None) -> bytes | None:
    """The bytes of the regular file at `path`, never through a link and never waiting on a
    FIFO: None when there is no such file (absent, or a link, a FIFO, a folder put there).
    With `under`, its folder is reached from there without a link: disk.FolderSwapped when
    one on the way is a link (the bytes beyond it are nobody's record)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        if under is None:
            fd = os.open(path, flags)
        else:
            parent, name = disk.open_parent(path, under=under)
            try:
                fd = os.open(name, flags, dir_fd=parent)
            finally:
                os.close(parent)
    except disk.FolderSwapped:
        raise
    except OSError:  # absent, or a link (ELOOP), or a FIFO without a writer (ENXIO)
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def vouches(path: str | os.PathLike[str], data: bytes | None) -> bool:
    """Whether `data`, read from the record at `path` (None: no regular file there), is what
    sparring last wrote there, or the record has no copy. Lock-free: a writer between its
    two writes reads as False, and the caller then asks again under the lock (genuine)."""
    copy = copy_of(path)
    if copy is None:
        return True
    try:
        with open(copy, "rb") as f:
            return f.read() == data
    except OSError:  # no copy (or no witness folder at all): nothing to hold it against
        return data is not None


def holds(path: str | os.PathLike[str], data: bytes) -> bool:
    """Whether sparring wrote `data` at `path` itself: the record has a copy, and it is
    `data` (vouches, by contrast, takes a record with no copy as it is)."""
    copy = copy_of(path)
    try:
        return copy is not None and _read(copy) == data
    except OSError:
        return False


def locked(root: Where, name: str = "lock", wait: bool = True
           ) -> AbstractContextManager[None]:
    """A lock of the project's that Codex cannot hold, being out of the sandbox's reach. The
    witness lock (the default): a record and its copy are written, checked and put back
    under it. Without `wait`, BlockingIOError when someone holds it."""
    return contextlib.contextmanager(_locked)(root, name, wait)


def _locked(root: Where, name: str, wait: bool) -> Iterator[None]:
    with disk.locked(os.path.join(_private(_meta(root)), name), wait=wait):
        yield


def keeping(path: str | os.PathLike[str], data: bytes) -> AbstractContextManager[None]:
    """Record `data` as what sparring writes at `path` (call under `locked`), for the block
    that writes the record itself: if that fails, the copy goes back to what it was."""
    return contextlib.contextmanager(_keeping)(path, data)


def _keeping(path: str | os.PathLike[str], data: bytes) -> Iterator[None]:
    copy = copy_of(path)
    if copy is None:
        yield
        return
    try:
        before: bytes | None = _read(copy)
    except FileNotFoundError:
        before = None
    _write(copy, data)
    try:
        yield
    except BaseException:
        if before is None:
            os.unlink(copy)
        else:
            _write(copy, before)
        raise


def genuine(path: Where) -> bytes | None:
    """The record at `path` as it may be read (call under `locked`). While a turn is watched,
    or when a turn's audit could not put the record back (held), one that is not its copy's
    bytes is set aside and the copy put back (and logged); otherwise, and without a copy, the
    record as it is. None: no regular file there."""
    data = read(path)
    found = split(path)
    if found is None or not (watched(found[0]) or os.path.exists(_held(*found))):
        return data  # a held record (see _put_back) is Codex's between turns too
    try:
        kept = _read(os.path.join(folder(found[0]), found[1]))
    except OSError:
        return data  # never witnessed
    if data != kept:
        _put_back(path, kept, found)
    return kept


# --- watching a turn -------------------------------------------------------------------------


def watch(root: Where, name: str, owner: str) -> None:
    """Begin watching a turn (call under `locked`): `owner` says who ends it (the runner's
    identity, so that a runner that died leaves a watch a later snapshot can drop)."""
    _write(os.path.join(_meta(root), "watches", name), owner.encode("utf-8"))


def unwatch(root: Where, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(_meta(root), "watches", name))


def watches(root: Where) -> dict[str, str]:
    """The turns being watched: name -> owner."""
    place = os.path.join(_meta(root), "watches")
    try:
        names = os.listdir(place)
    except FileNotFoundError:
        return {}
    return {name: _read(os.path.join(place, name)).decode("utf-8") for name in names
            if not name.startswith(".")}


def watched(root: Where) -> bool:
    return bool(watches(root))


def adopt(root: Where) -> None:
    """Take the records as they are for sparring's (call under `locked`, with no turn
    watched): between turns a record that differs is the user's own edit, and one that is
    gone was removed by the user. Not one behind a swapped folder, nor one a turn's audit
    could not put back (held): those stay as sparring wrote them, a held one put back now if
    it can be (so the next turn is not blamed for it), unless its whole session is gone."""
    for relative in _witnessed(root):
        try:  # never through a folder swapped for a link: its copy stays as sparring wrote it
            data = read(os.path.join(root, STATE_DIR, relative), under=root)
        except disk.FolderSwapped:
            continue
        copy = os.path.join(folder(root), relative)
        kept = _read(copy)
        held = data != kept and os.path.exists(_held(root, relative))
        if held and not _removed_with_its_session(root, relative):
            # What a turn left (or removed) and its check could not put back: never the
            # user's. Put back now, before the next turn's watch begins, or held again.
            _put_back(os.path.join(root, STATE_DIR, relative), kept, (os.fspath(root),
                                                                      relative))
            continue
        _release(root, relative)
        if data is None:
            os.unlink(copy)
        elif data != kept:
            _write(copy, data)


def held(root: Where) -> list[str]:
    """The records no audit could put back yet (see _put_back): paths below `.sparring/`."""
    base = os.path.join(_meta(root), "held")
    return sorted(os.path.relpath(os.path.join(here, name), base)
                  for here, _, names in os.walk(base) for name in names)


def _release(root: Where, relative: str) -> None:
    try:  # noqa: SIM105 - contextlib is not loaded to read a record
        os.unlink(_held(root, relative))
    except FileNotFoundError:
        pass


def audit(root: Where) -> list[tuple[str, str]]:
    """Check every witnessed record of the project against its copy (call under `locked`,
    while a turn is watched), putting back each one that differs and logging it:
    [(path below `.sparring/`, "modified" | "deleted")].

    A session whose whole folder is gone was removed: its records are listed as deleted but
    not brought back, and their copies are dropped. A record that can be neither put back
    nor held (the disk is full, say) does not stop the others being checked: the first such
    error is raised once all were, and the caller then keeps the turn watched."""
    found = []
    failed: list[OSError] = []
    for relative in _witnessed(root):
        record = os.path.join(root, STATE_DIR, relative)
        try:
            kept = _read(os.path.join(folder(root), relative))
            kind = _differs(root, record, kept)
            if kind is not None:
                found.append((relative, kind))
                _repair(root, relative, record, kept, kind)
        except OSError as exc:
            failed.append(exc)
    if failed:
        raise failed[0]
    return found


def _differs(root: Where, record: str, kept: bytes) -> str | None:
    """How the record differs from its copy: None (it does not), "modified" or "deleted". A
    folder on its way swapped for a link: what lies beyond is nobody's record (modified)."""
    try:
        data = read(record, under=root)
    except disk.FolderSwapped:
        return "modified"
    if data == kept:
        return None
    return "modified" if os.path.lexists(record) else "deleted"


def _repair(root: Where, relative: str, record: str, kept: bytes, kind: str) -> None:
    if _removed_with_its_session(root, relative):
        os.unlink(os.path.join(folder(root), relative))
        _release(root, relative)
        _log(root, relative, kind)
    else:
        _put_back(record, kept, (os.fspath(root), relative))


def changed_since(root: Where, since: float) -> dict[str, str]:
    """The records put back (or found gone) since `since`: path below `.sparring/` -> kind."""
    try:
        lines = _read(os.path.join(_meta(root), "log")).decode("utf-8").splitlines()
    except FileNotFoundError:
        return {}
    found: dict[str, str] = {}
    for line in lines:
        at, _, rest = line.partition(" ")
        kind, _, relative = rest.partition(" ")
        try:
            if float(at) >= since and relative:
                found.setdefault(relative, kind)
        except ValueError:
            continue
    return found


def within(root: Where) -> bool:
    """Whether the copies of `root`'s records lie inside the project itself (a project that
    is the home folder, say), where a `workspace-write` sandbox may write them too."""
    return locate.within(os.path.realpath(folder(root)), os.path.realpath(root))


def _removed_with_its_session(root: Where, relative: str) -> bool:
    parts = relative.split("/")
    session = os.path.join(root, STATE_DIR, *parts[:2])
    return parts[0] == "sessions" and len(parts) > 2 and not os.path.lexists(session)


def _witnessed(root: Where) -> list[str]:
    base = folder(root)
    found = []
    for here, dirs, files in os.walk(base):
        if here == base:
            dirs[:] = [d for d in dirs if d != _META]
        found += [os.path.relpath(os.path.join(here, f), base) for f in files
                  if not f.endswith(".tmp")]
    return sorted(found)


def _put_back(path: Where, kept: bytes, found: tuple[str, str]) -> None:
    """The record at `path` is not sparring's: keep what stands there aside (renamed, never
    read or followed), write the copy in its place, log it. All of it in the record's folder
    as reached from the project's root without a link: where a folder on the way was swapped
    for one (by a Codex turn), nothing is looked at, moved or written through it. Where the
    record cannot be put back (that, or a folder made unwritable), it is logged all the same,
    so the turn's check names it, and held: never adopted as the user's edit (adopt), read as
    sparring's between turns too (genuine), until a later put-back succeeds."""
    name = os.path.basename(os.fspath(path))
    kind = "modified"
    try:
        parent = disk.open_folder(os.path.dirname(os.fspath(path)), under=found[0])
        try:
            if disk.lstat_in(parent, name) is None:
                kind = "deleted"
            else:
                aside = f"{name}.foreign-{time.strftime('%Y%m%d-%H%M%S')}-{os.urandom(3).hex()}"
                os.replace(name, aside, src_dir_fd=parent, dst_dir_fd=parent)
            disk.write_in(parent, name, kept, exact=True)
        finally:
            os.close(parent)
    except OSError:
        _write(_held(*found), b"")
    else:
        _release(*found)  # sparring's bytes stand there again: what follows is the user's
    _log(*found, kind=kind)


def _log(root: Where, relative: str, kind: str) -> None:
    with open(os.path.join(_meta(root), "log"), "a", encoding="utf-8") as f:
        f.write(f"{time.time()} {kind} {relative}\n")


def _held(root: Where, relative: str) -> str:
    """Where the mark of a record the audit could not put back lies (see _put_back)."""
    return os.path.join(_meta(root), "held", relative)


def _meta(root: Where) -> str:
    """The copies' own folder of `root`'s: the watches, the log and the locks."""
    return os.path.join(folder(root), _META)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write(path: Where, data: bytes) -> None:
    parent, name = os.path.split(path)
    disk.write(os.path.join(_private(parent), name), data)


def _private(path: str) -> str:
    """`path` and its missing parents as folders only the user can open (the copies' names
    spell the project's path)."""
    return disk.folders(path)

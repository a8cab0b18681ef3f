"""revert: put back what a check found changed, where that is safe, destroying nothing.

For each change it first checks the path is still exactly as the check saw it; what it
removes or replaces goes to a trash folder, never deleted; anything in doubt is listed with
the reason and left as it is (see the package docstring).

A file is put back in two steps: the pre-turn version is first written beside it (a temp
file) and checked (a copy from the store must still hash to its name: under a sandbox that
lets Codex write, the store in `.sparring/` is within its reach too); only then is the
turn's version moved to the trash and the temp file moved in. So a copy that was changed or
removed leaves the file exactly where it is, and the result says why.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, NamedTuple

from sparring import disk, paths
from sparring.guard import copies
from sparring.guard.baseline import Baseline
from sparring.guard.check import compare
from sparring.guard.copies import COPY_LIMITS, MIB, copy_stream
from sparring.guard.files import Parents, hash_file, key, spelled
from sparring.guard.git import Git
from sparring.guard.gitlist import blob_id
from sparring.guard.model import Change, Entry, RevertResult
from sparring.guard.trash import Trash

_NOT_KEPT = {
    "untracked": "untracked before the turn, and sparring kept no copy of it",
    "ignored": f"ignored by git, and sparring kept no copy of it (it copies ignored files up "
               f"to {COPY_LIMITS['ignored'] // MIB} MiB)",
    "walk": "outside git, and sparring kept no copy of it",
    "tracked": "no copy of its pre-turn content was kept (no store given, or copying failed)",
    "gitdir": "git's own file, and sparring kept no copy of it",
    "submodule": f"inside a submodule, and sparring kept no copy of it (it copies files in "
                 f"submodules up to {COPY_LIMITS['submodule'] // MIB} MiB)",
}


class _Refused(Exception):
    """A change revert leaves alone; the message is the reason shown to the user."""


class _Undo:
    """What one revert works with."""
    def __init__(self, b: Baseline, protected: Mapping[str, str | None],
                 todo: Sequence[Change]) -> None:
        self.b = b
        self.git = Git(b.root, b.gitdir, b.filters) if b.mode == "git" else None
        self.trash = Trash(b.root)
        self.known = _known_dirs(b)  # folders that held files at snapshot: never removed
        self.damaged = _damaged_copies(b, todo)  # copies no longer as the snapshot made them
        self.doubtful = _unrestorable(b, todo, self.damaged)  # digest -> path not put back
        self.protected = dict(protected)  # files the runner wrote -> what it wrote there
        self.parents = Parents(b.root)
        self.trusted = b.trusted  # else nothing of git's or protected is touched


def revert(baseline: Baseline, changes: Sequence[Change] | None = None,
           protected: Mapping[str, str | None] | None = None) -> RevertResult:
    """Undo `changes` (default: a fresh `compare`) where that is safe; see the package docstring.

    Pass the changes an earlier check returned to revert exactly those: any
    file that moved since that check is left alone and listed. `protected` maps files the
    runner wrote to the SHA-256 of what it wrote (None: unknown): one still holding that is
    never touched; one someone changed since is undone like any other.
    """
    todo = compare(baseline) if changes is None else list(changes)
    undo = _Undo(baseline, protected or {}, todo)
    result = RevertResult()
    for change in sorted(todo, key=_revert_order):
        undo.parents = Parents(baseline.root)  # folders come and go as changes are undone
        try:
            action, kept = _revert_one(undo, change)
        except _Refused as refused:
            result.not_reverted.append(_outcome(change, reason=str(refused)))
        except OSError as exc:
            result.not_reverted.append(_outcome(change, reason=f"could not write: {exc}"))
        else:
            result.reverted.append(_outcome(change, action=action, **kept))
    left = {c.path for c in compare(baseline)} & {c.path for c in todo}
    result.clean_after = not left
    result.trash = str(undo.trash.dir) if undo.trash.dir else None
    return result


def _revert_order(change: Change) -> tuple[int, int, str]:
    # Removals first, deepest first (so emptied directories can go), then restores.
    depth = change.path.count("/")
    return (0, -depth, change.path) if change.change == "added" else (1, depth, change.path)


def _outcome(change: Change, **extra: str) -> dict[str, str]:
    shown = {k: spelled(v) if k == "kept" else v for k, v in extra.items()}
    return {"path": spelled(change.path), "change": change.change, **shown}


def _revert_one(undo: _Undo, change: Change) -> tuple[str, dict[str, str]]:
    b = undo.b
    _require_revertible(undo, change)
    now = undo.parents.lstat(change.path)
    if key(now) != change.seen:
        raise _Refused("it changed again since it was checked; left as it is")
    if change.change == "added":
        return _remove(undo, change.path, now)
    stage = _restorer(undo, change)
    _require_real(b.root, change.path)
    dest = b.root / change.path
    staged = stage(dest)  # the pre-turn version, written beside the file and checked
    try:
        kept = {"kept": undo.trash.keep(change.path)} if now is not None else {}
        staged.file.commit()
    except BaseException:
        staged.file.discard()
        raise
    finally:
        staged.file.close()
    if staged.mtime_ns is not None:
        os.utime(dest, ns=(staged.mtime_ns, staged.mtime_ns))
    return staged.action, kept


class _Staged(NamedTuple):
    """A pre-turn version written beside its file, ready to be moved in."""
    file: disk.Staged
    action: str
    mtime_ns: int | None = None  # set back once moved in (a copy keeps its mtime)


def _require_revertible(undo: _Undo, change: Change) -> None:
    if change.path in undo.protected and _as_the_runner_wrote(undo, change.path):
        raise _Refused("written by sparring's runner after the check: never touched")
    if change.origin == "nested":
        raise _Refused("a nested repository, or the commit a submodule has checked out: "
                       "sparring changes neither (`git -C <it> status` shows what happened)")
    if change.origin == "state":
        raise _Refused("sparring's own record changed during the turn: inspect it; sparring "
                       "does not rewrite its own records from a snapshot")
    if change.path.startswith("../"):
        raise _Refused("outside the project folder: sparring does not change it")
    if not undo.trusted:
        _require_unprotected(change)


def _require_unprotected(change: Change) -> None:
    """A baseline sparring did not write and keep (`guard snapshot --out`, or one handed in)
    could say anything: from it, revert neither writes nor removes git's own files or a
    protected one (paths.PROTECTED_*: they make git, Claude Code or Codex run or obey
    something). A Codex sandbox that cannot write `.git/` could otherwise have revert write
    a hook there for it."""
    found = paths.protected(change.path.split("/"))
    if change.origin == "gitdir" or found is not None:
        what = f"{found[0]} is {found[1]}" if found else "it is git's own file"
        raise _Refused(f"{what}: sparring changes it only from a baseline it wrote and kept its "
                       "own copy of (a turn's: `sparring guard revert --session`), and this "
                       "baseline is not one, so anyone could have written it; left as it is")


def _as_the_runner_wrote(undo: _Undo, path: str) -> bool:
    """Whether a file the runner wrote still holds what it wrote (or no digest was kept)."""
    digest = undo.protected[path]
    if digest is None:
        return True
    try:  # never through a link, never waiting on a FIFO: a regular file, hashed
        return stat.S_ISREG(os.lstat(undo.b.root / path).st_mode) and hash_file(
            undo.b.root / path) == digest
    except OSError:
        return False


def _remove(undo: _Undo, path: str, st: os.stat_result | None) -> tuple[str, dict[str, str]]:
    """Move an added file into the trash, then the folders it leaves empty (that held
    nothing at snapshot); a file that may hold the user's only copy of something stays."""
    if st is not None and stat.S_ISREG(st.st_mode) and undo.doubtful:
        with contextlib.suppress(OSError):
            twin = undo.doubtful.get(hash_file(undo.b.root / path))
            if twin is not None:
                raise _Refused(f"it holds the content {spelled(twin)} had before the turn, which "
                               "sparring cannot put back: left in place")
    kept = undo.trash.keep(path)
    parent = path.rpartition("/")[0]
    while parent and parent not in undo.known:
        try:
            os.rmdir(undo.b.root / parent)
        except OSError:
            break
        parent = parent.rpartition("/")[0]
    return "removed", {"kept": kept}


Stage = Callable[[Path], _Staged]


def _restorer(undo: _Undo, change: Change) -> Stage:
    """How to put the snapshot's version back, or _Refused with the reason there is none."""
    b = undo.b
    entry = b.entries.get(change.path) or b.area_entries.get(change.path)
    if entry is None and change.origin == "tracked" and change.path in b.index:
        return lambda dest: _stage_blob(undo, change.path, dest)
    if entry is not None and entry.target is not None:
        return functools.partial(_stage_link, b.root, entry.target)
    if entry is not None and entry.copied and b.store and entry.stat and entry.digest:
        if entry.digest in undo.damaged:
            raise _Refused(_damaged_reason(b.store / entry.digest))
        found = entry
        return lambda dest: _stage_copy(b, found, dest)
    raise _Refused(_NOT_KEPT.get(change.origin, "sparring kept no copy of it"))


def _damaged_copies(b: Baseline, todo: Sequence[Change]) -> frozenset[str]:
    """The digests of the copies this revert would restore from that no longer hold what
    their name says (changed or removed since the snapshot)."""
    if b.store is None:
        return frozenset()
    wanted = {entry.digest for change in todo
              if (entry := b.entries.get(change.path) or b.area_entries.get(change.path))
              and entry.copied and entry.digest and change.change != "added"}
    return frozenset(d for d in wanted if not copies.intact(b.store, d))


def _damaged_reason(copy: Path) -> str:
    if not os.path.lexists(copy):
        return (f"the snapshot's copy of its pre-turn version ({copy}) is no longer kept "
                "(copies are let go once a session has ended and its changes were decided, "
                "or something removed it): the file is left as it is")
    return (f"the snapshot's copy of its pre-turn version ({copy}) was changed since the "
            "snapshot: that version is lost, and the file is left as it is")


def _unrestorable(b: Baseline, todo: Sequence[Change], damaged: frozenset[str]
                  ) -> dict[str, str]:
    """Digest -> path of the files the turn changed or removed that revert cannot restore: an
    added file holding one of these contents is left where it is."""
    found = {}
    for change in todo:
        entry = b.entries.get(change.path) or b.area_entries.get(change.path)
        if change.change == "added" or entry is None or entry.digest is None:
            continue
        if entry.target is None and (not entry.copied or entry.digest in damaged):
            found[entry.digest] = change.path
    return found


def _stage_link(root: Path, target: str, dest: Path) -> _Staged:
    disk.folders(dest.parent, under=root, mode=_FOLDER)
    return _Staged(disk.stage_link(dest, target, under=root), "restored_link")


def _stage_blob(undo: _Undo, path: str, dest: Path) -> _Staged:
    mode, blob = blob_id(undo.b.index[path]) or ("", "")
    if undo.git is None or mode not in ("100644", "100755", "120000"):
        raise _Refused(f"cannot restore an entry of mode {mode}")
    if mode == "120000":
        return _stage_link(undo.b.root, os.fsdecode(undo.git.run("cat-file", "blob", blob)),
                           dest)
    data = undo.git.run("cat-file", "--filters", f"--path={path}", blob)
    staged = _stage_file(undo.b.root, dest, lambda f: f.write(data),
                         0o777 if mode == "100755" else 0o666)
    return _Staged(staged, "restored_from_git")


def _stage_copy(b: Baseline, entry: Entry, dest: Path) -> _Staged:
    assert b.store is not None and entry.stat is not None and entry.digest is not None
    copy, digest, st = b.store / entry.digest, entry.digest, entry.stat

    def fill(out: BinaryIO) -> None:
        try:
            same = copy_stream(copy, out) == digest
        except FileNotFoundError:
            same = False
        if not same:  # changed since _damaged_copies looked: the same answer
            raise _Refused(_damaged_reason(copy))

    staged = _stage_file(b.root, dest, fill, stat.S_IMODE(st[0]), exact=True)
    return _Staged(staged, "restored_from_copy", st[2])


def _known_dirs(b: Baseline) -> set[str]:
    known: set[str] = set()
    for path in itertools.chain(b.index, b.entries, b.area_entries):
        parent = path.rstrip("/").rpartition("/")[0]
        while parent and parent not in known:
            known.add(parent)
            parent = parent.rpartition("/")[0]
    return known


_FOLDER = 0o777  # a folder revert makes again: as a checkout makes one, through the umask


def _stage_file(root: Path, dest: Path, fill: Callable[[BinaryIO], object], perms: int,
                exact: bool = False) -> disk.Staged:
    """A temp file beside `dest` holding what `fill` writes, to be moved in whole: never half a
    file, nor through a link below the root. `perms` passes through the umask, as a checkout
    would, unless `exact`."""
    disk.folders(dest.parent, under=root, mode=_FOLDER)
    return disk.stage(dest, fill, mode=perms, exact=exact, under=root)


def _require_real(root: Path, path: str) -> None:
    """Each folder on the way to `path` is a real folder or absent: nothing is ever written
    through a symlink (or refused: _Refused)."""
    folder = path.rpartition("/")[0]
    while folder:
        try:
            mode = os.lstat(f"{root}/{folder}").st_mode
        except FileNotFoundError:
            mode = stat.S_IFDIR  # absent: made as a real folder when written
        if not stat.S_ISDIR(mode):
            raise _Refused(f"{spelled(folder)} is no longer a folder (a link or a file now stands "
                           "there): nothing is written through it")
        folder = folder.rpartition("/")[0]

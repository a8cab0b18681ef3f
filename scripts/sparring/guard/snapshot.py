"""take: record the tree before a turn (see the package docstring for what is kept)."""

from __future__ import annotations

import contextlib
import glob
import os
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from sparring import disk
from sparring.guard import copies, files
from sparring.guard.baseline import Baseline
from sparring.guard.files import (
    Parents,
    keeper,
    key,
    key_of,
    lstat,
    require_dir,
    sha256,
    walk,
)
from sparring.guard.git import Git, common_dir, git_dir, has_includes
from sparring.guard.gitlist import (
    LS_FILES,
    STATUS,
    index_digest,
    is_opaque,
    listed,
    parse_index,
    unvouched,
)
from sparring.guard.model import Area, Entry, walk_areas

# A file whose ctime is this close to the snapshot may share a clock tick with
# a later change; it is hashed on every check. Generous: ticks are ~4-10 ms.
RACY_MARGIN_NS = 2_000_000_000
_ORIGINS = {"??": "untracked", "!!": "ignored"}


def take(root: Path, exclude: Sequence[str] = (), store: Path | None = None,
         previous: Baseline | None = None, areas: dict[str, Area] | None = None) -> Baseline:
    """Record the tree under `root`; `store` (a folder) receives copies (see COPY_LIMITS).

    Copies are named by their SHA-256, so snapshots may share one store. With `previous`
    (an earlier baseline of the same root, `trusted`), a file whose stat data has not moved
    since is not read again. `areas` are extra paths to watch (see the package docstring).
    """
    root = root.resolve()
    require_dir(root)
    racy_ns = time.time_ns() - RACY_MARGIN_NS
    if store is not None:
        disk.folders(store, under=copies.below(store))
    # Only sparring's own: a digest a file dictates would be kept, and restored, as the
    # contents of a file that never had them.
    reuse = _Reuse(previous if previous and previous.root == root and previous.trusted
                   else None, store)
    if (root / ".git").exists():
        base = _take_git(root, tuple(exclude), store, racy_ns, reuse)
        watched = {**_git_areas(root, base.gitdir), **_submodules(root, base.index, exclude),
                   **(areas or {})}
    else:
        keep = keeper(exclude)
        entries = {path: _record(root, path, "walk", st, reuse)
                   for path, st in walk(root, keep).items()}
        base = Baseline(root, "walk", tuple(exclude), store, racy_ns, entries)
        watched = dict(areas or {})
    base.areas = watched
    base.area_entries = {path: _record(root, path, origin, st, reuse)
                         for path, (origin, st) in walk_areas(root, watched).items()}
    return base


class _Reuse:
    """What an earlier snapshot already knows: a file whose stat data is as it was then (and
    was then outside the racy window) has the contents it had, so its hash, and its copy
    when the store holds it, are taken over without reading the file."""

    def __init__(self, previous: Baseline | None, store: Path | None) -> None:
        self.store = store
        self.known: dict[str, Entry] = {}
        self.racy_ns = 0
        if previous is not None:
            self.known = {**previous.entries, **previous.area_entries}
            self.racy_ns = previous.racy_ns

    def entry(self, path: str, origin: str, st: os.stat_result) -> Entry | None:
        old = self.known.get(path)
        if (old is None or old.stat is None or old.digest is None
                or old.stat != key_of(st) or old.stat[3] >= self.racy_ns):
            return None
        wanted = copies.copy_wanted(origin, st, self.store)
        if wanted and not (self.store and os.path.exists(self.store / old.digest)):
            return None  # no copy to take over: read the file once more, copying it
        return Entry(origin, old.stat, old.digest, old.target, wanted)


class _Listing(NamedTuple):
    """git's part of a snapshot, started: the index's digest, read before the listing (if
    the index moves in between, the check re-reads it), then config, status and ls-files,
    each a call that waits for its git."""

    gitdir: Path
    digest: str
    filters: Callable[[], dict[str, str]]
    status: Callable[[], bytes]
    listing: Callable[[], bytes]


def _start_listing(root: Path, gitdir: Path) -> _Listing:
    git = Git(root, gitdir)
    filters = git.start_filters()  # read while status and ls-files run: none needs another
    digest = index_digest(gitdir)
    return _Listing(gitdir, digest, filters, git.start(*STATUS), git.start(*LS_FILES))


def _take_git(root: Path, exclude: tuple[str, ...], store: Path | None, racy_ns: int,
              reuse: _Reuse) -> Baseline:
    keep = keeper(exclude)
    gitdir = git_dir(root)
    started = _start_listing(root, gitdir)
    digest = started.digest
    status = started.status
    # Read and parse the index while status runs (status prints only at its end).
    listing = started.listing()
    config = started.filters()
    index, all_vouchable = parse_index(listing)
    found = listed(status(), keep)
    for path in [] if all_vouchable else unvouched(index, keep):
        found.setdefault(path, "")
    entries = {path: _git_entry(root, path, code, index.get(path), reuse)
               for path, code in found.items()}
    listing_digest = sha256(listing)
    if store is not None:
        copies.store_bytes(store, listing_digest, listing)
    return Baseline(root, "git", exclude, store, racy_ns, entries, index_digest=digest,
                    listing_digest=listing_digest, filters=config,
                    includes=has_includes(config), index=index, gitdir=gitdir)


def _git_entry(root: Path, path: str, code: str, meta: str | None, reuse: _Reuse) -> Entry:
    if is_opaque(path, meta):
        return Entry("nested", status=code)
    origin = "tracked" if meta is not None else _ORIGINS.get(code, "tracked")
    return _record(root, path, origin, lstat(root / path), reuse)


def _git_areas(root: Path, gitdir: Path) -> dict[str, Area]:
    """git's own files that can make git run programs or change what it reports: the
    config, hooks and info of the repository, the `.git` file that names its folder (a
    worktree's), and everything under `modules/` but the data of each submodule's git
    folder (a planted hook or config there is a change)."""
    common = common_dir(gitdir)
    places = [common / "config", common / "hooks", common / "info", gitdir / "config.worktree",
              gitdir / "info"]
    # info/refs is written by `git update-server-info` (a background `gc --auto` after any
    # commit): data for dumb transports, not anything git acts on.
    found = {relative: Area("gitdir", (f"{relative}/refs",)) if place.name == "info"
             else Area("gitdir") for place in places
             for relative in [_relative_to(root, place)]}
    if (root / ".git").is_file():
        found[".git"] = Area("gitdir")
    modules = common / "modules"
    if modules.is_dir():
        found[_relative_to(root, modules)] = Area("gitdir", _git_data(root, modules))
    return found


# What a git folder holds that git writes as it works (objects, the index, refs, logs): data,
# not anything that makes git run a program; watching it would report the user's own fetch.
_GIT_DATA = ("objects", "logs", "refs", "index", "index.lock", "packed-refs", "FETCH_HEAD",
             "ORIG_HEAD", "info/refs", "shallow")


def _git_data(root: Path, folder: Path) -> tuple[str, ...]:
    """Exclusions (root-relative globs) for the data of every git folder under `folder`: a
    folder holding HEAD is one, and its `modules/` holds the nested ones."""
    found: list[str] = []
    for place in _git_folders(folder):
        relative = glob.escape(_relative_to(root, place))
        found += [f"{relative}/{name}" for name in _GIT_DATA]
    return tuple(found)


def _git_folders(folder: Path) -> list[Path]:
    """The git folders under `folder` (a submodule named `a/b` has its folder at `a/b`)."""
    found = []
    pending = [folder]
    while pending:
        here = pending.pop()
        if (here / "HEAD").is_file():
            found.append(here)
            here = here / "modules"
        with contextlib.suppress(OSError), os.scandir(here) as listing:
            pending += [Path(item.path) for item in listing if item.is_dir(follow_symlinks=False)]
    return found


def _submodules(root: Path, index: dict[str, str], exclude: Sequence[str]) -> dict[str, Area]:
    """Each checked-out submodule's worktree, walked and hashed by the guard itself (git is
    never run in it, see git.py), and its `.git` folder when it has its own."""
    found: dict[str, Area] = {}
    parents = Parents(root)
    for path, meta in index.items():
        if " 160000 " not in meta or not parents.is_real(path):
            continue
        found[path] = Area("submodule", tuple(exclude))
        if (root / path / ".git").is_dir():
            found[f"{path}/.git"] = Area("gitdir", _git_data(root, root / path / ".git"))
    return found


def _relative_to(root: Path, place: Path) -> str:
    return Path(os.path.relpath(place, root)).as_posix()


def _record(root: Path, path: str, origin: str, st: os.stat_result | None,
            reuse: _Reuse) -> Entry:
    """lstat + content fingerprint (and a copy), re-read until the file holds still."""
    if st is not None and (known := reuse.entry(path, origin, st)) is not None:
        return known
    full = root / path
    for _ in range(3):
        if st is None:
            return Entry(origin)
        store = reuse.store if copies.copy_wanted(origin, st, reuse.store) else None
        digest, target = _fingerprint(full, st, store)
        again = lstat(full)
        if key(again) == key(st):
            break
        st = again
    assert st is not None
    copied = store is not None and digest is not None
    return Entry(origin, key(st), digest, target, copied)


def _fingerprint(path: Path, st: os.stat_result,
                 store: Path | None) -> tuple[str | None, str | None]:
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        return sha256(os.fsencode(target)), target
    if not stat.S_ISREG(st.st_mode):
        return None, None
    try:
        return (copies.copy_into(path, store) if store else files.hash_file(path)), None
    except OSError:
        return None, None

"""compare: every file that differs from a baseline (see the package docstring for how).

Most of a check is waiting for `git status`, so git starts before anything else is read
(the index's digest, the stored entries). Only ever on a baseline already found to be this
project's (commands/guard.py's project_baseline): the baseline names the git folder and the
filter drivers git runs, so a forged one must be refused before any git starts.
"""

from __future__ import annotations

import itertools
import os
import stat
from typing import NamedTuple

from sparring.errors import SparringError
from sparring.guard import gitlist
from sparring.guard.baseline import Baseline
from sparring.guard.files import (
    Keep,
    Parents,
    Stat,
    content,
    content_of,
    keeper,
    key,
    key_of,
    lstat,
    require_dir,
    same_content,
    walk,
)
from sparring.guard.git import Git
from sparring.guard.gitlist import LS_FILES, STATUS, blob_id, is_opaque
from sparring.guard.model import Change, Entry, walk_areas

_HASH_BATCH = 500  # paths per `git hash-object` call, well under ARG_MAX


def compare(baseline: Baseline) -> list[Change]:
    """Every file that differs from `baseline`, sorted by path."""
    require_dir(baseline.root)
    if baseline.mode == "walk":
        changes = _compare_walk(baseline)
    else:
        changes = _compare_git(baseline, git_for(baseline))
    changes += _compare_areas(baseline)
    return sorted(changes, key=lambda change: change.path)


def git_for(b: Baseline) -> Git:
    """git for a check: when the repository's config may have changed since the snapshot,
    every filter driver it did not have then is switched off (reading the config costs a
    git process; with the config files as they were, and no include directives that
    could point anywhere, there is nothing new to find)."""
    if b.includes or _config_moved(b):
        return Git(b.root, b.gitdir, b.filters)
    return Git(b.root, b.gitdir)


def _config_moved(b: Baseline) -> bool:
    for place, area in b.areas.items():
        if area.origin != "gitdir" or not place.endswith(("/config", "/config.worktree")):
            continue
        before = b.area_entries.get(place)
        now = key(lstat(b.root / place))
        if before is None or before.stat is None:
            if now is not None:
                return True
        elif now != before.stat or before.stat[3] >= b.racy_ns:
            return True
    return False


def _compare_walk(b: Baseline) -> list[Change]:
    found = walk(b.root, keeper(b.exclude))
    verdicts = (_judge_stat(b, path, b.entries.get(path, Entry("new")), found.get(path))
                for path in b.entries.keys() | found.keys())
    return [change for change in verdicts if change]


def _compare_areas(b: Baseline) -> list[Change]:
    found = walk_areas(b.root, b.areas)
    verdicts = (_judge_stat(b, path, b.area_entries.get(path, Entry(origin)), st)
                for path, (origin, st) in found.items())
    gone = (_judge_stat(b, path, entry, None) for path, entry in b.area_entries.items()
            if path not in found)
    return [change for change in itertools.chain(verdicts, gone) if change]


class _IndexChange(NamedTuple):
    """The index entries that differ from the snapshot's: old and new records, by path."""

    before: dict[str, str]
    after: dict[str, str]

    def moved(self, keep: Keep) -> set[str]:
        return {path for path in self.before.keys() | self.after.keys() if keep(path)}


class _GitNow(NamedTuple):
    listed: dict[str, str]  # path -> status code, for paths git does not vouch for now
    index_now: _IndexChange | None  # None: the same entries as at snapshot
    parents: Parents


class _Pending(NamedTuple):
    """A file clean in the index before and not vouched for now: needs `git hash-object`."""

    path: str
    meta: str
    seen: Stat


def _compare_git(b: Baseline, git: Git) -> list[Change]:
    status = git.start(*STATUS)  # first: the check's time is mostly git status's
    keep = keeper(b.exclude)
    index_moved = gitlist.index_digest(b.gitdir) != b.index_digest
    listing = git.start(*LS_FILES) if index_moved else None
    # Until status() the work overlaps git's (both print into memory, never into a pipe we
    # are not reading yet): the lstat pass first, while ls-files runs too.
    parents = Parents(b.root)
    seen, settled = _look(b, parents)
    index, unvouched = _index_now(listing(), b, keep) if listing else (None, [])
    moved = set() if index is None else index.moved(keep)
    listed = gitlist.listed(status(), keep)
    for path in unvouched:
        listed.setdefault(path, "")
    now = _GitNow(listed, index, parents)
    changes: list[Change] = []
    pending: list[_Pending] = []
    for path in (b.entries.keys() | now.listed.keys() | moved) - (settled - moved):
        verdict = _judge_git(b, now, path, seen)
        if isinstance(verdict, _Pending):
            pending.append(verdict)
        elif verdict:
            changes.append(verdict)
    return changes + _settle(git, pending)


def _index_now(raw: bytes, b: Baseline, keep: Keep) -> tuple[_IndexChange | None, list[str]]:
    """How the index listed now (`raw`) differs from the snapshot's (None: the same entries),
    and its entries git status would not speak for."""
    before = b.listing()
    if raw == before:
        # A refresh rewrote the index with new stat data only: same entries, no parse.
        # (The baseline's own unvouched entries are all in b.entries already.)
        return None, []
    # Compare records, not parsed entries, and only where the listings differ: a commit of a
    # few files changes a few records of 50,000.
    old_part, new_part = gitlist.differing_records(before, raw)
    old, new = set(old_part.split(b"\0")), set(new_part.split(b"\0"))
    change = _IndexChange(gitlist.records(old - new), gitlist.records(new - old))
    # An entry git status cannot speak for (assume-unchanged, skip-worktree, a conflict) is
    # either as it was at snapshot (and then in b.entries already) or a changed record.
    return change, gitlist.unvouched(change.after, keep)


def _look(b: Baseline, parents: Parents) -> tuple[dict[str, os.stat_result | None], set[str]]:
    """lstat every entry along its path, and the ones *settled*: same stat data as at the
    snapshot, from outside the racy window, so their contents cannot have changed. One
    tight loop: on a large tree this runs for thousands of files while git status does."""
    root, racy, is_dir, lstat = f"{b.root}/", b.racy_ns, stat.S_ISDIR, os.lstat
    seen: dict[str, os.stat_result | None] = {}
    settled = set()
    last, real = None, True  # entries come sorted by path: folders repeat
    for path, entry in b.entries.items():
        seen[path] = None
        folder = path.rpartition("/")[0]
        if folder != last:
            last, real = folder, not folder or parents.is_real(folder)
        if not real:
            continue
        try:
            st = lstat(root + path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        if is_dir(st.st_mode):
            continue
        seen[path] = st
        known = entry.stat
        if (known is not None and known[3] < racy and known
                == (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)):
            settled.add(path)
    return seen, settled


def _before_meta(b: Baseline, change: _IndexChange | None, path: str) -> str | None:
    entry = b.entries.get(path)
    if entry is not None and entry.origin in ("untracked", "ignored"):
        return None  # not in the index: no need to read it
    if change is not None and path in change.before:
        return change.before[path]
    return b.meta(path)


def _after_meta(change: _IndexChange | None, path: str, before: str | None) -> str | None:
    if change is None or (path not in change.after and path not in change.before):
        return before  # this entry did not change
    return change.after.get(path)


def _judge_git(b: Baseline, now: _GitNow, path: str,
               seen: dict[str, os.stat_result | None]) -> Change | _Pending | None:
    before_meta = _before_meta(b, now.index_now, path)
    after_meta = _after_meta(now.index_now, path, before_meta)
    if is_opaque(path, before_meta, after_meta):
        return _judge_opaque(b, now, path, before_meta, after_meta)
    entry = b.entries.get(path)
    if entry is None and before_meta is not None:
        return _judge_blob(b, now, path, before_meta, after_meta)
    st = seen[path] if path in seen else now.parents.lstat(path)
    return _judge_stat(b, path, entry or Entry("new"), st)


def _judge_stat(b: Baseline, path: str, entry: Entry, st: os.stat_result | None) -> Change | None:
    """The change at `path`, recorded as `entry`, now lstat `st` (None: absent), if any."""
    now = key(st)
    if entry.stat is None or now is None:
        if entry.stat is None and now is None:
            return None
        return Change(path, "added" if now else "deleted", entry.origin, now)
    if now == entry.stat and entry.stat[3] < b.racy_ns:
        return None
    assert st is not None
    # A string join: pathlib's `/` costs ~10 us, a third of a check's own time on 5,000 files.
    if same_content(content(f"{b.root}/{path}", st), content_of(entry.stat, entry.digest)):
        return None
    return Change(path, "modified", entry.origin, now)


def _judge_blob(b: Baseline, now: _GitNow, path: str, meta: str,
                after: str | None) -> Change | _Pending | None:
    st = now.parents.lstat(path)
    if after is not None and path not in now.listed:
        if blob_id(after) == blob_id(meta):
            return None
        return Change(path, "modified", "tracked", key(st))
    if st is None:
        return Change(path, "deleted", "tracked", None)
    if stat.S_ISREG(st.st_mode):
        if after == meta and now.listed.get(path, "")[1:] == "M":
            # git status compared the file with the very entry the snapshot saw: its word
            # stands, and spares a `git hash-object`.
            return Change(path, "modified", "tracked", key_of(st))
        return _Pending(path, meta, key_of(st))
    if stat.S_ISLNK(st.st_mode):
        link = os.fsencode(os.readlink(f"{b.root}/{path}"))
        if ("120000", gitlist.git_blob_id(link, meta)) == blob_id(meta):
            return None
    return Change(path, "modified", "tracked", key_of(st))


def _judge_opaque(b: Baseline, now: _GitNow, path: str, before_meta: str | None,
                  after_meta: str | None) -> Change | None:
    entry = b.entries.get(path)
    before = ((entry.status or "") if entry else "", blob_id(before_meta))
    after = (now.listed.get(path, ""), blob_id(after_meta))
    if before == after:
        return None
    kind = "added" if not any(before) else "deleted" if not any(after) else "modified"
    return Change(path, kind, "nested", None)


def _settle(git: Git, pending: list[_Pending]) -> list[Change]:
    """Hash the pending files as git would (filters applied) and keep those that differ."""
    changes = []
    for start in range(0, len(pending), _HASH_BATCH):
        batch = pending[start:start + _HASH_BATCH]
        for item, blob in zip(batch, _hashed(git, [p.path for p in batch]), strict=True):
            mode = "100755" if item.seen[0] & stat.S_IXUSR else "100644"
            if blob is None or (mode, blob) != blob_id(item.meta):
                changes.append(Change(item.path, "modified", "tracked", item.seen))
    return changes


def _hashed(git: Git, paths: list[str]) -> list[str | None]:
    """git's blob id of each file; None for one git cannot hash (made unreadable, or gone
    since it was looked at): it changed. One `git hash-object` for the lot; when that fails,
    each half again, down to the files that fail (a few processes per such file, not one
    per file of the batch)."""
    try:
        return list(git.run("hash-object", "--", *paths).decode().split())
    except SparringError:
        if len(paths) == 1:
            return [None]
        half = len(paths) // 2
        return _hashed(git, paths[:half]) + _hashed(git, paths[half:])

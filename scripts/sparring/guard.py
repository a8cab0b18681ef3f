"""The file-modification guard: did a Codex turn change the user's files?

`take` records the tree before a turn, `compare` lists what differs after it,
`revert` puts back what can be put back, and never destroys anything. The unit
is the file (a regular file or a symlink) under the project root; directories
are not entries, so an empty directory created or removed is not a change.

**What counts as a change.** A file is *modified* when its bytes differ, its
executable bit differs, its type differs (file / symlink), or, for a symlink,
its target differs: what git would record. A `touch`, a `chmod 600` or a
rewrite with identical bytes is *not* a change, everywhere (tracked, untracked,
ignored, outside git); stat data only decides when contents need hashing. A
path is looked at with lstat *along the whole path*: a file whose folder was
swapped for a symlink (`mv src src.bak && ln -s src.bak src`) is gone from
where it was, however alike the file read through the link looks.

**In a git repository** (the root holds `.git`) git does the bulk of the work:

- *Tracked files that git vouches for.* `git ls-files --stage` gives each
  tracked path its blob id; `git status` (porcelain, `-z`, `-uall`,
  `--ignored`) lists every path whose worktree differs from the index. A
  tracked path that status does not list has exactly its index blob as
  content, by git's own racy-safe stat+hash check. So the snapshot keeps the
  index listing (path -> mode and blob id), and a later check asks the same
  two questions: for a path clean before and after, the content changed iff
  the blob id did (this also catches `git commit`, `stash` or `checkout`
  during the turn, after which status is clean again). The index listing is
  re-read only when `.git/index` changed (its trailing checksum), and parsed
  only when the listing did (or a check needs a path's old entry). That
  reading, and the lstat of the files below, happen while `git status` runs,
  so a check costs little more than status.
- *Everything git cannot vouch for* - files dirty in the worktree (status
  column Y), untracked files, ignored files (status in "traditional" ignored
  mode with `-uall` lists each ignored file, not the collapsed directory),
  files flagged assume-unchanged or skip-worktree, conflicted paths. For
  these the snapshot stores lstat data (mode, size, mtime, ctime, inode) and
  a SHA-256 of the contents (of the target, for a symlink). The check lstats
  them again and hashes only when the stat data differs: ctime and inode
  cannot be set back by a program, so a same-size rewrite whose mtime was
  restored with `utime` still differs, and the hash then confirms whether the
  bytes really changed. Files whose ctime falls within `RACY_MARGIN_NS` of
  the snapshot are hashed on every check, because a change in the same clock
  tick as the snapshot could leave the stat data equal (git's "racy clean").
  A snapshot given the previous one reuses its hash of a file whose stat data
  has not moved (and its copy, when the store has it), so it reads only what
  changed.
- A tracked file that was clean before but is not clean after is compared by
  `git hash-object` (with the repository's filters), so the ids compare with
  the index blob ids exactly.
- Nested repositories (untracked, status line `?? dir/`) and submodules are
  opaque: they are compared by their status line and index entry in the
  parent, never looked into. Such a path is reported with its status spelling
  (a nested repository as `dir/`), and `revert` never touches it.
- *git's own folder.* `.git/config`, `.git/hooks/` and `.git/info/` (and a
  worktree's `config.worktree` and `info/`) are watched like untracked files:
  a planted hook or a new filter driver is a change. Every git command runs
  through `gitcmd`, with fsmonitor, hooks and any filter driver not configured
  at snapshot time switched off, so a check never runs what a turn planted.

**Outside git** the tree is walked (`.git` directories skipped) and every
file is recorded with lstat data and a hash, compared the same way.

**Copies.** With a `store` (a folder, content-addressed so snapshots may share
it), the snapshot keeps a copy of every file git cannot restore: dirty tracked
files, untracked files and files outside git up to `COPY_LIMITS`, ignored files
and git's own files up to a smaller limit (a `node_modules/` is rebuilt, not
restored).

**Areas.** The caller may watch folders the tree listing leaves out (the
runner watches the session's own folder under `.sparring/`): each is walked
and compared like files outside git, with its own exclusions; what changes
there is reported and never reverted.

Never reported: the root's `.sparring/` (sparring's own state, unless watched
as an area) and paths matching the `exclude` globs (relative to the root,
fnmatch syntax, where `*` also crosses `/`; a pattern matching a directory
covers what is inside).

**Revert** recomputes nothing blindly and destroys nothing. For each change it
first checks the path is still exactly as the check saw it (same lstat data
along the path, or still absent). What it removes (a file the turn added) or
replaces (the turn's version of a file it restores) is moved into a trash
folder under `.sparring/guard-trash/`, never deleted. A file is restored from
its blob (`cat-file --filters`, as a checkout would), or from the snapshot's
copy with its permissions and mtime; only into real folders, never through a
symlink. Anything in doubt is listed with the reason and left as it is: a
file changed since the check, a nested repository, a file without a copy, an
added file that holds the content of a file revert cannot put back (it may be
the only copy of the user's work), sparring's own state, a path outside the
root. Revert restores files, not git's index or HEAD.

The guard assumes the tree is quiet while a snapshot or check runs (the
runner calls them between turns).
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import hashlib
import itertools
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from sparring.errors import SparringError
from sparring.gitcmd import Git, common_dir, git_dir, has_includes
from sparring.state import PRIVATE_FILE, StateFile, private_dir, write_atomic
from sparring.workspace import STATE_DIR

FORMAT = 2
KIND = "guard baseline"
CHANGES_KIND = "guard changes"
# A file whose ctime is this close to the snapshot may share a clock tick with
# a later change; it is hashed on every check. Generous: ticks are ~4-10 ms.
RACY_MARGIN_NS = 2_000_000_000
_CHUNK = 1 << 20
_HASH_BATCH = 500  # paths per `git hash-object` call, well under ARG_MAX
_FEW_LOOKUPS = 32  # index entries a check looks up in the raw listing before parsing it
MIB = 1 << 20
# The largest file of each origin the snapshot copies (a store given). Ignored files and
# git's own are rebuilt or small; the user's own work is kept up to a generous size.
COPY_LIMITS = {"tracked": 64 * MIB, "untracked": 64 * MIB, "walk": 64 * MIB,
               "ignored": 1 * MIB, "gitdir": 1 * MIB}
AREA_ORIGINS = ("gitdir", "state")

Stat = tuple[int, int, int, int, int]  # st_mode, st_size, st_mtime_ns, st_ctime_ns, st_ino
Keep = Callable[[str], bool]

_ORIGINS = {"??": "untracked", "!!": "ignored"}
_NOT_KEPT = {
    "untracked": "untracked before the turn, and sparring kept no copy of it",
    "ignored": f"ignored by git, and sparring kept no copy of it (it copies ignored files up "
               f"to {COPY_LIMITS['ignored'] // MIB} MiB)",
    "walk": "outside git, and sparring kept no copy of it",
    "tracked": "no copy of its pre-turn content was kept (no store given, or copying failed)",
    "gitdir": "git's own file, and sparring kept no copy of it",
}


class Entry(NamedTuple):
    """What the snapshot knows of one path git does not vouch for.

    `stat` is None when the path was absent (a tracked file already deleted).
    `digest` is the SHA-256 of the contents or of a symlink's target, None for
    other file types or unreadable files. Opaque entries (nested repositories,
    submodules) carry git's status code instead. (A named tuple: a baseline
    holds thousands, made fast.)
    """

    origin: str  # tracked | untracked | ignored | walk | nested | new | gitdir | state
    stat: Stat | None = None
    digest: str | None = None
    target: str | None = None
    copied: bool = False
    status: str | None = None

    def to_row(self) -> list[Any]:
        """Compact JSON: [origin, stat, digest, target, copied, status]."""
        return [self.origin, list(self.stat) if self.stat else None, self.digest,
                self.target, int(self.copied), self.status]

    @classmethod
    def from_row(cls, row: Any) -> Entry:
        if isinstance(row, dict):  # format 1
            row = [row["origin"], row.get("stat"), row.get("digest"), row.get("target"),
                   row.get("copied"), row.get("status")]
        origin, raw, digest, target, copied, status = row
        return cls(str(origin), _stat_from(raw), digest, target, bool(copied), status)


def _stat_from(raw: Any) -> Stat | None:
    if raw is None:
        return None
    if (not isinstance(raw, list) or len(raw) != 5
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in raw)):
        raise ValueError(f"bad stat {raw!r}")
    return raw[0], raw[1], raw[2], raw[3], raw[4]


class Change(NamedTuple):
    """One path that differs from the snapshot.

    `origin` says what the path was before (tracked, untracked, ignored, walk,
    nested, gitdir, state, or new when it did not exist); `seen` is its lstat
    data when the check looked (None: absent), so `revert` can refuse if it
    moved since.
    """

    path: str
    change: str  # added | modified | deleted
    origin: str
    seen: Stat | None

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "change": self.change}

    def to_record(self) -> dict[str, Any]:
        return {**self.to_dict(), "origin": self.origin,
                "seen": list(self.seen) if self.seen else None}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Change:
        if data.get("change") not in ("added", "modified", "deleted"):
            raise ValueError(f"bad change {data.get('change')!r}")
        return cls(str(data["path"]), data["change"], str(data["origin"]),
                   _stat_from(data.get("seen")))


class RevertResult:
    def __init__(self) -> None:
        self.reverted: list[dict[str, str]] = []
        self.not_reverted: list[dict[str, str]] = []
        self.clean_after = False
        self.trash: str | None = None  # where removed and replaced files went

    def to_dict(self) -> dict[str, Any]:
        return {"reverted": self.reverted, "not_reverted": self.not_reverted,
                "clean_after": self.clean_after, "trash": self.trash}


class Area(NamedTuple):
    """A folder (or file) outside the listed tree, watched by lstat and hash."""

    origin: str  # gitdir | state
    exclude: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"origin": self.origin, "exclude": list(self.exclude)}


class Baseline:
    """The tree at one moment; see the module docstring for what is kept and why.

    With a store, the bulk (the entries of files git does not vouch for, the index listing)
    lives there, content-addressed, and is read when first needed: a check starts git
    before it reads them, and identical entries of two turns are kept once.
    """

    def __init__(self, root: Path, mode: str, exclude: tuple[str, ...], store: Path | None,
                 racy_ns: int, entries: dict[str, Entry] | None = None, *,
                 index_digest: str = "", listing_digest: str = "", entries_digest: str = "",
                 areas: dict[str, Area] | None = None,
                 area_entries: dict[str, Entry] | None = None,
                 filters: dict[str, str] | None = None, includes: bool = False,
                 index: dict[str, str] | None = None) -> None:
        self.root, self.mode, self.exclude, self.store = root, mode, exclude, store
        self.racy_ns = racy_ns
        self._entries = entries
        self.index_digest, self.listing_digest = index_digest, listing_digest
        self.entries_digest = entries_digest
        self.areas = areas or {}
        self.area_entries = area_entries or {}
        self.filters = filters or {}  # the filter drivers configured at snapshot: trusted
        self.includes = includes  # the config had include directives at snapshot
        self._index = index
        self._listing: bytes | None = None
        self._lookups = 0

    @property
    def entries(self) -> dict[str, Entry]:
        if self._entries is None:
            # Checked by its digest (_stored): rows as sparring wrote them, built without
            # the per-field checks of a file that could say anything.
            rows = json.loads(self._stored(self.entries_digest, "entries"))
            self._entries = {path: Entry(o, tuple(s) if s else None, d, t, c == 1, st)
                             for path, (o, s, d, t, c, st) in rows.items()}
        return self._entries

    @property
    def index(self) -> dict[str, str]:
        """Path -> "TAG MODE BLOB STAGE" of the index at snapshot, parsed on first use."""
        if self._index is None:
            self._index = {} if self.mode != "git" else _parse_index(self.listing())[0]
        return self._index

    def listing(self) -> bytes:
        """The index at snapshot as `git ls-files --stage -v -z` printed it."""
        if self._listing is None:
            if self._index is not None:  # kept inline: spell it as git did
                self._listing = b"".join(f"{meta}\t{path}\0".encode("utf-8", "surrogateescape")
                                         for path, meta in self._index.items())
            else:
                self._listing = self._stored(self.listing_digest, "index listing")
        return self._listing

    def meta(self, path: str) -> str | None:
        """`index[path]`, found in the raw listing while few are asked for (a check asks for
        a handful; parsing 50,000 entries for them would cost more than git status)."""
        if self._index is not None or self.mode != "git":
            return self.index.get(path)
        self._lookups += 1
        if self._lookups > _FEW_LOOKUPS:
            return self.index.get(path)
        return _find_record(self.listing(), path)

    def _stored(self, digest: str, what: str) -> bytes:
        path = (self.store or Path("/nonexistent")) / digest
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise _damaged(path, f"(its {what}) cannot be read ({exc.strerror})") from exc
        if _sha256(data) != digest:
            raise _damaged(path, f"(its {what}) was changed")
        return data

    def save(self, path: Path) -> None:
        """Write atomically; ASCII JSON so that non-UTF-8 file names survive the round trip."""
        write_atomic(path, json.dumps(self.to_dict(), ensure_ascii=True, separators=(",", ":")))

    @classmethod
    def load(cls, path: Path) -> Baseline:
        """Read a saved baseline; a missing or damaged file is an error and is left untouched."""
        try:
            data = StateFile(path, KIND, FORMAT, {1: _from_format_1}).read()
        except FileNotFoundError:
            raise SparringError(
                "file_not_found", f"no baseline at {path}",
                "write one first with `sparring guard snapshot --out FILE`", path=str(path),
            ) from None
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise _damaged(path, f"is damaged ({exc!r})") from exc

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": FORMAT, "kind": KIND, "root": str(self.root), "mode": self.mode,
            "exclude": list(self.exclude), "store": str(self.store) if self.store else None,
            "racy_ns": self.racy_ns, "index_digest": self.index_digest,
            "listing_digest": self.listing_digest, "filters": self.filters,
            "includes": self.includes,
            "areas": {path: area.to_dict() for path, area in self.areas.items()},
            "area_entries": {path: e.to_row() for path, e in self.area_entries.items()},
        }
        rows = json.dumps({path: e.to_row() for path, e in self.entries.items()},
                          ensure_ascii=True, separators=(",", ":")).encode("ascii")
        if self.store is None:  # nowhere else to keep the bulk: keep it here
            data.update(entries=json.loads(rows), index=self.index)
        else:
            data["entries_digest"] = _sha256(rows)
            _store_bytes(self.store, data["entries_digest"], rows)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Baseline:
        if data.get("kind") != KIND or data.get("mode") not in ("git", "walk"):
            raise ValueError("not a guard baseline")
        index = data.get("index")
        if index is not None and (not isinstance(index, dict)
                                  or not all(isinstance(v, str) for v in index.values())):
            raise ValueError("bad index")
        filters = data.get("filters") or {}
        if not all(isinstance(v, str) for v in filters.values()):
            raise ValueError("bad filters")
        entries = data.get("entries")
        return cls(
            Path(data["root"]), data["mode"], tuple(str(p) for p in data["exclude"]),
            Path(data["store"]) if data.get("store") else None, int(data["racy_ns"]),
            None if entries is None else {str(p): Entry.from_row(e) for p, e in entries.items()},
            index_digest=str(data["index_digest"]), listing_digest=str(data["listing_digest"]),
            entries_digest=str(data.get("entries_digest", "")),
            areas={str(p): Area(str(a["origin"]), tuple(str(x) for x in a["exclude"]))
                   for p, a in (data.get("areas") or {}).items()},
            area_entries={str(p): Entry.from_row(e)
                          for p, e in (data.get("area_entries") or {}).items()},
            filters=dict(filters), includes=bool(data.get("includes")), index=index,
        )


def _from_format_1(data: dict[str, Any]) -> dict[str, Any]:
    """Format 1 kept the index inline and watched no areas; it reads as is."""
    return {**data, "format": 2}


def _damaged(path: Path, why: str) -> SparringError:
    return SparringError(
        "state_corrupt", f"the guard baseline {path} {why}",
        "the file was left untouched; take a new one with `sparring guard snapshot`",
        path=str(path),
    )


def save_changes(path: Path, changes: Sequence[Change]) -> None:
    """What a check found, with the stat data it saw, so a revert can undo exactly that."""
    StateFile(path, CHANGES_KIND, 1).create({"changes": [c.to_record() for c in changes]})


def load_changes(path: Path) -> list[Change]:
    data = StateFile(path, CHANGES_KIND, 1).read()
    try:
        return [Change.from_record(item) for item in data["changes"]]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _damaged(path, f"(the changes a check recorded) is damaged ({exc!r})") from exc


# --- take -------------------------------------------------------------------------------


def take(root: Path, exclude: Sequence[str] = (), store: Path | None = None,
         previous: Baseline | None = None, areas: dict[str, Area] | None = None) -> Baseline:
    """Record the tree under `root`; `store` (a folder) receives copies (see COPY_LIMITS).

    Copies are named by their SHA-256, so snapshots may share one store. With `previous`
    (an earlier baseline of the same root), a file whose stat data has not moved since is
    not read again. `areas` are extra paths to watch (see the module docstring).
    """
    root = root.resolve()
    _require_dir(root)
    racy_ns = time.time_ns() - RACY_MARGIN_NS
    if store is not None:
        private_dir(store)
    reuse = _Reuse(previous if previous and previous.root == root else None, store)
    if (root / ".git").exists():
        base = _take_git(root, tuple(exclude), store, racy_ns, reuse)
        watched = {**_git_areas(root), **(areas or {})}
    else:
        keep = _keeper(exclude)
        entries = {path: _record(root, path, "walk", st, reuse)
                   for path, st in _walk(root, keep).items()}
        base = Baseline(root, "walk", tuple(exclude), store, racy_ns, entries)
        watched = dict(areas or {})
    base.areas = watched
    base.area_entries = {path: _record(root, path, origin, st, reuse)
                         for path, (origin, st) in _walk_areas(root, watched).items()}
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
                or old.stat != _key_of(st) or old.stat[3] >= self.racy_ns):
            return None
        wanted = _copy_wanted(origin, st, self.store)
        if wanted and not (self.store and os.path.exists(self.store / old.digest)):
            return None  # no copy to take over: read the file once more, copying it
        return Entry(origin, old.stat, old.digest, old.target, wanted)


def _take_git(root: Path, exclude: tuple[str, ...], store: Path | None, racy_ns: int,
              reuse: _Reuse) -> Baseline:
    keep = _keeper(exclude)
    git = Git(root)
    config = git.filters()
    # Digest before listing: if the index moves in between, the check re-reads it.
    index_digest = _index_digest(root)
    status = git.start(*_STATUS)
    # Read and parse the index while status runs (status prints only at its end).
    listing = git.run(*_LS_FILES)
    index, all_vouchable = _parse_index(listing)
    listed = _listed(status(), keep)
    for path in [] if all_vouchable else _unvouched(index, keep):
        listed.setdefault(path, "")
    entries = {path: _git_entry(root, path, code, index.get(path), reuse)
               for path, code in listed.items()}
    listing_digest = _sha256(listing)
    if store is not None:
        _store_bytes(store, listing_digest, listing)
    return Baseline(root, "git", exclude, store, racy_ns, entries, index_digest=index_digest,
                    listing_digest=listing_digest, filters=config,
                    includes=has_includes(config), index=index)


def _git_entry(root: Path, path: str, code: str, meta: str | None, reuse: _Reuse) -> Entry:
    if _is_opaque(path, meta):
        return Entry("nested", status=code)
    origin = "tracked" if meta is not None else _ORIGINS.get(code, "tracked")
    return _record(root, path, origin, _lstat(root / path), reuse)


def _git_areas(root: Path) -> dict[str, Area]:
    """git's own files that can make git run programs or change what it reports."""
    gitdir = git_dir(root)
    common = common_dir(gitdir)
    places = [common / "config", common / "hooks", common / "info", gitdir / "config.worktree",
              gitdir / "info"]
    # info/refs is written by `git update-server-info` (a background `gc --auto` after any
    # commit): data for dumb transports, not anything git acts on.
    return {relative: Area("gitdir", (f"{relative}/refs",)) if place.name == "info"
            else Area("gitdir") for place in places
            for relative in [_relative_to(root, place)]}


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
        store = reuse.store if _copy_wanted(origin, st, reuse.store) else None
        digest, target = _fingerprint(full, st, store)
        again = _lstat(full)
        if _key(again) == _key(st):
            break
        st = again
    assert st is not None
    copied = store is not None and digest is not None
    return Entry(origin, _key(st), digest, target, copied)


def _copy_wanted(origin: str, st: os.stat_result, store: Path | None) -> bool:
    limit = COPY_LIMITS.get(origin)
    return (store is not None and limit is not None and stat.S_ISREG(st.st_mode)
            and st.st_size <= limit)


def _fingerprint(path: Path, st: os.stat_result,
                 store: Path | None) -> tuple[str | None, str | None]:
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        return _sha256(os.fsencode(target)), target
    if not stat.S_ISREG(st.st_mode):
        return None, None
    try:
        return (_copy_into(path, store) if store else _hash_file(path)), None
    except OSError:
        return None, None


# --- compare ----------------------------------------------------------------------------


# git processes started before the command line machinery loaded (start_early), by
# (root, git settings, the command's arguments).
_EARLY: dict[tuple[str, tuple[str, ...], tuple[str, ...]], Callable[[], bytes]] = {}


def start_early(path: Path) -> None:
    """Start the `git status` a check of the baseline at `path` will need, now.

    `sparring guard check` spends most of its time waiting for git status; `python -m
    sparring` calls this before it loads the command line (click and the rest, some 40 ms),
    so the two overlap. compare() takes the started process if its git settings match,
    else starts its own. A baseline that cannot be read starts nothing (the check then
    reports why)."""
    try:
        base = Baseline.load(path)
    except SparringError:
        return
    if base.mode != "git" or not base.root.is_dir():
        return
    git = _git_for(base)
    for args in (_STATUS, _LS_FILES) if _index_digest(base.root) != base.index_digest else (
            _STATUS,):
        _EARLY[_early_key(git, args)] = git.start(*args)


def _early_key(git: Git, args: tuple[str, ...]) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    return str(git.root), tuple(git.overrides), args


def _git_output(git: Git, *args: str) -> Callable[[], bytes]:
    """`git ARGS` for a check: the process start_early began, or a new one."""
    return _EARLY.pop(_early_key(git, args), None) or git.start(*args)


def compare(baseline: Baseline) -> list[Change]:
    """Every file that differs from `baseline`, sorted by path."""
    _require_dir(baseline.root)
    if baseline.mode == "walk":
        changes = _compare_walk(baseline)
    else:
        changes = _compare_git(baseline, _git_for(baseline))
    changes += _compare_areas(baseline)
    while _EARLY:  # started early but not needed after all: let it end, never leave it
        with contextlib.suppress(SparringError):
            _EARLY.popitem()[1]()
    return sorted(changes, key=lambda change: change.path)


def _git_for(b: Baseline) -> Git:
    """git for a check: when the repository's config may have changed since the snapshot,
    every filter driver it did not have then is switched off (reading the config costs a
    git process; with the config files as they were, and no include directives that
    could point anywhere, there is nothing new to find)."""
    if b.includes or _config_moved(b):
        return Git(b.root, b.filters)
    return Git(b.root)


def _config_moved(b: Baseline) -> bool:
    for place, area in b.areas.items():
        if area.origin != "gitdir" or not place.endswith(("/config", "/config.worktree")):
            continue
        before = b.area_entries.get(place)
        now = _key(_lstat(b.root / place))
        if before is None or before.stat is None:
            if now is not None:
                return True
        elif now != before.stat or before.stat[3] >= b.racy_ns:
            return True
    return False


def _compare_walk(b: Baseline) -> list[Change]:
    found = _walk(b.root, _keeper(b.exclude))
    verdicts = (_judge_stat(b, path, b.entries.get(path, Entry("new")), found.get(path))
                for path in b.entries.keys() | found.keys())
    return [change for change in verdicts if change]


def _compare_areas(b: Baseline) -> list[Change]:
    found = _walk_areas(b.root, b.areas)
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
    parents: _Parents


class _Pending(NamedTuple):
    """A file clean in the index before and not vouched for now: needs `git hash-object`."""

    path: str
    meta: str
    seen: Stat


def _compare_git(b: Baseline, git: Git) -> list[Change]:
    keep = _keeper(b.exclude)
    index_moved = _index_digest(b.root) != b.index_digest
    status = _git_output(git, *_STATUS)
    # Until status() the work overlaps git's: status prints only when it is done,
    # so it never waits on a pipe we are not reading yet.
    index, unvouched = _index_now(git, b, keep) if index_moved else (None, [])
    moved = set() if index is None else index.moved(keep)
    parents = _Parents(b.root)
    seen, settled = _look(b, parents)
    listed = _listed(status(), keep)
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


def _index_now(git: Git, b: Baseline, keep: Keep) -> tuple[_IndexChange | None, list[str]]:
    """How the index differs from the snapshot's (None: the same entries), and its entries
    git status would not speak for."""
    raw = _git_output(git, *_LS_FILES)()
    before = b.listing()
    if raw == before:
        # A refresh rewrote the index with new stat data only: same entries, no parse.
        # (The baseline's own unvouched entries are all in b.entries already.)
        return None, []
    # Compare records, not parsed entries, and only where the listings differ: a commit of a
    # few files changes a few records of 50,000.
    old_part, new_part = _differing_records(before, raw)
    old, new = set(old_part.split(b"\0")), set(new_part.split(b"\0"))
    change = _IndexChange(_records(old - new), _records(new - old))
    # An entry git status cannot speak for (assume-unchanged, skip-worktree, a conflict) is
    # either as it was at snapshot (and then in b.entries already) or a changed record.
    return change, _unvouched(change.after, keep)


def _differing_records(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    """The stretch of whole `\\0`-ended records where two listings differ (one of them may
    be empty): what lies before and after it is the same in both."""
    head = _common_length(a, b, 1)
    tail = _common_length(a, b, -1, most=min(len(a), len(b)) - head)
    start = a.rfind(b"\0", 0, head) + 1  # back to the start of the record
    a_end, b_end = len(a) - tail, len(b) - tail
    shift = a.find(b"\0", a_end - 1) if a_end > start else -1  # on to the end of a record
    if shift >= 0:
        b_end += shift + 1 - a_end
        a_end = shift + 1
    if not (_whole(a, start, a_end) and _whole(b, start, b_end)):
        return a, b  # a path with a tab can defeat the alignment: compare everything
    return a[start:a_end], b[start:b_end]


def _whole(data: bytes, start: int, end: int) -> bool:
    """data[start:end] is a run of whole records (or nothing)."""
    return start <= end and (start == 0 or data[start - 1] == 0) and (
        end == start or data[end - 1] == 0)


def _common_length(a: bytes, b: bytes, direction: int, most: int | None = None) -> int:
    """How many bytes `a` and `b` share at the start (direction 1) or the end (-1): chunks
    compared at C speed, the chunk narrowed where they first differ."""
    most = min(len(a), len(b)) if most is None else most
    done, step = 0, 1 << 16
    while step:
        while done + step <= most and _chunk(a, done, step, direction) == _chunk(
                b, done, step, direction):
            done += step
        step >>= 4
    return done


def _chunk(data: bytes, offset: int, size: int, direction: int) -> bytes:
    if direction > 0:
        return data[offset:offset + size]
    return data[len(data) - offset - size:len(data) - offset]


def _records(raw: Iterable[bytes]) -> dict[str, str]:
    found = {}
    for record in raw:
        meta, _, path = _decode(record).partition("\t")
        if path:
            found[path] = meta
    return found


def _look(b: Baseline, parents: _Parents) -> tuple[dict[str, os.stat_result | None], set[str]]:
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
    if _is_opaque(path, before_meta, after_meta):
        return _judge_opaque(b, now, path, before_meta, after_meta)
    entry = b.entries.get(path)
    if entry is None and before_meta is not None:
        return _judge_blob(b, now, path, before_meta, after_meta)
    st = seen[path] if path in seen else now.parents.lstat(path)
    return _judge_stat(b, path, entry or Entry("new"), st)


def _judge_stat(b: Baseline, path: str, entry: Entry, st: os.stat_result | None) -> Change | None:
    key = _key(st)
    if entry.stat is None or key is None:
        if entry.stat is None and key is None:
            return None
        return Change(path, "added" if key else "deleted", entry.origin, key)
    if key == entry.stat and entry.stat[3] < b.racy_ns:
        return None
    assert st is not None
    if _same_content(_content(_at(b, path), st), _content_of(entry)):
        return None
    return Change(path, "modified", entry.origin, key)


def _judge_blob(b: Baseline, now: _GitNow, path: str, meta: str,
                after: str | None) -> Change | _Pending | None:
    st = now.parents.lstat(path)
    if after is not None and path not in now.listed:
        if _blob_id(after) == _blob_id(meta):
            return None
        return Change(path, "modified", "tracked", _key(st))
    if st is None:
        return Change(path, "deleted", "tracked", None)
    if stat.S_ISREG(st.st_mode):
        return _Pending(path, meta, _key_of(st))
    if stat.S_ISLNK(st.st_mode):
        link_id = ("120000", _git_blob_id(os.fsencode(os.readlink(_at(b, path))), meta))
        if link_id == _blob_id(meta):
            return None
    return Change(path, "modified", "tracked", _key_of(st))


def _judge_opaque(b: Baseline, now: _GitNow, path: str, before_meta: str | None,
                  after_meta: str | None) -> Change | None:
    entry = b.entries.get(path)
    before = ((entry.status or "") if entry else "", _blob_id(before_meta))
    after = (now.listed.get(path, ""), _blob_id(after_meta))
    if before == after:
        return None
    kind = "added" if not any(before) else "deleted" if not any(after) else "modified"
    return Change(path, kind, "nested", None)


def _settle(git: Git, pending: list[_Pending]) -> list[Change]:
    """Hash the pending files as git would (filters applied) and keep those that differ."""
    changes = []
    for start in range(0, len(pending), _HASH_BATCH):
        batch = pending[start:start + _HASH_BATCH]
        ids = git.run("hash-object", "--", *(p.path for p in batch)).decode().split()
        for item, blob in zip(batch, ids, strict=True):
            mode = "100755" if item.seen[0] & stat.S_IXUSR else "100644"
            if (mode, blob) != _blob_id(item.meta):
                changes.append(Change(item.path, "modified", "tracked", item.seen))
    return changes


# --- revert -----------------------------------------------------------------------------


class _Refused(Exception):
    """A change revert leaves alone; the message is the reason shown to the user."""


class _Undo:
    """What one revert works with."""

    def __init__(self, b: Baseline, protected: Iterable[str], todo: Sequence[Change]) -> None:
        from sparring.trash import Trash  # only a revert needs it

        self.b = b
        self.git = Git(b.root, b.filters) if b.mode == "git" else None
        self.trash = Trash(b.root)
        self.known = _known_dirs(b)  # folders that held files at snapshot: never removed
        self.doubtful = _unrestorable(b, todo)  # digest -> path it cannot put back
        self.protected = frozenset(protected)  # never touched (files the runner wrote)
        self.parents = _Parents(b.root)


def revert(baseline: Baseline, changes: Sequence[Change] | None = None,
           protected: Iterable[str] = ()) -> RevertResult:
    """Undo `changes` (default: a fresh `compare`) where that is safe; see the module docstring.

    Pass the changes an earlier check returned to revert exactly those: any
    file that moved since that check is left alone and listed. `protected` paths are
    never touched.
    """
    todo = compare(baseline) if changes is None else list(changes)
    undo = _Undo(baseline, protected, todo)
    result = RevertResult()
    for change in sorted(todo, key=_revert_order):
        undo.parents = _Parents(baseline.root)  # folders come and go as changes are undone
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
    return {"path": change.path, "change": change.change, **extra}


def _revert_one(undo: _Undo, change: Change) -> tuple[str, dict[str, str]]:
    b = undo.b
    _require_revertible(undo, change)
    now = undo.parents.lstat(change.path)
    if _key(now) != change.seen:
        raise _Refused("it changed again since it was checked; left as it is")
    if change.change == "added":
        return _remove(undo, change.path, now)
    restore = _restorer(undo, change)
    undo.parents.require_real(change.path)
    kept = {"kept": undo.trash.keep(change.path)} if now is not None else {}
    return restore(b.root / change.path), kept


def _require_revertible(undo: _Undo, change: Change) -> None:
    if change.path in undo.protected:
        raise _Refused("written by sparring's runner after the check: never touched")
    if change.origin == "nested":
        raise _Refused("a nested repository or submodule: sparring does not look inside it")
    if change.origin == "state":
        raise _Refused("sparring's own record changed during the turn: inspect it; sparring "
                       "does not rewrite its own records from a snapshot")
    if change.path.startswith("../"):
        raise _Refused("outside the project folder: sparring does not change it")


def _remove(undo: _Undo, path: str, st: os.stat_result | None) -> tuple[str, dict[str, str]]:
    """Move an added file into the trash, then the folders it leaves empty (that held
    nothing at snapshot); a file that may hold the user's only copy of something stays."""
    if st is not None and stat.S_ISREG(st.st_mode) and undo.doubtful:
        with contextlib.suppress(OSError):
            twin = undo.doubtful.get(_hash_file(undo.b.root / path))
            if twin is not None:
                raise _Refused(f"it holds the content {twin} had before the turn, which "
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


Restore = Callable[[Path], str]


def _restorer(undo: _Undo, change: Change) -> Restore:
    """How to put the snapshot's version back, or _Refused with the reason there is none."""
    b = undo.b
    entry = b.entries.get(change.path) or b.area_entries.get(change.path)
    if entry is None and change.origin == "tracked" and change.path in b.index:
        return lambda dest: _restore_blob(undo, change.path, dest)
    if entry is not None and entry.target is not None:
        return functools.partial(_restore_link, entry.target)
    if entry is not None and entry.copied and b.store and entry.stat and entry.digest:
        found = entry
        return lambda dest: _restore_copy(b, found, dest)
    raise _Refused(_NOT_KEPT.get(change.origin, "sparring kept no copy of it"))


def _unrestorable(b: Baseline, todo: Sequence[Change]) -> dict[str, str]:
    """Digest -> path of the files the turn changed or removed that revert cannot restore: an
    added file holding one of these contents is left where it is."""
    found = {}
    for change in todo:
        entry = b.entries.get(change.path) or b.area_entries.get(change.path)
        if change.change == "added" or entry is None or entry.digest is None:
            continue
        if entry.target is None and not entry.copied:
            found[entry.digest] = change.path
    return found


def _restore_link(target: str, dest: Path) -> str:
    _put_link(dest, target)
    return "restored_link"


def _restore_blob(undo: _Undo, path: str, dest: Path) -> str:
    mode, blob = _blob_id(undo.b.index[path]) or ("", "")
    if undo.git is None or mode not in ("100644", "100755", "120000"):
        raise _Refused(f"cannot restore an entry of mode {mode}")
    if mode == "120000":
        _put_link(dest, os.fsdecode(undo.git.run("cat-file", "blob", blob)))
    else:
        data = undo.git.run("cat-file", "--filters", f"--path={path}", blob)
        _put_file(dest, lambda f: f.write(data), 0o777 if mode == "100755" else 0o666)
    return "restored_from_git"


def _restore_copy(b: Baseline, entry: Entry, dest: Path) -> str:
    assert b.store is not None and entry.stat is not None and entry.digest is not None
    copy, digest, st = b.store / entry.digest, entry.digest, entry.stat

    def fill(out: BinaryIO) -> None:
        if _copy_stream(copy, out) != digest:
            raise _Refused(f"the snapshot's copy {copy} is damaged")

    _put_file(dest, fill, stat.S_IMODE(st[0]), exact=True)
    os.utime(dest, ns=(st[2], st[2]))
    return "restored_from_copy"


def _known_dirs(b: Baseline) -> set[str]:
    known: set[str] = set()
    for path in itertools.chain(b.index, b.entries, b.area_entries):
        parent = path.rstrip("/").rpartition("/")[0]
        while parent and parent not in known:
            known.add(parent)
            parent = parent.rpartition("/")[0]
    return known


def _put_file(dest: Path, fill: Callable[[BinaryIO], object], perms: int,
              exact: bool = False) -> None:
    """Write through a temp file in the same directory, then move it in: never half a file.

    `perms` passes through the umask, as a checkout would, unless `exact`.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.sparring-{os.urandom(4).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, perms)
    try:
        with os.fdopen(fd, "wb") as out:
            fill(out)
            if exact:
                os.fchmod(out.fileno(), perms)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _put_link(dest: Path, target: str) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.sparring-{os.urandom(4).hex()}")
    os.symlink(target, tmp)
    os.replace(tmp, dest)


# --- git (every command goes through gitcmd.Git) ------------------------------------------


# Traditional --ignored with -uall lists each ignored file, not the collapsed directory.
_STATUS = ("status", "--porcelain", "-z", "--untracked-files=all", "--ignored", "--no-renames")
_LS_FILES = ("ls-files", "--stage", "-v", "-z")


def _listed(raw: bytes, keep: Keep) -> dict[str, str]:
    """From `git status`: paths whose worktree differs from the index, untracked, ignored."""
    listed = {}
    for record in _decode(raw).split("\0"):
        code, path = record[:2], record[3:]
        # Column Y blank: the worktree matches the index, which the index listing covers.
        if path and code[1] != " " and keep(path):
            listed[path] = code
    return listed


def _parse_index(listing: bytes) -> tuple[dict[str, str], bool]:
    """`ls-files --stage -v -z` -> ({path: "TAG MODE BLOB STAGE"}, every entry vouchable?).

    With no tab in any path (the usual case) the work is done by C string
    methods, about 10x faster than a loop over 50,000 entries; then "\0H " can
    only start a record and " 0\t" only end its metadata, so counting them
    says whether every entry has tag H and stage 0.
    """
    text = _decode(listing)
    records = text.count("\0")
    if text.count("\t") != records:  # a tab in some path: the slow, exact way
        index = {path: meta for meta, _, path in (r.partition("\t") for r in text.split("\0") if r)}
        return index, False
    parts = text.replace("\t", "\0").split("\0")
    return dict(zip(parts[1::2], parts[0:-1:2], strict=True)), _all_vouchable(listing)


def _all_vouchable(listing: bytes) -> bool:
    """Every entry has tag H and stage 0 (see _parse_index); False when unsure (a tab)."""
    records = listing.count(b"\0")
    return (listing.count(b"\t") == records
            and listing.startswith(b"H ") + listing.count(b"\0H ") == records
            == listing.count(b" 0\t"))


def _find_record(listing: bytes, path: str) -> str | None:
    """The metadata of `path` in a raw listing, or None: its record is `META\\tPATH\\0`,
    and META holds no tab, so a match must start right after a record's first tab."""
    key = b"\t" + path.encode("utf-8", "surrogateescape") + b"\0"
    at = listing.find(key)
    while at >= 0:
        start = listing.rfind(b"\0", 0, at) + 1
        if listing.find(b"\t", start) == at:
            return _decode(listing[start:at])
        at = listing.find(key, at + 1)
    return None


def _unvouched(index: dict[str, str], keep: Keep) -> list[str]:
    """Index entries git status stays silent about even when their file changes."""
    return [path for path, meta in index.items() if not _vouchable(meta) and keep(path)]


def _vouchable(meta: str) -> bool:
    # Tag H: an ordinary entry (not assume-unchanged, not skip-worktree); stage 0: no conflict.
    return meta.startswith("H ") and meta.endswith(" 0")


def _blob_id(meta: str | None) -> tuple[str, str] | None:
    if meta is None:
        return None
    parts = meta.split(" ")
    return parts[1], parts[2]


def _is_opaque(path: str, before: str | None, after: str | None = None) -> bool:
    """A nested repository (status spells it `dir/`) or a submodule (index mode 160000)."""
    return (path.endswith("/") or (before is not None and " 160000 " in before)
            or (after is not None and " 160000 " in after))


def _git_blob_id(data: bytes, like: str) -> str:
    """The id git gives a blob of `data`, in the hash of the repository `like` came from."""
    algorithm = "sha1" if len(like.split(" ")[2]) == 40 else "sha256"
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()


def _index_digest(root: Path) -> str:
    """Identify the index's content by git's own trailing checksum of it (cheap: 32 bytes).

    The trailer is a hash of everything before it; with `index.skipHash` it is
    zeros, and then the whole file is hashed instead.
    """
    try:
        with open(git_dir(root) / "index", "rb") as index:
            size = index.seek(0, os.SEEK_END)
            index.seek(max(0, size - 32))
            tail = index.read()
            if tail.endswith(bytes(20)):
                index.seek(0)
                return _sha256(index.read())
    except FileNotFoundError:
        return ""
    return f"{size}:{tail.hex()}"


# --- files --------------------------------------------------------------------------------


def _walk(root: Path, keep: Keep, prefix: str = "") -> dict[str, os.stat_result]:
    """Every file and symlink under root (or its folder `prefix`), by relative path; nested
    `.git` directories skipped."""
    found: dict[str, os.stat_result] = {}
    pending = [prefix]
    while pending:
        prefix = pending.pop()
        with contextlib.suppress(OSError), os.scandir(root / prefix) as listing:
            for item in listing:
                path = prefix + item.name
                if not keep(path):
                    continue
                if item.is_dir(follow_symlinks=False):
                    if item.name != ".git":
                        pending.append(path + "/")
                else:
                    found[path] = item.stat(follow_symlinks=False)
    return found


class _Parents:
    """lstat along the whole path: a file whose folder (or any folder above it) is no longer
    a real folder (a symlink, a file) is not there, whatever is found through the link."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.real: dict[str, bool] = {"": True}

    def is_real(self, folder: str) -> bool:
        known = self.real.get(folder)
        if known is None:
            try:
                mode = os.lstat(f"{self.root}/{folder}").st_mode
            except OSError:
                mode = 0
            known = self.is_real(folder.rpartition("/")[0]) and stat.S_ISDIR(mode)
            self.real[folder] = known
        return known

    def lstat(self, path: str) -> os.stat_result | None:
        if not self.is_real(path.rstrip("/").rpartition("/")[0]):
            return None
        return _lstat(f"{self.root}/{path}")

    def require_real(self, path: str) -> None:
        """Each folder on the way to `path` is a real folder or absent: nothing is ever
        written through a symlink (or refused: _Refused)."""
        folder = path.rpartition("/")[0]
        while folder:
            try:
                mode = os.lstat(f"{self.root}/{folder}").st_mode
            except FileNotFoundError:
                mode = stat.S_IFDIR  # absent: made as a real folder when written
            if not stat.S_ISDIR(mode):
                raise _Refused(f"{folder} is no longer a folder (a link or a file now stands "
                               "there): nothing is written through it")
            folder = folder.rpartition("/")[0]


def _walk_areas(root: Path, areas: dict[str, Area]) -> dict[str, tuple[str, os.stat_result]]:
    """Every file and symlink of the watched areas (a folder, or one file), with its origin;
    symlinks are recorded, never followed."""
    found: dict[str, tuple[str, os.stat_result]] = {}
    for place, area in areas.items():
        keep = _keeper(area.exclude, own_state=False)
        try:
            st = os.lstat(root / place)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            if keep(place):
                found[place] = (area.origin, st)
            continue
        for path, item in _walk(root, keep, prefix=place + "/").items():
            found[path] = (area.origin, item)
    return found


def _keeper(exclude: Iterable[str], own_state: bool = True) -> Keep:
    """A predicate: False for paths an exclude glob covers, and (`own_state`) for `.sparring/`."""
    patterns = [p.strip("/") for p in exclude if p.strip("/")]
    regex = re.compile("|".join(fnmatch.translate(p) for p in patterns)) if patterns else None
    own = STATE_DIR + "/"

    def keep(path: str) -> bool:
        if own_state and (path.startswith(own) or path == STATE_DIR):
            return False
        if regex is None:
            return True
        parts = path.rstrip("/").split("/")
        return not any(regex.match("/".join(parts[:n])) for n in range(1, len(parts) + 1))

    return keep


def _at(b: Baseline, path: str) -> str:
    # A string join: pathlib's `/` costs ~10 us, a third of a check's own time on 5,000 files.
    return f"{b.root}/{path}"


def _lstat(path: str | Path) -> os.stat_result | None:
    """lstat, with None for a missing path - and for a directory, which is not a file."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return None if stat.S_ISDIR(st.st_mode) else st


def _key(st: os.stat_result | None) -> Stat | None:
    return None if st is None else _key_of(st)


def _key_of(st: os.stat_result) -> Stat:
    # No st_dev: it can change across reboots on some file systems without any write.
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


Content = tuple[int, bool, str | None]  # file type, executable bit, digest


def _content(path: str | Path, st: os.stat_result) -> Content:
    kind = stat.S_IFMT(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return kind, False, _sha256(os.fsencode(os.readlink(path)))
    if not stat.S_ISREG(st.st_mode):
        return kind, False, None
    try:
        digest: str | None = _hash_file(path)
    except OSError:
        digest = None
    return kind, bool(st.st_mode & stat.S_IXUSR), digest


def _content_of(entry: Entry) -> Content:
    assert entry.stat is not None
    mode = entry.stat[0]
    return stat.S_IFMT(mode), stat.S_ISREG(mode) and bool(mode & stat.S_IXUSR), entry.digest


def _same_content(a: Content, b: Content) -> bool:
    # An unreadable regular file (digest None) is never vouched for: report it.
    return a == b and (a[0] != stat.S_IFREG or a[2] is not None)


def _hash_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as src:
        for chunk in iter(lambda: src.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_stream(path: Path, out: BinaryIO) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as src:
        for chunk in iter(lambda: src.read(_CHUNK), b""):
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def _store_bytes(store: Path, name: str, data: bytes) -> None:
    """Keep `data` in the store under `name` (its digest) unless it is there already."""
    if os.path.exists(store / name):
        return
    tmp = store / f".copy-{os.urandom(8).hex()}"
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE),
                   "wb") as out:
        out.write(data)
    os.replace(tmp, store / name)


def _copy_into(path: Path, store: Path) -> str:
    """Copy `path` into `store` under its SHA-256 (one read: hashed while copied)."""
    tmp = store / f".copy-{os.urandom(8).hex()}"
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE),
                       "wb") as out:
            digest = _copy_stream(path, out)
        os.replace(tmp, store / digest)  # same name, same bytes: replacing is harmless
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return digest


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _decode(raw: bytes) -> str:
    # As os.fsdecode does: a non-UTF-8 file name survives as surrogate escapes.
    return raw.decode("utf-8", "surrogateescape")


def _require_dir(root: Path) -> None:
    if not root.is_dir():
        raise SparringError("file_not_found", f"{root} is not a directory",
                            "pass the project directory (it must exist)", path=str(root))
